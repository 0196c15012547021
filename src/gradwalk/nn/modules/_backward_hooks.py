"""Module backward hooks, as ``torch/utils/hooks.py`` makes them.

A full backward hook (``register_full_backward_hook``) needs the gradients with respect to the
module's inputs and its outputs. PyTorch gets them by passing the inputs, and then the outputs,
through an identity autograd Function, ``BackwardHookFunction``: its node
(``BackwardHookFunctionBackward``) after the outputs sees ``grad_output`` first (and runs the
backward pre-hooks), the one before the inputs then sees ``grad_input`` and calls the hooks. The
deprecated ``register_backward_hook`` is simpler: a hook on the node that made the output.
"""
import warnings

from ...autograd.function import Function
from ...tensor import Tensor


class BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


class BackwardHook:
    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks, self.user_pre_hooks = user_hooks, user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn):
        def hook(grad_input, _):
            if self.grad_outputs is None:  # the gradient reached the input without passing the output
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, "
                                       f"but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        """Pass the tensors among ``args`` (those that require grad) through one
        BackwardHookFunction and call ``fn`` on its node."""
        is_tuple = isinstance(args, tuple)
        items = args if is_tuple else (args,)
        tensors_idx = [i for i, a in enumerate(items) if isinstance(a, Tensor)]
        tensors = [items[i] for i in tensors_idx]
        if not any(t.requires_grad for t in tensors):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if not isinstance(new_tensors, tuple):
            new_tensors = (new_tensors,)
        grad_fns = [t.grad_fn for t in new_tensors if t.grad_fn is not None
                    and type(t.grad_fn).__name__ == "BackwardHookFunctionBackward"]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with a code sample "
                               "to reproduce this.")
        fn(grad_fns[0])
        out = list(items)
        for idx, t in zip(tensors_idx, new_tensors):
            out[idx] = t
        return (tuple(out) if is_tuple else out[0]), tensors_idx

    def setup_input_hook(self, args):
        def fn(grad_fn):
            self._set_user_hook(grad_fn)

        res, input_idx = self._apply_on_tensors(fn, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        def fn(grad_fn):
            def hook(grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
                if self.user_pre_hooks:
                    expected_len = len(self.grad_outputs)
                    for user_pre_hook in self.user_pre_hooks:
                        hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                        if hook_grad_outputs is None:
                            continue
                        if len(hook_grad_outputs) != expected_len:
                            raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                               f"{len(hook_grad_outputs)}, but expected {expected_len}")
                        self.grad_outputs = hook_grad_outputs
                local_grad_outputs = self.grad_outputs
                if self.input_tensors_index is None:  # no input requires grad: call the hooks now
                    warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                                  "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                                  "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for "
                                  "more details.", stacklevel=5)
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                            raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                               "always return None or None for all gradients.")
                    self.grad_outputs = None
                if local_grad_outputs is not None:
                    return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_prehook(hook)

        is_tuple = True
        if not isinstance(args, tuple):
            args = (args,)
            is_tuple = False
        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        if not is_tuple:
            res = res[0]
        return res


def register_legacy_hooks(module, args, result, hooks):
    """``register_backward_hook``: each hook on the grad_fn of the first tensor in the output,
    with PyTorch's warning when that node is not the module's only one."""
    var = result
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        else:
            var = var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(lambda grad_input, grad_output, hook=hook: hook(module, grad_input, grad_output))
    _maybe_warn_non_full_backward_hook(args, result, grad_fn)


def _tensors_or_warn(value, does, grads):
    """``value`` as a tuple of Tensors; None, after PyTorch's deprecation warning, when it is not one."""
    if isinstance(value, Tensor):
        return (value,)
    if isinstance(value, tuple) and all(isinstance(v, Tensor) for v in value):
        return value
    warnings.warn(f"Using non-full backward hooks on a Module that does not {does} a single Tensor or a tuple "
                  f"of Tensors is deprecated and will be removed in future versions. This hook will be "
                  f"missing some of the {grads}. Please use register_full_backward_hook to get the "
                  "documented behavior.", FutureWarning, stacklevel=4)
    return None


def _maybe_warn_non_full_backward_hook(inputs, result, grad_fn):
    """PyTorch's checks (``Module._maybe_warn_non_full_backward_hook``), its messages."""
    result = _tensors_or_warn(result, "return", "grad_output")
    if result is None:
        return
    inputs = _tensors_or_warn(inputs, "take as input", "grad_input")
    if inputs is None:
        return
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warnings.warn("Using a non-full backward hook when outputs are nested in python data structure is deprecated "
                      "and will be removed in future versions. This hook will be missing some grad_output.",
                      FutureWarning, stacklevel=3)
    elif len(out_grad_fn) > 1:
        warnings.warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_output. Please use register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=3)
    else:
        inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_functions = {n[0] for n in grad_fn.next_functions}
        if inputs_grad_fn != next_functions:
            warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_input. Please use register_full_backward_hook to get the documented behavior.",
                          FutureWarning, stacklevel=3)
