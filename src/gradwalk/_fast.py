"""Optional compiled fast paths (numba), for the few loops NumPy cannot vectorise.

Every fast path sits beside a NumPy reference path that does the same arithmetic in the same
order; tests run both. Without numba installed, or with ``GRADWALK_NO_NUMBA=1`` in the
environment, ``numba_njit`` is None and gradwalk uses the reference paths only.
numba is imported on first use, never by ``import gradwalk``.
"""

from __future__ import annotations

import os

_UNSET = object()
_njit = _UNSET


def numba_njit():
    """numba's ``njit`` when fast paths are enabled and numba imports, else None."""
    global _njit
    if _njit is _UNSET:
        _njit = None
        if os.environ.get("GRADWALK_NO_NUMBA", "") in ("", "0"):
            try:
                from numba import njit
            except Exception:  # not installed, or cannot load here (e.g. a lab worker's
                pass           # memory limit): the reference paths only
            else:
                _njit = njit
    return _njit


def disable():
    """Use the reference paths from now on in this process (the lab's workers: a snippet's time
    limit must not pay for compiling a kernel, nor its memory limit for loading LLVM)."""
    global _njit
    _njit = None
