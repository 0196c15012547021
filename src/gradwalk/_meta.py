"""The ``meta`` device: tensors with a shape, a dtype, strides and an autograd history, but no data.

PyTorch uses them to ask "what shape comes out?" without computing anything (its recipe pushes
a (1024, 3, 65536, 65536) batch through a convolution in microseconds), and to build a model's
modules without allocating their weights (``with torch.device("meta"): model = Net()``, then
``model.to_empty(device="cpu")``).

gradwalk writes few shape rules. A meta tensor's ``_data`` is a ``MetaArray``: a NumPy array
with zero strides over a single zero (``np.broadcast_to``), so it costs one element of memory
whatever its shape, plus the strides PyTorch would report. While one is alive, ``apply_op``
hands every op to ``run_op`` (below), which runs the op's ordinary NumPy forward on stand-ins
that NumPy hands back to ``MetaArray`` (the ``__array_ufunc__`` and ``__array_function__``
protocols); each answer is another ``MetaArray`` of the right shape and dtype, found without
touching data:

* elementwise ufuncs: the broadcast shape, and the dtype the ufunc gives on one zero of each input;
* reductions and scans (``sum``, ``max``, ``cumsum``, ``sort``, ...): the shape from ``axis``/``keepdims``;
* ``matmul``, ``einsum``, ``tensordot``, ``concatenate``, ``stack``, ``pad``, ``take``, ``*_like``:
  their shape rule;
* views (``reshape``, ``transpose``, slicing, ``broadcast_to``, ``sliding_window_view``, ...):
  run as they are on the zero-stride array, which allocates nothing;
* anything else: run for real on zero-stride inputs when these hold at most ``BOUND`` elements,
  else ``NotImplementedError`` naming the NumPy function (so a 10**12-element meta tensor never
  allocates).

gradwalk's elementwise ops (``pointwise.py``) get their dtype from their forward on one zero, and
the few ops whose forwards are kernels rather than NumPy calls (convolution, the matrix
products, ``sum``/``mean``, ``var``/``std``, softmax, max-pooling, ...) have a rule by node name
(``_OP_RULES``). A forward that still needs values is run on the zero-stride arrays themselves
when they are small, its result made meta; past ``BOUND`` it is refused by name.

Because the op's own code runs, the op records its own backward node (``grad_fn``), and
``backward()`` through meta tensors builds meta gradients with the same formulas.

    >>> import gradwalk as torch
    >>> x = torch.empty(2, 3, device="meta", requires_grad=True)
    >>> (x * 2).sum()
    tensor(..., device='meta', size=(), grad_fn=<SumBackward0>)
"""
import warnings

import numpy as np
from numpy.lib.stride_tricks import as_strided

# the most elements a NumPy function with no meta rule may be run on (zero-stride inputs: the
# input costs nothing, but its result and temporaries would be allocated)
BOUND = 1 << 22

NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_ITEM = "Tensor.item() cannot be called on meta tensors"
NO_NUMPY = ("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
            "host memory first.")
