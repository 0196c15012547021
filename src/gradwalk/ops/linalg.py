"""Matrix products. ``matmul`` picks the ATen op PyTorch picks, so the node names match:
1-D@1-D ``DotBackward0``, 2-D@1-D ``MvBackward0``, 2-D@2-D ``MmBackward0``, batched ``BmmBackward0``."""
import numpy as np

from .. import _mkl
from .. import tensor as _tensor  # the module; its Tensor class is read at call time

from . import _float32_kernels as _k32
from ._util import export, formulas_on_arrays
from .core import Op, apply_op, result_dtype

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _check_same_dtype(kind, *tensors):
    """Matrix products don't promote dtypes; each ATen kernel words the refusal its own way."""
    dtypes = [t._data.dtype for t in tensors]
    if all(d == dtypes[0] for d in dtypes):
        return
    from ..tensor import _c_type_name

    names = [t.dtype.short_name for t in tensors]
    if kind == "mm":
        a, b = tensors
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{_c_type_name(a.dtype)} != {_c_type_name(b.dtype)}")
    if kind == "dot":
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {names[0]} and {names[1]}")
    if kind == "mv":  # (vec, mat, vec), as addmv reports them
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{names[1]}, {names[0]}, and {names[1]}")
    if kind == "bmm":
        raise RuntimeError(f"expected scalar type {names[0]} but found {names[1]}")
    if kind == "addmm":  # (bias, mat1, mat2): the bias is checked against mat2 first
        bias, mat1, mat2 = names
        if bias != mat2:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {bias} and {mat2}")
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {mat1} and {mat2}")


