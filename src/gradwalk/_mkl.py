"""Intel MKL, when installed (the ``mkl`` extra): the library PyTorch's CPU build calls itself.

PyTorch 2.13's CPU wheel links oneMKL 2024.2 statically and calls it for the vector math
functions (``aten/src/ATen/cpu/vml.h``: ``vmsExp``, ``vmdSin``, ... with ``VML_HA``) and for
matrix products (``cblas_sgemm``/``dgemm``, ``sgemv``, ``sdot``). Calling the same functions of
the same MKL release (PyPI ``mkl==2024.2.0``) gives PyTorch's bits; the NumPy code in
``ops/_float32_kernels.py`` (float64 rounded once, FMA chains) is the readable reference and the
path when MKL is missing.

The library is loaded on first use, never by ``import gradwalk``. ``GRADWALK_NO_MKL=1`` in the
environment, a missing ``mkl`` distribution (or another release than 2024.2: other releases
round otherwise) or any failure to load it gives ``None`` from ``library()``, and every caller
then runs its NumPy path.

Threads change the bits of large products (MKL splits k between threads), so MKL runs as in
PyTorch: its GNU OpenMP threading layer (PyTorch's wheel uses libgomp) with PyTorch's thread
count (``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``, else the number of physical cores), and
``gradwalk.set_num_threads(n)`` changes it as ``torch.set_num_threads(n)`` does. Where libgomp
cannot be loaded MKL runs sequentially: PyTorch's bits on one thread.

    >>> import numpy as np
    >>> from gradwalk import _mkl
    >>> y = _mkl.vml("Sin", np.float32([0.5, 1.0]))   # None without MKL
"""

from __future__ import annotations

import ctypes
import math
import os
import sys
import threading

import numpy as np

_UNSET = object()
_lib = _UNSET
_vml = {}  # (name, dtype) -> the ctypes function vms<name> / vmd<name>

# ATen's vml.h passes VML_HA | VML_FTZDAZ_OFF | VML_ERRMODE_IGNORE
VML_MODE = 0x2 | 0x140000 | 0x100
_SEQUENTIAL, _GNU = 1, 3  # MKL_THREADING_SEQUENTIAL, MKL_THREADING_GNU
_threads = None  # set_num_threads's count, else PyTorch's default (_default_threads)
_threaded = False  # the GNU OpenMP layer loaded (else sequential: one thread)
_ROW_MAJOR, _COL_MAJOR, _NO_TRANS, _TRANS = 101, 102, 111, 112
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _candidates():
    """Where the ``mkl`` distribution put ``libmkl_rt.so.2`` (its wheel installs it into
    ``<prefix>/lib``), most specific first."""
    try:
        from importlib.metadata import distribution

        for f in distribution("mkl").files or ():
            if f.name.startswith("libmkl_rt.so"):
                yield str(f.locate())
    except Exception:  # no such distribution: try the prefix anyway
        pass
    for prefix in (sys.prefix, sys.base_prefix):
        yield os.path.join(prefix, "lib", "libmkl_rt.so.2")


PYTORCH_MKL = "Intel(R) oneAPI Math Kernel Library Version 2024.2"  # what PyTorch 2.13 links


def _version(lib):
    buffer = ctypes.create_string_buffer(256)
    lib.MKL_Get_Version_String(buffer, len(buffer))
    return buffer.value.decode(errors="replace")


def _default_threads():
    """PyTorch's intra-op default: ``OMP_NUM_THREADS``, overridden by ``MKL_NUM_THREADS``, else
    the number of physical cores (``TaskThreadPoolBase::defaultNumThreads``: cpuinfo's cores)."""
    n = 0
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        try:
            n = int(os.environ.get(name, "")) or n
        except ValueError:
            pass
    if n > 0:
        return n
    cores = set()
    try:
        for cpu in os.listdir("/sys/devices/system/cpu"):
            topology = f"/sys/devices/system/cpu/{cpu}/topology/"
            if cpu[3:].isdigit() and os.path.isdir(topology):
                with open(topology + "physical_package_id") as p, open(topology + "core_id") as c:
                    cores.add((p.read().strip(), c.read().strip()))
    except OSError:
        pass
    return len(cores) or os.cpu_count() or 1