NONZERO = ("The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
           "data-independent implementation does not exist. This implementation returns a fake value, "
           "assuming all elements of the tensor are non-zero. To enable this registration, please set "
           "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


class _NeedsData(NotImplementedError):
    """NumPy was asked for a meta array's values (a forward that needs data: see ``run_op``)."""


def contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _strides_like(inputs, shape):
    """An elementwise result's strides: a non-contiguous input of the result's shape lends its
    dims' order (NumPy's order="K", PyTorch's TensorIterator), else contiguous."""
    for a in inputs:
        if a.__class__ is MetaArray and a.shape == shape and a.ndim > 1:
            template = a._logical_strides
            if template == contiguous_strides(shape):
                return None
            strides, step = [0] * len(shape), 1
            for d in sorted(range(len(shape)), key=lambda d: template[d]):  # innermost first
                strides[d] = step
                step *= max(shape[d], 1)
            return tuple(strides)
    return None


def empty(shape, dtype, strides=None):
    """A meta array of ``shape`` and ``dtype``: zero strides over one zero, read-only."""
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    out = np.broadcast_to(np.zeros((), dtype), shape).view(MetaArray)
    out._logical_strides = contiguous_strides(shape) if strides is None else tuple(strides)
    return out


def _plain(a):
    """The zero-stride ndarray under a meta array (what NumPy functions are run on)."""
    return a.view(np.ndarray) if a.__class__ is MetaArray else a


def _walk(value, fn):
    if isinstance(value, (list, tuple)):
        return type(value)(_walk(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _walk(v, fn) for k, v in value.items()}
    return fn(value)


def _metas(value, found):
    if value.__class__ is MetaArray:
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _metas(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _metas(v, found)
    return found


def _as_meta(result):
    """A result of NumPy run on zero-stride inputs, as meta arrays of the same shapes."""
    if isinstance(result, np.ndarray):
        if result.__class__ is MetaArray:
            return result
        strides = None
        if 0 in result.strides or not result.flags.c_contiguous:
            strides = contiguous_strides(result.shape)
        return empty(result.shape, result.dtype, strides)
    if isinstance(result, np.generic):
        return empty((), result.dtype)
    if isinstance(result, (list, tuple)):
        return type(result)(_as_meta(r) for r in result)
    return result


def _sample(value):
    """One zero of an operand's dtype (a Python number stays itself: NumPy treats it as weak)."""
    if isinstance(value, np.ndarray):
        return np.zeros((), value.dtype)
    if isinstance(value, np.generic):
        return np.zeros((), value.dtype)
    return value


def _check_bound(name, metas):
    total = sum(m.size for m in metas)
    if total > BOUND:
        raise NotImplementedError(
            f"gradwalk's meta device has no shape rule for numpy.{name} and will not run it on "
            f"{total} elements without data (at most {BOUND}); make these tensors smaller or on the CPU")


def _run_real(func, name, args, kwargs):
    _check_bound(name, _metas((args, kwargs), []))
    with np.errstate(all="ignore"):
        result = func(*_walk(args, _plain), **_walk(kwargs, _plain))
    return _as_meta(result)


def _reduced_shape(shape, axis, keepdims):
    ndim = len(shape)
    if axis is None:
        axes = set(range(ndim))
    else:
        axes = {a % ndim if ndim else a for a in (axis if isinstance(axis, tuple) else (axis,))}
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _matmul_shape(a, b):
    """np.matmul's result shape for operand shapes ``a`` and ``b``."""
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    sa = a if len(a) > 1 else (1,) + a
    sb = b if len(b) > 1 else b + (1,)
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size {sb[-2]} "
                         f"is different from {sa[-1]})")
    shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2], sb[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


class MetaArray(np.ndarray):
    """The data of a meta tensor: a shape and a dtype over one zero (zero strides, read-only),
    plus the strides PyTorch would report (``_logical_strides``)."""

    _logical_strides = None

    def __array_finalize__(self, obj):
        if self._logical_strides is None or self._logical_strides.__len__() != self.ndim:
            self._logical_strides = contiguous_strides(self.shape)
        _live[0] += 1  # while any meta array lives, apply_op asks run_op first
        if _live[0] == 1:
            _install_hook(run_op)

    def __del__(self):
        _live[0] -= 1
        if not _live[0]:
            try:
                _install_hook(None)
            except ImportError:  # the interpreter is shutting down
                pass

    # ---- ufuncs: shapes by broadcasting, dtypes from one zero of each input
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            for o in out:
                if o is not None and o.__class__ is not MetaArray:
                    raise _NeedsData(
                        f"gradwalk's meta device: numpy.{ufunc.__name__} would write values computed from "
                        "a meta tensor into a real array")
        kwargs.pop("where", None)
        with np.errstate(all="ignore"):
            if method == "__call__":
                if ufunc is np.matmul:
                    a, b = inputs
                    shape = _matmul_shape(np.shape(a), np.shape(b))
                    dtype = np.matmul(np.zeros((1, 1), np.asarray(_sample(a)).dtype),
                                      np.zeros((1, 1), np.asarray(_sample(b)).dtype)).dtype
                    result = (empty(shape, dtype),)
                elif ufunc.signature is not None:
                    return _run_real(ufunc, ufunc.__name__, inputs, kwargs)
                else:
                    shape = np.broadcast_shapes(*(np.shape(i) for i in inputs))
                    sample = ufunc(*(_sample(i) for i in inputs), **kwargs)
                    samples = sample if isinstance(sample, tuple) else (sample,)
                    strides = _strides_like(inputs, shape)
                    result = tuple(empty(shape, np.asarray(s).dtype, strides) for s in samples)
            elif method in ("reduce", "accumulate"):
                (a,) = inputs
                axis = kwargs.pop("axis", 0)
                keepdims = kwargs.pop("keepdims", False)
                kwargs.pop("initial", None)
                if method == "reduce":
                    shape = _reduced_shape(a.shape, axis, keepdims)
                    sample = ufunc.reduce(np.zeros((1,), a.dtype), **kwargs)
                else:
                    shape = a.shape
                    sample = ufunc.accumulate(np.zeros((1,), a.dtype), **kwargs)
                result = (empty(shape, np.asarray(sample).dtype),)
            elif method == "outer":
                a, b = inputs
                sample = ufunc(_sample(a), _sample(b), **kwargs)
                result = (empty(np.shape(a) + np.shape(b), np.asarray(sample).dtype),)
            elif method == "at":
                if inputs[0].__class__ is not MetaArray:
                    raise _NeedsData(
                        f"gradwalk's meta device: numpy.{ufunc.__name__}.at would write values computed from "
                        "a meta tensor into a real array")
                return None
            else:
                return _run_real(getattr(ufunc, method), f"{ufunc.__name__}.{method}", inputs, kwargs)
        if out is not None:
            for o, r in zip(out, result):
                if o is not None and o.shape != r.shape:
                    raise ValueError(f"non-broadcastable output operand with shape {o.shape} doesn't match "
                                     f"the broadcast shape {r.shape}")
            result = tuple(o if o is not None else r for o, r in zip(out, result))
        return result[0] if len(result) == 1 else result

    # ---- array functions: views run as they are; a few shape rules; the rest bounded
    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        rule = _RULES.get(name)
        if rule is not None:
            with np.errstate(all="ignore"):
                return rule(*args, **kwargs)
        if name in _VIEWS:
            result = _as_meta(func(*_walk(args, _plain), **_walk(kwargs, _plain)))
            first = args[0] if args else None
            if first.__class__ is MetaArray and name not in _NOT_ON_PROXY:
                # the same view of a proxy with the logical strides (never read) gives the view's strides
                proxy = as_strided(np.zeros(1, np.int8), first.shape, first._logical_strides)
                views = func(proxy, *args[1:], **kwargs)
                for r, v in zip(result if isinstance(result, (list, tuple)) else (result,),
                                views if isinstance(views, (list, tuple)) else (views,)):
                    if r.__class__ is MetaArray and isinstance(v, np.ndarray) and v.shape == r.shape:
                        r._logical_strides = v.strides
                        if name == "broadcast_to":  # a new dim of size 1: PyTorch's expand strides it
                            r._logical_strides = _expanded_strides(r.shape, v.strides, r.ndim - first.ndim)
            return result
        return _run_real(func, name, args, kwargs)

    # ---- methods that would read or copy data
    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        for k in keys:
            if k.__class__ is MetaArray and k.dtype == np.bool_:
                raise NotImplementedError(NONZERO)
        basic = all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer)) for k in keys)
        plain = self.view(np.ndarray)
        if basic:
            result = plain[key]
            strides = as_strided(np.zeros(1, np.int8), self.shape, self._logical_strides)[key].strides
            return empty(np.shape(result), self.dtype, strides)
        if self.size > BOUND:
            _check_bound("take (advanced indexing)", [self])
        return _as_meta(plain[_walk(key, _plain)])

    def __setitem__(self, key, value):
        pass  # a meta tensor holds nothing to write

    def transpose(self, *axes):
        result = self.view(np.ndarray).transpose(*axes)
        proxy = as_strided(np.zeros(1, np.int8), self.shape, self._logical_strides).transpose(*axes)
        return empty(result.shape, self.dtype, proxy.strides)

    @property
    def T(self):
        return self.transpose()

    def swapaxes(self, a, b):
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def reshape(self, *shape, **kwargs):
        shape = self.view(np.ndarray).reshape(*shape, **kwargs).shape
        try:  # a view where PyTorch's view would be one (so the strides say so), else contiguous
            proxy = as_strided(np.zeros(1, np.int8), self.shape, self._logical_strides)
            strides = np.reshape(proxy, shape, copy=False).strides
        except ValueError:
            strides = None
        return empty(shape, self.dtype, strides)

    def astype(self, dtype, *args, **kwargs):
        return empty(self.shape, np.dtype(dtype), self._logical_strides)

    def copy(self, order="C"):
        return empty(self.shape, self.dtype)

    def ravel(self, order="C"):
        return empty((self.size,), self.dtype)

    flatten = ravel

    def fill(self, value):
        pass

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return empty(_reduced_shape(self.shape, axis, keepdims), np.intp)

    argmin = argmax

    def argsort(self, axis=-1, *args, **kwargs):
        return empty(self.shape if axis is not None else (self.size,), np.intp)

    def dot(self, other):
        return np.matmul(self, other) if self.ndim and np.ndim(other) else np.multiply(self, other)

    def nonzero(self):
        raise NotImplementedError(NONZERO)

    def item(self, *args):
        raise RuntimeError(NO_ITEM)

    def __bool__(self):
        raise RuntimeError(NO_ITEM)

    def __float__(self):
        raise RuntimeError(NO_ITEM)

    def __int__(self):
        raise RuntimeError(NO_ITEM)

    def __index__(self):
        raise RuntimeError(NO_ITEM)

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def tobytes(self, order="C"):
        raise NotImplementedError(NO_DATA)

    def __array__(self, dtype=None, copy=None):
        raise TypeError(NO_NUMPY)

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__

    def __reduce__(self):
        return (empty, (self.shape, self.dtype, self._logical_strides))

    def __deepcopy__(self, memo):
        return empty(self.shape, self.dtype, self._logical_strides)


