"""``gradwalk.profiler``: what ran, for how long, and which backward node belongs to which op.

    >>> import gradwalk as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> w = torch.tensor([3.0, 4.0], requires_grad=True)
    >>> with torch.profiler.profile() as prof:
    ...     z = (x * w).sum()
    ...     z.backward()
    >>> [(e.name, e.sequence_nr) for e in prof.events()][:2]
    [('aten::mul', 0), ('aten::sum', 1)]
    >>> mul = [e for e in prof.events() if e.name == "MulBackward0"][0]
    >>> mul.sequence_nr, [child.name for child in mul.cpu_children]   # its formula's two products
    (0, ['aten::mul', 'aten::mul'])

As in PyTorch (facts §11): a forward op records ``sequence_nr`` = the number the next node would
get (the counter's peek value) whenever grad mode is on, -1 under ``no_grad``; each node the engine
runs is an ``autograd::engine::evaluate_function: MulBackward0`` event holding a ``MulBackward0``
event, holding the ops of the node's formula (seq -1: grad mode is off in backward). A forward
op and the backward node it made share a sequence number; the Chrome trace draws that link as a
``fwdbwd`` flow arrow.

Hooks: ``gradwalk.ops.core.observers.profiler`` (every op) and ``engine.hooks.evaluate_function``
(every node). Both are None when not profiling, so profiling costs nothing until it is on.
"""
import enum
import functools
import json
import os
import socket
import threading
import time
import uuid

from ..autograd.engine import hooks as engine_hooks
from ..autograd.node import UINT64_MAX, peek_sequence_nr
from ..grad_mode import _state as _grad_state
from ..ops.core import observers


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


class Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end=0):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEvent:
    """One recorded span. Times are microseconds since the profiler started."""

    count = 1  # (one call; a FunctionEventAvg adds them up)
    device_time_total = 0
    self_device_time_total = 0
    is_async = False

    def __init__(self, id, name, thread, start_us, end_us=0, fwd_thread=0, input_shapes=None,
                 sequence_nr=-1, node_id=-1, **unused):
        self.id = id
        self.name = name
        self.thread = thread
        self.node_id = node_id
        self.time_range = Interval(start_us, end_us)
        self.sequence_nr = sequence_nr
        self.fwd_thread = fwd_thread
        self.input_shapes = input_shapes or []
        self.cpu_parent = None
        self.cpu_children = []

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def is_backward(self):
        """A node the engine ran, or anything inside one."""
        event = self
        while event is not None:
            if event.name.startswith("autograd::engine::evaluate_function: "):
                return True
            event = event.cpu_parent
        return False

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} seq={self.sequence_nr} "
                f"cpu_time={self.cpu_time_total:.3f}us>")


class FunctionEventAvg:
    """All events of one name (and, with ``group_by_input_shape``, one input shape)."""

    def __init__(self, key=None, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0
        self.self_device_time_total = 0

    def add(self, other):
        """Add an event, or another average (its calls and times all count)."""
        if self.key is None:
            self.key, self.input_shapes = other.key, other.input_shapes
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us>")


SORT_KEYS = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total": "self_cpu_time_total",
             "cpu_time": "cpu_time", "count": "count",
             "self_cpu_time": "self_cpu_time_total"}


