"""``torch.accelerator`` as a CPU-only PyTorch has it: no accelerator, nothing to synchronise."""


def is_available():
    return False


def device_count():
    return 0


def current_accelerator(check_available=False):
    return None


def _none_available(*args, **kwargs):
    raise RuntimeError("Cannot access accelerator device when none is available.")


current_device_index = set_device_index = set_device_idx = current_device_idx = _none_available


def synchronize(device=None):
    _none_available()