def _expanded_strides(shape, strides, new):
    strides = list(strides)
    for d in reversed(range(new)):
        if shape[d] == 1:
            strides[d] = shape[d + 1] * strides[d + 1] if d + 1 < len(shape) else 1
    return tuple(strides)


# NumPy functions that only make views (nothing allocated on a zero-stride array): run as they are
_VIEWS = frozenset({
    "reshape", "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims",
    "broadcast_to", "broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
    "sliding_window_view", "flip", "fliplr", "flipud", "rot90", "shape", "ndim", "size", "result_type",
    "can_cast", "min_scalar_type", "iscomplexobj", "isrealobj", "split", "array_split", "unstack",
    "real", "imag", "isscalar", "may_share_memory", "shares_memory",
})
# views whose strides are not worked out on a proxy (reshape may copy, and a copy would read it)
_NOT_ON_PROXY = frozenset({"reshape", "shape", "ndim", "size", "result_type", "can_cast", "min_scalar_type",
                           "iscomplexobj", "isrealobj", "isscalar", "may_share_memory", "shares_memory",
                           "broadcast_arrays", "real", "imag", "flip", "fliplr", "flipud", "rot90"})


def _like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    shape = np.shape(a) if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    return empty(shape, np.dtype(dtype) if dtype is not None else np.asarray(_sample(a)).dtype)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like(a, dtype, shape=shape)


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    if axis is None:
        arrays = [np.ravel(a) for a in arrays]
        axis = 0
    first = np.shape(arrays[0])
    axis = axis % len(first)
    for a in arrays[1:]:
        s = np.shape(a)
        if len(s) != len(first) or any(x != y for i, (x, y) in enumerate(zip(s, first)) if i != axis):
            raise ValueError("all the input array dimensions except for the concatenation axis must match "
                             "exactly")
    shape = list(first)
    shape[axis] = sum(np.shape(a)[axis] for a in arrays)
    dtype = np.dtype(dtype) if dtype is not None else np.result_type(*[_sample(a) for a in arrays])
    return empty(shape, dtype)


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    shapes = {np.shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    shape = list(shapes.pop())
    axis = axis % (len(shape) + 1)
    shape.insert(axis, len(arrays))
    dtype = np.dtype(dtype) if dtype is not None else np.result_type(*[_sample(a) for a in arrays])
    return empty(shape, dtype)


def _einsum(subscripts, *operands, out=None, dtype=None, **kwargs):
    if not isinstance(subscripts, str) or "." in subscripts:
        return _run_real(np.einsum, "einsum", (subscripts,) + operands, dict(kwargs, dtype=dtype))
    inputs, _, output = subscripts.replace(" ", "").partition("->")
    terms = inputs.split(",")
    sizes = {}
    for term, op in zip(terms, operands):
        for letter, n in zip(term, np.shape(op)):
            if sizes.get(letter, 1) != 1 and n != 1 and sizes[letter] != n:
                raise ValueError(f"operands could not be broadcast together (einsum '{letter}': "
                                 f"{sizes[letter]} and {n})")
            sizes[letter] = max(n, sizes.get(letter, 1)) if n else 0
    if not _:
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    result = dtype if dtype is not None else np.result_type(*[_sample(op) for op in operands])
    return empty([sizes[c] for c in output], result)


def _tensordot(a, b, axes=2):
    if isinstance(axes, int):
        axes_a, axes_b = list(range(np.ndim(a) - axes, np.ndim(a))), list(range(axes))
    else:
        axes_a, axes_b = ([x] if isinstance(x, int) else list(x) for x in axes)
    axes_a = [x % np.ndim(a) for x in axes_a]
    axes_b = [x % np.ndim(b) for x in axes_b]
    for x, y in zip(axes_a, axes_b):
        if np.shape(a)[x] != np.shape(b)[y]:
            raise ValueError("shape-mismatch for sum")
    shape = [n for i, n in enumerate(np.shape(a)) if i not in axes_a] + \
            [n for i, n in enumerate(np.shape(b)) if i not in axes_b]
    return empty(shape, np.result_type(_sample(a), _sample(b)))


def _dot(a, b, out=None):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return np.multiply(a, b)
    if np.ndim(b) <= 2:
        return np.matmul(a, b)
    return _tensordot(a, b, ([np.ndim(a) - 1], [np.ndim(b) - 2]))


def _pad(array, pad_width, mode="constant", **kwargs):
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (np.ndim(array), 2))
    return empty([n + int(lo) + int(hi) for n, (lo, hi) in zip(np.shape(array), widths)], array.dtype)


