"""``torch.autograd.profiler``: the legacy spelling of ``gradwalk.profiler``."""
from ..profiler import profile, record_function  # noqa: F401
