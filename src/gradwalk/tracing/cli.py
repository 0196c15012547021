"""``gradwalk trace SCRIPT.py``: run an ordinary PyTorch script on gradwalk and print, for every
``backward()`` / ``autograd.grad()`` call, the engine's steps as a table: step, node, sequence
number, gradient in, gradients out, ready queue.

    gradwalk trace neuron.py              # the table of each pass
    gradwalk trace neuron.py --mode topo  # micrograd's order instead of PyTorch's ready queue
    gradwalk trace neuron.py --json       # the passes as JSON (docs/lab-api.md's PASS records)
    gradwalk trace neuron.py --torch      # also run it on real PyTorch and compare, side by side

How: ``import torch`` is served by gradwalk (``torch_alias.py``) and ``watch_backward`` records
each pass with the stepper, naming tensors after the script's variables (``names.py``). With
``--torch`` the script runs a second time, on real PyTorch in a fresh process, with a pre-hook on
every node (``torch_runner.py``); every difference in node, order or gradient is marked.
"""
import argparse
import contextlib
import json
import os
import runpy
import subprocess
import sys
import tempfile
import traceback

import numpy as np

from ..autograd.stepper import MODES, short_value, watch_backward
from .names import names_in_frame
from .torch_alias import torch_served_by_gradwalk


