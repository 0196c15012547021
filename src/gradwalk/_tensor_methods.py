"""Install the op functions as ``Tensor`` methods and operators (``x.exp()``, ``a * b``)."""
from .ops import functions as F  # noqa: F401  (imports every op module, filling METHODS)
from .ops import pointwise as P
from .ops import tensor_api
from .ops import shape as S
from .ops._util import METHODS
from .ops.aliases import accepting_numpy_names
from .ops.inplace import add_, div_, mul_, sub_
from .tensor import Tensor


def _install():
    for name, fn in METHODS.items():
        setattr(Tensor, name, accepting_numpy_names(name, fn, method=True))  # x.sum(axis=0, keepdims=True)

    # `2.0 + a` records add(a, 2.0), as PyTorch does, so the number's edge comes second
    Tensor.__add__ = Tensor.__radd__ = P.add
    Tensor.__sub__ = P.sub
    Tensor.__rsub__ = P.rsub
    Tensor.__mul__ = Tensor.__rmul__ = P.mul
    Tensor.__truediv__ = P.div
    Tensor.__rtruediv__ = P.rdiv
    Tensor.__floordiv__ = lambda self, other: P.div(self, other, rounding_mode="floor")
    Tensor.__rfloordiv__ = lambda self, other: P.div(P.as_tensor_arg(other), self, rounding_mode="floor")
    Tensor.__mod__ = F.remainder  # RemainderBackward0/1, as PyTorch's %
    Tensor.__rmod__ = lambda self, other: F.remainder(other, self)
    Tensor.__pow__ = lambda self, other: P.pow(self, other)
    Tensor.__rpow__ = lambda self, other: P.pow(other, self)
    Tensor.__matmul__ = lambda self, other: F.matmul(self, other)
    Tensor.__rmatmul__ = lambda self, other: F.matmul(other, self)
    Tensor.__neg__ = lambda self: P.neg(self)
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = lambda self: P.abs(self)
    Tensor.__eq__ = lambda self, other: False if other is None else P.eq(self, other)  # as PyTorch:
    Tensor.__ne__ = lambda self, other: True if other is None else P.ne(self, other)  # t != None is True
    Tensor.__lt__ = lambda self, other: P.lt(self, other)
    Tensor.__le__ = lambda self, other: P.le(self, other)
    Tensor.__gt__ = lambda self, other: P.gt(self, other)
    Tensor.__ge__ = lambda self, other: P.ge(self, other)
    Tensor.__and__ = lambda self, other: (P.logical_and(self, other) if self.dtype.name == "bool"
                                          else _bitwise(self, other, "and"))
    Tensor.__or__ = lambda self, other: (P.logical_or(self, other) if self.dtype.name == "bool"
                                         else _bitwise(self, other, "or"))
    Tensor.__xor__ = lambda self, other: (P.logical_xor(self, other) if self.dtype.name == "bool"
                                          else _misc().bitwise_xor(self, other))
    Tensor.__invert__ = lambda self: (P.logical_not(self) if self.dtype.name == "bool"
                                      else _misc().bitwise_not(self))
    Tensor.__iadd__ = lambda self, other: add_(self, other)
    Tensor.__isub__ = lambda self, other: sub_(self, other)
    Tensor.__imul__ = lambda self, other: mul_(self, other)
    Tensor.__itruediv__ = lambda self, other: div_(self, other)
    Tensor.__getitem__ = S.getitem
    Tensor.__setitem__ = S.setitem
    Tensor.__hash__ = lambda self: id(self)
    Tensor.T = property(lambda self: S.permute(self, tuple(range(self.ndim))[::-1]))
    Tensor.mT = property(lambda self: S.transpose(self, -2, -1))
    Tensor.where = P._where_method
    Tensor.dim = lambda self: self._data.ndim
    tensor_api.install(Tensor)


def _misc():
    from .ops import misc  # integer ^ and ~ are bitwise in PyTorch (logical only for bool)

    return misc


def _bitwise(a, b, kind):
    import numpy as np

    other = b._data if isinstance(b, Tensor) else b
    fn = np.bitwise_and if kind == "and" else np.bitwise_or
    return Tensor._make(fn(a._data, other))


_install()
