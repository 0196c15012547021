"""``gradwalk.save`` / ``gradwalk.load``: state dicts in a file that cannot run code when loaded.

The file is a zip archive holding ``gradwalk.json`` (the structure: dicts, lists, tuples, numbers,
strings, None and references to tensors) and one ``.npy`` array per tensor. ``np.load`` reads the
arrays with ``allow_pickle=False`` and the rest is JSON, so loading a file from someone else can at
worst fail, never execute anything.

Any other object (``torch.save(model, PATH)``, a whole module) is pickled, its tensors still stored
as arrays, as PyTorch pickles it; and as in PyTorch 2.6+, ``load`` refuses to unpickle it unless the
caller says ``weights_only=False`` (trusting the file), with PyTorch's ``UnpicklingError``.

    >>> gradwalk.save({"model": model.state_dict(), "epoch": 3}, "checkpoint.gw")
    >>> model.load_state_dict(gradwalk.load("checkpoint.gw")["model"])
"""
import io
import json
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np

from ._dtype import Size, from_numpy_dtype
from .tensor import Tensor

FORMAT = "gradwalk-save"
VERSION = 1
MANIFEST = "gradwalk.json"


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (tensors, numbers, strings, None, and dicts/lists/tuples of them) to ``f``,
    a path or a binary file object."""
    arrays = []
    ids = {}
    pickles = []

    def tensor_entry(value):
        key = id(value)
        if key not in ids:  # a tensor stored twice is one array, loaded back as one tensor
            ids[key] = len(arrays)
            arrays.append(np.asarray(value._data, order="C"))  # (ascontiguousarray makes 0-dim 1-dim)
        return {"tensor": ids[key], "requires_grad": bool(value.requires_grad),
                "parameter": bool(value._is_param)}

    def encode(value):
        if isinstance(value, Tensor):
            return tensor_entry(value)
        if isinstance(value, Size):
            return {"size": list(value)}
        if value is None or isinstance(value, (bool, str)):
            return {"value": value}
        if isinstance(value, (int, float, np.integer, np.floating)):
            return {"value": value.item() if isinstance(value, np.generic) else value}
        if isinstance(value, dict):
            return {"dict": [[encode(k), encode(v)] for k, v in value.items()],
                    "ordered": isinstance(value, OrderedDict)}
        if type(value) in (list, tuple):
            return {"tuple" if isinstance(value, tuple) else "list": [encode(v) for v in value]}
        return pickled(value)

    def pickled(value):
        """Anything else (a whole nn.Module, say) is pickled as torch.save pickles it; its tensors
        still go to .npy arrays (the pickle holds references to them)."""
        class Pickler(pickle.Pickler):
            def persistent_id(self, obj):
                return ("tensor", tensor_entry(obj)) if isinstance(obj, Tensor) else None

        buffer = io.BytesIO()
        Pickler(buffer, protocol=pickle_protocol or 2).dump(value)  # a lambda: pickle's PicklingError, as PyTorch
        pickles.append(buffer.getvalue())
        return {"pickled": len(pickles) - 1, "global": f"{type(value).__module__}.{type(value).__qualname__}"}

    manifest = {"format": FORMAT, "version": VERSION, "object": encode(obj)}
    with _open(f, "w") as stream, zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(MANIFEST, json.dumps(manifest))
        for i, array in enumerate(arrays):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            archive.writestr(f"tensors/{i}.npy", buffer.getvalue())
        for i, data in enumerate(pickles):
            archive.writestr(f"pickles/{i}.pkl", data)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **kwargs):
    """Read what ``save`` wrote. Anything else (a PyTorch checkpoint, a damaged file) raises a
    ``RuntimeError`` saying so. Nothing in the file is ever executed unless ``weights_only=False``
    is given for a file holding pickled objects (as PyTorch, which then unpickles it)."""
    name = f if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file object>")
    with _open(f, "r") as stream:
        try:
            archive = zipfile.ZipFile(stream)
        except zipfile.BadZipFile:
            raise RuntimeError(f"gradwalk.load: {name!s} is not a gradwalk file (not a zip archive; "
                               "it may be corrupt or truncated)") from None
        with archive:
            try:
                manifest = json.loads(archive.read(MANIFEST))
            except KeyError:
                pickled = [n for n in archive.namelist() if n.endswith("/data.pkl")]
                if pickled:  # written by PyTorch's torch.save
                    return _load_pytorch_archive(archive, pickled[0][:-len("data.pkl")], weights_only)
                raise RuntimeError(f"gradwalk.load: {name!s} is not a gradwalk file (no {MANIFEST})") from None
            except (ValueError, zipfile.BadZipFile) as error:
                raise RuntimeError(f"gradwalk.load: {name!s} is corrupt ({error})") from None
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise RuntimeError(f"gradwalk.load: {name!s} is not a gradwalk file (unknown manifest)")
            if manifest.get("version") != VERSION:
                raise RuntimeError(f"gradwalk.load: {name!s} has format version {manifest.get('version')}; "
                                   f"this gradwalk reads version {VERSION}")
            return _decode_all(archive, manifest["object"], name, weights_only)


def _decode_all(archive, tree, name, weights_only=True):
    from .nn.parameter import Parameter

    tensors = {}

    def tensor(entry):
        index = entry["tensor"]
        if index not in tensors:
            try:
                with archive.open(f"tensors/{int(index)}.npy") as member:
                    array = np.lib.format.read_array(io.BytesIO(member.read()), allow_pickle=False)
                from_numpy_dtype(array.dtype)
            except (KeyError, ValueError, TypeError, zipfile.BadZipFile) as error:
                raise RuntimeError(f"gradwalk.load: {name!s} is corrupt (tensor {index}: {error})") from None
            t = Tensor._make(array)
            if entry.get("parameter"):
                t = Parameter(t, requires_grad=bool(entry.get("requires_grad")))
            elif entry.get("requires_grad"):
                t.requires_grad_(True)
            tensors[index] = t
        return tensors[index]

    def decode(entry):
        if not isinstance(entry, dict):
            raise RuntimeError(f"gradwalk.load: {name!s} is corrupt (unexpected entry {entry!r:.60})")
        if "tensor" in entry:
            return tensor(entry)
        if "value" in entry:
            return entry["value"]
        if "dict" in entry:
            items = [(decode(k), decode(v)) for k, v in entry["dict"]]
            return OrderedDict(items) if entry.get("ordered") else dict(items)
        if "list" in entry:
            return [decode(v) for v in entry["list"]]
        if "tuple" in entry:
            return tuple(decode(v) for v in entry["tuple"])
        if "size" in entry:
            return Size(entry["size"])
        if "pickled" in entry:
            return unpickle(entry)
        raise RuntimeError(f"gradwalk.load: {name!s} is corrupt (unexpected entry {entry!r:.60})")

    def unpickle(entry):
        if weights_only in (None, True):
            raise pickle.UnpicklingError(_weights_only_message(str(entry.get("global"))))

        class Unpickler(pickle.Unpickler):
            def persistent_load(self, pid):
                return tensor(pid[1])

        with archive.open(f"pickles/{int(entry['pickled'])}.pkl") as member:
            return Unpickler(io.BytesIO(member.read())).load()

    return decode(tree)


# ---------------------------------------------------------------- files PyTorch's torch.save wrote

# The storage classes a PyTorch checkpoint names, and the dtypes of their bytes
_STORAGE_DTYPES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
                   "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
                   "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_}


class _StorageType:
    def __init__(self, np_dtype):
        self.np_dtype = np.dtype(np_dtype)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    """A tensor from a checkpoint: its view (offset, sizes, strides, in elements) of a storage."""
    item = storage.itemsize
    view = np.lib.stride_tricks.as_strided(storage[storage_offset:], shape=tuple(size),
                                           strides=tuple(s * item for s in stride))
    t = Tensor._make(np.array(view))  # a copy of just the viewed elements, C-contiguous
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from .nn.parameter import Parameter

    return Parameter(data, requires_grad=requires_grad)


def _load_pytorch_archive(archive, prefix, weights_only):
    """What ``torch.save`` wrote (its zip format): ``data.pkl`` holds the structure, each storage
    is the raw bytes of ``data/<key>``. With ``weights_only`` (the default, as PyTorch 2.6+), only
    what PyTorch's weights-only unpickler allows is rebuilt: tensors, parameters, ``OrderedDict``,
    ``torch.Size``, dtypes; any other global (a module class, a NumPy array) raises PyTorch's
    ``UnpicklingError``. ``weights_only=False`` unpickles the rest as PyTorch does."""
    from . import _dtype

    if prefix + "byteorder" in archive.namelist() and archive.read(prefix + "byteorder") != b"little":
        raise RuntimeError("gradwalk.load: this checkpoint was written on a big-endian machine")
    allowed = {("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
               ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
               ("collections", "OrderedDict"): OrderedDict, ("torch", "Size"): Size}
    allowed.update({("torch", n): _StorageType(d) for n, d in _STORAGE_DTYPES.items()})
    allowed.update({("torch", n): getattr(_dtype, n) for n in ("float32", "float64", "float16", "int64",
                                                                 "int32", "int16", "int8", "uint8")})
    allowed[("torch", "bool")] = _dtype.bool_
    storages = {}

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, qualname):
            if (module, qualname) in allowed:
                return allowed[(module, qualname)]
            if weights_only in (None, True):
                raise pickle.UnpicklingError(_weights_only_message(f"{module}.{qualname}"))
            return super().find_class(module, qualname)

        def persistent_load(self, pid):  # ('storage', storage type, key, location, number of elements)
            _, storage_type, key, _location, numel = pid
            if key not in storages:
                data = archive.read(f"{prefix}data/{key}")
                storages[key] = np.frombuffer(data, dtype=storage_type.np_dtype, count=numel).copy()
            return storages[key]

    return Unpickler(io.BytesIO(archive.read(prefix + "data.pkl"))).load()


def _weights_only_message(qualname):
    """PyTorch 2.13's message (torch/serialization.py) when weights_only=True meets a class."""
    return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, "
            "we changed the default value of the `weights_only` argument in `torch.load` from `False` to `True`. "
            "Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
            "arbitrary code execution. Do it only if you got the file from a trusted source.\n\t(2) Alternatively, "
            "to load with `weights_only=True` please check the recommended steps in the following error message."
            f"\n\tWeightsUnpickler error: Unsupported global: GLOBAL {qualname} was not an allowed global by "
            f"default. Please use `torch.serialization.add_safe_globals([{qualname}])` or the "
            f"`torch.serialization.safe_globals([{qualname}])` context manager to allowlist this global if you "
            "trust this class/function.\n\nCheck the documentation of torch.load to learn more about types "
            "accepted by default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


class _open:
    """A path opened (and closed) by us, or a file object the caller owns."""

    def __init__(self, f, mode):
        self.f, self.mode, self.opened = f, mode, None

    def __enter__(self):
        if isinstance(self.f, (str, os.PathLike)):
            self.opened = open(self.f, self.mode + "b")
            return self.opened
        return self.f

    def __exit__(self, *exc):
        if self.opened is not None:
            self.opened.close()