def run_on_gradwalk(script, mode="pytorch", script_args=(), stdout=None, before_run=None):
    """Run ``script`` with ``import torch`` served by gradwalk. Returns ``(passes, error)``:
    one finished Stepper per backward call, and the exception the script raised (or None)."""
    from ..tensor import Tensor

    error = None
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [script, *script_args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    redirect = contextlib.redirect_stdout(stdout) if stdout is not None else contextlib.nullcontext()
    try:
        with torch_served_by_gradwalk(), redirect, \
                watch_backward(mode=mode, names=lambda frame: names_in_frame(frame, Tensor),
                               before_run=before_run) as passes, \
                _grads_after_each_pass(passes):
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as exit_:
                if exit_.code not in (None, 0):
                    error = exit_
            except Exception as e:  # the passes that ran are still worth showing
                error = e
                traceback.print_exc(file=sys.stderr)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return passes, error


@contextlib.contextmanager
def _grads_after_each_pass(passes):
    """Note each pass's leaf gradients as ``.grad`` stands right after that pass (as the torch
    runner does), not when the script ends: a training loop zeroes them before the next pass.
    Each finished stepper gets ``grads_after``."""
    from .. import autograd

    watched = autograd.run_backward  # watch_backward's wrapper

    def run_backward(*args, **kwargs):
        before = len(passes)
        try:
            return watched(*args, **kwargs)
        finally:
            if len(passes) > before:
                passes[-1].grads_after = passes[-1].leaf_grads()

    autograd.run_backward = run_backward
    try:
        yield
    finally:
        autograd.run_backward = watched


def grads_after(s):
    """The leaf gradients right after pass ``s`` (``leaf_grads()`` for a stepper run elsewhere)."""
    return getattr(s, "grads_after", None) or s.leaf_grads()


def pass_dict(s):
    d = s.to_dict()
    d["grads"] = grads_after(s)
    return d


def missing_api(error):
    """``torch.nn.Dropout2d``, ``Tensor.scatter_``, ``torch.func.functional_call(strict=)``...: the
    PyTorch API a script reached for that gradwalk lacks, from the error it raised, or None."""
    import re

    text = str(error)
    if isinstance(error, ModuleNotFoundError) and "gradwalk has no" in text:
        return re.search(r"No module named '([^']+)'", text).group(1)
    if isinstance(error, AttributeError):
        found = re.match(r"module '(gradwalk[\w.]*)' has no attribute '(\w+)'", text)
        if found:
            return "torch" + found.group(1)[len("gradwalk"):] + "." + found.group(2)
        found = re.match(r"'(Tensor|Parameter|\w+Backward\d*)' object has no attribute '(\w+)'", text)
        if found:
            return f"{found.group(1)}.{found.group(2)}"
    if isinstance(error, TypeError):
        found = re.match(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'", text)
        if found:
            return f"the keyword {found.group(2)}= of {found.group(1)}()"
    if isinstance(error, NotImplementedError) and text.startswith("gradwalk"):
        return text
    return None


def print_missing_api(error, script, out=sys.stdout):
    """One line naming what gradwalk lacks, with the script's line that asked for it."""
    api = missing_api(error) if error is not None else None
    if api is None:
        return
    line = None
    tb = error.__traceback__
    while tb is not None:  # the innermost frame of the script itself
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(script):
            line = tb.tb_lineno
        tb = tb.tb_next
    where = f" (line {line})" if line else ""
    print(f"gradwalk lacks {api}, which this script uses{where}", file=out)


def run_on_torch(script):
    """The same script on real PyTorch, in a fresh process; ``None`` when PyTorch isn't installed."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "torch_passes.json")
        env = dict(os.environ)
        src_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join([src_dir, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, env=env)
        if probe.returncode != 0:
            return None
        done = subprocess.run([sys.executable, "-m", "gradwalk.tracing.torch_runner", script, out],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"running {script} on PyTorch failed:\n{done.stderr}")
        with open(out) as f:
            return json.load(f)


# ---------------------------------------------------------------- text output

def pass_title(number, s):
    site = s.call_site or {}
    where = f"  (line {site['line']})" if site.get("line") else ""
    return f"pass {number}: {site.get('call') or 'backward'}{where}"


def print_passes(passes, out=sys.stdout):
    if not passes:
        print("no backward() or autograd.grad() call ran", file=out)
    for number, s in enumerate(passes, 1):
        print(pass_title(number, s), file=out)
        print(s.table(), file=out)
        grads = grads_after(s)
        if grads:
            print("grads: " + ", ".join(f"{name} = {short_value(g)}" for name, g in grads.items()),
                  file=out)
        if s.error is not None:
            print(f"error: {type(s.error).__name__}: {s.error}", file=out)
        print(file=out)


# ---------------------------------------------------------------- comparison with PyTorch

def gradwalk_rows(s):
    """The stepper's records in the runner's shape: label, seq, gradients in and out."""
    rows = []
    for record in s.records:
        if record.get("skipped") or "error" in record:
            continue  # PyTorch runs no pre-hook for a node autograd.grad only captures
        rows.append({"label": s.label(record["node"]), "seq": record["seq"],
                     "grad_in": record["grad_in"],
                     "grads_out": [out["value"] for out in record["grads_out"]]})
    return rows


def _as_array(value):
    data = value["data"]
    convert = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}
    array = np.asarray(data, dtype=object)
    return np.vectorize(lambda v: convert.get(v, v) if isinstance(v, str) else v,
                        otypes=[float])(array) if array.size else array.astype(float)


def same_value(a, b):
    if a is None or b is None:
        return a is None and b is None
    if a["shape"] != b["shape"]:
        return False
    return bool(np.allclose(_as_array(a), _as_array(b), rtol=1e-5, atol=1e-7, equal_nan=True))


def _same_values(xs, ys):
    return len(xs) == len(ys) and all(same_value(x, y) for x, y in zip(xs, ys))


def compare_pass(ours, theirs):
    """Rows ``(ours, theirs, marks)`` step by step; marks name what differs: node, order, gradient."""
    our_labels = sorted(r["label"] for r in ours)
    their_labels = sorted(r["label"] for r in theirs)
    rows = []
    for i in range(max(len(ours), len(theirs))):
        a = ours[i] if i < len(ours) else None
        b = theirs[i] if i < len(theirs) else None
        marks = []
        if a is None or b is None or a["label"] != b["label"]:
            marks.append("order" if our_labels == their_labels else "node")
        elif a["seq"] != b["seq"]:
            marks.append("order")  # the sequence number decides the order
        elif not (_same_values(a["grad_in"], b["grad_in"]) and _same_values(a["grads_out"], b["grads_out"])):
            marks.append("gradient")
        rows.append((a, b, marks))
    return rows


def _cells(row):
    if row is None:
        return ("-", "", "")
    seq = "MAX" if row["seq"] is None else str(row["seq"])
    return (row["label"], seq, ", ".join(short_value(g) for g in row["grad_in"]))


def print_comparison(passes, torch_run, out=sys.stdout):
    """Both orders side by side; returns the number of differences."""
    differences = 0
    their_passes = torch_run["passes"]
    if len(passes) != len(their_passes):
        print(f"DIFFERENT: gradwalk ran {len(passes)} backward passes, PyTorch {len(their_passes)}",
              file=out)
        differences += 1
    for number, (s, theirs) in enumerate(zip(passes, their_passes), 1):
        print(pass_title(number, s), file=out)
        rows = compare_pass(gradwalk_rows(s), theirs["steps"])
        table = [("step", "gradwalk", "seq", "grad in", "torch", "seq", "grad in", "diff")]
        for i, (a, b, marks) in enumerate(rows, 1):
            table.append((str(i), *_cells(a), *_cells(b), " ".join(f"<- {m}" for m in marks)))
            differences += bool(marks)
        widths = [max(len(r[k]) for r in table) for k in range(len(table[0]))]
        for k, r in enumerate(table):
            left = "  ".join(c.ljust(w) for c, w in zip(r[:4], widths[:4]))
            right = "  ".join(c.ljust(w) for c, w in zip(r[4:7], widths[4:7]))
            print(f"{left} | {right} | {r[7]}".rstrip(), file=out)
            if k == 0:
                print("-" * (sum(widths) + 2 * 6 + 6), file=out)
        ours = grads_after(s)
        for name, value in theirs["grads"].items():
            if name in ours and not same_value(ours[name], value):
                print(f"DIFFERENT gradient: {name}.grad is {short_value(ours[name])} on gradwalk, "
                      f"{short_value(value)} on PyTorch", file=out)
                differences += 1
        print(file=out)
    if torch_run.get("error"):
        print(f"on PyTorch the script raised {torch_run['error']['type']}: "
              f"{torch_run['error']['message']}", file=out)
    print("no differences" if differences == 0 else f"{differences} difference(s)", file=out)
    return differences


# ---------------------------------------------------------------- entry point

def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="gradwalk trace",
        description="Run a PyTorch script on gradwalk and print every step of each backward pass.",
        epilog="Arguments for the script itself go after `--`.")
    parser.add_argument("script", help="a Python file that does `import torch`")
    parser.add_argument("--json", action="store_true", help="print the passes as JSON")
    parser.add_argument("--mode", choices=MODES, default="pytorch",
                        help="pytorch: the engine's ready queue; topo: micrograd's order")
    parser.add_argument("--torch", action="store_true",
                        help="also run the script on real PyTorch and compare the orders")
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args = []
    if "--" in argv:  # gradwalk trace train.py --torch -- --epochs 3
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    if not os.path.exists(args.script):
        print(f"gradwalk trace: no such file: {args.script}", file=sys.stderr)
        return 2
    # with --json the script's own prints go to stderr, so stdout stays one JSON document
    passes, error = run_on_gradwalk(args.script, args.mode, script_args,
                                    stdout=sys.stderr if args.json else None)
    if args.torch:
        torch_run = run_on_torch(args.script)
        if torch_run is None:
            print("gradwalk trace --torch: real PyTorch is not installed", file=sys.stderr)
            return 2
        if args.json:
            json.dump({"script": args.script, "mode": args.mode,
                       "passes": [pass_dict(s) for s in passes], "torch": torch_run}, sys.stdout)
            print()
            return 0
        differences = print_comparison(passes, torch_run)
        print_missing_api(error, args.script)
        return 1 if differences or error else 0
    if args.json:
        json.dump({"script": args.script, "mode": args.mode, "passes": [pass_dict(s) for s in passes],
                   "error": None if error is None else {"type": type(error).__name__,
                                                        "message": str(error)}}, sys.stdout)
        print()
    else:
        print_passes(passes)
        print_missing_api(error, args.script)
    return 1 if error is not None else 0
