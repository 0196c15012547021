"""``torch.autograd.profiler``: the legacy spelling of ``gradwalk.profiler``."""
from ..profiler import (EventList, FunctionEvent, FunctionEventAvg, _format_time,  # noqa: F401
                        kineto_available, profile, record_function)
