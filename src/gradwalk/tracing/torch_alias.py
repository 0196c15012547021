"""``import torch`` served by gradwalk, for running an ordinary PyTorch script unchanged.

    with torch_served_by_gradwalk():
        runpy.run_path("train.py")      # its `import torch.nn as nn` gets gradwalk.nn

A finder at the front of ``sys.meta_path`` maps every ``torch`` / ``torch.X`` import to
``gradwalk`` / ``gradwalk.X``: the very same module objects, so ``torch.nn is gradwalk.nn``
(and ``functorch``, the package PyTorch still ships beside torch, to ``gradwalk._functorch``).
Modules that real PyTorch had already loaded are set aside and put back afterwards, so the
trace can run inside a process that also uses real PyTorch (the tests do).
"""
import contextlib
import importlib
import importlib.abc
import importlib.util
import sys


def _is_torch_name(name):
    return name in ("torch", "functorch") or name.startswith(("torch.", "functorch."))


def _target(name):
    """``torch.X`` is ``gradwalk.X``; ``functorch`` (which PyTorch still ships) is ``gradwalk._functorch``."""
    if name == "functorch" or name.startswith("functorch."):
        return "gradwalk._functorch" + name[len("functorch"):]
    return "gradwalk" + name[len("torch"):]


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self.original_spec = module.__spec__
        return module  # the import system then files it under the torch name too

    def exec_module(self, module):
        module.__spec__ = self.original_spec  # the import system overwrote it with the alias spec


class _GradwalkForTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if not _is_torch_name(fullname):
            return None
        target_name = _target(fullname)
        try:
            spec = importlib.util.find_spec(target_name)
        except ModuleNotFoundError:
            spec = None
        if spec is None or spec.origin is None:  # missing, or an empty namespace directory
            raise ModuleNotFoundError(
                f"No module named '{fullname}': gradwalk has no {target_name} (yet)", name=fullname)
        return importlib.util.spec_from_loader(fullname, _AliasLoader(target_name))


@contextlib.contextmanager
def torch_served_by_gradwalk():
    set_aside = {name: module for name, module in sys.modules.items() if _is_torch_name(name)}
    for name in set_aside:
        del sys.modules[name]
    finder = _GradwalkForTorch()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [name for name in sys.modules if _is_torch_name(name)]:
            del sys.modules[name]
        sys.modules.update(set_aside)
