"""``vmap``'s batching rules: each op runs once on the whole batch, not once per sample.

Inside ``vmap`` a mapped tensor is a ``BatchedTensor``. It holds every sample in ``_phys``, a
plain tensor with one leading dimension per running vmap (``_levels``, outermost first), and it
shows the rest of gradwalk one sample: its ``shape``, ``dim()`` and ``_data`` (the first
sample's values, a view) are the logical ones, so the ops' argument checks run unchanged.

While a vmap runs, ``apply_op`` hands every op to ``dispatch`` first (``ops.core.observers.vmap``).
When an input is batched, the op's rule rewrites the call for the physical tensors (a reduction
over dim 1 of the sample is a reduction over dim 1 + the number of batch dimensions; a matmul of
a batch of vectors with a matrix is one matmul of a matrix) and runs it with the ordinary ops, so
the graph recorded, the backward formulas and the forward-mode tangents are the ordinary ones
over arrays that carry the batch. An op without a rule falls back to a loop over the samples,
with a warning naming it once, as PyTorch's "There is a performance drop because we have not yet
implemented the batching rule for ...".

    >>> import gradwalk as torch
    >>> from gradwalk.func import vmap
    >>> x = torch.arange(6.0).reshape(2, 3)
    >>> vmap(lambda row: (row * row).sum())(x)     # one mul and one sum over a (2, 3) array
    tensor([ 5., 50.])
"""
import itertools
import threading
import warnings

import numpy as np

from ..ops import activation, core, linalg, nn_ops, pointwise, pooling, reduction, shape
from ..tensor import Tensor


class _Running(threading.local):
    def __init__(self):
        self.stack = []  # (level, batch size, randomness) of each running vmap, outermost first
        self.counter = 0  # levels only grow, so an inner vmap's level is above its outer one's
        self.random_busy = False  # a random op is running under random_op (its inner calls are plain)


running = _Running()


def level_sizes():
    return {level: size for level, size, _ in running.stack}


class LogicalArray(np.ndarray):
    """A batched tensor's ``_data``: the first sample's values (a view of the physical array),
    which remembers the physical array so that an op taking an array argument (``nll_loss``'s
    target, ``embedding``'s indices) can be batched. An array computed from it by NumPy outside
    an op (``np.isinf(x._data)``) keeps the class but not ``physical``: using it in an op under
    vmap is refused rather than silently given the first sample's values."""

    physical = None
    levels = ()


def logical_array(physical, levels):
    """The LogicalArray of a physical NumPy array batched at ``levels``."""
    first = physical[(0,) * len(levels) + (Ellipsis,)].view(LogicalArray)
    first.physical = physical
    first.levels = levels
    return first


class BatchedTensor(Tensor):
    """One sample of a batch, as the function under ``vmap`` sees it (see the module docstring)."""

    __slots__ = ("_phys", "_lv")

    def _array(self):
        return self._data

    def detach(self):
        return wrap(self._phys.detach(), self._lv)

    def requires_grad_(self, requires_grad=True):
        self._phys.requires_grad_(requires_grad)
        self._requires_grad = self._phys._requires_grad
        return self

    def item(self):
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
            ".item() on a Tensor, please try to rewrite what you're doing with other operations.")

    def tolist(self):
        raise RuntimeError("vmap: It looks like you're calling .tolist() on a Tensor. We don't support vmap "
                           "over calling .tolist() on a Tensor.")

    def numpy(self, force=False):
        raise RuntimeError("vmap: It looks like you're calling .numpy() on a Tensor. We don't support vmap "
                           "over calling .numpy() on a Tensor.")

    def __bool__(self):
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We "
            "don't support that yet, please shout over at https://github.com/pytorch/functorch/issues/257 .")

    def __repr__(self, **kwargs):
        return f"BatchedTensor(lvl={self._lv[-1]}, bdim=0, value=\n{self._phys!r}\n)"


def wrap(phys, levels):
    """A BatchedTensor over ``phys``, whose leading ``len(levels)`` dims are the batch."""
    if not levels:
        return phys
    b = BatchedTensor.__new__(BatchedTensor)
    b._data = logical_array(phys._array(), levels)
    b._requires_grad = phys._requires_grad
    b.grad_fn = phys.grad_fn  # (what the op's own code reads; the graph itself is on _phys)
    b._grad = None
    b._output_nr = phys._output_nr
    b._vc = None
    b._phys = phys
    b._lv = levels
    return b


def rewrap(t, levels):
    """``wrap`` for a tensor over physical arrays of ``levels`` that may be batched at other
    levels itself (a tangent batched by jacfwd's columns, of a primal batched by another vmap):
    one BatchedTensor at all of them, its batch dims in level order."""
    if type(t) is not BatchedTensor or not levels:
        return wrap(t, levels)
    inner = t._lv
    both = tuple(sorted(set(inner) | set(levels)))
    phys = t._phys  # (inner dims, levels dims, logical dims)
    order = [inner.index(lvl) if lvl in inner else len(inner) + levels.index(lvl) for lvl in both]
    order += list(range(len(both), phys.dim()))
    if order != list(range(phys.dim())):
        phys = phys.permute(tuple(order))
    return wrap(phys, both)


def partly_physical(t, levels):
    """The inverse of ``rewrap``: ``t`` over physical arrays of ``levels`` (batch dims in front,
    full size), batched (a BatchedTensor) at its other levels."""
    if not levels:
        return t
    own = levels_of(t)
    both = tuple(sorted(set(own) | set(levels)))
    phys = expanded(t, both)
    keep = tuple(lvl for lvl in both if lvl not in levels)
    if not keep:
        return phys
    order = [both.index(lvl) for lvl in keep] + [both.index(lvl) for lvl in levels]
    order += list(range(len(both), phys.dim()))
    return wrap(phys.permute(tuple(order)), keep)


def _wrap_out(out, levels):
    if type(out) is tuple:
        return tuple(wrap(o, levels) for o in out)
    return wrap(out, levels)


def levels_of(t):
    if type(t) is BatchedTensor:
        return t._lv
    data = t._data
    if type(data) is LogicalArray:
        return data.levels
    return ()


def tangent_levels(t):
    """The vmap levels at which ``t``'s forward-AD tangents are batched (beyond ``t``'s own)."""
    base = t._phys if type(t) is BatchedTensor else t
    grads = base._fw_grads
    if not grads:
        return ()
    found = set()
    for tangent in grads.values():
        found.update(levels_of(tangent))
    return tuple(sorted(found))


