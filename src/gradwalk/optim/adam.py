"""``Adam`` and ``AdamW`` (Adam with decoupled weight decay)."""
import math

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                grad = -p._grad._data if group["maximize"] else p._grad._data
                state = self.state[p]
                if not state:
                    state["step"] = Tensor._make(np.array(0.0, dtype=np.float32))
                    state["exp_avg"] = Tensor._make(np.zeros_like(p._data))
                    state["exp_avg_sq"] = Tensor._make(np.zeros_like(p._data))
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = Tensor._make(np.zeros_like(p._data))
                state["step"]._data += 1
                step = float(state["step"]._data)
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p._data *= 1 - lr * weight_decay
                    else:
                        grad = grad + weight_decay * p._data
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                # the same arithmetic as PyTorch's in-place ops, in two scratch arrays
                scratch, denom = np.empty_like(exp_avg), np.empty_like(exp_avg)  # (arrays even when 0-dim)
                np.subtract(grad, exp_avg, out=scratch)
                scratch *= 1 - beta1
                exp_avg += scratch  # lerp towards the gradient
                exp_avg_sq *= beta2
                np.multiply(grad, 1 - beta2, out=scratch)
                scratch *= grad
                exp_avg_sq += scratch
                step_size = lr / (1 - beta1 ** step)
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
                if group["amsgrad"]:
                    max_sq = state["max_exp_avg_sq"]._data
                    np.maximum(max_sq, exp_avg_sq, out=max_sq)
                    np.sqrt(max_sq, out=denom)
                else:
                    np.sqrt(exp_avg_sq, out=denom)
                denom /= bias_correction2_sqrt
                denom += eps
                np.divide(exp_avg, denom, out=denom)
                denom *= step_size
                p._data -= denom
                p._version_counter[0] += 1
        return loss


class AdamW(Adam):
    """Adam whose weight decay shrinks the weights directly (``p *= 1 - lr*wd``), not the gradient."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
