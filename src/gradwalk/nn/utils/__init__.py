"""``torch.nn.utils``: gradient clipping, parameters as one vector, and ``parametrize``.

    >>> model = gradwalk.nn.Linear(3, 1)
    >>> model(gradwalk.ones(4, 3)).sum().backward()
    >>> total = gradwalk.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
"""
import math

from . import parametrize, prune, rnn  # noqa: F401


def _tensors(parameters):
    from ...tensor import Tensor

    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of ``tensors`` (what ``clip_grad_norm_`` compares with max_norm)."""
    from ... import linalg
    from ...ops.functions import stack, tensor

    tensors = [t for t in _tensors(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    norms = [linalg.vector_norm(t, norm_type) for t in tensors]
    total = linalg.vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
            "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
            "anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    from ...grad_mode import no_grad

    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        clip_coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients in place so that their total norm is at most ``max_norm``; returns the
    total norm before clipping (a tensor), as PyTorch."""
    from ...grad_mode import no_grad

    parameters = _tensors(parameters)
    with no_grad():
        total = get_total_norm([p.grad for p in parameters if p.grad is not None], norm_type,
                               error_if_nonfinite)
        clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient in place into ``[-clip_value, clip_value]``."""
    from ...grad_mode import no_grad

    clip_value = float(clip_value)
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters):
    """Every parameter flattened, one after another, in one 1-D tensor (differentiable)."""
    from ...ops.functions import cat

    return cat([p.view(-1) for p in _tensors(parameters)])


def vector_to_parameters(vec, parameters):
    """The inverse: slices of ``vec`` become the parameters' data."""
    from ...tensor import Tensor

    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for p in _tensors(parameters):
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n


__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "parametrize"]
