"""``gradwalk.autograd.graph``: ``Node``, saved-tensor hooks, gradient edges."""
import collections

from .node import Node, saved_tensors_hooks_state  # noqa: F401

GradientEdge = collections.namedtuple("GradientEdge", ["node", "output_nr", "ownership_token"],
                                      defaults=[None])


def get_gradient_edge(tensor):
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    if tensor.grad_fn is not None:
        return GradientEdge(tensor.grad_fn, tensor._output_nr)
    return GradientEdge(tensor._grad_accumulator(), 0)


class saved_tensors_hooks:
    """``with saved_tensors_hooks(pack, unpack):`` every tensor saved for backward inside is
    passed through ``pack`` at save time and ``unpack`` when backward reads it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        state = saved_tensors_hooks_state
        state.stack = state.stack + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        state = saved_tensors_hooks_state
        state.stack = state.stack[:-1]
        return False


class save_on_cpu(saved_tensors_hooks):
    """Everything is on the CPU already; kept for API compatibility (packs a copy)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t.detach().clone(), lambda t: t)


class disable_saved_tensors_hooks:
    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self.prev = saved_tensors_hooks_state.stack
        saved_tensors_hooks_state.stack = ()

    def __exit__(self, *exc):
        saved_tensors_hooks_state.stack = self.prev


def increment_version(tensor):
    """Bump ``tensor``'s version counter (or each of several), as an in-place write would: the
    way to tell autograd that a tensor was changed behind its back."""
    tensors = tensor if isinstance(tensor, (tuple, list)) else (tensor,)
    for t in tensors:
        if not t._is_inference:
            t._version_counter[0] += 1
