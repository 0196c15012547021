"""``torch.testing.assert_close``: are two tensors (or numbers, or nested lists/dicts of them)
close, with the tolerances PyTorch picks by dtype and a message in PyTorch's words?

    >>> import gradwalk as torch
    >>> torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.000001]))
"""
import collections.abc
import numbers

import numpy as np

from . import _dtype
from .tensor import Tensor

# (rtol, atol) by dtype, PyTorch's defaults; any other dtype is compared exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False,
                 msg=None):
    """Raise ``AssertionError`` unless ``|actual - expected| <= atol + rtol * |expected|``
    elementwise, with equal shapes (and dtypes, unless ``check_dtype=False``)."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    _compare(actual, expected, [], rtol=rtol, atol=atol, equal_nan=equal_nan,
             check_dtype=check_dtype, msg=msg)


def _compare(actual, expected, path, **options):
    if isinstance(actual, np.ndarray):
        actual = Tensor._make(actual)
    if isinstance(expected, np.ndarray):
        expected = Tensor._make(expected)
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        return _compare_tensors(actual, expected, path, **options)
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, path, **options)
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + [i], **options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                  f"{sorted(set(expected) - set(actual))}\nAdditional keys in the actual mapping: "
                  f"{sorted(set(actual) - set(expected))}", path)
        for key in expected:
            _compare(actual[key], expected[key], path + [key], **options)
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} "
                    f"and {type(expected)}.")


def _is_number(x):
    return isinstance(x, (numbers.Number, np.generic))


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _fail(message, path, msg=None):
    if msg is not None:
        raise AssertionError(msg)
    if path:
        message += "\n\nThe failure occurred for item " + "".join(f"[{key!r}]" for key in path)
    raise AssertionError(message)


def _tolerances(*dtypes):
    pairs = [_TOLERANCES.get(d.name, (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in pairs), max(a for _, a in pairs)


def _compare_tensors(actual, expected, path, *, rtol, atol, equal_nan, check_dtype, msg):
    if actual.shape != expected.shape:
        _fail(f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}.",
              path, msg)
    if check_dtype and actual.dtype is not expected.dtype:
        _fail(f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.",
              path, msg)
    if rtol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype)
    a, e = np.asarray(actual._data), np.asarray(expected._data)
    if actual.dtype is not expected.dtype:  # compared in the common dtype, as PyTorch does
        common = _dtype.promote(actual.dtype, expected.dtype).np
        a, e = a.astype(common), e.astype(common)
    matches = _isclose(a, e, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        return _scalar_mismatch(a.item(), e.item(), path, rtol=rtol, atol=atol, msg=msg)
    if a.dtype.kind not in "fc":  # integers and bools subtract as int64, divide in the default float
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e).reshape(-1)
        abs_diff[matches.reshape(-1)] = 0
        rel_diff = abs_diff / np.abs(e.reshape(-1))
        if a.dtype.kind not in "fc":
            rel_diff = rel_diff.astype(_dtype.get_default_dtype().np)
        rel_diff[matches.reshape(-1)] = 0
    mismatches = matches.size - int(matches.sum())
    lines = [f"Mismatched elements: {mismatches} / {matches.size} ({mismatches / matches.size:.1%})",
             _greatest("absolute", abs_diff, atol, a.shape),
             _greatest("relative", rel_diff, rtol, a.shape)]
    _fail(f"Tensor-likes are not {'equal' if rtol == 0 and atol == 0 else 'close'}!\n\n"
          + "\n".join(lines), path, msg)


def _greatest(kind, diff, tol, shape):
    nan = np.isnan(diff) if diff.dtype.kind == "f" else None
    flat = int(np.argmax(nan)) if nan is not None and nan.any() else int(np.argmax(diff))
    index = tuple(int(i) for i in np.unravel_index(flat, shape))
    line = f"Greatest {kind} difference: {diff[flat].item()} at index {index}"
    return line + (f" (up to {tol} allowed)" if tol > 0 else "")


def _compare_numbers(actual, expected, path, *, rtol, atol, equal_nan, check_dtype, msg):
    if check_dtype and type(actual) is not type(expected):
        _fail(f"The values for attribute 'dtype' do not match: {type(actual)} != {type(expected)}.",
              path, msg)
    if rtol is None:
        rtol, atol = (1e-7, 1e-7) if isinstance(actual, (float, complex, np.floating)) else (0.0, 0.0)
    if _isclose(np.asarray(actual), np.asarray(expected), rtol, atol, equal_nan):
        return
    _scalar_mismatch(actual, expected, path, rtol=rtol, atol=atol, msg=msg)


def _scalar_mismatch(actual, expected, path, *, rtol, atol, msg):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 and abs_diff != 0 else abs_diff / abs(expected) if expected else 0.0
    lines = [f"Expected {expected} but got {actual}.",
             f"Absolute difference: {abs_diff}" + (f" (up to {atol} allowed)" if atol > 0 else ""),
             f"Relative difference: {rel_diff}" + (f" (up to {rtol} allowed)" if rtol > 0 else "")]
    _fail(f"Scalars are not {'equal' if rtol == 0 and atol == 0 else 'close'}!\n\n" + "\n".join(lines),
          path, msg)


def _isclose(a, e, rtol, atol, equal_nan):
    if a.dtype.kind not in "fc":
        return np.asarray(a == e)
    with np.errstate(all="ignore"):
        close = (a == e) | (np.abs(a - e) <= atol + rtol * np.abs(e))
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return np.asarray(close)