def add_level(t, dim, level):
    """``t`` batched at ``level`` too, its logical dim ``dim`` becoming that level's batch dim."""
    if type(t) is BatchedTensor:
        phys, lv = t._phys, t._lv
    else:
        phys, lv = t, ()
    ndim = t.dim()
    if not -ndim <= dim < max(ndim, 1):
        raise ValueError(f"vmap: in_dim {dim} is out of bounds for a tensor of {ndim} dims")
    dim %= max(ndim, 1)
    at = sum(1 for lvl in lv if lvl < level)
    source = len(lv) + dim
    if source != at:
        phys = phys.movedim(source, at)
    return wrap(phys, lv[:at] + (level,) + lv[at:])


def remove_level(t, level, out_dim, size):
    """The inverse of ``add_level`` when a vmap returns: the batch dim of ``level`` becomes
    logical dim ``out_dim``; an output that is the same for every sample is expanded (PyTorch)."""
    ndim = t.dim()
    if not -(ndim + 1) <= out_dim <= ndim:
        raise ValueError(f"vmap: out_dim {out_dim} is out of bounds for a tensor of {ndim} dims")
    out_dim %= ndim + 1
    lv = levels_of(t)
    if level not in lv:
        new_shape = list(t.shape)
        new_shape.insert(out_dim, size)
        return t.unsqueeze(out_dim).expand(*new_shape)
    i = lv.index(level)
    rest = lv[:i] + lv[i + 1:]
    phys = physical(t)
    destination = len(rest) + out_dim
    if destination != i:
        phys = phys.movedim(i, destination)
    return wrap(phys, rest)


def physical(t):
    """The physical tensor of a batched tensor (batch dims first)."""
    if type(t) is BatchedTensor:
        return t._phys
    data = t._data
    if data.physical is None:
        raise _outside_op_error("an op")
    return Tensor._make(data.physical)


def aligned(t, levels):
    """``t``'s physical tensor with a dim for every level in ``levels`` (size 1 where ``t`` is
    not batched at it), then its logical dims: such tensors broadcast against each other."""
    lv = levels_of(t)
    if not lv:
        return t.reshape((1,) * len(levels) + tuple(t.shape)) if levels else t
    phys = physical(t)
    if lv == levels:
        return phys
    sizes = dict(zip(lv, phys.shape))
    return phys.reshape(tuple(sizes.get(lvl, 1) for lvl in levels) + tuple(phys.shape[len(lv):]))


def expanded(t, levels):
    """``aligned``, with every batch dim at its full size."""
    phys = aligned(t, levels)
    sizes = level_sizes()
    full = tuple(sizes[lvl] for lvl in levels) + tuple(phys.shape[len(levels):])
    return phys if tuple(phys.shape) == full else phys.expand(*full)


def _aligned_array(a, levels, rank):
    """An array argument (a LogicalArray or a plain one) ready to broadcast with physical arrays
    of ``levels`` and logical rank ``rank``."""
    if type(a) is not LogicalArray:
        return a
    nb = len(levels)
    sizes = dict(zip(a.levels, a.physical.shape))
    logical = a.physical.shape[len(a.levels):]
    return a.physical.reshape(tuple(sizes.get(lvl, 1) for lvl in levels) + (1,) * (rank - len(logical))
                              + logical) if nb else a.physical


def _outside_op_error(what):
    return RuntimeError(
        f"vmap: {what} was given values computed from a batched tensor outside gradwalk's ops (NumPy on "
        "._data): gradwalk cannot batch that. Use tensor operations inside the vmapped function.")


# ---------------------------------------------------------------- dispatch

_warned = set()


def dispatch(op, inputs, attrs, out_dtype, inplace):
    """``apply_op``'s first stop while a vmap runs: None when nothing is batched."""
    levels = set()
    for t in inputs:
        if type(t) is BatchedTensor:
            levels.update(t._lv)
        elif type(t._data) is LogicalArray:
            if t._data.physical is None:
                raise _outside_op_error(op.name or op.__name__)
            levels.update(t._data.levels)
    for value in attrs.values():
        if type(value) is LogicalArray:
            if value.physical is None:
                raise _outside_op_error(op.name or op.__name__)
            levels.update(value.levels)
    if not levels:
        return None
    levels = tuple(sorted(levels))
    if core.observers.forward_ad is not None:
        inputs = _with_physical_tangents(inputs, levels)
    if inplace is not None:
        return _inplace(op, inputs, attrs, out_dtype, inplace, levels)
    rule = RULES.get(op)
    if rule is not None:
        out = rule(op, inputs, attrs, out_dtype, levels)
        if out is not NotImplemented:
            return out
    return fallback(op, inputs, attrs, out_dtype, levels)


def _with_physical_tangents(inputs, levels):
    """The inputs, each batched at every level in ``levels`` where its tangent is (see
    ``_promoted``): the op's rule then runs on physical tensors whose tangents are physical too."""
    out = None
    for i, t in enumerate(inputs):
        need = set(tangent_levels(t)) & set(levels)
        need.difference_update(levels_of(t))
        if need:
            if out is None:
                out = list(inputs)
            out[i] = _promoted(t, tuple(sorted(need)))
    return inputs if out is None else out


def _promoted(t, need):
    """``t`` (whose primal is the same for every sample of the levels ``need``, while its
    tangent is batched there: a jvp with unbatched primals under vmap) batched at those levels:
    its physical tensor expanded to them, with the matching slices of the tangent as the
    physical tangent, so that primal and tangent are batched alike."""
    from ..autograd import forward_ad

    own = levels_of(t)
    new_levels = tuple(sorted(set(own) | set(need)))
    sizes = level_sizes()
    base = t._phys if type(t) is BatchedTensor else t
    # the primal, expanded (on the graph, so gradients still reach t), its tangents set below
    phys = forward_ad._without_propagation(0, lambda: expanded(t, new_levels))
    logical = tuple(base.shape[len(own):])
    for fw_level, tangent in list(base._fw_grads.items()):
        tl = levels_of(tangent)
        if not set(tl) & set(need):
            # batched only elsewhere: the same tangent for every sample of ``need``
            shape = tuple(sizes[lvl] if lvl in own else 1 for lvl in new_levels) + logical
            full = tuple(sizes[lvl] for lvl in new_levels) + logical
            physical_tangent = forward_ad._without_propagation(
                fw_level, lambda: tangent.reshape(shape).expand(*full))
        else:
            # the tangent's batch dims of ``need`` become physical dims in new_levels' order,
            # after the levels it keeps as a BatchedTensor
            keep = tuple(lvl for lvl in tl if lvl not in need)
            stripped = _strip(tangent, keep, need, own, new_levels, logical, sizes)
            physical_tangent = forward_ad._without_propagation(fw_level, stripped)
        forward_ad.set_tangent(phys, fw_level, physical_tangent)
    return wrap(phys, new_levels)