class EventList(list):
    def key_averages(self, group_by_input_shape=False):
        groups = {}
        for event in self:
            shapes = str(event.input_shapes) if group_by_input_shape else ""
            key = (event.name, shapes)
            if key not in groups:
                groups[key] = FunctionEventAvg(event.name, event.input_shapes if shapes else [])
            groups[key].add(event)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def _populate_cpu_children(self):
        """Each event's children: the events of its thread that start and end inside it
        (PyTorch's ``EventList._populate_cpu_children``, for events made by hand)."""
        by_thread = {}
        for event in self:
            by_thread.setdefault((event.thread, event.node_id), []).append(event)
        for events in by_thread.values():
            open_events = []
            for event in sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end)):
                while open_events:
                    parent = open_events[-1]
                    if (event.time_range.start >= parent.time_range.end
                            or event.time_range.end > parent.time_range.end):
                        open_events.pop()
                    else:
                        parent.cpu_children.append(event)
                        event.cpu_parent = parent
                        break
                open_events.append(event)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """PyTorch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg,
        # of Calls; the name column right-aligned, times in us/ms/s. (No source or shapes
        column is shown, so their widths are accepted and unused.)"""
        rows = list(self)
        if sort_by is not None:
            attribute = SORT_KEYS.get(sort_by, sort_by)
            rows.sort(key=lambda e: getattr(e, attribute), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total
        names = [_name(e) for e in rows]
        width = min(max([len("Name")] + [len(n) for n in names]) + 4, max_name_column_width)
        columns = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        line = "-" * width + "  " + "  ".join("-" * 12 for _ in columns) + "  "
        out = [] if header is None else [header]
        out += [line, "Name".rjust(width) + "  " + "  ".join(c.rjust(12) for c in columns) + "  ",
                line]
        for name, e in zip(names, rows):
            if len(name) > width:
                name = name[:width - 3] + "..."
            cells = [_percent(e.self_cpu_time_total, total), _time(e.self_cpu_time_total),
                     _percent(e.cpu_time_total, total), _time(e.cpu_time_total),
                     _time(e.cpu_time_total / max(getattr(e, "count", 1), 1)),
                     str(getattr(e, "count", 1))]
            out.append(name.rjust(width) + "  " + "  ".join(c.rjust(12) for c in cells) + "  ")
        out += [line, f"Self CPU time total: {_time(total)}", ""]
        return "\n".join(out)

    def __str__(self):
        return self.table()


def _name(event):
    return getattr(event, "key", None) or event.name


def _time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _percent(part, total):
    return f"{100.0 * part / total:.2f}%" if total else "0.00%"


def aten_name(op):
    """``aten::mul`` for the op whose node is ``MulBackward0``; ``aten::mse_loss`` for
    ``MseLossBackward0``; ops without a node by their class name."""
    name = op.name or op.__name__
    cut = name.rfind("Backward")  # TanhBackwardBackward0 -> tanh_backward
    if cut > 0 and name[cut + len("Backward"):].isdigit():
        name = name[:cut]
    elif name.endswith("Backward0"):
        name = name[:-1]
    snake = "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))
    return "aten::" + snake


class _Span:
    """Opens an event on enter, closes it on exit; nested spans become its children."""

    __slots__ = ("profiler", "name", "sequence_nr", "fwd_thread", "shapes", "event")

    def __init__(self, profiler, name, sequence_nr=-1, fwd_thread=0, shapes=None):
        self.profiler, self.name, self.sequence_nr = profiler, name, sequence_nr
        self.fwd_thread, self.shapes = fwd_thread, shapes

    def __enter__(self):
        self.event = self.profiler._open(self.name, self.sequence_nr, self.fwd_thread, self.shapes)
        return self

    def __exit__(self, *exc):
        self.profiler._close(self.event)
        return False


class _NodeSpans:
    """A node the engine runs: ``evaluate_function: <name>`` holding ``<name>``."""

    __slots__ = ("outer", "inner")

    def __init__(self, profiler, node):
        seq = node._sequence_nr_value
        seq = -1 if seq == UINT64_MAX else seq
        fwd_thread = profiler._thread_number() if seq >= 0 else 0
        name = node.name()
        self.outer = _Span(profiler, f"autograd::engine::evaluate_function: {name}", seq, fwd_thread)
        self.inner = _Span(profiler, name, seq, fwd_thread)

    def __enter__(self):
        self.outer.__enter__()
        self.inner.__enter__()
        return self

    def __exit__(self, *exc):
        self.inner.__exit__(*exc)
        self.outer.__exit__(*exc)
        return False


_active = []  # the profilers that are on, innermost last (only the innermost records)


class profile:
    """Record ops and backward nodes inside a ``with`` block (``torch.profiler.profile``)."""

    def __init__(self, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 enabled=True, use_cuda=False, **unused):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.on_trace_ready = on_trace_ready
        self._events = EventList()
        self._stacks = threading.local()
        self._threads = {}
        self._start_ns = None
        self._lock = threading.Lock()

    # --- switching on and off
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if not self.enabled:
            return
        self._start_ns = time.perf_counter_ns()
        self._base_ns = time.time_ns()
        self._saved = (observers.profiler, engine_hooks.evaluate_function)
        observers.profiler = self._op_span
        observers.refresh()
        engine_hooks.evaluate_function = self._node_spans
        _active.append(self)

    def stop(self):
        if not self.enabled or self not in _active:
            return
        _active.remove(self)
        observers.profiler, engine_hooks.evaluate_function = self._saved
        observers.refresh()
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self):
        """``torch.profiler.profile.step()``: schedules are not modelled; everything is recorded."""

    # --- the hooks
    def _op_span(self, op, inputs, requires_grad):
        seq = peek_sequence_nr() if _grad_state.grad_enabled else -1
        shapes = [list(t.shape) for t in inputs] if self.record_shapes else None
        return _Span(self, aten_name(op), seq, 0, shapes)

    def _node_spans(self, node):
        return _NodeSpans(self, node)

    def _thread_number(self):
        """Profiler thread ids: 1 for the first thread seen (the main thread), then 2, ..."""
        ident = threading.get_ident()
        with self._lock:
            return self._threads.setdefault(ident, len(self._threads) + 1)

    def _open(self, name, sequence_nr, fwd_thread, shapes):
        stack = getattr(self._stacks, "stack", None)
        if stack is None:
            stack = self._stacks.stack = []
        start = (time.perf_counter_ns() - self._start_ns) / 1000
        event = FunctionEvent(len(self._events), name, self._thread_number(), start,
                              sequence_nr=sequence_nr, fwd_thread=fwd_thread, input_shapes=shapes)
        if stack:
            event.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(event)
        stack.append(event)
        self._events.append(event)
        return event

    def _close(self, event):
        event.time_range.end = (time.perf_counter_ns() - self._start_ns) / 1000
        self._stacks.stack.pop()

    # --- reading
    def events(self):
        return self._events

    @property
    def function_events(self):
        """The events (``torch.autograd.profiler.profile.function_events``)."""
        return self._events

    @property
    def self_cpu_time_total(self):
        return self._events.self_cpu_time_total

    def __str__(self):
        return self.table()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self._events.key_averages(group_by_input_shape)

    def table(self, *args, **kwargs):
        return self._events.table(*args, **kwargs)

    def forward_backward_pairs(self):
        """``(forward op event, backward node event)`` linked by sequence number: the last
        forward op recorded with that number is the one whose node it is (the ops before it
        with the same number made no node)."""
        forward_by_seq = {}
        pairs = []
        for event in self._events:
            if event.sequence_nr < 0:
                continue
            if event.name.startswith("autograd::engine::evaluate_function: "):
                forward = forward_by_seq.get((event.sequence_nr, event.fwd_thread))
                if forward is not None:
                    pairs.append((forward, event))
            elif not event.is_backward:
                forward_by_seq[(event.sequence_nr, event.thread)] = event
        return pairs

    def export_chrome_trace(self, path):
        """The trace-event JSON that chrome://tracing and Perfetto load (facts §11's layout)."""
        pid = os.getpid()
        trace_events = []
        for index, event in enumerate(self._events):
            args = {"External id": event.id + 1, "Record function id": 0}
            if event.sequence_nr >= 0:
                args["Sequence number"] = event.sequence_nr
                args["Fwd thread id"] = event.fwd_thread
            if event.input_shapes:
                args["Input Dims"] = event.input_shapes
            args["Ev Idx"] = index
            trace_events.append({"ph": "X", "cat": "cpu_op", "name": event.name, "pid": pid,
                                 "tid": event.thread, "ts": event.time_range.start,
                                 "dur": event.cpu_time_total, "args": args})
        for flow_id, (forward, backward) in enumerate(self.forward_backward_pairs(), 1):
            common = {"id": flow_id, "pid": pid, "cat": "fwdbwd", "name": "fwdbwd"}
            trace_events.append({"ph": "s", "tid": forward.thread, "ts": forward.time_range.start,
                                 **common})
            trace_events.append({"ph": "f", "tid": backward.thread, "ts": backward.time_range.start,
                                 "bp": "e", **common})
        trace = {"schemaVersion": 1, "deviceProperties": [], "trace_id": uuid.uuid4().hex.upper(),
                 "host_name": socket.gethostname(), "displayTimeUnit": "ms",
                 "baseTimeNanoseconds": self._base_ns if self._start_ns is not None else 0,
                 "traceEvents": trace_events, "traceName": str(path)}
        with open(path, "w") as f:
            json.dump(trace, f)