def _load_gnu_layer(lib_dir):
    """Load libgomp with global symbols (MKL's GNU layer does not name it: libmkl_rt loads the
    layer on first use, and exits the process if it cannot); False where either is missing."""
    if not os.path.exists(os.path.join(lib_dir, "libmkl_gnu_thread.so.2")):
        return False
    try:
        ctypes.CDLL("libgomp.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return False
    return True


def _load():
    global _threaded
    for path in _candidates():
        if os.path.exists(path):
            path = os.path.realpath(path)
            lib = ctypes.CDLL(path)
            if not _version(lib).startswith(PYTORCH_MKL):
                continue  # another release rounds otherwise: the NumPy paths are nearer
            lib.MKL_Set_Threading_Layer.argtypes = [ctypes.c_int]
            lib.MKL_Set_Num_Threads.argtypes = [ctypes.c_int]
            lib.MKL_Set_Num_Threads_Local.argtypes = [ctypes.c_int]
            _threaded = _load_gnu_layer(os.path.dirname(path))
            lib.MKL_Set_Threading_Layer(_GNU if _threaded else _SEQUENTIAL)
            lib.MKL_Set_Num_Threads(get_num_threads() if _threaded else 1)
            i64, ptr = ctypes.c_longlong, ctypes.c_void_p
            for name, scalar in (("cblas_sgemm", ctypes.c_float), ("cblas_dgemm", ctypes.c_double)):
                f = getattr(lib, name)
                f.argtypes = [ctypes.c_int] * 3 + [i64] * 3 + [scalar, ptr, i64, ptr, i64, scalar, ptr, i64]
                f.restype = None
            return lib
    return None


def library():
    """The loaded ``libmkl_rt`` (a ``ctypes.CDLL``), or None (not installed, off, or failed)."""
    global _lib
    if _lib is _UNSET:
        _lib = None
        if os.environ.get("GRADWALK_NO_MKL", "") in ("", "0"):
            try:
                _lib = _load()
            except Exception:  # cannot load here (e.g. a lab worker's memory limit)
                _lib = None
    return _lib


def disable():
    """Run the NumPy paths from now on in this process (as ``_fast.disable()`` does for numba)."""
    global _lib
    _lib = None


def enabled():
    return library() is not None


def get_num_threads():
    """The thread count gradwalk's products run on: ``torch.get_num_threads()``'s answer."""
    global _threads
    if _threads is None:
        _threads = _default_threads()
    return _threads


def set_num_threads(n):
    """``torch.set_num_threads(n)``: MKL's thread count from now on (loads nothing)."""
    global _threads
    if not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads = int(n)
    if _lib is not _UNSET and _lib is not None and _threaded:
        _lib.MKL_Set_Num_Threads(_threads)
        # and no thread-local count over it: threadpoolctl's limits set one, and leave one
        # (the count they found) when they end, which would otherwise win over this call
        _lib.MKL_Set_Num_Threads_Local(0)


def _vml_function(name, dtype):
    f = _vml.get((name, dtype))
    if f is None:
        lib = library()
        if lib is None:
            return None
        f = getattr(lib, ("vms" if dtype is _F32 else "vmd") + name)
        f.argtypes = [ctypes.c_longlong, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong]
        f.restype = None
        _vml[(name, dtype)] = f
    return f


_NO_ELEMENTS = ctypes.c_char * 0  # from_buffer: a pointer to an array's data, 3x cheaper than .ctypes


def _address(a):
    """The address of ``a``'s first element, as a ctypes argument."""
    flags = a.flags
    if flags.c_contiguous and flags.writeable:
        return _NO_ELEMENTS.from_buffer(a)
    return a.ctypes.data


class _Scratch(threading.local):
    """One element per dtype per thread: a NumPy scalar's value goes through MKL here."""

    def __init__(self):
        self.buffers = {}

    def buffer(self, dtype):
        b = self.buffers.get(dtype)
        if b is None:
            b = self.buffers[dtype] = np.zeros(1, dtype)
            b = self.buffers[dtype] = (b, b.ctypes.data)
        return b


_scratch = _Scratch()


def vml(name, x):
    """MKL's ``vm{s,d}<name>`` (``"Exp"``, ``"Ln"``, ``"Sin"``, ...) of a float32 or float64
    array or NumPy scalar, as a new array of its shape (a NumPy scalar for a scalar);
    None when MKL is off."""
    dtype = x.dtype
    f = _vml.get((name, dtype)) or _vml_function(name, dtype)
    if f is None:
        return None
    if x.__class__ is not np.ndarray:  # a NumPy scalar (0-d results of NumPy reductions)
        buffer, address = _scratch.buffer(dtype)
        buffer[0] = x
        f(1, address, address, VML_MODE)
        return buffer[0]
    if x.size <= 4096 or not x.flags.c_contiguous:  # (ATen copies strided input into a buffer too)
        out = np.array(x, order="C")  # in place: one address to find, not two
        address = _NO_ELEMENTS.from_buffer(out)
        f(out.size, address, address, VML_MODE)
        return out
    out = np.empty(x.shape, dtype)
    f(x.size, _address(x), _NO_ELEMENTS.from_buffer(out), VML_MODE)
    return out


def _empty(shape, dtype):
    """An uninitialised array whose data starts on a 64-byte boundary, as PyTorch's allocator
    places every tensor: MKL's gemv (at least) gives other bits for an output placed otherwise."""
    size = math.prod(shape) * dtype.itemsize
    raw = np.empty(size + 64, np.uint8)
    start = -ctypes.addressof(_NO_ELEMENTS.from_buffer(raw)) % 64  # (3x cheaper than raw.ctypes.data)
    return raw[start:start + size].view(dtype).reshape(shape)


def _operand(a):
    """A matrix as cblas takes it: (array, transposed?, leading dimension); copies only when
    neither it nor its transpose is laid out in rows."""
    s0, s1 = a.strides
    item = a.itemsize
    rows, cols = a.shape
    if s1 == item and (s0 == cols * item or rows == 1) or cols == 1 and s0 == item:
        return a, _NO_TRANS, max(s0 // item, cols, 1)
    if s0 == item and (s1 == rows * item or cols == 1):
        return a, _TRANS, max(s1 // item, rows, 1)
    a = np.ascontiguousarray(a)
    return a, _NO_TRANS, max(cols, 1)


def gemm(a, b, c=None, alpha=1, beta=0):
    """``alpha * (a @ b) + beta * c`` for 2-D arrays of one dtype (float32 or float64) through
    ``cblas_?gemm``, as ATen's ``addmm_impl_cpu_`` calls it: a transposed operand goes as a
    transpose flag instead of a copy, ``c`` (C-contiguous, ``a @ b``'s shape, written in place
    and returned) is the bias already broadcast, ignored when ``beta`` is 0. None when MKL is
    off or the dtype is another."""
    lib = library()
    dtype = a.dtype
    if lib is None or dtype is not b.dtype or (dtype is not _F32 and dtype is not _F64):
        return None
    m, k = a.shape
    n = b.shape[1]
    if c is None:
        c = _empty((m, n), dtype)
        beta = 0
    if m == 0 or n == 0:
        return c
    if k == 0:  # (ATen: gemm with k = 0 scales c by beta)
        c *= beta
        return c
    a, ta, lda = _operand(a)
    b, tb, ldb = _operand(b)
    f = lib.cblas_sgemm if dtype is _F32 else lib.cblas_dgemm
    f(_ROW_MAJOR, ta, tb, m, n, k, alpha, _address(a), lda, _address(b), ldb, beta, _NO_ELEMENTS.from_buffer(c),
      max(n, 1))
    return c


def _batch_operand(a):
    """A batch of matrices as ``cblas_?gemm_batch_strided`` takes it: (array, transposed?,
    leading dimension, batch stride), copied to C order where its layout has no such form."""
    item = a.itemsize
    sb, s0, s1 = (s // item for s in a.strides)
    _, rows, cols = a.shape
    if s1 == 1 and (s0 == cols or rows == 1) and sb >= 0:
        return a, _NO_TRANS, max(s0, cols, 1), sb
    if s0 == 1 and (s1 == rows or cols == 1) and sb >= 0:
        return a, _TRANS, max(s1, rows, 1), sb
    a = np.ascontiguousarray(a)
    return a, _NO_TRANS, max(cols, 1), rows * cols


def bmm(a, b):
    """``a @ b`` for two batches of matrices (3-D, one dtype, float32 or float64) through
    ``cblas_?gemm_batch_strided``: what ATen's ``bmm`` calls (``gemm_batched_with_stride``) for
    products of at least 400 multiply-adds; None when MKL is off or the dtype is another."""
    lib = library()
    dtype = a.dtype
    if lib is None or dtype is not b.dtype or (dtype is not _F32 and dtype is not _F64):
        return None
    batch, m, k = a.shape
    n = b.shape[2]
    out = _empty((batch, m, n), dtype)
    if out.size == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    f = _batched.get(dtype)
    if f is None:
        f = getattr(lib, "cblas_sgemm_batch_strided" if dtype is _F32 else "cblas_dgemm_batch_strided")
        scalar = ctypes.c_float if dtype is _F32 else ctypes.c_double
        i64, ptr = ctypes.c_longlong, ctypes.c_void_p
        f.argtypes = [ctypes.c_int] * 3 + [i64] * 3 + [scalar, ptr, i64, i64, ptr, i64, i64, scalar, ptr, i64, i64,
                                                       i64]
        f.restype = None
        _batched[dtype] = f
    a, ta, lda, sa = _batch_operand(a)
    b, tb, ldb, sb = _batch_operand(b)
    f(_ROW_MAJOR, ta, tb, m, n, k, 1.0, _address(a), lda, sa, _address(b), ldb, sb, 0.0,
      _NO_ELEMENTS.from_buffer(out), n, m * n, batch)
    return out


_batched = {}


def dot(x, y):
    """``cblas_?dot`` of two 1-D arrays of one dtype (float32, float64), as a 0-d array: what
    ``torch.dot`` calls; None when MKL is off or the dtype is another."""
    lib = library()
    dtype = x.dtype
    if lib is None or dtype is not y.dtype or (dtype is not _F32 and dtype is not _F64):
        return None
    f = _dots.get(dtype)
    if f is None:
        f = lib.cblas_sdot if dtype is _F32 else lib.cblas_ddot
        f.argtypes = [ctypes.c_longlong, ctypes.c_void_p, ctypes.c_longlong, ctypes.c_void_p, ctypes.c_longlong]
        f.restype = ctypes.c_float if dtype is _F32 else ctypes.c_double
        _dots[dtype] = f
    item = x.itemsize
    sx, sy = x.strides[0] // item, y.strides[0] // item
    if x.strides[0] % item or y.strides[0] % item or sx < 0 or sy < 0:
        x, y, sx, sy = np.ascontiguousarray(x), np.ascontiguousarray(y), 1, 1
    return np.array(f(len(x), _address(x), sx, _address(y), sy), dtype)


_dots = {}


def _lda_ok(m, n, lda):  # ATen's lda_cond
    return n == 1 or lda >= max(1, m)


def gemv(a, x):
    """``a @ x`` (a matrix, a vector, one dtype: float32 or float64) through ``cblas_?gemv`` as
    ATen's ``addmv`` calls it: column-major, ``'n'`` when ``a``'s columns are contiguous, ``'t'``
    when its rows are (copied to rows otherwise); None when MKL is off or the dtype is another."""
    lib = library()
    dtype = a.dtype
    if lib is None or dtype is not x.dtype or (dtype is not _F32 and dtype is not _F64):
        return None
    rows, cols = a.shape
    if rows == 0 or cols == 0:
        return np.zeros(rows, dtype)
    out = _empty((rows,), dtype)
    f = _gemvs.get(dtype)
    if f is None:
        f = lib.cblas_sgemv if dtype is _F32 else lib.cblas_dgemv
        scalar = ctypes.c_float if dtype is _F32 else ctypes.c_double
        i64, ptr = ctypes.c_longlong, ctypes.c_void_p
        f.argtypes = [ctypes.c_int, ctypes.c_int, i64, i64, scalar, ptr, i64, ptr, i64, scalar, ptr, i64]
        f.restype = None
        _gemvs[dtype] = f
    item = a.itemsize
    s0, s1 = a.strides[0] // item, a.strides[1] // item
    if a.strides[0] % item or a.strides[1] % item or s0 < 0 or s1 < 0:
        a = np.ascontiguousarray(a)
        s0, s1 = cols, 1
    if s0 == 1 and _lda_ok(rows, cols, s1):
        trans, m, n, lda = _NO_TRANS, rows, cols, s1
    elif s1 == 1 and _lda_ok(cols, rows, s0):
        trans, m, n, lda = _TRANS, cols, rows, s0
    else:
        a = np.ascontiguousarray(a)
        trans, m, n, lda = _TRANS, cols, rows, cols
    if n == 1:  # (ATen's gemv)
        lda = m
    incx = x.strides[0] // item
    if x.strides[0] % item or incx <= 0:
        x, incx = np.ascontiguousarray(x), 1
    f(_COL_MAJOR, trans, m, n, 1.0, _address(a), max(lda, 1), _address(x), incx, 0.0,
      _NO_ELEMENTS.from_buffer(out), 1)
    return out


_gemvs = {}