def _strip(tangent, keep, need, own, new_levels, logical, sizes):
    """A function computing ``tangent``'s physical array rearranged as (``keep`` dims,
    ``new_levels`` dims, logical dims), wrapped as a BatchedTensor at ``keep``."""

    def run():
        tl = levels_of(tangent)
        phys = physical(tangent)  # (tl dims, own dims, logical dims)
        nt, no = len(tl), len(own)
        order = [tl.index(lvl) for lvl in keep]
        for lvl in new_levels:
            order.append(tl.index(lvl) if lvl in need else nt + own.index(lvl))
        order += [nt + no + k for k in range(len(logical))]
        arranged = phys.permute(tuple(order))
        full = tuple(arranged.shape[:len(keep)]) + tuple(sizes[lvl] for lvl in new_levels) + logical
        if tuple(arranged.shape) != full:
            arranged = arranged.expand(*full)
        return wrap(arranged, keep)

    return run


def fallback(op, inputs, attrs, out_dtype, levels):
    """No rule: run the op once per sample and stack the results (and say so, once per op)."""
    name = op.name or op.__name__
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule "
                      f"for {name}. gradwalk runs it once per sample.", UserWarning, stacklevel=4)
    sizes = level_sizes()
    shape = tuple(sizes[lvl] for lvl in levels)
    phys = [aligned(t, levels) if levels_of(t) else None for t in inputs]
    arrays = {k: _aligned_array(v, levels, v.ndim) for k, v in attrs.items() if type(v) is LogicalArray}
    results = []
    for index in itertools.product(*[range(s) for s in shape]):
        args = []
        for t, p in zip(inputs, phys):
            if p is not None:
                for i, size in zip(index, p.shape[:len(levels)]):
                    p = p.select(0, i if size != 1 else 0)
            args.append(t if p is None else p)
        sample_attrs = dict(attrs)
        for k, a in arrays.items():
            sample_attrs[k] = a[tuple(i if s != 1 else 0 for i, s in zip(index, a.shape))]
        results.append(core.apply_op(op, args, sample_attrs, out_dtype))
    if type(results[0]) is tuple:
        return tuple(_stack(list(parts), shape, levels) for parts in zip(*results))
    return _stack(results, shape, levels)


def _stack(results, shape, levels):
    stacked = shape_ops.stack(results)
    return wrap(stacked.reshape(shape + tuple(results[0].shape)), levels)


def _inplace(op, inputs, attrs, out_dtype, target, levels):
    if levels_of(target) != levels:
        raise RuntimeError(
            "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor "
            "`other` in extra_args that has more elements than `self`. This happened due to `other` being "
            "vmapped over but `self` not being vmapped over in a vmap. Please try to use out-of-place "
            "operators instead of inplace arithmetic.")
    if op not in ELEMENTWISE:
        raise RuntimeError(f"vmap: gradwalk has no batching rule for the in-place {op.name or op.__name__}")
    rank = target.dim()
    phys_target = physical(target)
    args = [phys_target if t is target else _padded(t, levels, rank) for t in inputs]
    if any(type(v) is LogicalArray for v in attrs.values()):  # masked_fill_'s batched mask
        attrs = {k: _aligned_array(v, levels, rank) for k, v in attrs.items()}
    core.apply_op(op, args, attrs, out_dtype, inplace=phys_target)
    target.grad_fn = phys_target.grad_fn
    target._requires_grad = phys_target._requires_grad
    return target


# ---------------------------------------------------------------- the rules

def _padded(t, levels, rank):
    """For elementwise ops: a batched tensor's physical tensor with size-1 dims after the batch
    dims up to logical rank ``rank`` (NumPy then broadcasts it like the logical tensors); an
    unbatched tensor as it is (it broadcasts from the right anyway)."""
    if t._is_wrapped_number or not levels_of(t):
        return t
    phys = aligned(t, levels)
    pad = rank - t.dim()
    if pad:
        nb = len(levels)
        phys = phys.reshape(tuple(phys.shape[:nb]) + (1,) * pad + tuple(phys.shape[nb:]))
    return phys


def _elementwise(op, inputs, attrs, out_dtype, levels):
    rank = max([t.dim() for t in inputs if not t._is_wrapped_number]
               + [v.ndim for v in attrs.values() if isinstance(v, np.ndarray)])
    args = [_padded(t, levels, rank) for t in inputs]
    if any(type(v) is LogicalArray for v in attrs.values()):
        attrs = {k: _aligned_array(v, levels, rank) for k, v in attrs.items()}
    return _wrap_out(core.apply_op(op, args, attrs, out_dtype), levels)


def _shift(dim, ndim, nb):
    if isinstance(dim, (tuple, list)):
        return tuple(d % ndim + nb for d in dim) if ndim else tuple(dim)
    return dim % ndim + nb if ndim else dim


def _dims_rule(*keys, all_when_none=(), sizes=True):
    """Rule for a one-input op whose attributes ``keys`` are logical dims: shift them past the
    batch dims (``None`` in ``all_when_none`` means every logical dim)."""

    def rule(op, inputs, attrs, out_dtype, levels):
        x = inputs[0]
        if levels_of(x) != levels or any(levels_of(t) for t in inputs[1:]):
            return NotImplemented
        nb, ndim = len(levels), x.dim()
        phys = x._phys if type(x) is BatchedTensor else physical(x)
        new = dict(attrs)
        for key in keys:
            if key in new:
                if new[key] is None:
                    if key in all_when_none:
                        new[key] = tuple(range(nb, nb + ndim))
                else:
                    new[key] = _shift(new[key], ndim, nb)
        if "self_sym_sizes" in new:
            new["self_sym_sizes"] = tuple(phys.shape)
        if "self_sym_numel" in new:
            new["self_sym_numel"] = phys.numel()
        return _wrap_out(core.apply_op(op, (phys,) + tuple(inputs[1:]), new, out_dtype), levels)

    return rule


def _full_reduction(dim_op, extra):
    """``x.sum()`` of one sample is a sum over its logical dims of the batch."""

    def rule(op, inputs, attrs, out_dtype, levels):
        x = inputs[0]
        nb, ndim = len(levels), x.dim()
        phys = expanded(x, levels)
        if not ndim:  # a 0-dim sample: reduce over a size-1 dim (no dims would mean all, the batch too)
            phys, ndim = phys.unsqueeze(-1), 1
        new = {"dim": tuple(range(nb, nb + ndim)), "keepdim": False}
        for key in extra:
            if key == "self_sym_sizes":
                new[key] = tuple(phys.shape)
            elif key == "self_sym_numel":
                new[key] = phys.numel()
            elif key in attrs:
                new[key] = attrs[key]
        return _wrap_out(core.apply_op(dim_op, (phys,), new, out_dtype), levels)

    return rule


