"""More shape ops, most of them PyTorch's composites over the views and copies of ``shape.py``
(``tile`` is ``repeat``, ``tensor_split`` is slices, ``diff`` is a subtraction of two slices),
and the few that PyTorch records under a node of their own: ``as_strided``, ``unfold``,
``rot90``, ``block_diag``, ``diag_embed``, ``unsafe_split``.
"""
import math
import numbers

import numpy as np

from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from .._dtype import as_dtype
from ._util import export, normalize_dim
from .core import Op, apply_op, result_dtype_many
from .shape import Split, _shape_arg, _slice, _view_op


def _F():
    from . import functions  # (at call time: functions imports this module)

    return functions


def _make(array):
    return _tensor.Tensor._make(np.asarray(array))


def _sizes(args):
    """``f(2, 3)`` or ``f((2, 3))``."""
    return tuple(_shape_arg(args))


# ---------------------------------------------------------------- views

def _root(array):
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


def _positions(shape, strides, start):
    """Each element's position in storage: ``start + sum(i_k * strides[k])``, in elements."""
    pos = np.full(shape, start, dtype=np.int64)
    for d, (n, st) in enumerate(zip(shape, strides)):
        along = [1] * len(shape)
        along[d] = n
        pos = pos + (np.arange(n) * st).reshape(along)
    return pos


def _storage_positions(array):
    """Each element of ``array``'s position in its root buffer."""
    root = _root(array)
    start = (array.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // array.itemsize
    return _positions(array.shape, [st // array.itemsize for st in array.strides], start)


class AsStrided(Op):
    name = "AsStridedBackward0"
    is_view = True
    saves_attrs = ("size", "stride", "storage_offset")

    def forward(x, size, stride, storage_offset):
        root = _root(x)
        if not root.flags.c_contiguous:
            root = x  # (a root NumPy made strided: strides are then taken over x itself)
        flat = root.reshape(-1)
        need = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
        if need > flat.size:
            raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                               f"{storage_offset}, and itemsize {x.itemsize} requiring a storage size of "
                               f"{need * x.itemsize} are out of bounds for storage of size {flat.size * x.itemsize}")
        return np.lib.stride_tricks.as_strided(flat[storage_offset:], size, [s * x.itemsize for s in stride])

    def save(ctx, x, out, size, stride, storage_offset):
        ctx._attrs["positions"] = (_storage_positions(x._data), _positions(size, stride, storage_offset))

    def backward(ctx, g):
        """Every output element's gradient summed into the storage position it reads, then
        read back at the input's positions (PyTorch's ``as_strided_backward``)."""
        F = _F()
        inp, out = ctx._attrs["positions"]
        n = int(max(inp.max(initial=0), out.max(initial=0))) + 1
        storage = F.zeros(n, dtype=g.dtype).index_add(0, _make(out.reshape(-1)), g.reshape(-1))
        return storage[_make(inp)],


@export()
def as_strided(input, size, stride, storage_offset=None):
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if storage_offset is None:
        storage_offset = input.storage_offset()
    return _view_op(AsStrided, input, {"size": size, "stride": stride, "storage_offset": int(storage_offset)})


class Unfold(Op):
    """``x.unfold(dim, size, step)``: the windows of ``size`` every ``step`` along ``dim``, as a
    new last dim (a view)."""

    name = "UnfoldBackward0"
    is_view = True
    saves_attrs = ("dimension", "size", "step", "self_sym_sizes")

    def forward(x, dimension, size, step, self_sym_sizes):
        if x.ndim == 0:
            return np.lib.stride_tricks.as_strided(x.reshape(1), (size,), (x.itemsize,))
        count = (x.shape[dimension] - size) // step + 1
        shape = x.shape[:dimension] + (count,) + x.shape[dimension + 1:] + (size,)
        strides = (x.strides[:dimension] + (x.strides[dimension] * step,) + x.strides[dimension + 1:]
                   + (x.strides[dimension],))
        return np.lib.stride_tricks.as_strided(x, shape, strides)

    def backward(ctx, g):
        a = ctx._attrs
        return apply_op(UnfoldBackward, (g,), {"input_sizes": a["self_sym_sizes"], "dim": a["dimension"],
                                               "size": a["size"], "step": a["step"]}),

    def jvp(x, out, dx, dimension, size, step, self_sym_sizes):
        return dx.unfold(dimension, size, step)


class UnfoldBackward(Op):
    name = "UnfoldBackwardBackward0"
    saves_attrs = ("dim", "size", "step")

    def forward(g, input_sizes, dim, size, step):
        out = np.zeros(input_sizes, dtype=g.dtype)
        if not input_sizes:
            return g.sum().astype(g.dtype).reshape(())
        count = g.shape[dim]
        for k in range(size):  # element k of every window adds into the position it views
            out[(slice(None),) * dim + (slice(k, k + step * (count - 1) + 1, step),)] += g[..., k]
        return out

    def backward(ctx, gg):
        a = ctx._attrs
        return gg.unfold(a["dim"], a["size"], a["step"]),

    def jvp(g, out, dg, input_sizes, dim, size, step):
        return apply_op(UnfoldBackward, (dg,), {"input_sizes": input_sizes, "dim": dim, "size": size, "step": step})


@export(function=False)
def unfold(input, dimension, size, step):
    d = normalize_dim(dimension, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _view_op(Unfold, input, {"dimension": d, "size": size, "step": step, "self_sym_sizes": input.shape})


@export()
def broadcast_to(input, size):
    return input.expand(*_sizes((size,)))


@export()
def ravel(input):
    return input.contiguous().view(-1)


@export()
def unflatten(input, dim, sizes):
    d = normalize_dim(dim, input.ndim)
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input.shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if (-1 in sizes and (known == 0 or n % known)) or (-1 not in sizes and known != n):
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} "
                           f"({n}) in the input tensor")
    return input.view(*input.shape[:d], *sizes, *input.shape[d + 1:])


@export()
def tile(input, dims):
    dims = _sizes((dims,))
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return input.repeat(*dims)


# ---------------------------------------------------------------- splits

def _sections_bounds(n, sections):
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size, extra = divmod(n, sections)
    bounds, start = [], 0
    for i in range(sections):
        stop = start + size + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


@export()
def tensor_split(input, indices_or_sections, dim=0):
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    Tensor = _tensor.Tensor
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dtype.name != "int64":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but "
                               f"got {indices_or_sections.dtype}")
        if indices_or_sections.ndim == 0:
            indices_or_sections = int(indices_or_sections.item())
        else:
            indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, numbers.Integral):
        bounds = _sections_bounds(n, int(indices_or_sections))
    else:
        cuts = [0] + [min(max(int(i) if i >= 0 else int(i) + n, 0), n) for i in indices_or_sections] + [n]
        bounds = [(a, max(a, b)) for a, b in zip(cuts, cuts[1:])]
    return tuple(_slice(input, d, a, b, 1) for a, b in bounds)


