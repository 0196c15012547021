"""What PyTorch's argument parser accepts for every native function, beside the names in its
signature: NumPy's ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``
(``x.sum(axis=0, keepdims=True)``), ``size=`` as a keyword for the factories that take sizes
(``torch.randn(size=(2, 3))``), and ``out=`` (``torch.add(a, b, out=c)``).

Only what users call goes through these wrappers (``gradwalk.sum``, ``Tensor.sum``); gradwalk's
own code calls the ops directly. A call without keywords pays one ``if``.
"""
import functools
import inspect

NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}

# Python functions in PyTorch (torch/functional.py, torch/_tensor.py): its parser never sees
# them, so they take no NumPy names there either.
PYTHON_IN_PYTORCH = frozenset({"norm", "split", "unique", "unique_consecutive", "einsum",
                               "tensordot", "cdist", "stft", "istft", "chain_matmul"})


_RESIZED = ("An output with one or more elements was resized since it had shape {old}, which does "
            "not match the required output shape {new}. This behavior is deprecated, and in a future "
            "PyTorch release outputs will not be resized unless they have zero elements. You can "
            "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
            "t.resize_(0).")


def _into_out(name, fn, args, kwargs):
    """``torch.add(a, b, out=c)``: compute, then write into ``out`` (resized if need be, cast to
    its dtype), as PyTorch's out= variants; refused when autograd would have to follow it."""
    import warnings

    import numpy as np

    from ..grad_mode import _state
    from ..tensor import Tensor
    from ._overlap import check_no_partial_overlap

    out = kwargs.pop("out")
    if out is None:
        return fn(*args, **kwargs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if _state.grad_enabled and any(isinstance(a, Tensor) and a.requires_grad
                                   for a in list(args) + list(kwargs.values()) + list(outs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    sources = [a._data for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)]
    for o in outs:  # torch.add(y[:-1], 1, out=y[1:]): refused, as PyTorch
        check_no_partial_overlap(o._data, sources)
    result = fn(*args, **kwargs)
    results, outs = (result, out) if isinstance(out, (tuple, list)) else ((result,), (out,))
    for r, o in zip(results, outs):
        src = r._data
        if o.dtype.is_floating_point is False and src.dtype.kind == "f":
            raise RuntimeError(f"result type {r.dtype.short_name} can't be cast to the desired output "
                               f"type {o.dtype.short_name}")
        if tuple(o.shape) != tuple(src.shape):
            if o.numel():
                warnings.warn(_RESIZED.format(old=list(o.shape), new=list(src.shape)), UserWarning,
                              stacklevel=3)
            o._data = np.empty(src.shape, dtype=o._data.dtype)
        o._array()[...] = src
        o._version_counter[0] += 1
    return out


def accepting_numpy_names(name, fn, method=False):
    """``fn`` itself, or a wrapper that renames NumPy's keywords to PyTorch's (and, for a
    function, not a Tensor method, takes ``out=``)."""
    if name in PYTHON_IN_PYTORCH:
        return fn
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    renames = tuple((alias, real) for alias, real in NUMPY_NAMES.items()
                    if real in params and alias not in params)
    first = next(iter(params.values()), None)
    size_keyword = (first is not None and first.kind is inspect.Parameter.VAR_POSITIONAL
                    and first.name == "size")
    takes_out = method or "out" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD
                                                 for p in params.values())
    if not renames and not size_keyword and takes_out:
        return fn  # (x.tanh() pays nothing)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs:
            if not takes_out and "out" in kwargs:
                return _into_out(name, fn, args, kwargs)
            for alias, real in renames:
                if alias in kwargs:
                    if real in kwargs:  # PyTorch's parser: both names is one unexpected argument
                        raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
                    kwargs[real] = kwargs.pop(alias)
            if size_keyword and "size" in kwargs:
                if args:
                    raise TypeError(f"{name}() got multiple values for argument 'size'")
                args = (kwargs.pop("size"),)
        return fn(*args, **kwargs)

    return call
