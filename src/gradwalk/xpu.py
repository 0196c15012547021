"""``torch.xpu`` (Intel GPUs) as a PyTorch build without XPU support has it: no devices, seeding and
``empty_cache`` do nothing, and anything that needs a device says "Torch not compiled with XPU
enabled". Scripts probe it to pick their device (``torch.xpu.is_available()``)."""


# without a device, every answer is CUDA's on a CPU-only build
from .cuda import (device_count, empty_cache, is_available, is_initialized, manual_seed,  # noqa: F401
                   manual_seed_all, seed, seed_all)


def init():
    _no_xpu()


def synchronize(device=None):
    _no_xpu()


def current_device():
    _no_xpu()


def set_device(device):
    _no_xpu()


def get_device_name(device=None):
    _no_xpu()


def get_device_properties(device=None):
    _no_xpu()


def _no_xpu():
    raise AssertionError("Torch not compiled with XPU enabled")
