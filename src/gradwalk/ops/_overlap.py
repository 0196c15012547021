"""Memory overlap between a tensor being written and the tensors it is computed from, as ATen's
``MemoryOverlap.cpp`` decides it: ``y[1:].add_(y[:-1])`` is refused (the result would depend on
the order the elements are written in), ``x.add_(x)`` is allowed (each element reads only itself).

PyTorch only decides the easy cases: two arrays over one buffer, each covering a dense block of
it with no element twice ("non-overlapping and dense"). The same block with the same strides is
a full overlap (allowed); blocks that intersect otherwise are a partial overlap (refused); any
other layout is "too hard" and allowed. gradwalk's arrays are NumPy views, so one buffer means
``np.may_share_memory`` (a bounds check) and the rest is the same arithmetic.
"""
import numpy as np

_ndarray = np.ndarray

INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                    "memory location. Please clone() the tensor before performing the operation.")
PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor "
                   "refer to a single memory location. Please clone() the tensor before performing the "
                   "operation.")


def _non_overlapping_and_dense(a):
    """Every element of ``a`` at its own address, the addresses one dense block (any order)."""
    expected = a.itemsize
    for size, stride in sorted((s, st) for s, st in zip(a.shape, a.strides) if s != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _start(a):
    return a.__array_interface__["data"][0]


def partially_overlaps(written, source):
    """Whether ``source`` (an array read by the op) partly overlaps ``written`` (the array the op
    writes): ATen's ``get_overlap_status(...) == MemOverlapStatus::Partial``."""
    if source is written or source.__class__ is not _ndarray or not source.size or not written.size:
        return False
    if source.base is None and written.base is None:  # each owns its buffer
        return False
    if not np.may_share_memory(written, source):
        return False
    if not (_non_overlapping_and_dense(written) and _non_overlapping_and_dense(source)):
        return False  # "too hard": PyTorch lets it run
    a, b = _start(written), _start(source)
    a_end, b_end = a + written.nbytes, b + source.nbytes
    if a == b and a_end == b_end:
        return written.strides != source.strides
    return a < b_end and b < a_end


def check_no_partial_overlap(written, sources):
    """Raise PyTorch's error when the op's output ``written`` partly overlaps one of the arrays
    in ``sources`` (tensors' data; other values are skipped)."""
    for source in sources:
        if source.__class__ is _ndarray and partially_overlaps(written, source):
            raise RuntimeError(PARTIAL_OVERLAP)
