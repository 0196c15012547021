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
            except ImportError:  # the 'fast' extra is not installed: reference paths only
                pass
            else:
                _njit = njit
    return _njit
