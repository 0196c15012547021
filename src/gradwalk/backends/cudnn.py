"""``torch.backends.cudnn``: settable flags with PyTorch's defaults; no cuDNN on a CPU build."""
enabled = True
deterministic = False
benchmark = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
