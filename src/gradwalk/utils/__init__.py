"""``gradwalk.utils``: ``data`` (datasets and loaders), ``checkpoint`` and ``benchmark``, loaded on
first use."""
import importlib


def __getattr__(name):
    if name in ("data", "checkpoint", "hooks", "benchmark"):
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'gradwalk.utils' has no attribute '{name}'")
