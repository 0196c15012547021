"""The rest of PyTorch's product family, beside ``ops/linalg.py``'s mm/bmm/mv/dot/addmm/matmul:

* one node each, as in ``derivatives.yaml``: ``addmv`` (AddmvBackward0), ``addr`` (AddrBackward0),
  ``addbmm`` (AddbmmBackward0), ``baddbmm`` (BaddbmmBackward0), ``vdot`` (VdotBackward0), and the
  in-place ``addmm_`` / ``addmv_`` / ``addr_`` / ``addbmm_`` / ``baddbmm_``;
* composites, as in ATen (their nodes are the ops they are made of): ``ger`` (= ``outer``:
  MulBackward0), ``tensordot`` (permute, reshape, mm, reshape), ``inner`` (tensordot on the last
  dims), ``kron`` (two views, a product, UnsafeViewBackward0).

Every backward formula is written with the matrix ops themselves (mv, bmm, mm), so double backward
works and the gradients run on the same kernels as the forward's.
"""
import numpy as np

from ._util import export
from .core import Op, apply_op, result_dtype
from .linalg import Addmm, _check_same_dtype, _mm


def _scaled(g, factor):
    return g if factor == 1 else g * factor


def _to_input(g, shape, beta):
    """The gradient of the broadcast ``input`` of an add*-op: ``beta * g`` summed to its shape."""
    if beta == 0:
        return g.sum_to_size(shape) * 0 if tuple(g.shape) != tuple(shape) else g * 0
    g = _scaled(g, beta)
    return g if tuple(g.shape) == tuple(shape) else g.sum_to_size(shape)


def _combine(product, bias, alpha, beta):
    """``beta * bias + alpha * product`` as ATen: a zero beta ignores the bias (even nan in it)."""
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return np.broadcast_to(product, np.broadcast_shapes(product.shape, bias.shape)).copy()
    return product + (bias if beta == 1 else bias * beta)


class Addmv(Op):
    name = "AddmvBackward0"
    saves_attrs = ("alpha", "beta")

    def forward(bias, mat, vec, alpha, beta):
        return _combine(mat @ vec, bias, alpha, beta).astype(mat.dtype, copy=False)

    def save(ctx, bias, mat, vec, out, alpha, beta):
        need = ctx.needs_input_grad
        ctx.save(mat=mat if need[2] else None, vec=vec if need[1] else None)
        ctx._attrs["self_sym_sizes"] = tuple(bias.shape)

    def backward(ctx, g):
        need, a = ctx.needs_input_grad, ctx._attrs
        return (_to_input(g, a["self_sym_sizes"], a["beta"]) if need[0] else None,
                _scaled(g.outer(ctx.vec), a["alpha"]) if need[1] else None,
                _scaled(ctx.mat.t().mv(g), a["alpha"]) if need[2] else None)

    def jvp(bias, mat, vec, out, dbias, dmat, dvec, alpha, beta):
        return dbias * beta + (dmat.mv(vec) + mat.mv(dvec)) * alpha


class Addr(Op):
    name = "AddrBackward0"
    saves_attrs = ("alpha", "beta")

    def forward(bias, vec1, vec2, alpha, beta):
        return _combine(np.multiply.outer(vec1, vec2), bias, alpha, beta).astype(vec1.dtype, copy=False)

    def save(ctx, bias, vec1, vec2, out, alpha, beta):
        need = ctx.needs_input_grad
        ctx.save(vec1=vec1 if need[2] else None, vec2=vec2 if need[1] else None)
        ctx._attrs["self_sym_sizes"] = tuple(bias.shape)

    def backward(ctx, g):
        need, a = ctx.needs_input_grad, ctx._attrs
        return (_to_input(g, a["self_sym_sizes"], a["beta"]) if need[0] else None,
                _scaled(g.mv(ctx.vec2), a["alpha"]) if need[1] else None,
                _scaled(g.t().mv(ctx.vec1), a["alpha"]) if need[2] else None)

    def jvp(bias, vec1, vec2, out, dbias, dvec1, dvec2, alpha, beta):
        return dbias * beta + (dvec1.outer(vec2) + vec1.outer(dvec2)) * alpha


