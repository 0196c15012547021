"""A lesson's numbers: its compute blocks, listings and recordings run in a child process.

The lesson's code is repository content (a teacher's file), not a stranger's snippet, and it is
plain PyTorch code: ``import torch``, loops, functions. It runs in a fresh Python process
(``python -m gradwalk.lessons.runner``), one per lesson and engine, so nothing it does stays in
the server, and the same code can run on either engine:

    results = compute(source)                    # import torch -> gradwalk (what the page shows)
    checked = compute(source, engine="pytorch")  # import torch -> real PyTorch (what the tests compare)

``results`` holds each placeholder's shown text (``numbers``) and number (``values``), each
listing's printed output, each recording's rows, and the engine's name and version.
"""
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from .parse import LessonError

TIMEOUT_S = 300          # a lesson trains an MLP at most: seconds, not minutes, on one core


def torch_installed():
    return importlib.util.find_spec("torch") is not None


def _job(source, engine, parts):
    return {"lesson": source.id, "engine": engine,
            "compute": source.compute_code if "compute" in parts else [],
            "placeholders": [[p.text, p.path, p.spec, p.line] for p in source.placeholders]
            if "compute" in parts else [],
            "listings": source.listings if "listings" in parts else [],
            "recordings": [[line, {"kind": r["kind"], "code": r["code"]}] for line, r in source.recordings]
            if "recordings" in parts else []}


def run_job(job, timeout=TIMEOUT_S):
    """Run one job in a child process; its JSON answer, or LessonError with the child's message."""
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    src = str(Path(__file__).resolve().parents[2])  # so the child imports this gradwalk
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        done = subprocess.run([sys.executable, "-m", "gradwalk.lessons.runner"], input=json.dumps(job),
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise LessonError(job["lesson"], None, f"computing the lesson on {job['engine']} took longer "
                                               f"than {timeout} s") from None
    if done.returncode != 0 or not done.stdout.strip():
        raise LessonError(job["lesson"], None, f"computing the lesson on {job['engine']} failed:\n"
                                               f"{done.stderr.strip()[-3000:]}")
    answer = json.loads(done.stdout)
    if answer.get("error"):
        error = answer["error"]
        raise LessonError(job["lesson"], error.get("line"), error["message"])
    return answer


def compute(source, engine="gradwalk", timeout=TIMEOUT_S):
    """Everything the page needs, computed on ``engine``; the PyTorch side of each recording is
    recorded live when PyTorch is installed, read from the shipped recording otherwise."""
    results = run_job(_job(source, engine, ("compute", "listings", "recordings")), timeout)
    ours = results.pop("recorded")
    if engine == "pytorch":
        theirs = ours
    elif not source.recordings:
        theirs = []
    elif torch_installed():
        theirs = run_job(_job(source, "pytorch", ("recordings",)), timeout)["recorded"]
    else:
        theirs = [shipped_recording(source, n) for n in range(1, len(source.recordings) + 1)]
    results["recordings"] = [{"pytorch": p, "gradwalk": g} for p, g in zip(theirs, ours)]
    return results


def recording_path(source, n):
    """Where a lesson's n-th recording is shipped: recordings/ beside the lesson file."""
    return source.path.parent / "recordings" / f"{source.id}-{n}.json"


def shipped_recording(source, n):
    path = recording_path(source, n)
    if not path.is_file():
        line = source.recordings[n - 1][0]
        raise LessonError(source.id, line, f"PyTorch is not installed and no recording is shipped for "
                                           f"this recording ({path.name}): run `python -m gradwalk.lessons "
                                           f"record {source.id}` where PyTorch is installed")
    recorded = json.loads(path.read_text())
    recorded["source"] = "shipped"
    return recorded


def write_recordings(source, timeout=TIMEOUT_S):
    """Record every recording of the lesson on real PyTorch, beside the lesson; the paths."""
    recorded = run_job(_job(source, "pytorch", ("recordings",)), timeout)["recorded"]
    (source.path.parent / "recordings").mkdir(parents=True, exist_ok=True)
    paths = []
    for n, rows in enumerate(recorded, 1):
        path = recording_path(source, n)
        path.write_text(json.dumps({k: v for k, v in rows.items() if k != "source"}, indent=1) + "\n")
        paths.append(path)
    return paths


def same_number(a, b, rtol=1e-5):
    """Two placeholders' numbers agree: equal, both nan, or within rtol (float32's last digits)."""
    if a is None or b is None:
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rtol * max(abs(a), abs(b)) + 1e-12
