"""``torch.autograd.Variable``: the pre-0.4 wrapper, kept by PyTorch as an alias.

``Variable(t)`` is a new leaf sharing ``t``'s memory, ``requires_grad`` as asked; every tensor is
an instance of ``Variable``.
"""
import warnings


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from ..tensor import Tensor

        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data, requires_grad=False, volatile=False):
        from ..tensor import Tensor

        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad and data.dtype.np.kind not in "fc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        leaf = data.detach()
        if requires_grad:
            leaf.requires_grad_(True)
        return leaf