class Baddbmm(Op):
    name = "BaddbmmBackward0"
    saves_attrs = ("alpha", "beta")

    def forward(bias, batch1, batch2, alpha, beta):
        return _combine(np.matmul(batch1, batch2), bias, alpha, beta).astype(batch1.dtype, copy=False)

    def save(ctx, bias, batch1, batch2, out, alpha, beta):
        need = ctx.needs_input_grad
        ctx.save(batch1=batch1 if need[2] else None, batch2=batch2 if need[1] else None)
        ctx._attrs["self_sym_sizes"] = tuple(bias.shape)

    def backward(ctx, g):
        need, a = ctx.needs_input_grad, ctx._attrs
        return (_to_input(g, a["self_sym_sizes"], a["beta"]) if need[0] else None,
                _scaled(g.bmm(ctx.batch2.transpose(1, 2)), a["alpha"]) if need[1] else None,
                _scaled(ctx.batch1.transpose(1, 2).bmm(g), a["alpha"]) if need[2] else None)

    def jvp(bias, b1, b2, out, dbias, db1, db2, alpha, beta):
        return dbias * beta + (db1.bmm(b2) + b1.bmm(db2)) * alpha


class Addbmm(Op):
    name = "AddbmmBackward0"
    saves_attrs = ("alpha", "beta")

    def forward(bias, batch1, batch2, alpha, beta):
        # the sum over the batch is one gemm: (n, b*m) @ (b*m, p)
        b, n, m = batch1.shape
        left = batch1.transpose(1, 0, 2).reshape(n, b * m)
        return _combine(_mm(left, batch2.reshape(b * m, -1)), bias, alpha, beta).astype(batch1.dtype, copy=False)

    def save(ctx, bias, batch1, batch2, out, alpha, beta):
        need = ctx.needs_input_grad
        ctx.save(batch1=batch1 if need[2] else None, batch2=batch2 if need[1] else None)
        ctx._attrs["self_sym_sizes"] = tuple(bias.shape)
        ctx._attrs["batch1_sym_argsize_0"] = batch1.shape[0]

    def backward(ctx, g):
        need, a = ctx.needs_input_grad, ctx._attrs
        b = a["batch1_sym_argsize_0"]
        expanded = g.unsqueeze(0).expand(b, g.shape[0], g.shape[1])
        return (_to_input(g, a["self_sym_sizes"], a["beta"]) if need[0] else None,
                _scaled(expanded.bmm(ctx.batch2.transpose(1, 2)), a["alpha"]) if need[1] else None,
                _scaled(ctx.batch1.transpose(1, 2).bmm(expanded), a["alpha"]) if need[2] else None)

    def jvp(bias, b1, b2, out, dbias, db1, db2, alpha, beta):
        return dbias * beta + (db1.bmm(b2) + b1.bmm(db2)).sum(0) * alpha


class Vdot(Op):
    name = "VdotBackward0"

    def forward(a, b):
        return np.asarray(np.vdot(a, b))

    def save(ctx, a, b, out):
        ctx.save(self=a if ctx.needs_input_grad[1] else None, other=b if ctx.needs_input_grad[0] else None)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (g * ctx.other if need[0] else None, g * ctx.self if need[1] else None)

    def jvp(a, b, out, da, db):
        return (da * b).sum() + (a * db).sum()


def _attrs(alpha, beta):
    return {"alpha": alpha, "beta": beta}


def _check_inplace_shape(self, shape):
    if tuple(self.shape) != tuple(shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor "
                           f"size {list(shape)} should match")


def _check_addmv(input, mat, vec):
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0] or (input.ndim == 1 and input.shape[0] not in (1, mat.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    _check_same_dtype("mv", mat, vec)
    if input.dtype != mat.dtype:
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{input.dtype.short_name}, {mat.dtype.short_name}, and {vec.dtype.short_name}")


def _broadcast_or_raise(input, shape):
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(shape))
    except ValueError:
        input.expand(*shape)  # PyTorch's message: "The expanded size of the tensor ..."
    if len(input.shape) > len(shape) or np.broadcast_shapes(tuple(input.shape), tuple(shape)) != tuple(shape):
        input.expand(*shape)


@export()
def addmv(input, mat, vec, *, beta=1, alpha=1):
    _check_addmv(input, mat, vec)
    return apply_op(Addmv, (input, mat, vec), _attrs(alpha, beta))


def _check_addr(input, vec1, vec2):
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    _broadcast_or_raise(input, (vec1.shape[0], vec2.shape[0]))


@export()
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    _check_addr(input, vec1, vec2)
    return apply_op(Addr, (input, vec1, vec2), _attrs(alpha, beta), out_dtype=result_dtype(vec1, vec2))


def _check_bmm_pair(batch1, batch2):
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} "
                           f"and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    _check_same_dtype("bmm", batch1, batch2)


