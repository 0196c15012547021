"""Our own words: no run of 12 or more consecutive words shared with a seed document.

    >>> shared_runs("the cat sat on the mat", ["a cat sat on the mat today"], n=4)
    ['cat sat on the mat']

Words are compared lower-cased, with punctuation and math symbols dropped, so a sentence copied
with a changed comma or a curly quote is still found.
"""
import os
import re
from pathlib import Path

RUN = 12
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def words(text):
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


def seed_dir():
    """The seed documents: $GRADWALK_SEEDS, or shared/seeds beside the repository."""
    if os.environ.get("GRADWALK_SEEDS"):
        return Path(os.environ["GRADWALK_SEEDS"])
    repo = Path(__file__).resolve().parents[3]
    for candidate in (repo.parent / "shared" / "seeds", repo / "shared" / "seeds"):
        if candidate.is_dir():
            return candidate
    return repo.parent / "shared" / "seeds"


def seed_texts(folder=None):
    folder = Path(folder) if folder else seed_dir()
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.txt"))
            if path.name.lower() != "readme.txt"}


def shared_runs(text, others, n=RUN):
    """The maximal runs of at least ``n`` consecutive words of ``text`` found in any of ``others``."""
    grams = set()
    for other in others:
        ws = words(other)
        grams.update(tuple(ws[i:i + n]) for i in range(len(ws) - n + 1))
    ours = words(text)
    hits = [i for i in range(len(ours) - n + 1) if tuple(ours[i:i + n]) in grams]
    runs, start, end = [], None, None
    for i in hits:
        if start is not None and i <= end - n + 1:
            end = i + n
            continue
        if start is not None:
            runs.append(" ".join(ours[start:end]))
        start, end = i, i + n
    if start is not None:
        runs.append(" ".join(ours[start:end]))
    return runs