class record_function:
    """A named span of your own (``with record_function("model_inference"):``), also a decorator.
    Records only while a profiler is on."""

    def __init__(self, name, args=None):
        self.name = name
        self._span = None

    def __enter__(self):
        if _active:
            self._span = _Span(_active[-1], self.name)
            self._span.__enter__()
        return self

    def __exit__(self, *exc):
        if self._span is not None:
            self._span.__exit__(*exc)
            self._span = None
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with record_function(self.name):
                return func(*args, **kwargs)

        return wrapper


__all__ = ["profile", "record_function", "ProfilerActivity", "EventList", "FunctionEvent",
           "FunctionEventAvg"]


def _format_time(time_us):
    """A time in microseconds as PyTorch's profiler prints it (``1.500ms``)."""
    return _time(time_us)


def kineto_available():
    """PyTorch's CPU builds profile with Kineto; gradwalk's profiler stands in for it."""
    return True


def _profiler_enabled():
    return bool(_active)


def composite_span(name, inputs):
    """An event for an op built from others (``aten::linear`` around its ``t`` and ``addmm``),
    recorded by the innermost running profiler, with the inputs' shapes (``[]`` for None) when
    it records shapes."""
    profiler = _active[-1]
    shapes = [list(t.shape) if t is not None else [] for t in inputs] if profiler.record_shapes else None
    return _Span(profiler, name, -1, 0, shapes)
