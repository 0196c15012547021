"""``RMSprop``: divide by a running root mean square of the gradient (optionally centred)."""
import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            momentum, weight_decay = group["momentum"], group["weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                grad = -p._grad._data if group["maximize"] else p._grad._data
                state = self.state[p]
                if not state:
                    state["step"] = Tensor._make(np.array(0.0, dtype=np.float32))
                    state["square_avg"] = Tensor._make(np.zeros_like(p._data))
                    if momentum > 0:
                        state["momentum_buffer"] = Tensor._make(np.zeros_like(p._data))
                    if group["centered"]:
                        state["grad_avg"] = Tensor._make(np.zeros_like(p._data))
                state["step"]._data += 1
                if weight_decay != 0:
                    grad = grad + weight_decay * p._data
                square_avg = state["square_avg"]._data
                square_avg *= alpha
                square_avg += (1 - alpha) * grad * grad
                if group["centered"]:
                    grad_avg = state["grad_avg"]._data
                    grad_avg += (grad - grad_avg) * (1 - alpha)
                    avg = np.sqrt(square_avg - grad_avg * grad_avg) + eps
                else:
                    avg = np.sqrt(square_avg) + eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._data
                    buf *= momentum
                    buf += grad / avg
                    p._data -= lr * buf
                else:
                    p._data -= lr * (grad / avg)
                p._version_counter[0] += 1
        return loss
