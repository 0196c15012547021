"""The profiler view: a snippet run under ``gradwalk.profiler``, as a timeline and a Chrome trace.

    >>> t = profile_timeline("w = torch.tensor(0.5, requires_grad=True)\\ny = w * 2.0\\ny.backward()")
    >>> [(e["kind"], e["name"], e["seq"]) for e in t["events"]][:3]
    [('forward', 'aten::mul', 0), ('backward', 'MulBackward0', 0), ('inner', 'aten::mul', None)]

The snippet runs exactly as in the lab (``run_snippet``, the engine stepped node by node) inside
``gradwalk.profiler.profile()``. Forward ops are the top-level op events; each node the engine
ran is an ``evaluate_function`` event (its name is the node's, ``MulBackward0``) and the ops its
formula ran are "inner" events under it. A forward op and the backward node it created share a
sequence number; ``links`` pairs them (the profiler's ``forward_backward_pairs``).
"""
import json
import os
import tempfile

import gradwalk

from .interpreter import run_snippet
from .limits import DEFAULT_LIMITS

EVALUATE = "autograd::engine::evaluate_function: "


def _seq(event):
    return event.sequence_nr if event.sequence_nr >= 0 else None


def _node_name(event):
    name = event.name[len(EVALUATE):]
    return "AccumulateGrad" if name == "torch::autograd::AccumulateGrad" else name


def _profiled_run(source, limits):
    """``(run_snippet's answer, the profiler)``; SnippetError for a snippet the lab refuses."""
    with gradwalk.profiler.profile() as prof:
        run = run_snippet(source, "pytorch", limits)
    return run, prof


def timeline(prof, run):
    """The profiler's events as the page's timeline JSON."""
    events, ids = [], {}

    def add(event, kind, name, parent=None):
        ids[event.id] = len(events)
        events.append({"id": len(events), "name": name, "kind": kind, "seq": _seq(event),
                       "start_us": round(event.time_range.start, 3),
                       "dur_us": round(event.cpu_time_total, 3), "parent": parent})

    for event in prof.events():
        if event.cpu_parent is not None:
            continue
        if event.name.startswith(EVALUATE):
            add(event, "backward", _node_name(event))
            # the node's own span (MulBackward0) holds the ops of its formula
            for span in event.cpu_children:
                for op in span.cpu_children:
                    add(op, "inner", op.name, parent=ids[event.id])
        else:
            add(event, "forward", event.name)
    links = [{"seq": forward.sequence_nr, "forward": ids[forward.id], "backward": ids[backward.id]}
             for forward, backward in prof.forward_backward_pairs()
             if forward.id in ids and backward.id in ids]
    total = max((e["start_us"] + e["dur_us"] for e in events), default=0.0) - min(
        (e["start_us"] for e in events), default=0.0)
    error = run["error"] or next((p["error"] for p in run["passes"] if p["error"]), None)
    return {"events": events, "links": links, "total_us": round(total, 3), "error": error}


def profile_timeline(source, limits=DEFAULT_LIMITS):
    """Run ``source`` under the profiler; the JSON the profiler panel draws."""
    run, prof = _profiled_run(source, limits)
    return timeline(prof, run)


def chrome_trace(source, limits=DEFAULT_LIMITS):
    """Run ``source`` under the profiler; the Chrome trace (``export_chrome_trace``) as a dict."""
    _, prof = _profiled_run(source, limits)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "gradwalk-trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    trace["traceName"] = "gradwalk-trace.json"
    return trace