def _view_to(x, logical_shape, levels):
    """``x`` (batched at ``levels``) viewed as ``logical_shape`` per sample."""
    phys = expanded(x, levels)
    full = tuple(phys.shape[:len(levels)]) + tuple(logical_shape)
    return wrap(core.apply_op(shape.View, (phys,), {"shape": full, "self_sym_sizes": tuple(phys.shape)}),
                levels)


def _reshape_rule(op, inputs, attrs, out_dtype, levels):
    """view/reshape/squeeze/unsqueeze: the sample's new shape, from the op run on the first
    sample (a NumPy view, nothing computed), then one view of the batch."""
    x = inputs[0]
    sample = op.forward(x._data, **attrs)
    return _view_to(x, sample.shape, levels)


def _expand_rule(op, inputs, attrs, out_dtype, levels):
    x = inputs[0]
    out_shape = op.forward(x._data, **attrs).shape
    phys = _padded(x, levels, len(out_shape))
    sizes = level_sizes()
    full = tuple(sizes[lvl] if s == 1 else s for lvl, s in zip(levels, phys.shape)) + tuple(out_shape)
    return wrap(core.apply_op(shape.Expand, (phys,), {"size": full, "self_sym_sizes": tuple(phys.shape)}),
                levels)


def _t_rule(op, inputs, attrs, out_dtype, levels):
    x = inputs[0]
    if x.dim() < 2:
        return _view_to(x, tuple(x.shape), levels)
    nb = len(levels)
    return wrap(core.apply_op(shape.Transpose, (expanded(x, levels),), {"dim0": nb, "dim1": nb + 1}), levels)


def _permute_rule(op, inputs, attrs, out_dtype, levels):
    x = inputs[0]
    nb, ndim = len(levels), x.dim()
    dims = tuple(range(nb)) + tuple(d % ndim + nb for d in attrs["dims"])
    return wrap(core.apply_op(shape.Permute, (expanded(x, levels),), {"dims": dims}), levels)


def _unsqueeze_like_rule(key):
    def rule(op, inputs, attrs, out_dtype, levels):  # dims counted in the result (rank + 1)
        x = inputs[0]
        new = dict(attrs)
        new[key] = attrs[key] % (x.dim() + 1) + len(levels)
        return _wrap_out(core.apply_op(op, [expanded(t, levels) for t in inputs], new, out_dtype), levels)

    return rule


def _cat_rule(op, inputs, attrs, out_dtype, levels):
    ndim = max(t.dim() for t in inputs)
    new = dict(attrs, dim=attrs["dim"] % ndim + len(levels))
    return wrap(core.apply_op(op, [expanded(t, levels) for t in inputs], new, out_dtype), levels)


def _index_rule(op, inputs, attrs, out_dtype, levels):
    x = inputs[0]
    key = attrs["indices"]
    key = key if type(key) is tuple else (key,)
    if any(type(k) is LogicalArray or k is Ellipsis for k in key):
        return NotImplemented
    out_shape = np.asarray(x._data[key]).shape
    phys = expanded(x, levels)
    nb = len(levels)
    new_key = (slice(None),) * nb + key
    result = core.apply_op(op, (phys,), dict(attrs, indices=new_key, self_sym_sizes=tuple(phys.shape)))
    if tuple(result.shape[nb:]) != out_shape:  # NumPy moved separated advanced indices to the front
        return NotImplemented
    return wrap(result, levels)


def _gather_rule(op, inputs, attrs, out_dtype, levels):
    x = inputs[0]
    nb, ndim = len(levels), x.dim()
    phys = expanded(x, levels)
    index = attrs["index"]
    index = np.broadcast_to(_aligned_array(index, levels, index.ndim),
                            tuple(phys.shape[:nb]) + tuple(index.shape))
    return wrap(core.apply_op(op, (phys,), dict(attrs, dim=attrs["dim"] % ndim + nb, index=index)), levels)


def _index_put_zeros_rule(op, inputs, attrs, out_dtype, levels):
    """The backward of indexing for a batch of gradients: the batch dims moved last, where the
    (logical) indices, which address the leading dims, leave them alone."""
    indices = attrs["indices"]
    key = indices if type(indices) is tuple else (indices,)
    if any(type(k) is LogicalArray or k is Ellipsis or k is None for k in key):
        return NotImplemented
    nb = len(levels)
    phys = expanded(inputs[0], levels)
    batch = tuple(phys.shape[:nb])
    moved = phys.permute(tuple(range(nb, phys.dim())) + tuple(range(nb)))
    out = core.apply_op(op, (moved,), dict(attrs, shape=tuple(attrs["shape"]) + batch), out_dtype)
    k = len(attrs["shape"])
    return wrap(out.permute(tuple(range(k, k + nb)) + tuple(range(k))), levels)


def _blas_ready(phys):
    """An expanded (stride-0) batch as a real array: NumPy's matmul takes its slow loop, not
    BLAS, on zero strides (an input copied per sample by jacrev/jacfwd is such a view)."""
    data = phys._data
    if isinstance(data, np.ndarray) and 0 in data.strides and data.size > 1:
        return phys.contiguous()
    return phys


def aligned_for_matmul(t, levels):
    return _blas_ready(aligned(t, levels))


def _matmul(a, b, levels):
    """The batched product of ``a`` and ``b`` (each (..., n, k) / (..., k, m) per sample)."""
    la, lb = levels_of(a), levels_of(b)
    if la and not lb:
        return wrap(linalg.matmul(aligned_for_matmul(a, levels), b), levels)  # one folded mm for 2-D b
    if lb and not la and a.dim() >= 2 and b.dim() == 2:
        # a @ B for every sample = (B^T @ a^T)^T: again one folded mm
        bt = aligned_for_matmul(b, levels).transpose(-1, -2)
        return wrap(linalg.matmul(bt, a.t()).transpose(-1, -2), levels)
    # both batched (or a batched 1-D b): a bmm, which folds an operand expanded along the
    # batch (a weight copied per sample), so no real copy is needed here
    a2 = aligned(a, levels) if la else a
    b2 = aligned(b, levels) if lb else b
    if a2.dim() == b2.dim() == 3 and a2.shape[0] == b2.shape[0]:
        return wrap(linalg.bmm(a2, b2), levels)  # matrices per sample, one batch dim: bmm itself
    return wrap(linalg.matmul(a2, b2), levels)


def _mm_rule(op, inputs, attrs, out_dtype, levels):
    a, b = inputs
    return _matmul(a, b, levels)


