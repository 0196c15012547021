"""The child process that runs a lesson's code (compute.py starts it; JSON in on stdin, out on stdout).

    {"lesson", "engine": "gradwalk" | "pytorch", "compute": [[line, code]],
     "placeholders": [[text, path, spec, line]], "listings": [[line, code]],
     "recordings": [[line, {"kind", "code"}]]}
    -> {"engine", "version", "numbers": {text: shown}, "values": {text: number | null},
        "listings": [output], "recorded": [{"engine", "version", "source", "rows"}]}
       or {"error": {"line", "message"}}

Each block is compiled under the lesson's file name with its own line numbers, so a traceback
points at the line of the lesson file that failed.
"""
import contextlib
import io
import json
import math
import re
import sys
import traceback

_STEP = re.compile(r"\.([A-Za-z_]\w*)|\[(-?\d+)\]")


class BlockFailed(Exception):
    def __init__(self, line, message):
        super().__init__(message)
        self.line, self.message = line, message


def _run_code(lesson, line, code, namespace, what):
    padded = "\n" * line + code  # the code's first line is the line after the fence
    try:
        exec(compile(padded, f"{lesson}.md", "exec"), namespace)  # the lesson's own code (see compute.py)
    except Exception as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == f"{lesson}.md"]
        at = frames[-1].lineno if frames else line
        raise BlockFailed(at, f"the {what} raised {type(error).__name__}: {error}") from None


# ---------------------------------------------------------------- placeholders

def resolve(namespace, path):
    name = re.match(r"[A-Za-z_]\w*", path).group(0)
    if name not in namespace:
        raise KeyError(f"no value named {name!r} (assign it in a compute block)")
    value = namespace[name]
    for attribute, index in _STEP.findall(path[len(name):]):
        value = getattr(value, attribute) if attribute else value[int(index)]
    return value


