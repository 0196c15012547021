"""``import functorch``: the standalone package ``torch.func`` grew out of, as PyTorch 2.13 still
ships it: its transforms are ``torch.func``'s, and ``make_functional`` /
``make_functional_with_buffers`` (deprecated there, with a FutureWarning) turn a module into a
function of its parameters. ``torch_served_by_gradwalk`` serves ``import functorch`` from here."""
import copy
import warnings

from .func import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap  # noqa: F401


def _deprecated(name, replacement):
    warnings.warn(f"We've integrated functorch into PyTorch. As the final step of the integration, "
                  f"`functorch.{name}` is deprecated as of PyTorch 2.0 and will be deleted in a future version of "
                  f"PyTorch >= 2.3. Please use `{replacement}` instead; see the PyTorch 2.0 release notes and/or "
                  "the `torch.func` migration guide for more details https://pytorch.org/docs/main/func.migrating.html",
                  FutureWarning, stacklevel=3)


class FunctionalModuleWithBuffers:
    """``func(params, buffers, *args)``: the module run with those tensors in place of its own."""

    def __init__(self, module, param_names, buffer_names):
        self.stateless_model = module
        self.param_names, self.buffer_names = tuple(param_names), tuple(buffer_names)

    def __call__(self, params, buffers, *args, **kwargs):
        from .func.functional_call import functional_call

        state = dict(zip(self.param_names, params))
        state.update(zip(self.buffer_names, buffers))
        return functional_call(self.stateless_model, state, args, kwargs)


class FunctionalModule(FunctionalModuleWithBuffers):
    """``func(params, *args)``."""

    def __init__(self, module, param_names):
        super().__init__(module, param_names, ())

    def __call__(self, params, *args, **kwargs):
        return super().__call__(params, (), *args, **kwargs)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    _deprecated("make_functional_with_buffers", "torch.func.functional_call")
    params = list(model.named_parameters())
    buffers = list(model.named_buffers())
    func = FunctionalModuleWithBuffers(copy.deepcopy(model), [n for n, _ in params], [n for n, _ in buffers])
    values = tuple(p.detach() if disable_autograd_tracking else p for _, p in params)
    return func, values, tuple(b for _, b in buffers)


def make_functional(model, disable_autograd_tracking=False):
    _deprecated("make_functional", "torch.func.functional_call")
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    params = list(model.named_parameters())
    func = FunctionalModule(copy.deepcopy(model), [n for n, _ in params])
    return func, tuple(p.detach() if disable_autograd_tracking else p for _, p in params)