def _where(condition, *xy):
    if not xy:
        raise NotImplementedError(NONZERO)
    x, y = xy
    shape = np.broadcast_shapes(np.shape(condition), np.shape(x), np.shape(y))
    return empty(shape, np.result_type(_sample(x), _sample(y)))


def _copyto(dst, src, casting="same_kind", where=True):
    if dst.__class__ is not MetaArray:
        raise _NeedsData(NO_DATA)


def _take_along_axis(arr, indices, axis=-1, **kwargs):
    return empty(np.shape(indices), arr.dtype)


def _take(a, indices, axis=None, out=None, mode="raise"):
    if indices.__class__ is not MetaArray and np.size(indices) <= BOUND and np.size(a) <= BOUND:
        return _as_meta(np.take(_plain(a), _plain(indices), axis=axis, mode=mode))  # (its index errors)
    shape = np.shape(indices) if axis is None else \
        np.shape(a)[:axis % np.ndim(a)] + np.shape(indices) + np.shape(a)[axis % np.ndim(a) + 1:]
    return empty(shape, a.dtype)


def _ravel(a, order="C"):
    return empty((int(np.size(a)),), a.dtype)


def _ascontiguous(a, dtype=None, **kwargs):
    return empty(np.shape(a), np.dtype(dtype) if dtype is not None else a.dtype)


