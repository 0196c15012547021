"""``Tensor``: a NumPy array plus the autograd fields PyTorch gives a tensor.

The fields that every op touches live in ``__slots__`` (``_data``, ``grad_fn``, ``_grad``,
``_requires_grad``, ``_output_nr``, ``_version_counter``); rarely used ones (hooks, retain_grad,
forward-mode tangents, names) fall back to class-level defaults and the instance ``__dict__``,
which CPython only creates when one of them is set.
"""
import weakref
import warnings

import numpy as np

from . import _dtype
from ._device import CPU, META, on_cpu
from ._meta import NO_DATA, NO_NUMPY, MetaArray, contiguous_strides as _meta_contiguous, empty as _meta_empty
from ._dtype import Size, from_numpy_dtype
from . import autograd as _autograd
from .autograd.node import AccumulateGrad, RemovableHandle, new_version_counter
from .grad_mode import _state as _grad_state

_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access "
    "the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)


_UNDELETABLE = {
    "data": "Deleting tensor data is not allowed. Delete tensor instead!",
    "requires_grad": "requires_grad must be a bool",
    "_grad_fn": "Deletion of _grad_fn not allowed. Detach tensor instead!",
    "_backward_hooks": "Deletion of _backwards_hooks not allowed!",
}


class Tensor:
    __slots__ = ("_data", "_requires_grad", "grad_fn", "_grad", "_output_nr", "_vc",
                 "__dict__", "__weakref__")
    __module__ = "torch"  # print(type(x)) shows <class 'torch.Tensor'>, as in PyTorch (pickles go by _rebuild_tensor)

    # rarely-set attributes: class defaults, overridden per instance in __dict__
    _is_wrapped_number = False
    _py = None
    _is_inference = False
    _base = None
    _retains_grad = False
    _post_accumulate_grad_hooks = None
    _grad_acc_ref = None
    _fw_grads = None
    _is_param = False

    __array_priority__ = 1000  # numpy scalars defer to our operators

    def __init__(self, *args, requires_grad=False, dtype=None):
        self._data = _legacy_constructor_data(args, dtype)
        self._requires_grad = False
        self.grad_fn = None
        self._grad = None
        self._output_nr = 0
        self._vc = None
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _make(cls, data, grad_fn=None, output_nr=0, requires_grad=False):
        t = object.__new__(cls)
        t._data = data
        t._requires_grad = requires_grad
        t.grad_fn = grad_fn
        t._grad = None
        t._output_nr = output_nr
        t._vc = None
        if _grad_state.inference:
            t.__dict__["_is_inference"] = True
        return t

    # ------------------------------------------------------------------ basic properties
    def _array(self):
        """The data as an ndarray that can be shared and written in place.

        A 0-dim result of an op is held as a NumPy scalar (ufuncs on scalars are several times
        faster than on 0-dim arrays); anything that shares or mutates the storage asks for the
        array first, so views, ``detach()`` and in-place ops see one buffer, as in PyTorch.
        """
        data = self._data
        if type(data) is not np.ndarray and type(data) is not MetaArray:
            data = self._data = np.array(data)
        return data

    @property
    def data(self):
        """The same values, detached, with a version counter of its own (as PyTorch's ``.data``)."""
        return Tensor._make(self._array())

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data

    # PyTorch's C++ properties refuse deletion with these messages. Deleters on properties, not a
    # __delattr__: defining __delattr__ routes every attribute *set* through Python (+25% per op).
    @data.deleter
    def data(self):
        raise RuntimeError(_UNDELETABLE["data"])

    @property
    def _grad_fn(self):
        return self.grad_fn

    @_grad_fn.deleter
    def _grad_fn(self):
        raise RuntimeError(_UNDELETABLE["_grad_fn"])

    @property
    def _backward_hooks(self):
        return self.__dict__.get("_backward_hooks")  # set in register_hook, rarely

    @_backward_hooks.setter
    def _backward_hooks(self, value):
        self.__dict__["_backward_hooks"] = value

    @_backward_hooks.deleter
    def _backward_hooks(self):
        raise RuntimeError(_UNDELETABLE["_backward_hooks"])

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[dim]

    def dim(self):
        return self._data.ndim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    @property
    def dtype(self):
        return from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        return CPU if self._data.__class__ is not MetaArray else META

    @property
    def is_meta(self):
        """True for a tensor on the meta device: a shape, a dtype and strides, no data (``_meta.py``)."""
        return self._data.__class__ is MetaArray

    @property
    def is_cuda(self):
        return False

    @property
    def is_cpu(self):
        return True

    def get_device(self):
        return -1

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def element_size(self):
        return self._data.itemsize

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, force=False):
        if self._data.__class__ is MetaArray:
            raise TypeError(NO_NUMPY)
        if self._requires_grad and not force and _grad_state.grad_enabled:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._array()

    def __array__(self, dtype=None, copy=None):
        if self._data.__class__ is MetaArray:
            raise TypeError(NO_NUMPY)
        return self._array() if dtype is None else self._array().astype(dtype)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __format__(self, spec):
        # As torch.Tensor.__format__: a plain 0-dim tensor formats as its Python number
        # (f"{loss}" -> 2.4543561935424805); anything else, or a subclass such as Parameter,
        # as object.__format__ (str() for an empty spec, TypeError otherwise).
        if self._data.ndim == 0 and type(self) is Tensor and self._data.__class__ is not MetaArray:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __repr__(self, **kwargs):
        from ._tensor_str import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def is_inference(self):
        return self._is_inference

    def is_contiguous(self, memory_format=None):
        if self._data.__class__ is MetaArray:
            return self._data._logical_strides == _meta_contiguous(self._data.shape)
        return self._data.flags.c_contiguous

    def stride(self, dim=None):
        if self._data.__class__ is MetaArray:
            s = self._data._logical_strides
        else:
            s = tuple(st // self._data.itemsize for st in self._data.strides)
        return s if dim is None else s[dim]

    def data_ptr(self):
        if self._data.__class__ is MetaArray:
            return 0
        return self._array().__array_interface__["data"][0]

    def untyped_storage(self):
        data = self._array()
        return data.base if data.base is not None else data

    def cpu(self):
        if self._data.__class__ is MetaArray:
            raise NotImplementedError(NO_DATA)
        return self

    def cuda(self, device=None, non_blocking=False):
        on_cpu("cuda")

    def type(self, dtype=None):
        if dtype is None:
            if self._data.__class__ is MetaArray:  # 'torch.meta.FloatTensor'
                return self.dtype.legacy_name.replace("torch.", "torch.meta.", 1)
            return self.dtype.legacy_name
        if isinstance(dtype, str):  # x.type("torch.DoubleTensor")
            legacy = _legacy_tensor_types().get(dtype[len("torch."):] if dtype.startswith("torch.") else "")
            if legacy is None:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = legacy
        if isinstance(dtype, _LegacyTensorType):  # x.type(torch.IntTensor)
            dtype = dtype.dtype
        return self.to(dtype)

    # ------------------------------------------------------------------ autograd attributes
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    @requires_grad.deleter
    def requires_grad(self):
        raise RuntimeError(_UNDELETABLE["requires_grad"])

    def requires_grad_(self, requires_grad=True):
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return self
        if requires_grad:
            if self._data.dtype.kind not in "fc":
                raise RuntimeError("only Tensors of floating point dtype can require gradients")
            if self._is_inference and not _grad_state.inference:
                raise RuntimeError(
                    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and self._grad is None and not self._retains_grad:
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                    "the same size")
            grad_dtype = self.__dict__.get("_grad_dtype", self.dtype)
            if grad_dtype is not None and value.dtype is not grad_dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_c_type_name(value.dtype)}' to a "
                    f"tensor with grad_dtype '{grad_dtype.short_name}'. The gradient must match the "
                    "tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
                    "grad_dtype attribute with a specific dtype, or None to allow any dtype. Set "
                    "grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may "
                    "break downstream systems that assume they match.")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    def __reduce_ex__(self, protocol):
        """Pickled as its values and ``requires_grad`` (a non-leaf loses its history, as in PyTorch)."""
        return (_rebuild_tensor, (_copied(self._data), self._requires_grad))

    def __deepcopy__(self, memo):
        """A new leaf with a copy of the values, ``requires_grad`` and ``.grad`` (PyTorch's rule:
        only leaves can be deep-copied)."""
        import copy

        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
                "at the moment.  If you were attempting to deepcopy a module, this may be because of a "
                "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        if type(self).__reduce_ex__ is not Tensor.__reduce_ex__:  # a subclass that says how (Parameter)
            make, args = self.__reduce_ex__(4)
            new = make(*copy.deepcopy(args, memo))
        else:
            new = Tensor._make(_copied(self._data), requires_grad=self._requires_grad)
            if self._grad is not None:
                new._grad = copy.deepcopy(self._grad, memo)
        memo[id(self)] = new
        return new

    @property
    def volatile(self):
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @property
    def grad_dtype(self):
        """The dtype a leaf's ``.grad`` is kept in (its own dtype unless set; None: any dtype)."""
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.__dict__.get("_grad_dtype", self.dtype)

    @grad_dtype.setter
    def grad_dtype(self, dtype):
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if dtype is not None and not isinstance(dtype, _dtype.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(dtype).__name__}")
        if dtype is not None and self._grad is not None and self._grad.dtype is not dtype:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{dtype.short_name}' because there is already a gradient "
                f"with dtype '{_c_type_name(self._grad.dtype)}'. Please clear the gradient (.grad = "
                "None) before changing grad_dtype, or ensure the new grad_dtype matches the existing "
                "gradient's dtype.")
        self.__dict__["_grad_dtype"] = dtype
        ref = self._grad_acc_ref  # the leaf's AccumulateGrad casts incoming gradients to it
        node = ref() if ref is not None else None
        if node is not None:
            node._input_metadata = [(self._data.shape, None if dtype is None else dtype.np)]

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        return int(self._vc[0]) if self._vc is not None else 0

    @property
    def _version_counter(self):
        """The version counter: one int64 in a NumPy array, shared by views and ``detach()``,
        bumped by every in-place write. Made on first use, so a tensor nobody saves, views or
        writes in place costs one object less (and an array is one the cyclic GC never scans)."""
        counter = self._vc
        if counter is None:
            counter = self._vc = new_version_counter()
        return counter

    @_version_counter.setter
    def _version_counter(self, counter):
        self._vc = counter

    def _grad_accumulator(self):
        """The leaf's AccumulateGrad node, shared by every op that uses this leaf (held weakly,
        as PyTorch does, so a leaf does not keep a dead graph's node alive)."""
        ref = self._grad_acc_ref
        node = ref() if ref is not None else None
        if node is None:
            node = AccumulateGrad(self)
            self.__dict__["_grad_acc_ref"] = weakref.ref(node)
        return node

    def detach(self):
        t = Tensor._make(self._array())
        t._version_counter = self._version_counter  # shared, as in PyTorch
        return t

    def detach_(self):
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None:
            return
        if self._retains_grad:
            return
        self.__dict__["_retains_grad"] = True
        fn = self.grad_fn
        if fn._retains_grad_hooks is None:
            fn._retains_grad_hooks = {}
            fn._hooked = True
        fn._retains_grad_hooks[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        """``hook(grad) -> Tensor or None``: runs when this tensor's gradient is complete."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_pre_hook(self._output_nr, hook)
        if self._backward_hooks is None:
            self.__dict__["_backward_hooks"] = {}
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._post_accumulate_grad_hooks is None:
            self.__dict__["_post_accumulate_grad_hooks"] = {}
        handle = RemovableHandle(self._post_accumulate_grad_hooks)
        self._post_accumulate_grad_hooks[handle.id] = hook
        return handle

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (see ``autograd.backward``)."""
        if inputs is not None and isinstance(inputs, Tensor):
            inputs = (inputs,)
        _autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _legacy_constructor_data(args, dtype=None):
    """The array of ``torch.Tensor(...)``, PyTorch's legacy constructor: ``Tensor()`` is empty,
    ``Tensor(2, 3)`` and ``Tensor(x.size())`` have that shape (PyTorch leaves the memory
    uninitialised; gradwalk fills it with zeros), ``Tensor([2, 3])`` holds those values; always
    of the default dtype (or ``dtype``, for ``LongTensor`` and friends)."""
    np_dtype = (_dtype.get_default_dtype() if dtype is None else _dtype.as_dtype(dtype)).np
    if not args:
        return np.zeros(0, dtype=np_dtype)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):  # shares the memory; torch.Tensor keeps any dtype
        if dtype is not None and first.dtype.np != np_dtype:
            raise TypeError(f"expected {_options(from_numpy_dtype(np_dtype))} (got {_options(first.dtype)})")
        return first._array()
    if isinstance(first, Size) or all(isinstance(a, (int, np.integer)) and not isinstance(a, bool)
                                      for a in args):
        sizes = tuple(first) if isinstance(first, Size) else tuple(int(a) for a in args)
        if len(args) > 1 and isinstance(first, Size):
            raise TypeError("new(): expected a torch.Size or integers as sizes, not both")
        return np.zeros(sizes, dtype=np_dtype)
    if len(args) > 1:
        raise TypeError(f"new(): expected sizes (ints) or one data argument, got {len(args)} arguments")
    if not isinstance(first, (list, tuple, np.ndarray)):
        raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")
    if isinstance(first, (list, tuple)) and any(isinstance(v, Tensor) for v in first):
        first = [v.item() if isinstance(v, Tensor) else v for v in first]
    return np.asarray(first).astype(np_dtype)