def _mv_rule(op, inputs, attrs, out_dtype, levels):
    a, v = inputs
    if levels_of(v) and not levels_of(a):
        return wrap(linalg.matmul(aligned_for_matmul(v, levels), a.t()), levels)  # rows of vectors times a^T
    return _matmul(a, v.unsqueeze(-1), levels).squeeze(-1)


def _dot_rule(op, inputs, attrs, out_dtype, levels):
    a, b = inputs
    if levels_of(a) and levels_of(b):
        return (a * b).sum(-1)
    batched, plain = (a, b) if levels_of(a) else (b, a)
    return wrap(linalg.matmul(aligned_for_matmul(batched, levels), plain), levels)


def _addmm_rule(op, inputs, attrs, out_dtype, levels):
    bias, a, b = inputs
    alpha, beta = attrs.get("alpha", 1), attrs.get("beta", 1)
    out = _matmul(a, b, levels)
    if alpha != 1:
        out = out * alpha
    if beta == 0:
        return out
    return (bias * beta if beta != 1 else bias) + out


def _reduced(per_sample, reduction, levels, weights=None):
    """A loss's "mean"/"sum" of its per-element values (reduction 1 / 2), per sample."""
    if reduction == 0:
        return per_sample
    if reduction == 2 or weights is not None:
        total = per_sample.sum() if per_sample.dim() else per_sample
        if weights is None:
            return total
        return total / wrap(Tensor._make(weights), levels)
    return per_sample.mean() if per_sample.dim() else per_sample


def _pointwise_loss_rule(op, inputs, attrs, out_dtype, levels):
    if attrs["reduction"] == 0:
        return _elementwise(op, inputs, attrs, out_dtype, levels)
    per = core.apply_op(op, inputs, dict(attrs, reduction=0), out_dtype)
    return _reduced(per, attrs["reduction"], levels)


def _nll_rule(op, inputs, attrs, out_dtype, levels):
    x = inputs[0]
    target, weight, ignore = attrs["target"], attrs["weight"], attrs["ignore_index"]
    if type(weight) is LogicalArray:
        return NotImplemented
    sizes = level_sizes()
    batch = tuple(sizes[lvl] for lvl in levels)
    phys = expanded(x, levels)
    c = x.shape[-1]
    t = np.broadcast_to(_aligned_array(target, levels, target.ndim), batch + tuple(target.shape))
    flat = np.ascontiguousarray(t).reshape(-1)
    per = core.apply_op(op, (phys.reshape(-1, c),), {"target": flat, "weight": weight, "reduction": 0,
                                                     "ignore_index": ignore})
    per = wrap(per.reshape(batch + tuple(target.shape)), levels)
    reduction = attrs["reduction"]
    if reduction != 1:
        return _reduced(per, reduction, levels)
    valid = t != ignore
    w = np.ones(c, dtype=phys._data.dtype) if weight is None else weight
    totals = (w[np.where(valid, t, 0)] * valid).reshape(batch + (-1,)).sum(-1).astype(phys._data.dtype)
    if weight is None and valid.all():
        return per.mean() if per.dim() else per
    return _reduced(per, 1, levels, weights=totals)


def _embedding_rule(op, inputs, attrs, out_dtype, levels):
    w = inputs[0]
    indices = attrs["indices"]
    if levels_of(w):  # a table per sample (per-sample gradients): pick row index[i] of table i
        batch = tuple(level_sizes()[lvl] for lvl in levels)
        count = int(np.prod(batch))
        tables = expanded(w, levels).reshape((count,) + tuple(w.shape))
        rows = np.broadcast_to(_aligned_array(indices, levels, indices.ndim), batch + tuple(indices.shape))
        rows = rows.reshape((count,) + tuple(indices.shape))
        which = np.arange(count).reshape((count,) + (1,) * indices.ndim)
        picked = core.apply_op(shape.Index, (tables,), {"indices": (which, rows),
                                                        "self_sym_sizes": tuple(tables.shape)})
        return wrap(picked.reshape(batch + tuple(picked.shape[1:])), levels)
    phys_indices = _aligned_array(indices, levels, indices.ndim)
    phys_indices = np.broadcast_to(phys_indices, tuple(level_sizes()[lvl] for lvl in levels)
                                   + tuple(indices.shape))
    return wrap(core.apply_op(op, (w,), dict(attrs, indices=np.ascontiguousarray(phys_indices))), levels)


# ---------------------------------------------------------------- convolution and pooling
#
# As functorch's rules: a batch of images is one bigger batch (the batch folded into N); a
# weight per sample is one grouped convolution (the batch folded into the channels, groups
# multiplied by the batch size), so each sample's group is the very product the loop would run;
# one weight for a batch of images and a weight per sample of one image set of images is one
# convolution with the batch folded into the output channels. The ops' NumPy code runs once,
# the graph is the ordinary one over arrays that carry the batch.

def _batch(levels):
    sizes = level_sizes()
    return tuple(sizes[lvl] for lvl in levels)


def _into_n(t, levels):
    """(batch..., N, ...) as (batch * N, ...)."""
    phys = expanded(t, levels)
    return phys.reshape((-1,) + tuple(phys.shape[len(levels) + 1:]))