def _nonzero(a):
    raise NotImplementedError(NONZERO)


def _raise(error):
    raise error


def _no_data(*args, **kwargs):
    raise NotImplementedError(NO_DATA)


def _tile(a, reps):
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    shape = (1,) * (len(reps) - np.ndim(a)) + np.shape(a)
    reps = (1,) * (len(shape) - len(reps)) + reps
    return empty([n * r for n, r in zip(shape, reps)], a.dtype)


def _reduction(func):
    """np.max, np.var, ...: the shape from ``axis``/``keepdims``, the dtype from one element."""
    def rule(a, axis=None, *args, keepdims=False, **kwargs):
        kwargs.pop("out", None)
        kwargs.pop("where", None)
        kwargs.pop("initial", None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (var of one element, ...)
            sample = func(np.zeros((1,) * np.ndim(a), a.dtype), axis, *args, keepdims=keepdims, **kwargs)
        return empty(_reduced_shape(np.shape(a), axis, keepdims), np.asarray(sample).dtype)

    return rule


def _scan(func, index=False):
    """np.cumsum, np.sort, np.argsort, ...: the input's shape (flattened for axis=None)."""
    def rule(a, axis=-1 if index or func is np.sort else None, *args, **kwargs):
        kwargs.pop("out", None)
        shape = np.shape(a) if axis is not None else (int(np.size(a)),)
        sample = func(np.zeros((1,) * max(np.ndim(a), 1), a.dtype), axis, *args, **kwargs)
        return empty(shape, np.asarray(sample).dtype)

    return rule


def _arg_reduce(a, axis=None, out=None, *, keepdims=False):
    return empty(_reduced_shape(np.shape(a), axis, keepdims), np.intp)


def _no_kernel(aten):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"aten::{aten}: attempted to run this operator with Meta tensors, but there was no fake impl or "
            "Meta kernel registered. You may have run into this message while using an operator with PT2 "
            "compilation APIs (torch.compile/torch.export); in order to use this operator with those APIs "
            "you'll need to add a fake impl. Please see the following for next steps:  "
            "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")

    return refuse


