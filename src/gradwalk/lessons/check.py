"""Everything that must hold for a lesson, as a list of problems (empty: the lesson is fine).

Used by ``python -m gradwalk.lessons check`` while writing and by tests/lessons/ in CI:

- the file reads and renders (front matter, directives, glossary terms defined);
- every compute block, listing and recording runs, and every placeholder is filled;
- with ``with_torch``: the same code on real PyTorch gives every placeholder the same text (or,
  where a float32 last digit differs, the same number within 1e-5), every listing prints the
  same output, and every recording shipped with the lesson matches a live one in its nodes,
  order and sequence numbers;
- no run of 12 or more words is shared with a seed document.
"""
import json

from .compute import compute, recording_path, same_number
from .originality import RUN, seed_dir, seed_texts, shared_runs
from .parse import LessonError, plain_text, read_lesson, render


def compare_results(ours, theirs):
    """Where gradwalk's results and PyTorch's differ, as problems."""
    problems = []
    for text, shown in ours["numbers"].items():
        other = theirs["numbers"].get(text)
        if shown != other and not same_number(ours["values"].get(text), theirs["values"].get(text)):
            problems.append(f"{{{{{text}}}}} is {shown} on gradwalk but {other} on PyTorch")
    for n, (a, b) in enumerate(zip(ours["listings"], theirs["listings"]), 1):
        if a != b:
            problems.append(f"listing {n} prints differently on gradwalk:\n{_indent(a)}\n"
                            f"    and on PyTorch:\n{_indent(b)}")
    return problems


def compare_recordings(source, theirs):
    """Shipped recordings that no longer match what PyTorch records live."""
    problems = []
    for n, live in enumerate(theirs, 1):
        path = recording_path(source, n)
        if not path.is_file():
            problems.append(f"recording {n} is not shipped ({path.name}): run `python -m gradwalk.lessons "
                            f"record {source.id}`")
            continue
        shipped = json.loads(path.read_text())
        if _shape(shipped["rows"]) != _shape(live["pytorch"]["rows"]):
            problems.append(f"the shipped recording {path.name} differs from PyTorch's live one: run "
                            f"`python -m gradwalk.lessons record {source.id}`")
    return problems


def _shape(rows):
    return [(r.get("node") or r.get("name"), r.get("seq"), r.get("grad"), r.get("depth")) for r in rows]


def _indent(text):
    return "\n".join("      " + line for line in text.rstrip("\n").split("\n"))


def check_lesson(path, with_torch=False, seeds=None):
    try:
        source = read_lesson(path)
        ours = compute(source)
        lesson = render(source, ours)
    except LessonError as error:
        return [str(error)]
    problems = []
    if with_torch:
        try:
            theirs = compute(source, engine="pytorch")
        except LessonError as error:
            return [f"on PyTorch: {error}"]
        problems += compare_results(ours, theirs)
        problems += compare_recordings(source, ours["recordings"])
    texts = seed_texts(seeds) if seeds or seed_dir().is_dir() else None
    if texts is None:
        problems.append(f"the seed documents are not at {seed_dir()} (set GRADWALK_SEEDS): cannot "
                        f"check that the lesson is in our own words")
    else:
        for run in shared_runs(plain_text(lesson), texts.values()):
            problems.append(f"shares {len(run.split())} words (>= {RUN}) with a seed: \"{run}\"")
    return problems