def _from_n(out, levels):
    """The inverse of ``_into_n``: (batch * N, ...) as a BatchedTensor of (N, ...) samples."""
    batch = _batch(levels)
    count = int(np.prod(batch))
    return wrap(out.reshape(batch + (out.shape[0] // count,) + tuple(out.shape[1:])), levels)


def _into_channels(t, levels):
    """(batch..., N, C, ...) as (N, batch * C, ...): sample b's channels are group b's."""
    phys = expanded(t, levels)
    nb = len(levels)
    flat = phys.reshape((-1,) + tuple(phys.shape[nb:])) if nb != 1 else phys
    moved = flat.movedim(0, 1)
    return moved.reshape((moved.shape[0], -1) + tuple(moved.shape[3:]))


def _from_channels(out, levels):
    """The inverse of ``_into_channels``: (N, batch * O, ...) as (N, O, ...) samples."""
    batch = _batch(levels)
    count = int(np.prod(batch))
    split = out.reshape((out.shape[0], count, out.shape[1] // count) + tuple(out.shape[2:]))
    moved = split.movedim(1, 0)
    return wrap(moved.reshape(batch + tuple(moved.shape[1:])) if len(levels) != 1 else moved, levels)


def _into_rows(t, levels):
    """A weight (or bias) per sample, (batch..., O, ...), as (batch * O, ...)."""
    phys = expanded(t, levels)
    return phys.reshape((-1,) + tuple(phys.shape[len(levels) + 1:]))


def _count(levels):
    return int(np.prod(_batch(levels)))


def _conv_rule(op, inputs, attrs, out_dtype, levels):
    """``Convolution`` (and ``ConvTranspose``, whose weight is (C_in, O / groups, kh, kw)): the
    batch folded into N when only the images are batched, into the output channels when only
    the weight (and bias) is and groups == 1, else into the groups."""
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    transposed = op is not nn_ops.Convolution
    lx, lw, lb = levels_of(x), levels_of(w), (levels_of(b) if b is not None else ())
    new = dict(attrs)
    add_bias = None  # a bias per sample added after a convolution of one weight
    if not lw and not lb:
        how = "n"
        args = [_into_n(x, levels), w] + ([b] if b is not None else [])
        if transposed:
            new["out_shape"] = (_count(levels) * attrs["out_shape"][0],) + tuple(attrs["out_shape"][1:])
    elif not lw:  # a bias per sample only: one convolution, then each sample's bias
        how = "n" if lx else None
        args = [_into_n(x, levels) if lx else x, w]
        add_bias = b
        if transposed and lx:
            new["out_shape"] = (_count(levels) * attrs["out_shape"][0],) + tuple(attrs["out_shape"][1:])
    elif not lx and attrs["groups"] == 1 and not transposed:
        how = "channels"  # one image batch, a weight per sample: the weights stacked as output channels
        args = [x, _into_rows(w, levels)] + ([_into_rows(b, levels)] if b is not None else [])
    else:
        how = "channels"
        count = _count(levels)
        new["groups"] = attrs["groups"] * count
        args = [_into_channels(x, levels), _into_rows(w, levels)]
        if b is not None:
            args.append(_into_rows(b, levels))
        if transposed:
            n, o = attrs["out_shape"][:2]
            new["out_shape"] = (n, o * count) + tuple(attrs["out_shape"][2:])
    out = core.apply_op(op, tuple(args), new, out_dtype)
    node = out.grad_fn
    if how is None:
        result = out
    else:
        result = _from_n(out, levels) if how == "n" else _from_channels(out, levels)
    if add_bias is not None:
        if node is not None:  # the convolution's own bias edge, as convolution() gives it
            node.next_functions += ((None, 0),)
            node.needs_input_grad += (False,)
        return result + add_bias.reshape(-1, 1, 1)
    if b is None:
        result.grad_fn = node  # convolution() gives the conv node its bias edge: this one
    return result


def _unbatched_empty(dtype):
    return Tensor._make(np.empty((0,), dtype=dtype))


def _conv_input_grad(g, w, input_shape, a, levels):
    """``conv_input_grad`` for a batch: of gradients only (folded into N), or per sample weights
    (folded into the groups)."""
    if not levels_of(w):
        shape = (_count(levels) * input_shape[0],) + tuple(input_shape[1:])
        return _from_n(nn_ops.conv_input_grad(_into_n(g, levels), w, shape, a), levels)
    count = _count(levels)
    n, c = input_shape[:2]
    shape = (n, c * count) + tuple(input_shape[2:])
    folded = dict(a, groups=a["groups"] * count)
    return _from_channels(nn_ops.conv_input_grad(_into_channels(g, levels), _into_rows(w, levels), shape,
                                                 folded), levels)


def _conv_weight_grad(x, g, weight_shape, a, levels):
    """``conv_weight_grad`` for a batch: one image batch and per sample gradients (groups == 1:
    folded into the output channels), else folded into the groups."""
    count = _count(levels)
    if not levels_of(x) and a["groups"] == 1:
        shape = (weight_shape[0] * count,) + tuple(weight_shape[1:])
        out = nn_ops.conv_weight_grad(x, _into_channels(g, levels), shape, a)
    else:
        shape = (weight_shape[0] * count,) + tuple(weight_shape[1:])
        out = nn_ops.conv_weight_grad(_into_channels(x, levels), _into_channels(g, levels), shape,
                                      dict(a, groups=a["groups"] * count))
    return wrap(out.reshape(_batch(levels) + tuple(weight_shape)), levels)


def _conv_backward_rule(op, inputs, attrs, out_dtype, levels):
    g, x, w = inputs
    a = {k: attrs[k] for k in nn_ops._CONV_ATTRS}
    mask = attrs["output_mask"]
    dtype = g._data.dtype
    gx = _conv_input_grad(g, w, tuple(x.shape), a, levels) if mask[0] else _unbatched_empty(dtype)
    gw = _conv_weight_grad(x, g, tuple(w.shape), a, levels) if mask[1] else _unbatched_empty(dtype)
    gb = g.sum((0, 2, 3)) if mask[2] else _unbatched_empty(dtype)
    return gx, gw, gb


def _conv_input_grad_rule(op, inputs, attrs, out_dtype, levels):
    g, w = inputs
    a = {k: attrs[k] for k in nn_ops._CONV_ATTRS}
    return _conv_input_grad(g, w, tuple(attrs["input_shape"]), a, levels)


def _conv_weight_grad_rule(op, inputs, attrs, out_dtype, levels):
    x, g = inputs
    a = {k: attrs[k] for k in nn_ops._CONV_ATTRS}
    return _conv_weight_grad(x, g, tuple(attrs["weight_shape"]), a, levels)


def _pool_rule(op, inputs, attrs, out_dtype, levels):
    x = inputs[0]
    mine = []
    out = core.apply_op(op, (_into_n(x, levels),), dict(attrs, indices_out=mine))
    batch = _batch(levels)
    attrs["indices_out"].append(logical_array(mine[0].reshape(batch + tuple(x.shape)[:1] + mine[0].shape[1:]),
                                              levels))
    return _from_n(out, levels)


def _indices_into_n(indices, levels, shape):
    """Max pooling's indices (a plain array, or a batched one) for a batch folded into N."""
    phys = np.broadcast_to(_aligned_array(indices, levels, indices.ndim), _batch(levels) + tuple(shape))
    return np.ascontiguousarray(phys).reshape((-1,) + tuple(shape[1:]))


def _pool_scatter_rule(op, inputs, attrs, out_dtype, levels):
    g = inputs[0]
    shape = tuple(attrs["input_shape"])
    new = dict(attrs, indices=_indices_into_n(attrs["indices"], levels, tuple(g.shape)),
               input_shape=(_count(levels) * shape[0],) + shape[1:])
    return _from_n(core.apply_op(op, (_into_n(g, levels),), new, out_dtype), levels)


def _pool_gather_rule(op, inputs, attrs, out_dtype, levels):
    x = inputs[0]
    indices = attrs["indices"]
    new = dict(attrs, indices=_indices_into_n(indices, levels, tuple(indices.shape)))
    return _from_n(core.apply_op(op, (_into_n(x, levels),), new, out_dtype), levels)


def _into_n_rule(shape_key=None):
    """A one-input pooling op (or its adjoint, whose ``shape_key`` attribute is the input's
    shape): the batch folded into N."""

    def rule(op, inputs, attrs, out_dtype, levels):
        new = dict(attrs)
        if shape_key is not None:
            shape = tuple(attrs[shape_key])
            new[shape_key] = (_count(levels) * shape[0],) + shape[1:]
        return _from_n(core.apply_op(op, (_into_n(inputs[0], levels),), new, out_dtype), levels)

    return rule


def _adaptive_rule(shape_key=None):
    """Adaptive average pooling works on any leading dims: the batch dims are more of them."""

    def rule(op, inputs, attrs, out_dtype, levels):
        new = dict(attrs)
        if shape_key is not None:
            new[shape_key] = _batch(levels) + tuple(attrs[shape_key])
        return wrap(core.apply_op(op, (expanded(inputs[0], levels),), new, out_dtype), levels)

    return rule


shape_ops = shape

# every op of pointwise.py is elementwise (the module marks them all scalar_operands)
ELEMENTWISE = {op for op in vars(pointwise).values()
               if isinstance(op, type) and issubclass(op, core.Op) and op.scalar_operands}
ELEMENTWISE |= set(pointwise._CMP.values())  # eq, lt, logical_and, ...
ELEMENTWISE |= {shape.Clone, shape.CopyBackwards, shape.ToCopy, shape.MaskedFill, shape.Alias,
                nn_ops.LeakyRelu, nn_ops.LeakyReluBackward, nn_ops.Gelu, nn_ops.Erf, nn_ops.Silu,
                nn_ops.Softplus, nn_ops.Elu, nn_ops.Hardtanh, nn_ops.LogSigmoid}

RULES = {op: _elementwise for op in ELEMENTWISE}
RULES.update({
    reduction.SumAll: _full_reduction(reduction.SumDim, ("self_sym_sizes", "dtype")),
    reduction.MeanAll: _full_reduction(reduction.MeanDim, ("self_sym_sizes", "self_sym_numel")),
    reduction.MaxAll: _full_reduction(reduction.Amax, ()),
    reduction.MinAll: _full_reduction(reduction.Amin, ()),
    reduction.SumDim: _dims_rule("dim", all_when_none=("dim",)),
    reduction.MeanDim: _dims_rule("dim", all_when_none=("dim",)),
    reduction.Amax: _dims_rule("dim", all_when_none=("dim",)),
    reduction.Amin: _dims_rule("dim", all_when_none=("dim",)),
    reduction.MaxDim: _dims_rule("dim"),
    reduction.MinDim: _dims_rule("dim"),
    reduction.Var: _dims_rule("dim", all_when_none=("dim",)),
    reduction.Std: _dims_rule("dim", all_when_none=("dim",)),
    reduction.ProdDim: _dims_rule("dim"),
    reduction.Logsumexp: _dims_rule("dim"),
    reduction.LinalgVectorNorm: _dims_rule("dim", all_when_none=("dim",)),
    activation.Softmax: _dims_rule("dim"),
    activation.LogSoftmax: _dims_rule("dim"),
    shape.Transpose: _dims_rule("dim0", "dim1"),
    shape.Select: _dims_rule("dim"),
    shape.Slice: _dims_rule("dim"),
    shape.Flip: _dims_rule("dims"),
    shape.Unbind: _dims_rule("dim"),
    shape.Split: _dims_rule("dim"),
    shape.SplitWithSizes: _dims_rule("dim"),
    shape.View: _reshape_rule,
    shape.UnsafeView: _reshape_rule,
    shape.ReshapeAlias: _reshape_rule,
    shape.Squeeze: _reshape_rule,
    shape.SqueezeDim: _reshape_rule,
    shape.SqueezeMatmul: _reshape_rule,
    shape.Unsqueeze: _reshape_rule,
    shape.Expand: _expand_rule,
    shape.T: _t_rule,
    shape.Permute: _permute_rule,
    shape.Cat: _cat_rule,
    shape.Stack: _unsqueeze_like_rule("dim"),
    shape.Index: _index_rule,
    shape.Gather: _gather_rule,
    shape.IndexPutZeros: _index_put_zeros_rule,
    linalg.Mm: _mm_rule,
    linalg.Bmm: _mm_rule,
    linalg.Mv: _mv_rule,
    linalg.Dot: _dot_rule,
    linalg.Addmm: _addmm_rule,
    activation.MseLoss: _pointwise_loss_rule,
    activation.BinaryCrossEntropy: _pointwise_loss_rule,
    activation.BCEWithLogits: _pointwise_loss_rule,
    activation.NllLoss: _nll_rule,
    nn_ops.Embedding: _embedding_rule,
    nn_ops.Convolution: _conv_rule,
    nn_ops.ConvolutionBackward: _conv_backward_rule,
    nn_ops.ConvolutionInputGrad: _conv_input_grad_rule,
    nn_ops.ConvolutionWeightGrad: _conv_weight_grad_rule,
    pooling.ConvTranspose: _conv_rule,
    nn_ops.MaxPool2DWithIndices: _pool_rule,
    nn_ops.PoolScatter: _pool_scatter_rule,
    nn_ops.PoolGather: _pool_gather_rule,
    pooling.AvgPool2D: _into_n_rule(),
    pooling.AvgPool2DAdjoint: _into_n_rule("input_shape"),
    pooling.AdaptiveAvgPool2D: _adaptive_rule(),
    pooling.AdaptiveAvgPool2DAdjoint: _adaptive_rule("input_shape"),
})


# ---------------------------------------------------------------- random ops: vmap's randomness flag

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' "
                 "or 'different' randomness flags on vmap or perform the randomness operation out of vmap")
_SAME_WITH_BATCHED = ("Vmap does not currently support same randomness with a batched tensor input. Please file "
                      "an issue with functorch")
_DIFFERENT_INPLACE_UNBATCHED = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear like same "
    "randomness. If this is necessary for your usage, please file an issue with functorch.")


def random_op(fn, kind, args, kwargs):
    """A random op called under vmap (the ops in ``ops/random_ops.py`` and ``dropout`` hand
    themselves here), by PyTorch's rules for ``vmap(..., randomness=)``:

    - ``"error"`` (the default): any random op raises;
    - ``"same"``: one draw of the sample's shape, shared by every sample (an in-place sampler
      writes it into each sample); a batched tensor argument (``bernoulli(p)``) is refused;
    - ``"different"``: one draw of the whole batch's shape (batch dims first), so the values
      are PyTorch's: ``rand(3)`` under a vmap of 4 gives ``rand(4, 3)``'s values.

    ``kind`` says how the call is batched: "factory" (a size, or a tensor only for its shape:
    ``rand_like``), "inplace" (``x.normal_()``), "tensor" (drawn from a tensor's values:
    ``bernoulli(p)``, ``normal(mean)``, ``multinomial``), "dropout"."""
    import inspect

    bound = inspect.signature(fn).bind(*args, **kwargs)
    arguments = bound.arguments
    if kind == "dropout":
        input, p = arguments["input"], arguments.get("p", 0.5)
        if p == 0 or p == 1 or not arguments.get("training", True) or input.numel() == 0:
            return _plain_random(fn, args, kwargs)  # nothing is drawn
    if any(mode == "error" for _, _, mode in running.stack):
        raise RuntimeError(_RANDOM_ERROR)
    different = tuple(level for level, _, mode in running.stack if mode == "different")
    handler = {"factory": _random_factory, "inplace": _random_inplace, "tensor": _random_from_tensors,
               "dropout": _random_dropout}[kind]
    return handler(fn, bound, different)


def _plain_random(fn, args, kwargs):
    running.random_busy = True
    try:
        return fn(*args, **kwargs)
    finally:
        running.random_busy = False


def _batch_shape(levels):
    sizes = level_sizes()
    return tuple(sizes[level] for level in levels)


def _random_factory(fn, bound, different):
    from ..ops.factories import _size

    if not different:
        return _plain_random(fn, bound.args, bound.kwargs)
    batch = _batch_shape(different)
    arguments = bound.arguments
    name = fn.__name__
    if name == "randperm":  # one permutation per sample, in turn (PyTorch's loop)
        count = int(np.prod(batch))
        perms = [_plain_random(fn, bound.args, bound.kwargs) for _ in range(count)]
        return wrap(shape.stack(perms).reshape(batch + tuple(perms[0].shape)), different)
    if "input" in arguments:  # rand_like(x): only x's shape and dtype count, the batch's here
        x = arguments["input"]
        arguments["input"] = Tensor._make(np.empty(batch + tuple(x.shape), dtype=x._data.dtype))
    elif name == "randint":
        low, high, size = arguments.get("low"), arguments.get("high"), arguments.get("size")
        if size is None:  # randint(high, size)
            low, high, size = 0, low, high
        arguments["low"], arguments["high"], arguments["size"] = low, high, batch + _size((size,))
    else:  # rand(*size), randn(*size), normal(mean, std, size)
        arguments["size"] = batch + _size(arguments["size"] if name in ("rand", "randn")
                                          else (arguments["size"],))
    return wrap(_plain_random(fn, bound.args, bound.kwargs), different)


def _random_inplace(fn, bound, different):
    arguments = bound.arguments
    names = list(arguments)
    target = arguments[names[0]]
    own = levels_of(target)
    tensors = [v for k, v in arguments.items() if k != names[0] and isinstance(v, Tensor)]
    if not different:
        if any(levels_of(t) for t in tensors):
            raise RuntimeError(_SAME_WITH_BATCHED)
        if not own:
            return _plain_random(fn, bound.args, bound.kwargs)
        # one draw of the sample's shape, written into every sample
        sample = Tensor._make(np.empty(tuple(target.shape), dtype=target._data.dtype))
        arguments[names[0]] = sample
        _plain_random(fn, bound.args, bound.kwargs)
        phys = physical(target)
        phys._data[...] = sample._data
        phys._version_counter[0] += 1
        return target
    for t in tensors:
        if not set(levels_of(t)) <= set(own):
            raise RuntimeError(
                f"vmap: inplace {fn.__name__.rstrip('_')}(self, *extra_args) is not possible because there "
                "exists a Tensor `other` in extra_args that has more elements than `self`. This happened due "
                "to `other` being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
                f"out-of-place operators instead of inplace {fn.__name__.rstrip('_')}. If said operator is being "
                "called inside the PyTorch framework, please file a bug report instead.")
    if not set(different) <= set(own):
        raise RuntimeError(_DIFFERENT_INPLACE_UNBATCHED)
    for k, v in list(arguments.items())[1:]:
        if isinstance(v, Tensor) and levels_of(v):
            arguments[k] = _padded(v, own, target.dim())
    arguments[names[0]] = physical(target)
    _plain_random(fn, bound.args, bound.kwargs)  # fills the whole batch, in its memory order
    return target


def _random_from_tensors(fn, bound, different):
    arguments = bound.arguments
    tensors = {k: v for k, v in arguments.items() if isinstance(v, Tensor)}
    if not tensors:  # normal(0.0, 1.0, size): a factory
        return _random_factory(fn, bound, different)
    if not different:
        if any(levels_of(t) for t in tensors.values()):
            raise RuntimeError(_SAME_WITH_BATCHED)
        return _plain_random(fn, bound.args, bound.kwargs)
    levels = tuple(sorted(set(different).union(*[levels_of(t) for t in tensors.values()])))
    batch = _batch_shape(levels)
    rank = max(t.dim() for t in tensors.values())
    for k, t in tensors.items():  # each with the whole batch in front, its logical dims padded to rank
        phys = _padded(t, levels, rank) if levels_of(t) else t.reshape((1,) * (len(levels) + rank - t.dim())
                                                                        + tuple(t.shape))
        arguments[k] = phys.expand(*(batch + tuple(phys.shape[len(levels):])))
    if fn.__name__ == "multinomial":  # a 1-D or 2-D distribution per sample: rows of one 2-D one
        probs = arguments["input"]
        arguments["input"] = probs.reshape(-1, probs.shape[-1])
        out = _plain_random(fn, bound.args, bound.kwargs)
        return wrap(out.reshape(tuple(probs.shape[:-1]) + (out.shape[-1],)), levels)
    return wrap(_plain_random(fn, bound.args, bound.kwargs), levels)


def _random_dropout(fn, bound, different):
    arguments = bound.arguments
    input = arguments["input"]
    inplace = arguments.get("inplace", False)
    if not different:
        # one mask of the sample's shape for every sample: the mask is dropout of ones
        ones = Tensor._make(np.ones(tuple(input.shape), dtype=input._data.dtype))
        arguments["input"], arguments["inplace"] = ones, False
        mask = _plain_random(fn, bound.args, bound.kwargs)
        return input.mul_(mask) if inplace else input * mask
    levels = tuple(sorted(set(different) | set(levels_of(input))))
    if inplace and set(levels) - set(levels_of(input)):
        raise RuntimeError(_DIFFERENT_INPLACE_UNBATCHED)
    phys = expanded(input, levels)
    arguments["input"] = phys
    out = _plain_random(fn, bound.args, bound.kwargs)
    if inplace:
        input.grad_fn = phys.grad_fn
        input._requires_grad = phys._requires_grad
        return input
    return wrap(out, levels)