def _dim_split(name, input, sections, dim, min_ndim):
    if input.ndim < min_ndim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a "
                           f"tensor with {input.ndim} dimensions!")
    if isinstance(sections, numbers.Integral):
        n = input.shape[dim]
        if sections == 0 or n % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {n} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


@export()
def hsplit(input, indices_or_sections):
    return _dim_split("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


@export()
def vsplit(input, indices_or_sections):
    return _dim_split("vsplit", input, indices_or_sections, 0, 2)


@export()
def dsplit(input, indices_or_sections):
    return _dim_split("dsplit", input, indices_or_sections, 2, 3)


@export()
def split_with_sizes(input, split_sizes, dim=0):
    return input.split(list(split_sizes), dim)


class UnsafeSplit(Split):
    """``unsafe_split``: ``split``'s formula and outputs, not marked as views."""

    name = "UnsafeSplitBackward0"
    is_view = False

    def forward(x, dim, split_size, self_sym_sizes, bounds):
        return tuple(part.copy() for part in Split.forward(x, dim, split_size, self_sym_sizes, bounds))


@export()
def unsafe_split(input, split_size, dim=0):
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    bounds = [(i, min(i + split_size, n)) for i in range(0, n, split_size)] or [(0, 0)]
    return apply_op(UnsafeSplit, (input,), {"dim": d, "split_size": split_size, "self_sym_sizes": input.shape,
                                            "bounds": tuple(bounds)})


@export()
def unsafe_chunk(input, chunks, dim=0):
    d = normalize_dim(dim, input.ndim)
    return unsafe_split(input, -(-input.shape[d] // chunks) or 1, d)


# ---------------------------------------------------------------- flips and rotations

class Rot90(Op):
    name = "Rot90Backward0"
    saves_attrs = ("k", "dims")

    def forward(x, k, dims):
        return np.rot90(x, k, dims).copy()

    def backward(ctx, g):
        a = ctx._attrs
        return g.rot90(-a["k"], a["dims"]),

    def jvp(x, out, dx, k, dims):
        return dx.rot90(k, dims)


@export()
def rot90(input, k=1, dims=(0, 1)):
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (normalize_dim(d, input.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return apply_op(Rot90, (input,), {"k": k, "dims": (d0, d1)})


@export()
def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


@export()
def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


@export()
def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, input.ndim)
    F = _F()
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        input = F.cat(parts, d)
    for _ in range(n):
        length = input.shape[d]
        if length == 0:
            break
        hi, lo = _slice(input, d, 1, length, 1), _slice(input, d, 0, length - 1, 1)
        input = hi.logical_xor(lo) if input.dtype.name == "bool" else hi - lo
    return input


# ---------------------------------------------------------------- atleast, stacks, blocks

def _each(tensors, one):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(one(t) for t in tensors[0])
    if len(tensors) == 1:
        return one(tensors[0])
    return tuple(one(t) for t in tensors)


def _atleast_1d(t):
    return t.reshape(1) if t.ndim == 0 else t


def _atleast_2d(t):
    return t.reshape(1, 1) if t.ndim == 0 else t.unsqueeze(0) if t.ndim == 1 else t


def _atleast_3d(t):
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.ndim == 2 else t


@export(method=False)
def atleast_1d(*tensors):
    return _each(tensors, _atleast_1d)


@export(method=False)
def atleast_2d(*tensors):
    return _each(tensors, _atleast_2d)


@export(method=False)
def atleast_3d(*tensors):
    return _each(tensors, _atleast_3d)


@export(method=False)
def column_stack(tensors):
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in tensors]
    return _F().hstack(columns)


class BlockDiag(Op):
    name = "BlockDiagBackward0"

    def forward(*arrays, shapes, dtype):
        rows = sum(s[0] for s in shapes)
        cols = sum(s[1] for s in shapes)
        out = np.zeros((rows, cols), dtype=dtype)
        r = c = 0
        for a, (h, w) in zip(arrays, shapes):
            out[r:r + h, c:c + w] = a.reshape(h, w)
            r, c = r + h, c + w
        return out

    def save(ctx, *inputs, out, shapes, dtype):
        ctx._attrs = {"shapes": shapes, "input_shapes": tuple(x.shape for x in inputs)}

    def backward(ctx, g):
        grads, r, c = [], 0, 0
        for (h, w), shape, need in zip(ctx._attrs["shapes"], ctx._attrs["input_shapes"], ctx.needs_input_grad):
            grads.append(g[r:r + h, c:c + w].reshape(shape) if need else None)
            r, c = r + h, c + w
        return tuple(grads)


@export(method=False)
def block_diag(*tensors):
    shapes = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
        shapes.append((1, 1) if t.ndim == 0 else (1, t.shape[0]) if t.ndim == 1 else tuple(t.shape))
    dtype = result_dtype_many(tensors) if tensors else as_dtype(None)
    return apply_op(BlockDiag, tuple(tensors), {"shapes": tuple(shapes), "dtype": dtype.np}, out_dtype=dtype)


@export(method=False)
def cartesian_prod(*tensors):
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    F = _F()
    grids = F.meshgrid(*tensors, indexing="ij")
    return F.stack([g.flatten() for g in grids], 1)


@export(method=False)
def combinations(input, r=2, with_replacement=False):
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    F = _F()
    if r == 0:
        return F.empty(0, dtype=input.dtype)
    n = input.shape[0]
    positions = np.meshgrid(*([np.arange(n)] * r), indexing="ij")
    mask = np.ones(positions[0].shape, dtype=bool)
    for a, b in zip(positions, positions[1:]):
        mask &= (a <= b) if with_replacement else (a < b)
    grids = F.meshgrid(*([input] * r), indexing="ij")
    m = _make(mask)
    return F.stack([g.masked_select(m) for g in grids], 1)


# ---------------------------------------------------------------- diagonals and triangles

class DiagEmbed(Op):
    name = "DiagEmbedBackward0"
    saves_attrs = ("offset", "dim1", "dim2")

    def forward(x, offset, dim1, dim2):
        from .extra import _diagonal_array

        n = x.shape[-1] + abs(offset)
        shape = list(x.shape[:-1])
        for d in sorted((dim1, dim2)):
            shape.insert(d, n)
        out = np.zeros(shape, dtype=x.dtype)
        _diagonal_array(out, offset, dim1, dim2)[...] = x
        return out

    def backward(ctx, g):
        a = ctx._attrs
        return g.diagonal(a["offset"], a["dim1"], a["dim2"]),

    def jvp(x, out, dx, offset, dim1, dim2):
        return apply_op(DiagEmbed, (dx,), {"offset": offset, "dim1": dim1, "dim2": dim2})


@export()
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    d1, d2 = normalize_dim(dim1, input.ndim + 1), normalize_dim(dim2, input.ndim + 1)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply_op(DiagEmbed, (input,), {"offset": offset, "dim1": d1, "dim2": d2})


@export()
def diagflat(input, offset=0):
    return input.contiguous().view(-1).diag_embed(offset)


def _triangle_indices(which, row, col, offset, dtype):
    rows, cols = (np.tril_indices if which == "tril" else np.triu_indices)(row, offset, col)
    dtype = as_dtype(dtype) if dtype is not None else as_dtype("int64")
    return _make(np.stack([rows, cols]).astype(dtype.np).reshape(2, -1))


@export(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices("tril", row, col, offset, dtype)


@export(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices("triu", row, col, offset, dtype)


@export(method=False)
def vander(x, N=None, increasing=False):
    """PyTorch's composite: ones, the columns from the second on the running product of ``x``,
    flipped unless ``increasing``."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    F = _F()
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x.dtype if x.dtype.is_floating_point else as_dtype("int64")
    result = F.ones(x.shape[0], n, dtype=dtype)
    if n > 1:
        result[:, 1:] = x.unsqueeze(1).expand(x.shape[0], n - 1).to(dtype).cumprod(1)
    return result if increasing else result.flip(1)