_RULES = {
    "argmax": _arg_reduce, "argmin": _arg_reduce, "allclose": lambda *a, **k: _raise(RuntimeError(NO_ITEM)),
    "array_equal": _no_kernel("equal"), "unique": _no_kernel("_unique2"),
    **{f.__name__: _reduction(f) for f in (np.max, np.min, np.amax, np.amin, np.sum, np.mean, np.prod,
                                           np.any, np.all, np.var, np.std, np.ptp, np.nanmax, np.nanmin,
                                           np.nansum, np.nanmean, np.median, np.count_nonzero)},
    **{f.__name__: _scan(f) for f in (np.cumsum, np.cumprod, np.nancumsum)},
    "sort": _scan(np.sort), "argsort": _scan(np.argsort, index=True),
    "empty_like": _like, "zeros_like": _like, "ones_like": _like, "full_like": _full_like,
    "concatenate": _concatenate, "stack": _stack, "einsum": _einsum, "tensordot": _tensordot,
    "dot": _dot, "pad": _pad, "take": _take, "where": _where, "copyto": _copyto, "take_along_axis": _take_along_axis,
    "ravel": _ravel, "ascontiguousarray": _ascontiguous, "asfortranarray": _ascontiguous,
    "nonzero": _nonzero, "argwhere": _nonzero, "flatnonzero": _nonzero, "tile": _tile,
    "array_repr": _no_data, "array_str": _no_data,
    "save": _no_data, "savez": _no_data,
}


def checked_devices(data, inputs):
    """An op's meta result, once its tensor inputs are checked to be on one device: a meta
    tensor meets a CPU tensor only as a 0-dim one (PyTorch lets those in as numbers)."""
    expected = None
    for t in inputs:
        if t._is_wrapped_number:
            continue
        here = "meta" if t._data.__class__ is MetaArray else "cpu"
        if here == "cpu" and not t._data.ndim:
            continue
        if expected is None:
            expected = here
        elif here != expected:
            raise RuntimeError(f"Tensor on device {here} is not on the expected device {expected}!")
    return data


# ---- ops on meta tensors -------------------------------------------------------------------
#
# ``apply_op`` hands an op to ``run_op`` first (``core.observers.meta``, installed while any meta
# array is alive, so a program with none pays nothing). An op with a meta input
# runs its NumPy forward on *probes*: stand-ins for the meta arrays that NumPy dispatches back to
# ``MetaArray`` and that refuse to give up data (``np.asarray(probe)`` raises ``_NeedsData``).
# A forward that only uses NumPy's ufuncs and functions works this way at any size. A forward
# that needs values (its own loops, compiled kernels, ``np.asarray``) is run again on the
# zero-stride arrays themselves, if they hold at most BOUND elements; its result is then
# replaced by a meta array of the same shape and dtype. Past BOUND it is refused by name.

_live = [0]  # meta arrays alive: the hook is installed while there are any