@export()
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.ndim == 3 and batch2.ndim == 3 and batch1.shape[0] == batch2.shape[0] \
            and batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    _check_bmm_pair(batch1, batch2)
    _broadcast_or_raise(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return apply_op(Baddbmm, (input, batch1, batch2), _attrs(alpha, beta))


@export()
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _check_bmm_pair(batch1, batch2)
    _broadcast_or_raise(input, (batch1.shape[1], batch2.shape[2]))
    return apply_op(Addbmm, (input, batch1, batch2), _attrs(alpha, beta))


def _inplace_product(op, self, a, b, shape, alpha, beta):
    _check_inplace_shape(self, shape)
    return apply_op(op, (self, a, b), _attrs(alpha, beta), out_dtype=self.dtype, inplace=self)


@export(function=False)
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'mat1' if mat1.ndim != 2 else 'mat2'} must be a matrix, got "
                           f"{mat1.ndim if mat1.ndim != 2 else mat2.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} "
                           f"and {mat2.shape[0]}x{mat2.shape[1]})")
    _check_same_dtype("addmm", self, mat1, mat2)
    return _inplace_product(Addmm, self, mat1, mat2, (mat1.shape[0], mat2.shape[1]), alpha, beta)


@export()
def addmv_(self, mat, vec, *, beta=1, alpha=1):
    _check_addmv(self, mat, vec)
    return _inplace_product(Addmv, self, mat, vec, (mat.shape[0],), alpha, beta)


@export(function=False)
def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    _check_addr(self, vec1, vec2)
    return _inplace_product(Addr, self, vec1, vec2, (vec1.shape[0], vec2.shape[0]), alpha, beta)


@export(function=False)
def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _check_bmm_pair(batch1, batch2)
    return _inplace_product(Baddbmm, self, batch1, batch2,
                            (batch1.shape[0], batch1.shape[1], batch2.shape[2]), alpha, beta)


@export(function=False)
def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _check_bmm_pair(batch1, batch2)
    return _inplace_product(Addbmm, self, batch1, batch2, (batch1.shape[1], batch2.shape[2]), alpha, beta)


@export()
def vdot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    _check_same_dtype("dot", input, other)
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{other.shape[0]}] to "
            f"have the same number of elements, but got {input.shape[0]} and {other.shape[0]} elements "
            "respectively")
    return apply_op(Vdot, (input, other))


@export()
def ger(input, vec2):
    """``torch.ger``: the deprecated name of ``outer`` (MulBackward0)."""
    return input.outer(vec2)


def _dims_arg(dims, a, b):
    """``tensordot``'s ``dims``: an int n (the last n of a, the first n of b), a pair of lists
    or ints, or a tensor of them (as ``torch.functional.tensordot``)."""
    from ..tensor import Tensor

    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise RuntimeError("tensordot expects dims to be a pair of lists or an int, got "
                           f"{dims!r}")
    da, db = dims
    da = [da] if isinstance(da, int) else list(da)
    db = [db] if isinstance(db, int) else list(db)
    return da, db


