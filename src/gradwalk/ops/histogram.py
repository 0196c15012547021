"""``torch.histogram``: counts of a tensor's values in equal-width bins (or given bin edges).

As ATen's ``histogramdd`` kernel on one dimension: the edges are ``linspace(min, max, bins + 1)``
in the input's dtype (a range of one value widened by 0.5 on each side), values outside the edges
are not counted, a value on an inner edge goes to the bin on its right and the last edge belongs
to the last bin. ``density=True`` divides by the total, then by each bin's width.

It has no derivative in PyTorch either: from a tensor that requires grad, both results come out of
a ``NotImplemented`` node whose backward raises.
"""
import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time
from ._util import export
from .core import Op, apply_op
from .factories import _linspace_values


class HistogramNotImplemented(Op):
    name = "NotImplemented"

    def forward(x, hist, bin_edges):
        return hist, bin_edges

    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::histogram is not implemented")


HistogramNotImplemented.Node.name = lambda self: "torch::autograd::NotImplemented"  # a C++ node


def _outer_edges(values, range):
    if range is not None:
        low, high = float(range[0]), float(range[1])
    elif values.size:
        low, high = float(values.min()), float(values.max())
    else:
        low, high = 0.0, 1.0
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{low:g}, {high:g}] is not finite")
    if low > high:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} max "
                           f"{high:g} for dimension 0")
    if low == high:  # as NumPy: an empty range is widened, so no bin has width 0
        low, high = low - 0.5, high + 0.5
    return low, high


@export()
def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002 - PyTorch's name
    """``torch.histogram(x, bins=4)`` -> ``(hist, bin_edges)``, both of ``x``'s dtype."""
    from .. import grad_mode, return_types

    Tensor = _tensor.Tensor
    dtype = input._data.dtype
    if dtype.kind != "f":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{input.dtype.short_name}'")
    values = np.asarray(input._data).reshape(-1)
    if isinstance(bins, Tensor):
        edges = np.asarray(bins._data, dtype=dtype).reshape(-1)
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        edges = _linspace_values(*_outer_edges(values, range), int(bins) + 1, dtype)
    n_bins = edges.size - 1
    counted = (values >= edges[0]) & (values <= edges[-1])  # NaN is never counted
    where = np.minimum(np.searchsorted(edges, values[counted], side="right") - 1, n_bins - 1)
    hist = np.zeros(n_bins, dtype=dtype)
    if weight is None:
        np.add.at(hist, where, dtype.type(1))
    else:
        np.add.at(hist, where, np.asarray(weight._data, dtype=dtype).reshape(-1)[counted])
    if density:
        total = Tensor._make(hist.copy()).sum().item()  # PyTorch's float sum, then two divisions
        hist = (hist / dtype.type(total)).astype(dtype)
        hist = (hist / np.diff(edges)).astype(dtype)
    hist_t, edges_t = Tensor._make(hist), Tensor._make(np.ascontiguousarray(edges))
    if input.requires_grad and grad_mode.is_grad_enabled():
        hist_t, edges_t = apply_op(HistogramNotImplemented, (input,), {"hist": hist, "bin_edges": edges})
    return return_types.histogram(hist_t, edges_t)