def plain(value):
    """Numbers, strings and (nested) lists from tensors of either engine, NumPy values, tuples."""
    if hasattr(value, "tolist") and hasattr(value, "numel") and callable(value.numel):
        return value.item() if value.numel() == 1 and value.dim() == 0 else value.tolist()
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # NumPy arrays and scalars
        return value.tolist()
    if isinstance(value, tuple):  # torch.Size and friends
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def show(value, spec=""):
    if isinstance(value, list):
        return "[" + ", ".join(show(v, spec) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(show(v, spec) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if spec:
        return format(value, spec)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


# ---------------------------------------------------------------- recordings

def _walk(root):
    """Every node reachable from ``root`` (iteratively: graphs may be deep)."""
    seen, stack, nodes = set(), [root], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(fn for fn, _ in node.next_functions)
    return nodes


def _grad_text(grads):
    texts = [str(g) if g is not None else "None" for g in grads]
    return texts[0] if len(texts) == 1 else texts


UINT64_MAX = 2**64 - 1


def _next_sequence_nr(torch):
    """The number the next node will get. Recordings show sequence numbers as a fresh Python
    process would number them (compute blocks and earlier recordings ran in this one)."""
    probe = torch.zeros((), requires_grad=True) * 1.0
    return probe.grad_fn._sequence_nr() + 1


def _relative(seq, base):
    return seq if seq is None or seq == UINT64_MAX else seq - base


def record_hook_order(torch, lesson, line, code):
    """A pre-hook on every node of each graph ``.backward()`` is called on: the order they ran."""
    rows, original = [], torch.Tensor.backward
    base = _next_sequence_nr(torch)

    def backward(self, *args, **kwargs):
        for node in _walk(self.grad_fn):
            def hook(grad_outputs, node=node):
                rows.append({"step": len(rows) + 1, "node": node.name(),
                             "seq": _relative(node._sequence_nr(), base),
                             "grad": _grad_text(grad_outputs)})
            node.register_prehook(hook)
        return original(self, *args, **kwargs)

    torch.Tensor.backward = backward
    try:
        _run_code(lesson, line, code, {"__name__": "__main__"}, "recording's code")
    finally:
        torch.Tensor.backward = original
    return rows


EVALUATE = "autograd::engine::evaluate_function: "


def record_profile(torch, lesson, line, code):
    """The profiler's events: forward ops that made a node, each node the engine ran, the ops inside."""
    import torch.profiler

    base = _next_sequence_nr(torch)
    with torch.profiler.profile() as prof:
        _run_code(lesson, line, code, {"__name__": "__main__"}, "recording's code")
    rows = []
    for event in sorted(prof.events(), key=lambda e: e.time_range.start):
        if event.cpu_parent is not None:
            continue
        seq = _relative(event.sequence_nr, base) if event.sequence_nr >= 0 else None
        if event.name.startswith(EVALUATE):
            node = event.name[len(EVALUATE):]
            rows.append({"name": node, "phase": "backward", "seq": seq, "depth": 0, "node": node})
            for span in sorted(event.cpu_children, key=lambda e: e.time_range.start):
                for op in sorted(span.cpu_children, key=lambda e: e.time_range.start):
                    rows.append({"name": op.name, "phase": "backward", "seq": None, "depth": 1, "node": node})
        elif seq is not None:
            rows.append({"name": event.name, "phase": "forward", "seq": seq, "depth": 0, "node": None})
    # An op that makes no node sees the number the next node will get: of the forward ops with
    # one number, the node was made by the last (detach_ inside torch.tensor(...) comes first).
    made = {r["seq"]: r["node"] for r in rows if r["phase"] == "backward" and r["depth"] == 0}
    last = {r["seq"]: i for i, r in enumerate(rows) if r["phase"] == "forward"}
    rows = [r for i, r in enumerate(rows) if r["phase"] != "forward" or (last[r["seq"]] == i and r["seq"] in made)]
    for r in rows:
        if r["phase"] == "forward":
            r["node"] = made[r["seq"]]
    return rows


RECORDERS = {"hook-order": record_hook_order, "profile": record_profile}


# ---------------------------------------------------------------- the job

def run(job):
    lesson, engine = job["lesson"], job["engine"]
    if engine == "gradwalk":
        from gradwalk.tracing.torch_alias import torch_served_by_gradwalk
        context = torch_served_by_gradwalk()
    else:
        context = contextlib.nullcontext()
    with context:
        import torch
        version = torch.__version__.split("+")[0]
        answer = {"engine": "gradwalk" if engine == "gradwalk" else "pytorch", "version": version,
                  "numbers": {}, "values": {}, "listings": [], "recorded": []}
        namespace = {"__name__": "__main__"}
        for line, code in job["compute"]:
            _run_code(lesson, line, code, namespace, "compute block")
        for text, path, spec, line in job["placeholders"]:
            try:
                value = plain(resolve(namespace, path))
                answer["numbers"][text] = show(value, spec)
            except (KeyError, AttributeError, IndexError, TypeError, ValueError) as error:
                raise BlockFailed(line, f"the placeholder {{{{{text}}}}} cannot be filled: "
                                        f"{type(error).__name__}: {error}") from None
            answer["values"][text] = number(value)
        for line, code in job["listings"]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                _run_code(lesson, line, code, {"__name__": "__main__"}, "listing")
            answer["listings"].append(out.getvalue())
        for line, recording in job["recordings"]:
            rows = RECORDERS[recording["kind"]](torch, lesson, line, recording["code"])
            answer["recorded"].append({"engine": answer["engine"], "version": version, "source": "live",
                                       "rows": rows})
    return answer


def main():
    job = json.loads(sys.stdin.read())
    answer_to = sys.stdout
    sys.stdout = sys.stderr  # what compute blocks print must not end up in the answer
    try:
        answer = run(job)
    except BlockFailed as failure:
        answer = {"error": {"line": failure.line, "message": failure.message}}
    answer_to.write(json.dumps(answer))


if __name__ == "__main__":
    main()
