"""Grad modes: thread-local switches that decide whether operations record a graph.

Like PyTorch, each thread starts with grad mode on; ``no_grad`` and friends work both as context
managers and as decorators.
"""
import functools
import warnings
import inspect
import sys
import threading


class _ThreadState(threading.local):
    # Every new thread sees these class-level defaults.
    grad_enabled = True
    inference = False


_state = _ThreadState()


def is_grad_enabled():
    return _state.grad_enabled


def is_inference_mode_enabled():
    return _state.inference


class _DecoratorContextManager:
    """Base for context managers that also decorate functions (as torch's do)."""

    def __call__(self, func):
        if inspect.isclass(func):
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You should "
                "only decorate functions or methods. To preserve the current behavior of class "
                "decoration, you can directly decorate the `__init__` method and nothing else.",
                FutureWarning, stacklevel=2)
            cls = func
            func = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731 (PyTorch's own shape)
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._ctor_args()):
                return func(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, func):
        """As torch/utils/_contextlib.py: the mode holds while the generator's own code runs
        (each step between two yields), not while its caller runs."""

        @functools.wraps(func)
        def generator_wrapper(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException:
                        with self.clone():
                            response = gen.throw(*sys.exc_info())
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator_wrapper

    def _ctor_args(self):
        return ()

    def clone(self):
        return self.__class__(*self._ctor_args())


class no_grad(_DecoratorContextManager):
    """Disable graph recording: results get ``requires_grad=False`` and no ``grad_fn``."""

    def __init__(self, orig_func=None):
        # ``@torch.no_grad`` without parentheses works too
        self._orig = orig_func

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if callable(orig_func):
            self.__init__()
            return self(orig_func)
        return self

    def __enter__(self):
        self.prev = _state.grad_enabled
        _state.grad_enabled = False

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev
        return False


class enable_grad(_DecoratorContextManager):
    """Re-enable graph recording, for example inside ``no_grad``."""

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if callable(orig_func):
            return self(orig_func)
        return self

    def __init__(self, orig_func=None):
        pass

    def __enter__(self):
        self.prev = _state.grad_enabled
        _state.grad_enabled = True

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(False)`` switches grad mode at once; as a context manager it restores."""

    def __init__(self, mode):
        self.prev = _state.grad_enabled
        self.mode = bool(mode)
        _state.grad_enabled = self.mode

    def _ctor_args(self):
        return (self.mode,)

    def __call__(self, func):
        _state.grad_enabled = self.prev  # used as a decorator: undo the eager switch
        return super().__call__(func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev
        return False


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are marked as inference tensors."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            self.__init__(True)
            return self(mode)
        return self

    def __init__(self, mode=True):
        self.mode = bool(mode) if not callable(mode) else True

    def _ctor_args(self):
        return (self.mode,)

    def __enter__(self):
        self.prev = (_state.grad_enabled, _state.inference)
        if self.mode:
            _state.grad_enabled = False
            _state.inference = True

    def __exit__(self, *exc):
        _state.grad_enabled, _state.inference = self.prev
        return False