@export()
def tensordot(a, b, dims=2):
    from ._util import normalize_dim

    dims_a, dims_b = _dims_arg(dims, a, b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [normalize_dim(d, a.ndim) for d in dims_a]
    dims_b = [normalize_dim(d, b.ndim) for d in dims_b]
    csize = 1
    for da, db in zip(dims_a, dims_b):
        sa, sb = a.shape[da], b.shape[db]
        if sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in dim {da} "
                               f"and second has size {sb} in dim {db}")
        csize *= sa
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    size_a = int(np.prod([a.shape[d] for d in free_a], dtype=np.int64))
    size_b = int(np.prod([b.shape[d] for d in free_b], dtype=np.int64))
    left = a.permute(free_a + dims_a).reshape(size_a, csize)
    right = b.permute(dims_b + free_b).reshape(csize, size_b)
    return left.mm(right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


@export()
def inner(input, other):
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


@export()
def kron(input, other):
    """``torch.kron``, as ATen's KronImpl: each input viewed with a size-1 dim beside each of its
    dims, their product, then the pairs of dims merged (UnsafeViewBackward0)."""
    from .shape import UnsafeView

    n = max(input.ndim, other.ndim)
    a_shape = [1] * (n - input.ndim) + list(input.shape)
    b_shape = [1] * (n - other.ndim) + list(other.shape)
    a_view, b_view = [], []
    for sa, sb in zip(a_shape, b_shape):
        a_view += [sa, 1]
        b_view += [1, sb]
    product = input.reshape(a_view) * other.reshape(b_view)
    shape = tuple(sa * sb for sa, sb in zip(a_shape, b_shape))
    return apply_op(UnsafeView, (product,), {"shape": shape, "self_sym_sizes": product.shape})


# ---------------------------------------------------------------- distances

def _pnorm_grad(diff, dist, p):
    """d ||diff||_p / d diff, with ATen's conventions: 0 where the distance is 0, p=0 has none."""
    if p == 0:
        return diff * 0
    if p == 1:
        return diff.sign()
    safe = dist.masked_fill(dist == 0, 1)
    if p == 2:
        return (diff / safe).masked_fill(dist == 0, 0)
    if p == float("inf"):
        return diff.sign() * (diff.abs() == dist)
    return (diff.sign() * diff.abs() ** (p - 1) / safe ** (p - 1)).masked_fill(dist == 0, 0)


def _pnorm(diff, p):
    a = np.abs(diff)
    if p == 0:
        return (a != 0).sum(-1).astype(diff.dtype)
    if p == float("inf"):
        return a.max(-1) if a.shape[-1] else a.sum(-1)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return np.sqrt((a * a).sum(-1))
    return (a ** p).sum(-1) ** (1.0 / p)


class Cdist(Op):
    name = "CdistBackward0"
    saves_attrs = ("p",)

    def forward(x1, x2, p):
        return _pnorm(x1[..., :, None, :] - x2[..., None, :, :], p).astype(x1.dtype, copy=False)

    def save(ctx, x1, x2, out, p):
        ctx.save(x1=x1, x2=x2)
        ctx.save_result("result", out)

    def backward(ctx, g):
        x1, x2, dist, p = ctx.x1, ctx.x2, ctx.result, ctx._attrs["p"]
        need = ctx.needs_input_grad
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (.., r1, r2, m)
        pg = _pnorm_grad(diff, dist.unsqueeze(-1), p) * g.unsqueeze(-1)
        g1 = pg.sum(-2) if need[0] else None
        g2 = -pg.sum(-3) if need[1] else None
        if g1 is not None and tuple(g1.shape) != tuple(x1.shape):
            g1 = g1.sum_to_size(x1.shape)
        if g2 is not None and tuple(g2.shape) != tuple(x2.shape):
            g2 = g2.sum_to_size(x2.shape)
        return g1, g2


class EuclideanDist(Op):
    """ATen's _euclidean_dist: one matmul of padded inputs, ``|a|^2 - 2 a.b + |b|^2``, clamped
    at 0 and square-rooted (what cdist runs for p=2 past 25 rows); backward is
    FunctionsManual's _euclidean_dist_backward."""

    name = "EuclideanDistBackward0"

    def forward(x1, x2):
        n1 = (x1 * x1).sum(-1, keepdims=True)
        n2 = (x2 * x2).sum(-1, keepdims=True)
        a = np.concatenate([x1 * -2, n1, np.ones_like(n1)], -1)
        b = np.concatenate([x2, np.ones_like(n2), n2], -1)
        return np.sqrt(np.maximum(np.matmul(a, np.swapaxes(b, -1, -2)), 0)).astype(x1.dtype, copy=False)

    def save(ctx, x1, x2, out):
        ctx.save(x1=x1, x2=x2)
        ctx.save_result("result", out)

    def backward(ctx, g):
        x1, x2, res = ctx.x1, ctx.x2, ctx.result
        ratio = (g / res).masked_fill(res == 0, 0)
        return (x1 * ratio.sum(-1, True) - ratio.matmul(x2),
                x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(x1))


def _euclidean_dist(x1, x2):
    return apply_op(EuclideanDist, (x1, x2))


@export(method=False)
def cdist(x1, x2, p=2.0, compute_mode=None):
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype.short_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = {None: 0, "use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
             "donot_use_mm_for_euclid_dist": 2}
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = modes[compute_mode]
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
        a = x1.expand(*batch, r1, x1.shape[-1]).reshape(-1, r1, x1.shape[-1]) if batch else x1
        b = x2.expand(*batch, r2, x2.shape[-1]).reshape(-1, r2, x2.shape[-1]) if batch else x2
        return _euclidean_dist(a, b).view(*batch, r1, r2)
    return apply_op(Cdist, (x1, x2), {"p": float(p)})


class Pdist(Op):
    name = "PdistBackward0"
    saves_attrs = ("p",)

    def forward(x, p):
        i, j = np.triu_indices(x.shape[0], 1)
        return _pnorm(x[i] - x[j], p).astype(x.dtype, copy=False)

    def save(ctx, x, out, p):
        ctx.save(self=x)
        ctx.save_result("result", out)

    def backward(ctx, g):
        from .functions import zeros

        x, dist, p = ctx.self, ctx.result, ctx._attrs["p"]
        n = x.shape[0]
        i, j = np.triu_indices(n, 1)
        from ..tensor import Tensor

        ii, jj = Tensor._make(i.astype(np.int64)), Tensor._make(j.astype(np.int64))
        pg = _pnorm_grad(x[ii] - x[jj], dist.unsqueeze(-1), p) * g.unsqueeze(-1)
        grad = zeros(x.shape, dtype=x.dtype)
        return grad.index_add(0, ii, pg).index_add(0, jj, -pg),


@export(method=False)
def pdist(input, p=2):
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply_op(Pdist, (input,), {"p": float(p)})
