"""``gradwalk.utils``: ``data`` (datasets and loaders) and ``checkpoint``, loaded on first use."""
import importlib


def __getattr__(name):
    if name in ("data", "checkpoint", "hooks"):
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'gradwalk.utils' has no attribute '{name}'")
