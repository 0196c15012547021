"""The lessons: Markdown files a teacher can edit (docs/lessons.md), rendered with every number
computed by gradwalk (docs/lessons-api.md).

    >>> store = LessonStore()
    >>> [entry["id"] for entry in store.index()]          # doctest: +SKIP
    ['chain-rule', 'autodiff', 'engine']
    >>> store.get("chain-rule")["numbers"]                # doctest: +SKIP
    {'power_grad': '12', ...}

A lesson is computed when first asked for and kept until its file changes (the store compares
the file's bytes), so a teacher's edit shows on the next reload.
"""
import hashlib
import threading
from pathlib import Path

from .compute import compute
from .parse import LessonError, read_lesson, render, section_list

CONTENT_DIR = Path(__file__).parent / "content"

__all__ = ["CONTENT_DIR", "LessonError", "LessonStore", "build_lesson"]


def build_lesson(path, engine="gradwalk"):
    """One lesson file, read, computed on ``engine`` and rendered: the API's JSON."""
    source = read_lesson(path)
    results = compute(source, engine)
    lesson = render(source, results)
    lesson["computed_with"] = {"engine": results["engine"], "version": results["version"]}
    return lesson


class LessonStore:
    """The lessons of one content folder, each computed once per version of its file."""

    def __init__(self, folder=CONTENT_DIR):
        self.folder = Path(folder)
        self._cache = {}                 # id -> (digest, lesson JSON or LessonError)
        self._locks = {}
        self._lock = threading.Lock()

    def paths(self):
        return {p.stem: p for p in sorted(self.folder.glob("*.md"))}

    def _lesson_lock(self, lesson_id):
        with self._lock:
            return self._locks.setdefault(lesson_id, threading.Lock())

    def get(self, lesson_id):
        """The rendered lesson; KeyError if there is no such lesson, LessonError if its file has a
        problem (the same error until the file changes)."""
        path = self.paths().get(lesson_id)
        if path is None:
            raise KeyError(lesson_id)
        with self._lesson_lock(lesson_id):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            cached = self._cache.get(lesson_id)
            if cached is None or cached[0] != digest:
                try:
                    value = build_lesson(path)
                except LessonError as error:
                    value = error
                self._cache[lesson_id] = cached = (digest, value)
        if isinstance(cached[1], LessonError):
            raise cached[1]
        return cached[1]

    def index(self):
        """Every lesson's id, title, summary, order and sections, in order. A lesson whose file
        has a problem is listed with its error, so the start page can say so."""
        entries = []
        for lesson_id, path in self.paths().items():
            try:
                source = read_lesson(path)
            except LessonError as error:
                entries.append({"id": lesson_id, "title": lesson_id, "summary": "", "order": 10**6,
                                "sections": [], "error": str(error)})
                continue
            meta = source.meta
            entries.append({"id": lesson_id, "title": meta["title"], "summary": meta["summary"],
                            "order": meta["order"], "sections": section_list(source)})
        return sorted(entries, key=lambda e: (e["order"], e["id"]))

    def warm(self):
        """Compute every lesson now (the server does this in the background at start)."""
        for lesson_id in self.paths():
            try:
                self.get(lesson_id)
            except (KeyError, LessonError):
                pass

