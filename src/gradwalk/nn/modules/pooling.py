"""``AvgPool2d``, ``AdaptiveAvgPool2d``, ``ConvTranspose2d`` and ``DataParallel``."""

from ..._device import on_cpu
from .. import functional as F
from ..parameter import Parameter
from .conv import Conv2d, _pair
from .linear import _empty
from .module import Module


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class ConvTranspose2d(Module):
    """The transposed 2-D convolution; weight (in, out / groups, kh, kw), PyTorch's initialisation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        on_cpu(device)  # "cuda", "meta": refused as on a CPU-only PyTorch (meta: unsupported)
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.output_padding = _pair(padding), _pair(output_padding)
        self.dilation, self.groups = _pair(dilation), groups
        self.padding_mode = padding_mode
        self.transposed = True
        self.weight = Parameter(_empty(in_channels, out_channels // groups, *self.kernel_size, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    # PyTorch's _ConvNd.reset_parameters, shared with Conv2d (the same draws in the same order)
    reset_parameters = Conv2d.reset_parameters

    def forward(self, input, output_size=None):
        if output_size is not None:
            raise NotImplementedError("gradwalk: ConvTranspose2d(...)(input, output_size=...) is not "
                                      "supported; give output_padding instead")
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0, 0):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class DataParallel(Module):
    """On a machine without GPUs, PyTorch's ``DataParallel`` runs its module as it is: so does
    gradwalk's (``device_ids`` is empty; the state dict's keys gain the ``module.`` prefix)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.dim = dim
        self.device_ids = []
        self.output_device = None
        self.src_device_obj = None

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
