"""``torch.functional``: the module PyTorch keeps a few of its functions in (``einsum``,
``split``, ``norm``, ``meshgrid``, ``unique``, ...). Tutorials import it by mistake for
``torch.nn.functional`` (``import torch.functional as F``); PyTorch then fails at the first
``F.relu``, and so does this module, with the same AttributeError. Every name is gradwalk"s own
function, the one ``gradwalk.<name>`` is."""
import gradwalk as _gradwalk

_NAMES = [  # torch.functional.__all__ in PyTorch 2.13
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
    "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank",
    "split", "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"]


def __getattr__(name):
    if name in _NAMES:
        try:
            return getattr(_gradwalk, name)
        except AttributeError:
            raise AttributeError(f"gradwalk does not support torch.functional.{name} (yet)") from None
    raise AttributeError(f"module 'torch.functional' has no attribute '{name}'")