def _strides(t):
    """A tensor's strides in elements, as PyTorch's ``sym_strides()``."""
    data = t._data
    size = data.itemsize
    strides = data.strides
    if len(strides) == 2:  # the matrices of mm/addmm, spelled out
        return (strides[0] // size, strides[1] // size)
    return tuple([st // size for st in strides])


def _mm(a, b):
    """``a @ b`` of two matrices: MKL's ``cblas_?gemm`` when MKL is installed (the library and
    call PyTorch makes: its bits, float32 and float64); else float32 through
    ``_float32_kernels.matmul`` (an imitation of MKL's order of operations) and NumPy's BLAS."""
    if a.dtype is _F32 and b.dtype is _F32 and _k32.chain_is_mkl(a, b):
        return _k32.matmul(a, b)  # MKL's bits at NumPy's call cost (small products)
    out = _mkl.gemm(a, b)
    if out is not None:
        return out
    if a.dtype is _F32 and b.dtype is _F32:
        return _k32.matmul(a, b)
    return a @ b


def _column_major(sizes, strides):
    return strides[0] == 1 and strides[1] == sizes[0]


def _mm_mat1_backward(g, mat2, sizes, strides, alpha):
    """PyTorch's ``mm_mat1_backward``: ``g @ mat2.T``, computed as ``(mat2 @ g.T).T`` when mat1
    was column-major, so the gradient comes out in mat1's layout."""
    if formulas_on_arrays() and g._data.dtype is mat2._data.dtype:
        gd, m = g._data, mat2._data
        r = _mm(m, gd.T).T if _column_major(sizes, strides) else _mm(gd, m.T)
        return _tensor.Tensor._make(r if alpha == 1 else r * alpha)
    r = mat2.mm(g.t()).t() if _column_major(sizes, strides) else g.mm(mat2.t())
    return r if alpha == 1 else r * alpha


def _mm_mat2_backward(g, mat1, sizes, strides, alpha):
    """PyTorch's ``mm_mat2_backward``: ``mat1.T @ g``, computed as ``(g.T @ mat1).T`` when mat2 was
    column-major (``nn.Linear``'s ``weight.t()``), so the gradient comes out in mat2's layout and
    ``TBackward0`` hands the weight a contiguous gradient that needs no copy."""
    if formulas_on_arrays() and g._data.dtype is mat1._data.dtype:
        gd, m = g._data, mat1._data
        r = _mm(gd.T, m).T if _column_major(sizes, strides) else _mm(m.T, gd)
        return _tensor.Tensor._make(r if alpha == 1 else r * alpha)
    r = g.t().mm(mat1).t() if _column_major(sizes, strides) else mat1.t().mm(g)
    return r if alpha == 1 else r * alpha


def _mm_layouts(a, b, a_name, need_a, need_b):
    """PyTorch's saved ``*_sym_sizes`` (always) and ``*_sym_strides`` (of the inputs that get a
    gradient, else empty), as the entries of a node's attribute dict."""
    return {a_name + "_sym_sizes": a._data.shape, a_name + "_sym_strides": _strides(a) if need_a else (),
            "mat2_sym_sizes": b._data.shape, "mat2_sym_strides": _strides(b) if need_b else ()}


class Mm(Op):
    name = "MmBackward0"

    def forward(a, b):
        return _mm(a, b)

    def save(ctx, a, b, out):
        need = ctx.needs_input_grad
        ctx.save(self=a if need[1] else None, mat2=b if need[0] else None)
        ctx._attrs = _mm_layouts(a, b, "self", need[0], need[1])

    def backward(ctx, g):
        need = ctx.needs_input_grad
        a = ctx._attrs
        return (_mm_mat1_backward(g, ctx.mat2, a["self_sym_sizes"], a["self_sym_strides"], 1) if need[0] else None,
                _mm_mat2_backward(g, ctx.self, a["mat2_sym_sizes"], a["mat2_sym_strides"], 1) if need[1] else None)

    def jvp(a, b, out, da, db):
        return da.mm(b) + a.mm(db)


class Bmm(Op):
    name = "BmmBackward0"

    def forward(a, b):
        m, k = a.shape[1:]
        if m * k * b.shape[2] < 400:  # ATen's own loop for small products (baddbmm_cpu_kernel)
            return _k32.bmm_small(a, b)
        out = _mkl.bmm(a, b)  # MKL's cblas_?gemm_batch_strided, as ATen
        if out is not None:
            return out
        if len(a) > 1 and not b.strides[0]:
            # one matrix for the whole batch (an expanded view: vmap's per-sample copies of a
            # weight): one folded product, since NumPy's matmul leaves BLAS on zero strides
            if not a.strides[0]:
                return np.repeat((a[0] @ b[0])[None], len(a), axis=0)
            return (a.reshape(-1, a.shape[-1]) @ b[0]).reshape(a.shape[0], a.shape[1], b.shape[2])
        if len(a) > 1 and not a.strides[0]:
            return np.matmul(a[0], b)
        if a.shape[2] == 1:  # outer products (per-sample weight gradients): the same bits, no BLAS loop
            # into a C-ordered result: NumPy would lay it out like a transposed ``a`` (10x slower)
            out = np.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=np.result_type(a, b))
            return np.multiply(a, b, out=out)
        return np.matmul(a, b)

    def save(ctx, a, b, out):
        ctx.save(self=a if ctx.needs_input_grad[1] else None,
                 mat2=b if ctx.needs_input_grad[0] else None)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (g.bmm(ctx.mat2.transpose(1, 2)) if need[0] else None,
                ctx.self.transpose(1, 2).bmm(g) if need[1] else None)

    def jvp(a, b, out, da, db):
        return da.bmm(b) + a.bmm(db)


class Dot(Op):
    name = "DotBackward0"

    def forward(a, b):
        out = _mkl.dot(a, b)  # MKL's cblas_?dot, as ATen
        return np.asarray(np.dot(a, b)) if out is None else out

    def save(ctx, a, b, out):
        ctx.save(self=a if ctx.needs_input_grad[1] else None,
                 tensor=b if ctx.needs_input_grad[0] else None)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (g * ctx.tensor if need[0] else None,
                g * ctx.self if need[1] else None)

    def jvp(a, b, out, da, db):
        return da.dot(b) + a.dot(db)


class Mv(Op):
    name = "MvBackward0"

    def forward(a, v):
        out = _mkl.gemv(a, v)  # MKL's cblas_?gemv, as ATen's addmv calls it
        return a @ v if out is None else out

    def save(ctx, a, v, out):
        ctx.save(self=a if ctx.needs_input_grad[1] else None,
                 vec=v if ctx.needs_input_grad[0] else None)

    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (g.unsqueeze(1) * ctx.vec.unsqueeze(0) if need[0] else None,
                ctx.self.t().mv(g) if need[1] else None)

    def jvp(a, v, out, da, dv):
        return da.mv(v) + a.mv(dv)


class Addmm(Op):
    """``beta * bias + alpha * (x @ W.t())`` in one op: what ``nn.Linear`` runs on 2-D input."""

    name = "AddmmBackward0"  # (save() puts alpha and beta on the node, with the layouts)

    def forward(bias, a, b, alpha=1, beta=1):
        if (alpha == 1 and beta == 1 and a.dtype is _F32 and b.dtype is _F32 and bias.dtype is _F32
                and a.shape[1] >= 2 and _k32.chain_is_mkl(a, b)):
            # small (an nn.Linear on a minibatch): MKL's kernel adds the bias after its k loop
            # there (measured, k >= 2), so the product's bits plus the bias are MKL's, without the call
            out = _k32.matmul(a, b)
            if bias.ndim > 2:
                return bias + out
            out += bias
            return out
        if (_mkl.enabled() and bias.dtype is a.dtype and a.dtype is b.dtype and bias.ndim <= 2
                and (a.dtype is _F32 or a.dtype is _F64)):
            # as ATen's addmm_impl_cpu_: the bias copied into the result, then one gemm with
            # beta (MKL adds it inside its k loop: not the sum of gemm's result and the bias)
            out = np.empty((a.shape[0], b.shape[1]), a.dtype)
            if beta != 0:
                np.copyto(out, bias)
            return _mkl.gemm(a, b, out, alpha, beta)
        out = _mm(a, b)  # a fresh array: scale it and add the bias in place (one allocation, not two)
        if alpha != 1:
            out *= alpha
        if beta == 0:  # PyTorch ignores the bias then (even nan or inf in it)
            return out
        if beta != 1:
            bias = bias * beta
        if bias.ndim > out.ndim or bias.dtype != out.dtype:
            return bias + out
        out += bias
        return out

    def save(ctx, bias, a, b, out, alpha=1, beta=1):
        need = ctx.needs_input_grad
        ctx.save(mat1=a if need[2] else None, mat2=b if need[1] else None)
        ctx._attrs = {"alpha": alpha, "beta": beta, "mat1_sym_sizes": a._data.shape,
                      "mat1_sym_strides": _strides(a) if need[1] else (),
                      "mat2_sym_sizes": b._data.shape, "mat2_sym_strides": _strides(b) if need[2] else ()}

    def backward(ctx, g):
        need = ctx.needs_input_grad
        a = ctx._attrs
        alpha, beta = a["alpha"], a["beta"]
        return ((g if beta == 1 else g * beta) if need[0] else None,
                _mm_mat1_backward(g, ctx.mat2, a["mat1_sym_sizes"], a["mat1_sym_strides"], alpha)
                if need[1] else None,
                _mm_mat2_backward(g, ctx.mat1, a["mat2_sym_sizes"], a["mat2_sym_strides"], alpha)
                if need[2] else None)

    def jvp(bias, a, b, out, dbias, da, db, alpha=1, beta=1):
        if alpha == 1 and beta == 1:
            return dbias + da.mm(b) + a.mm(db)
        return dbias * beta + (da.mm(b) + a.mm(db)) * alpha


def _shape_err(a, b):
    raise RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
        f"{b.shape[0]}x{b.shape[1]})")


@export()
def mm(input, mat2):
    a, b = input._data, mat2._data
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"{'self' if a.ndim != 2 else 'mat2'} must be a matrix")
    if a.shape[1] != b.shape[0]:
        _shape_err(input, mat2)
    if a.dtype is b.dtype:  # mm never promotes: NumPy's product of two arrays of one dtype has it
        return apply_op(Mm, (input, mat2))
    _check_same_dtype("mm", input, mat2)
    return apply_op(Mm, (input, mat2), out_dtype=result_dtype(input, mat2))


