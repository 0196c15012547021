"""``torch.backends.mps``: Apple's GPU, absent here."""


def is_available():
    return False


def is_built():
    return False
