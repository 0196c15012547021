"""``repr(tensor)`` as PyTorch prints it: ``tensor([1., 2.], requires_grad=True)``.

A compact port of ``torch/_tensor_str.py``: one width for every element, integer-valued floats
printed as ``2.``, four decimals otherwise, scientific notation when the magnitudes are far
apart, and long tensors summarised with ``...``.
"""
import math

import numpy as np
from ._dtype import get_default_dtype
from ._meta import MetaArray

LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3
PRECISION = 4


class _Formatter:
    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat:
                self.max_width = max(self.max_width, len(str(v.item() if hasattr(v, "item") else v)))
            return
        # As torch/_tensor_str.py: only nonzero finite values decide the mode and the width
        # (nan, inf and zeros are printed unpadded beside them).
        finite = flat[np.isfinite(flat)]
        nonzero = finite[finite != 0].astype(np.float64)
        if nonzero.size == 0:
            return
        magnitude = np.abs(nonzero)
        self.int_mode = bool(np.all(np.ceil(nonzero) == nonzero))
        nz_max, nz_min = magnitude.max(), magnitude.min()
        self.sci_mode = nz_max / nz_min > 1000.0 or nz_max > 1e8 or (
            not self.int_mode and nz_min < 1e-4)
        self.max_width = max(len(self.format(v, pad=False)) for v in nonzero)

    def _fmt_plain(self, v):
        if not self.floating:
            return str(v)
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.0f}."

    def format(self, value, pad=True):
        if self.floating:
            v = float(value)
            if not math.isfinite(v):
                s = self._fmt_plain(v)
            elif self.sci_mode:
                s = f"{v:.{PRECISION}e}"
            elif self.int_mode:
                s = f"{v:.0f}."
            else:
                s = f"{v:.{PRECISION}f}"
        elif isinstance(value, (bool, np.bool_)):
            s = "True" if value else "False"
        else:
            s = str(int(value))
        return s.rjust(self.max_width) if pad else s


def _summarized(values):
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * EDGEITEMS:
        return np.concatenate([_summarized(values[:EDGEITEMS]), _summarized(values[-EDGEITEMS:])])
    return np.stack([_summarized(v) for v in values]) if values.ndim > 1 else values


def _tensor_str(values, indent, fmt, summarize):
    if values.ndim == 0:
        return fmt.format(values.item() if values.dtype.kind != "b" else bool(values))
    if values.ndim == 1:
        items = [fmt.format(v.item() if values.dtype.kind != "b" else bool(v)) for v in values]
        if summarize and len(items) > 2 * EDGEITEMS:
            items = items[:EDGEITEMS] + [" ..."] + items[-EDGEITEMS:]  # PyTorch's " ..." element
        per_line = max(1, int(math.floor((LINEWIDTH - indent) / (fmt.max_width + 2))))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = values
    parts = [_tensor_str(r, indent + 1, fmt, summarize) for r in rows]
    if summarize and len(parts) > 2 * EDGEITEMS:
        parts = parts[:EDGEITEMS] + ["..."] + parts[-EDGEITEMS:]
    sep = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def format_values(arr, indent=7):
    summarize = arr.size > THRESHOLD
    if arr.size == 0:
        return "[]"
    shown = _summarized(arr) if summarize else arr
    fmt = _Formatter(shown)
    return _tensor_str(arr if not summarize else arr, indent, fmt, summarize)


def tensor_repr(t, prefix="tensor("):
    arr = t._data
    indent = len(prefix)
    suffixes = []
    if arr.__class__ is MetaArray:  # no values to show (PyTorch: "...", the device, the size)
        body = "..."
        suffixes += ["device='meta'", f"size={tuple(arr.shape)}"]
    elif arr.size == 0 and arr.ndim != 1:
        body = "[]"
        suffixes.append(f"size={tuple(arr.shape)}")
    else:
        body = format_values(arr, indent)
    name = t.dtype.name
    if name != get_default_dtype().name and (arr.__class__ is MetaArray or name not in ("int64", "bool")):
        suffixes.append(f"dtype=torch.{name}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    if t._fw_grads:  # a dual tensor shows the tangent of the innermost open level
        tangent = t._fw_grads[max(t._fw_grads)]
        suffixes.append("tangent=" + tensor_repr(tangent))
    return _add_suffixes(prefix + body, suffixes, indent)


def _add_suffixes(tensor_str, suffixes, indent):
    """As torch/_tensor_str.py: a suffix that would run past the line width starts a new line."""
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
