"""``torch.backends.cuda``: the TF32 switches scripts set (``cuda.matmul.allow_tf32 = True``)."""
import types

matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True)


def is_built():
    return False
