"""``Linear``, ``Identity``, ``Flatten`` and ``Unflatten``."""
import math

import numpy as np

from ..._device import META, placement
from ..._meta import empty as _meta_empty
from ..._dtype import get_default_dtype
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _empty(*shape, dtype=None, device=None):
    d = (dtype or get_default_dtype()).np
    if placement(device) is META:  # the meta device: a shape, no data (init functions skip it)
        return Tensor._make(_meta_empty(shape, d))
    return Tensor._make(np.empty(shape, dtype=d))


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ W.T + b`` (AddmmBackward0 on 2-D input). W and b start as PyTorch starts them:
    uniform in +-1/sqrt(in_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        placement(device)  # "cuda": refused as on a CPU-only PyTorch
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        params = self._parameters
        if type(self) is Linear and "weight" in params and "bias" in params:
            # self.weight and self.bias, read where they live: attribute lookup would first miss
            # on the instance, then reach Module.__getattr__ (~0.7 us each, every step)
            return F.linear(input, params["weight"], params["bias"])
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input):
        shape = list(input.shape)
        dim = self.dim % input.ndim
        return input.reshape(*shape[:dim], *self.unflattened_size, *shape[dim + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
