"""``SGD``: plain, with momentum (optionally Nesterov), dampening and weight decay."""
import numpy as np

from ..ops import _float32_kernels as _k32
from ..tensor import Tensor
from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
            if momentum == 0 and weight_decay == 0 and not maximize:
                _plain_step(group["params"], lr)
                continue
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                d_p = -grad._data if maximize else grad._data
                if weight_decay != 0:
                    d_p = _add_scaled(d_p, p._data, weight_decay)  # grad.add(param, alpha=weight_decay)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = Tensor._make(np.array(d_p, copy=True))
                    else:
                        buf._data *= momentum
                        buf._data[...] = _add_scaled(buf._data, d_p, 1 - dampening)
                    d_p = _add_scaled(d_p, buf._data, momentum) if nesterov else buf._data
                _step(p._data, d_p, lr)
                p._version_counter[0] += 1
        return loss


def _plain_step(params, lr):
    """``p -= lr * p.grad`` for every parameter with a gradient: SGD without momentum, weight
    decay or maximize, in one loop with nothing else to decide per parameter (PyTorch's foreach
    path; the same arithmetic as the loop above)."""
    for p in params:
        grad = p._grad
        if grad is not None:
            _step(p._data, grad._data, lr)
            p._version_counter[0] += 1


_F32 = np.dtype(np.float32)


def _add_scaled(a, b, alpha):
    """``a.add(b, alpha=alpha)``: ATen computes ``a + alpha * b`` as one fused multiply-add."""
    if a.dtype is _F32 and b.dtype is _F32:
        return _k32.fma32(b, np.float32(alpha), a)
    return a + alpha * b


def _step(param, d_p, lr):
    """``param.add_(d_p, alpha=-lr)`` in place (one FMA per element for float32, as ATen)."""
    if param.dtype is _F32 and d_p.dtype is _F32:
        param[...] = _k32.fma32(d_p, np.float32(-lr), param)
    else:
        param -= lr * d_p
