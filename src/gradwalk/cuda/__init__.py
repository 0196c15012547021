"""``torch.cuda`` as a CPU-only PyTorch build has it: no devices, seeding is a no-op, and
anything that needs a GPU says "Torch not compiled with CUDA enabled"."""


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


def synchronize(device=None):
    _no_cuda()


def current_device():
    _no_cuda()


def set_device(device):
    _no_cuda()


def get_device_name(device=None):
    _no_cuda()


def empty_cache():
    pass


def _no_cuda():
    raise AssertionError("Torch not compiled with CUDA enabled")
