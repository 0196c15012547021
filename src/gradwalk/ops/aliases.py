"""NumPy's argument names, which PyTorch's argument parser accepts for every native function:
``axis=`` for ``dim=``, ``keepdims=`` for ``keepdim=`` (``x.sum(axis=0, keepdims=True)``), and
``size=`` as a keyword for the factories that take sizes (``torch.randn(size=(2, 3))``).

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


def accepting_numpy_names(name, fn):
    """``fn`` itself, or a wrapper that renames NumPy's keywords to PyTorch's."""
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
    if not renames and not size_keyword:
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs:
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