@export()
def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    _check_same_dtype("bmm", input, mat2)
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, "
            f"{input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return apply_op(Bmm, (input, mat2), out_dtype=result_dtype(input, mat2))


@export()
def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    _check_same_dtype("dot", input, other)
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of "
            "elements, but got {} and {} elements respectively".format(
                input.shape[0], other.shape[0], input.shape[0], other.shape[0]))
    return apply_op(Dot, (input, other), out_dtype=result_dtype(input, other))


@export()
def mv(input, vec):
    _check_same_dtype("mv", input, vec)
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
            f"vec ({vec.shape[0]})")
    return apply_op(Mv, (input, vec), out_dtype=result_dtype(input, vec))


_ADDMM_PLAIN = {}  # alpha = beta = 1: the defaults of forward, save and jvp (shared: never written)


@export()
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if mat1._data.shape[1] != mat2._data.shape[0]:
        _shape_err(mat1, mat2)
    dtype = mat1._data.dtype
    if not (dtype is mat2._data.dtype and dtype is input._data.dtype):
        _check_same_dtype("addmm", input, mat1, mat2)
    same = dtype is mat2._data.dtype and dtype is input._data.dtype  # (nn.Linear) NumPy's dtype is right
    plain = alpha.__class__ is int and beta.__class__ is int and alpha == 1 and beta == 1  # (not 1.0: saved as given)
    attrs = _ADDMM_PLAIN if plain else {"alpha": alpha, "beta": beta}
    return apply_op(Addmm, (input, mat1, mat2), attrs, out_dtype=None if same else result_dtype(mat1, mat2))


