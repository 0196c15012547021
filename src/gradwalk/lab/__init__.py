"""The lab: a local web page where you write a PyTorch snippet and step through its backward pass.

* ``interpreter.py``: the snippet language, run by walking Python's ``ast`` (never ``exec``);
* ``limits.py``: what one request may use, and ``SnippetError``;
* ``workers.py``: the worker processes snippets run in (a runaway one is killed);
* ``server.py``: the Starlette app (``POST /api/run``, ``GET /api/presets``, ...);
* ``openapi.py``: its OpenAPI description; ``presets.py``: the example snippets;
* ``cli.py``: ``gradwalk lab``; ``static/``: the page, built from ``web/``.

The JSON the page receives is described in docs/lab-api.md.
"""
from .interpreter import run_snippet
from .limits import DEFAULT_LIMITS, LimitError, Limits, SnippetError

__all__ = ["run_snippet", "SnippetError", "LimitError", "Limits", "DEFAULT_LIMITS", "create_app"]


def create_app(*args, **kwargs):
    """The lab's ASGI app (``server.create_app``); imported lazily, Starlette is optional."""
    from .server import create_app as create

    return create(*args, **kwargs)