class _Probe(np.lib.mixins.NDArrayOperatorsMixin):
    """A meta array that NumPy cannot turn into a real one."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)
    size = property(lambda self: self.a.size)
    itemsize = property(lambda self: self.a.itemsize)
    T = property(lambda self: _Probe(self.a.T))

    def __array__(self, *args, **kwargs):
        raise _NeedsData

    def __bool__(self):
        raise _NeedsData

    __float__ = __int__ = __index__ = __bool__

    def __len__(self):
        return len(self.a)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            kwargs["out"] = _walk(kwargs["out"], _unprobe)
        return _walk(MetaArray.__array_ufunc__(self.a, ufunc, method, *_walk(inputs, _unprobe), **kwargs),
                     _probe)

    def __array_function__(self, func, types, args, kwargs):
        return _walk(MetaArray.__array_function__(self.a, func, types, _walk(args, _unprobe),
                                                  _walk(kwargs, _unprobe)), _probe)

    def __getitem__(self, key):
        return _probe(self.a[_walk(key, _unprobe)])

    def __setitem__(self, key, value):
        pass

    def __getattr__(self, name):
        if name.startswith("__") or name in ("base", "data", "ctypes", "view", "tofile"):
            raise AttributeError(name)  # __array_interface__ and friends would hand NumPy the zeros
        value = getattr(self.a, name)
        if callable(value):
            return lambda *args, **kwargs: _walk(value(*_walk(args, _unprobe), **_walk(kwargs, _unprobe)), _probe)
        return _probe(value)


def _probe(value):
    return _Probe(value) if value.__class__ is MetaArray else value


def _unprobe(value):
    return value.a if value.__class__ is _Probe else value


def _meta_result(result):
    result = _walk(result, _unprobe)
    return _walk(result, lambda r: r if r.__class__ is MetaArray or not isinstance(r, (np.ndarray, np.generic))
                 else _as_meta(r))


def _forward_on_meta(op, arrays, attrs):
    """An op's forward result for meta inputs, as meta arrays (see above)."""
    rule = _OP_RULES.get(op.name)
    if rule is not None:
        return rule(*arrays, **attrs)
    if op.scalar_operands:  # elementwise: the broadcast shape, and the dtype the forward gives on zeros
        shape = np.broadcast_shapes(*(a.shape for a in arrays if isinstance(a, np.ndarray)))
        with np.errstate(all="ignore"):
            zeros = op.forward(*(np.zeros((), a.dtype)[()] if isinstance(a, np.ndarray) else a for a in arrays),
                               **attrs)
        strides = _strides_like(arrays, shape)
        if isinstance(zeros, tuple):
            return tuple(empty(shape, np.asarray(z).dtype, strides) for z in zeros)
        return empty(shape, np.asarray(zeros).dtype, strides)
    try:
        with np.errstate(all="ignore"):
            return _meta_result(op.forward(*_walk(arrays, _probe), **attrs))
    except NotImplementedError as error:
        if not isinstance(error, _NeedsData):
            raise  # a meta limit PyTorch has too (nonzero, item): as PyTorch says it
        cause = error
    except Exception as error:  # noqa: BLE001 - the forward needs values: run it on zeros if small
        cause = error
    metas = _metas(arrays, [])
    if sum(m.size for m in metas) > BOUND:
        raise NotImplementedError(
            f"gradwalk's meta device cannot compute {op.name or op.__name__}'s result for "
            f"{' x '.join(str(list(m.shape)) for m in metas)} without data: its forward needs values "
            f"({type(cause).__name__}), and these tensors hold more than {BOUND} elements") from cause
    with np.errstate(all="ignore"):
        return _meta_result(op.forward(*_walk(arrays, _plain), **attrs))


_forwarding_ops = {}


def _forwarding(op):
    """``op`` whose forward hands back the result computed by ``_forward_on_meta`` (so
    ``apply_op`` records the op's own node, saved values and in-place bookkeeping)."""
    sub = _forwarding_ops.get(op)
    if sub is None:
        node = op.Node
        sub = type(op.__name__, (op,), {"forward": staticmethod(lambda *args, **kwargs: _pending.pop())})
        sub.Node = node  # the op's own node class (its name, formulas and saved values)
        _forwarding_ops[op] = sub
    return sub


_pending = []


