"""``torch.autograd._functions``: PyTorch's own small custom Functions (``Resize``, which the
deprecated out-of-place ``Tensor.resize`` applies)."""
import numpy as np

from .function import Function


class Resize(Function):
    """The same elements in a new shape; backward views the gradient back (node: ResizeBackward)."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        numel = int(np.prod(sizes, dtype=np.int64))
        if tensor.numel() != numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), "
                f"but the given tensor has a size of {'x'.join(map(str, tensor.size()))} "
                f"({tensor.numel()} elements). autograd's resize can only change the shape of a "
                "given tensor, while preserving the number of elements. ")
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().clone().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None
