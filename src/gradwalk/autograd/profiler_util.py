"""``torch.autograd.profiler_util``: the profiler's event classes (``gradwalk.profiler``)."""
from ..profiler import EventList, FunctionEvent, FunctionEventAvg, _format_time  # noqa: F401