def run_op(op, inputs, attrs, out_dtype, inplace):
    """``apply_op`` for an op with a meta input; None when no input is meta."""
    for t in inputs:
        if t._data.__class__ is MetaArray:
            break
    else:
        return None
    from .ops.core import apply_op

    if op.name == "CopyBackwards":  # x.copy_(src) copies between devices: into meta is nothing to do
        if inputs[0]._data.__class__ is not MetaArray:
            raise NotImplementedError(NO_DATA)
    else:
        checked_devices(None, inputs)
    arrays = [t._data if not t._is_wrapped_number else t._py for t in inputs]
    _pending.append(_forward_on_meta(op, arrays, attrs))
    return apply_op(_forwarding(op), inputs, attrs, out_dtype, inplace, True)


def to_device(t, where, dtype):
    """``t.to("meta")`` (a ``ToCopyBackward0`` node, as in PyTorch) or ``t.to("cpu")`` from meta
    (refused: there is nothing to copy)."""
    from ._device import META
    from .ops.core import apply_op
    from .ops.shape import ToCopy

    is_meta = t._data.__class__ is MetaArray
    if where is not META:
        if is_meta:
            raise NotImplementedError(NO_DATA)
        return None
    if is_meta:
        return None
    d = t.dtype if dtype is None else dtype
    _pending.append(empty(t.shape, d.np))
    return apply_op(_forwarding(ToCopy), (t,), {"dtype": d.np, "self_dtype": t.dtype}, out_dtype=d)


def _install_hook(hook):
    from .ops import core

    core.observers.meta = hook
    core.observers.refresh()


# ---- the few ops whose forward cannot run on probes at any size (written as loops or kernels)

def _conv_shape(x, w, b=None, *, stride, padding, dilation, groups):
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = [n, o]
    for size, k, s, p, d in zip((h, wd), (kh, kw), stride, padding, dilation):
        out.append((size + 2 * p - d * (k - 1) - 1) // s + 1)
    return empty(out, np.result_type(_sample(x), _sample(w)))


def _sum_all(x, self_sym_sizes=None, self_sym_numel=None, dtype=None):
    return np.add.reduce(x, axis=None, dtype=dtype)


def _sum_dim(x, dim, keepdim, self_sym_sizes=None, self_sym_numel=None, dtype=None):
    return np.add.reduce(x, axis=tuple(range(x.ndim)) if dim is None else dim, keepdims=keepdim, dtype=dtype)


def _same(x, *args, **kwargs):  # softmax and log_softmax: the input's shape and dtype
    return empty(x.shape, x.dtype)


def _vector_norm(x, ord, dim, keepdim):
    return empty(_reduced_shape(x.shape, dim, keepdim), x.dtype)


def _max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, indices_out):
    from .ops.nn_ops import _pool_output_size

    n, c, h, w = x.shape
    shape = (n, c) + tuple(_pool_output_size(size, k, s, p, d, ceil_mode)
                           for size, k, s, p, d in zip((h, w), kernel_size, stride, padding, dilation))
    indices_out.append(empty(shape, np.int64))
    return empty(shape, x.dtype)


def _extreme(x, dim=None, keepdim=False):  # max(), min(), amax, amin
    return empty(_reduced_shape(x.shape, dim, keepdim), x.dtype)


def _moment(x, dim, correction, keepdim):  # var, std
    return empty(_reduced_shape(x.shape, dim, keepdim), x.dtype)


def _addmm(bias, a, b, alpha=1, beta=1):
    return np.add(bias, np.matmul(a, b))


# reductions summed by gradwalk's own cascade (PyTorch's summation order), not by a ufunc; matrix
# products through MKL/BLAS wrappers
_OP_RULES = {"ConvolutionBackward0": _conv_shape, "SumBackward0": _sum_all, "SumBackward1": _sum_dim,
             "MeanBackward0": _sum_all, "MeanBackward1": _sum_dim, "MmBackward0": np.matmul,
             "BmmBackward0": np.matmul, "AddmmBackward0": _addmm, "SoftmaxBackward0": _same,
             "LogSoftmaxBackward0": _same, "LinalgVectorNormBackward0": _vector_norm,
             "MaxPool2DWithIndicesBackward0": _max_pool2d, "MaxBackward1": _extreme, "MinBackward1": _extreme,
             "AmaxBackward0": _extreme, "AminBackward0": _extreme, "VarBackward0": _moment,
             "StdBackward0": _moment}
