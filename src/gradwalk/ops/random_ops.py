"""Random draws: ``rand``, ``randn``, ``randint``, ``randperm``, ``normal``, ``bernoulli``,
``multinomial`` and the in-place samplers (``uniform_``, ``normal_``, ``random_``, ...).

Each is PyTorch's composition of its CPU kernels (``gradwalk._distributions``) on PyTorch's
generator (``gradwalk.random``): ``rand`` is ``empty(...).uniform_()``, ``randn`` is
``empty(...).normal_()``, ``randint`` is ``empty(...).random_(low, high)``. A kernel writes its
values in the output's memory order (TensorIterator's), so a transposed tensor is filled along
its storage, as in PyTorch.
"""
import functools
import math

import numpy as np

from .. import _distributions as D
from .. import tensor as _tensor  # the module; its Tensor class is read at call time
from .. import random as _random
from .._device import META, placement
from .._meta import MetaArray, empty as _meta_empty
from .._dtype import as_dtype, get_default_dtype, int64
from ..grad_mode import _state as _grad_state
from ._util import export
from .core import observers as _observers
from .factories import _make, _size


def _vmap_random(kind):
    """Under ``vmap`` a random op follows vmap's ``randomness`` flag (``func/_batching.py``,
    ``random_op``: "error" raises, "same" and "different" as PyTorch's); outside a vmap the
    function runs after one check."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _observers.vmap is not None:
                from ..func import _batching

                if not _batching.running.random_busy:
                    return _batching.random_op(fn, kind, args, kwargs)
            return fn(*args, **kwargs)

        return wrapper

    return decorate


def _memory_order(arr):
    """``arr`` viewed with its axes in storage order (largest stride first)."""
    return _memory_order_like(arr, arr)


def _memory_order_like(arr, other):
    """``other`` (of ``arr``'s shape) with its axes in ``arr``'s storage order."""
    return other.transpose(sorted(range(arr.ndim), key=lambda d: -abs(arr.strides[d])))


def _fill(self, draw, into=None):
    """Write ``draw(n, contiguous)`` (values in kernel order) into ``self`` in place; or, for a
    contiguous tensor, let ``into(n, flat)`` write them into its storage directly."""
    if self._requires_grad and self.grad_fn is None and _grad_state.grad_enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    arr = self._array()
    n = arr.size
    if n and arr.__class__ is not MetaArray:  # a meta tensor has nothing to draw into
        if into is not None and arr.flags.c_contiguous:
            flat = arr.reshape(-1)
            values = into(n, flat)
            if values is not flat:
                flat[...] = values
        elif arr.flags.c_contiguous:
            arr.reshape(-1)[...] = draw(n, True)
        else:
            values = draw(n, False)
            view = _memory_order(arr)
            view[...] = np.asarray(values).reshape(view.shape)
    self._version_counter[0] += 1
    return self


def _floating(self, op):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"\"{op}\" not implemented for '{self.dtype.short_name}'")


# ------------------------------------------------------------------------------------------------
# seeding: torch.manual_seed, torch.get_rng_state, ...

for _name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"):
    export(_name, method=False)(getattr(_random, _name))


# ------------------------------------------------------------------------------------------------
# in-place samplers (Tensor methods)


@export(function=False)
@_vmap_random("inplace")
def uniform_(self, a=0.0, b=1.0, *, generator=None):
    _floating(self, "check_uniform_bounds")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    gen = _random._resolve(generator)
    dtype = self._array().dtype
    return _fill(self, lambda n, _: D.uniform(gen, n, dtype, a, b),
                 into=lambda n, flat: D.uniform(gen, n, dtype, a, b, out=flat))


@export(function=False)
@_vmap_random("inplace")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _floating(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    gen = _random._resolve(generator)
    dtype = self._array().dtype
    return _fill(self, lambda n, contiguous: D.normal(gen, n, dtype, mean, std, contiguous),
                 into=lambda n, flat: D.normal(gen, n, dtype, mean, std, True, out=flat))


@export(function=False)
@_vmap_random("inplace")
def random_(self, from_=None, to=None, *, generator=None, **kwargs):
    """``random_()``, ``random_(to)``, ``random_(from, to)`` (``from`` is a keyword too)."""
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument {next(iter(kwargs))!r}")
    gen = _random._resolve(generator)
    np_dtype = self._array().dtype
    if from_ is None and to is None:
        return _fill(self, lambda n, _: D.random_default(gen, n, np_dtype))
    if to is None:  # random_(to)
        from_, to = 0, from_
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    return _fill(self, lambda n, _: D.random_from_to(gen, n, np_dtype, from_, to))


@export(function=False)
@_vmap_random("inplace")
def exponential_(self, lambd=1.0, *, generator=None):
    _floating(self, "exponential_cpu")
    if not (lambd > 0 and math.isfinite(lambd)):
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    gen = _random._resolve(generator)
    return _fill(self, lambda n, _: D.exponential(gen, n, lambd))


@export(function=False)
@_vmap_random("inplace")
def geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    gen = _random._resolve(generator)
    return _fill(self, lambda n, _: D.geometric(gen, n, p))


@export(function=False)
@_vmap_random("inplace")
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    _floating(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    gen = _random._resolve(generator)
    return _fill(self, lambda n, _: D.log_normal(gen, n, mean, std))


@export(function=False)
@_vmap_random("inplace")
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    _floating(self, "cauchy_cpu")
    gen = _random._resolve(generator)
    return _fill(self, lambda n, _: D.cauchy(gen, n, median, sigma))


@export(function=False)
@_vmap_random("inplace")
def bernoulli_(self, p=0.5, *, generator=None):
    """``bernoulli_(0.3)`` (one double uniform per element below p) or ``bernoulli_(p_tensor)``
    (a uniform of p's type per element)."""
    gen = _random._resolve(generator)
    if self._data.__class__ is MetaArray or isinstance(p, _tensor.Tensor) and p._data.__class__ is MetaArray:
        return _fill(self, None) if self._data.__class__ is MetaArray else _no_data()  # nothing to draw
    if isinstance(p, _tensor.Tensor):
        probs = p._data
        if probs.size and ((probs < 0).any() or (probs > 1).any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")

        def draw(n, contiguous):
            pb = np.broadcast_to(probs, self.shape)
            if not contiguous:
                pb = _memory_order_like(self._array(), pb)
            return D.bernoulli_tensor(gen, np.ascontiguousarray(pb)).reshape(-1)
        return _fill(self, draw)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill(self, lambda n, _: D.bernoulli_scalar(gen, n, p))


# ------------------------------------------------------------------------------------------------
# factories


def _no_data():
    from .._meta import NO_DATA

    raise NotImplementedError(NO_DATA)


def _float_dtype(dtype, op):
    d = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if not d.is_floating_point:
        raise RuntimeError(f"\"{op}\" not implemented for '{d.short_name}'")
    return d


def _empty(size, d, where=None):
    if where is META:
        return _make(_meta_empty(size, d.np))
    return _make(np.empty(size, dtype=d.np))


def _out_or_empty(out, size, d, where=None):
    """``torch.rand(2, 2, out=c)`` draws into ``c`` (resized to the size if need be, as PyTorch's
    out= variants); without ``out`` a new tensor."""
    if out is None:
        return _empty(size, d, where)
    if tuple(out.shape) != tuple(size):
        out._data = np.empty(size, dtype=out._data.dtype)
    return out


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


@export(method=False)
@_vmap_random("factory")
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """``empty(size).uniform_(0, 1)``; with ``out=``, drawn into ``out``."""
    where = placement(device)
    t = _out_or_empty(out, _size(size), _float_dtype(dtype if out is None else out.dtype, "check_uniform_bounds"),
                      where)
    return _finish(uniform_(t, generator=generator), requires_grad)


@export(method=False)
@_vmap_random("factory")
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """``empty(size).normal_(0, 1)``: 16 at a time for 16 or more values, one at a time below."""
    where = placement(device)
    if _observers.profiler is not None:  # a profiler records aten::randn (empty, then normal_)
        from ..profiler import _active, _Span

        with _Span(_active[-1], "aten::randn"):
            with _Span(_active[-1], "aten::empty"):
                t = _out_or_empty(out, _size(size), _float_dtype(dtype if out is None else out.dtype,
                                                                  "normal_kernel_cpu"))
            with _Span(_active[-1], "aten::normal_"):
                t = normal_(t, generator=generator)
        return _finish(t, requires_grad)
    t = _out_or_empty(out, _size(size), _float_dtype(dtype if out is None else out.dtype, "normal_kernel_cpu"),
                      where)
    return _finish(normal_(t, generator=generator), requires_grad)


@export(method=False)
@_vmap_random("factory")
def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """``randint(high, size)`` or ``randint(low, high, size)``: ``empty(size).random_(low, high)``."""
    where = placement(device)
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=(n,))
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional arguments: \"size\"")
    d = as_dtype(dtype) if dtype is not None else int64
    t = _empty(_size((size,)), d, where)
    return _finish(random_(t, int(low), int(high), generator=generator), requires_grad)


@export(method=False)
@_vmap_random("factory")
def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    where = placement(device)
    n = int(n)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    d = as_dtype(dtype) if dtype is not None else int64
    if where is META:
        return _finish(_empty((n,), d, where), requires_grad)
    values = D.randperm(_random._resolve(generator), n)
    return _finish(_make(values.astype(d.np)), requires_grad)


def _like(input, dtype):
    return _empty(input.shape, as_dtype(dtype) if dtype is not None else input.dtype, input.device)


@export(method=False)
@_vmap_random("factory")
def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    t = _like(input, dtype)
    _floating(t, "check_uniform_bounds")
    return _finish(uniform_(t), requires_grad)


@export(method=False)
@_vmap_random("factory")
def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    t = _like(input, dtype)
    _floating(t, "normal_kernel_cpu")
    return _finish(normal_(t), requires_grad)


@export(method=False)
@_vmap_random("factory")
def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    return _finish(random_(_like(input, dtype), int(low), int(high)), requires_grad)


@export(method=False)
@_vmap_random("tensor")
def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, requires_grad=False):
    """``normal(mean, std)`` with numbers or tensors: draws standard normals into the output
    (the broadcast shape), then ``mul_(std).add_(mean)`` for tensor arguments, or
    ``normal_(0, std).add_(mean)`` for a tensor mean and a number std."""
    Tensor = _tensor.Tensor
    gen = generator
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_t and not std_t:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with numbers "
                            "for mean and std, give a size")
        d = _float_dtype(dtype, "normal_kernel_cpu")
        return _finish(normal_(_empty(_size((size,)), d), mean, std, generator=gen), requires_grad)
    if std_t and (std._data < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not std_t and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if mean_t and std_t:
        shape = np.broadcast_shapes(mean.shape, std.shape)
        out_t = _empty(shape, mean.dtype)
        normal_(out_t, 0.0, 1.0, generator=gen)
        data = out_t._data * std._data.astype(out_t._data.dtype, copy=False)
        data = data + mean._data.astype(data.dtype, copy=False)
    elif mean_t:
        out_t = _empty(mean.shape, mean.dtype)
        normal_(out_t, 0.0, std, generator=gen)
        data = out_t._data + mean._data
    else:
        out_t = _empty(std.shape, std.dtype)
        normal_(out_t, 0.0, 1.0, generator=gen)
        data = out_t._data * std._data
        data = data + data.dtype.type(mean)
    return _make(np.asarray(data, dtype=out_t._data.dtype))


@export()
@_vmap_random("tensor")
def bernoulli(input, p=None, *, generator=None, out=None):
    """``bernoulli(probs)``: one uniform of probs' type per element below it;
    ``bernoulli(input, 0.3)``: ``empty_like(input).bernoulli_(0.3)``."""
    t = _like(input, None)
    return bernoulli_(t, input if p is None else p, generator=generator)


@export()
@_vmap_random("tensor")
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Without replacement (or one sample): ``argmax``/``topk`` of ``p / q`` with
    ``q = empty_like(p).exponential_()`` (the Gumbel trick); with replacement: the cumulative
    distribution and a binary search per sample (MultinomialKernel.cpp)."""
    probs = input._data
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype.short_name}")
    n_categories = probs.shape[-1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if probs.__class__ is MetaArray:  # a shape, nothing drawn
        return _make(_meta_empty(probs.shape[:-1] + (num_samples,), np.int64))
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.reshape(-1, n_categories).sum(-1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = _random._resolve(generator)
    if not replacement or num_samples == 1:
        q = D.exponential(gen, probs.size, 1.0).astype(probs.dtype).reshape(probs.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = probs / q
        if num_samples == 1:
            return _make(np.argmax(q, axis=-1, keepdims=True).astype(np.int64))
        order = np.argsort(-q, axis=-1, kind="stable")[..., :num_samples]
        return _make(order.astype(np.int64))
    return _make(D.multinomial_with_replacement(gen, probs, num_samples))