@export()
def matmul(input, other):
    """``input @ other`` with PyTorch's dispatch (and its node names)."""
    da, db = input.ndim, other.ndim
    if da == 2 and db == 2:  # the common case first
        return mm(input, other)
    from .shape import SqueezeMatmul, UnsafeView

    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:
        if input.shape[0] != other.shape[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied (1x{input.shape[0]} and "
                f"{other.shape[0]}x{other.shape[1]})")
        out = mm(input.unsqueeze(0), other)
        return apply_op(SqueezeMatmul, (out,), {"self_sym_sizes": out.shape, "dim": 0})
    if da == 2 and db == 2:
        return mm(input, other)
    if da >= 3 and db <= 2:
        # fold the batch into rows: UnsafeViewBackward0 <- MmBackward0 <- ViewBackward0
        if db == 1:
            out = matmul(input, other.unsqueeze(1))
            return out.squeeze(-1)
        batch = input.shape[:-1]
        if input.shape[-1] != other.shape[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({int(np.prod(batch))}x{input.shape[-1]} and "
                f"{other.shape[0]}x{other.shape[1]})")
        folded = input.reshape(-1, input.shape[-1])
        out = mm(folded, other)
        return apply_op(UnsafeView, (out,), {"shape": batch + (other.shape[1],),
                                              "self_sym_sizes": out.shape})
    # general batched case: broadcast the batch dims, then bmm
    a = input.unsqueeze(0) if da == 1 else input
    b = other.unsqueeze(-1) if db == 1 else other
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{int(np.prod(a.shape[:-2]))}, "
            f"{a.shape[-1]}] but got: [{int(np.prod(b.shape[:-2]))}, {b.shape[-2]}].")
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    a3 = a.expand(batch + a.shape[-2:]).reshape(-1, a.shape[-2], a.shape[-1])
    b3 = b.expand(batch + b.shape[-2:]).reshape(-1, b.shape[-2], b.shape[-1])
    out = bmm(a3, b3)
    out = apply_op(UnsafeView, (out,), {"shape": batch + (a.shape[-2], b.shape[-1]),
                                        "self_sym_sizes": out.shape})
    if da == 1:
        out = out.squeeze(-2)
    if db == 1:
        out = out.squeeze(-1)
    return out


@export()
def outer(input, vec2):
    return input.unsqueeze(1) * vec2.unsqueeze(0)
