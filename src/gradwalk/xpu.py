"""``torch.xpu`` (Intel GPUs) as a PyTorch build without XPU support has it: no devices, seeding and
``empty_cache`` do nothing, and anything that needs a device says "Torch not compiled with XPU
enabled". Scripts probe it to pick their device (``torch.xpu.is_available()``)."""


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def seed():
    pass


def seed_all():
    pass


def empty_cache():
    pass


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
