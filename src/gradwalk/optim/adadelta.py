"""``Adadelta``: a step size from running averages of squared gradients and squared updates.

PyTorch's single-tensor loop (``torch/optim/adadelta.py``, the one a CPU model runs), in its
order of operations, with float32 scalars as ATen casts them:

    square_avg = square_avg * rho + (1 - rho) * grad * grad
    delta      = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * grad
    acc_delta  = acc_delta * rho + (1 - rho) * delta * delta
    param      = param + (-lr) * delta

(ATen's float32 ``addcmul_`` rounds ``((1 - rho) * t1) * t2 + self`` once, a fused multiply-add:
``_addcmul`` does the same; its float32 ``sqrt`` is not always correctly rounded, which NumPy's is,
so a last bit can still differ.)
"""
import numpy as np

from ..ops._float32_kernels import fma32
from ..tensor import Tensor
from .optimizer import Optimizer


def _addcmul_(self, value, t1, t2):
    """``self.addcmul_(t1, t2, value=value)`` as ATen computes it."""
    if self.dtype == np.float32:
        self[...] = fma32(value * t1, t2, self)
    else:
        self += value * t1 * t2


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                dtype = p._data.dtype.type
                rho, eps = dtype(group["rho"]), dtype(group["eps"])
                grad = -p._grad._data if group["maximize"] else p._grad._data
                state = self.state[p]
                if not state:
                    state["step"] = Tensor._make(np.array(0.0, dtype=np.float32))
                    state["square_avg"] = Tensor._make(np.zeros_like(p._data))
                    state["acc_delta"] = Tensor._make(np.zeros_like(p._data))
                state["step"]._data += 1
                if group["weight_decay"] != 0:
                    grad = grad + dtype(group["weight_decay"]) * p._data
                square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
                square_avg *= rho
                _addcmul_(square_avg, dtype(1 - group["rho"]), grad, grad)
                std = np.sqrt(square_avg + eps)
                delta = np.sqrt(acc_delta + eps)
                delta /= std
                delta *= grad
                acc_delta *= rho
                _addcmul_(acc_delta, dtype(1 - group["rho"]), delta, delta)
                p._data += dtype(-group["lr"]) * delta
                p._version_counter[0] += 1
        return loss