class _LegacyTensorType(type):
    """``torch.FloatTensor``, ``torch.LongTensor``, ...: calling one is the legacy constructor at
    that dtype (``LongTensor([1, 2])`` holds int64), and ``isinstance`` checks the dtype, as
    PyTorch's tensor types do."""

    def __call__(cls, *args):
        t = Tensor.__new__(Tensor)
        Tensor.__init__(t, *args, dtype=cls.dtype)
        return t

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __repr__(cls):
        return f"<class '{cls.dtype.legacy_name}'>"


def _legacy_tensor_types():
    types = {}
    for d in (_dtype.float32, _dtype.float64, _dtype.float16, _dtype.int64, _dtype.int32,
              _dtype.int16, _dtype.int8, _dtype.uint8, _dtype.bool_):
        name = d.legacy_name.split(".")[-1]
        types[name] = _LegacyTensorType(name, (), {"dtype": d})
    return types


def _options(d):
    return (f"TensorOptions(dtype={_c_type_name(d)}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


def _copied(data):
    """A copy of a tensor's values (a meta tensor's copy is another meta array: nothing to copy)."""
    return np.array(data) if data.__class__ is not MetaArray else _meta_empty(data.shape, data.dtype)


def _rebuild_tensor(data, requires_grad):
    return Tensor._make(data, requires_grad=requires_grad)


def _c_type_name(d):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "bool": "bool", "float16": "c10::Half"}.get(d.name, d.name)


class WrappedNumber(Tensor):
    """A Python number inside an op (``x * 2.0``), as PyTorch wraps it: a 0-dim float64/int64
    tensor that never promotes the dtype of the tensors it meets. Its flag and value are class
    attribute and slot, so wrapping a number makes no instance ``__dict__``."""

    __slots__ = ("_py",)
    _is_wrapped_number = True


def _bind_engine():
    from .autograd import engine, node
    from .ops import core

    engine._Tensor = core._Tensor = node._Tensor = Tensor


_bind_engine()
