"""``einsum``, built from existing ops in the order PyTorch's ``at::einsum`` uses
(aten/src/ATen/native/Linear.cpp), so the graph has PyTorch's nodes and backward comes free:

1. parse: each operand's labels (``...`` covers the dims no label names, broadcast from the
   right); the output is the explicit one or, without ``->``, ``...`` then the labels seen once,
   in order ``A-Z a-z``; contracted dims follow (an ellipsis not in the output first);
2. each operand: a repeated label becomes a ``diagonal``; a missing label an ``unsqueeze``; then
   one ``permute`` to that common order;
3. one operand: a ``sum`` over the contracted dims; several: folded left to right, each pair by
   ``sumproduct_pair`` (``permute``, ``reshape`` to 3-D, ``bmm``, ``view``, ``permute``); a
   contracted dim is summed in the pair where its last operand with size > 1 meets the others,
   or summed alone (``sum(keepdim=True)``) when only one operand has it;
4. a ``view`` that drops the contracted dims (all size 1 by then).

    >>> a, b = gradwalk.ones(2, 3), gradwalk.ones(3, 4)
    >>> gradwalk.einsum("ij,jk->ik", a, b).shape
    torch.Size([2, 4])
    >>> gradwalk.einsum("...ij,...jk->...ik", gradwalk.ones(5, 2, 3), b).shape
    torch.Size([5, 2, 4])
"""
from ._util import export
from . import linalg, reduction, shape
from .extra import diagonal, movedim

ELLIPSIS = "..."


def _label_order(c):
    """PyTorch numbers the labels A-Z as 0-25 and a-z as 26-51: the order of implicit outputs
    and of contracted dims."""
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def _is_label(c):
    return c.isascii() and c.isalpha()


def _parse_operands(lhs, n_operands):
    """Each operand's labels (``ELLIPSIS`` for ``...``), with PyTorch's errors."""
    labels = [[] for _ in range(n_operands)]
    current, ellipsis_seen, i = 0, False, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if ellipsis_seen:
                raise RuntimeError(f"einsum(): found '.' for operand {current} for which an ellipsis "
                                   "was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {current} that is not part of any "
                                   "ellipsis")
            i += 2
            labels[current].append(ELLIPSIS)
            ellipsis_seen = True
        elif c == ",":
            current += 1
            if current >= n_operands:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            ellipsis_seen = False
        elif c != " ":
            if not _is_label(c):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                                   "string, subscripts must be in [a-zA-Z]")
            labels[current].append(c)
        i += 1
    if current != n_operands - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels


def _layout(equation, operands):
    """PyTorch's parse: per operand its labels; the position of every label and of the ellipsis
    dims in the common layout; how many dims the output has; and the layout's length."""
    arrow = equation.find("->")
    lhs = equation if arrow == -1 else equation[:arrow]
    op_labels = _parse_operands(lhs, len(operands))
    counts, ell_num_dim = {}, 0
    for k, (labels, op) in enumerate(zip(op_labels, operands)):
        n_labels = sum(1 for s in labels if s != ELLIPSIS)
        has_ellipsis = ELLIPSIS in labels
        if has_ellipsis:
            ell_num_dim = max(ell_num_dim, op.ndim - n_labels)
        for s in labels:
            if s != ELLIPSIS:
                counts[s] = counts.get(s, 0) + 1
        if (n_labels > op.ndim) if has_ellipsis else (n_labels != op.ndim):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n_labels}) "
                + ("is more than" if has_ellipsis else "does not match")
                + f" the number of dimensions ({op.ndim}) for operand {k}"
                + ("" if has_ellipsis else " and no ellipsis was given"))
    position, perm_index, ell_index, ell_in_output = {}, 0, 0, False
    if arrow == -1:  # implicit output: the ellipsis, then the labels seen once
        perm_index, ell_in_output = ell_num_dim, True
        for c in sorted(counts, key=_label_order):
            if counts[c] == 1:
                position[c] = perm_index
                perm_index += 1
    else:
        rhs, i = equation[arrow + 2:], 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 2
                ell_index, ell_in_output = perm_index, True
                perm_index += ell_num_dim
            elif c != " ":
                if not _is_label(c):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in "
                                       "the equation string, subscripts must be in [a-zA-Z]")
                if c not in counts or c in position:
                    raise RuntimeError(f"einsum(): output subscript {c}" + (
                        " appears more than once in the output" if c in position
                        else " does not appear in the equation for any input operand"))
                position[c] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:  # the ellipsis dims are contracted, before the contracted labels
        ell_index = perm_index
        perm_index += ell_num_dim
    for c in sorted(counts, key=_label_order):
        if c not in position:
            position[c] = perm_index
            perm_index += 1
    return op_labels, position, ell_index, ell_num_dim, out_num_dim, perm_index


def _sumproduct_pair(left, right, sum_dims, keepdim=True):
    """``(left * right).sum(sum_dims)`` as a batched matrix product, as PyTorch computes it."""
    if not sum_dims:  # nothing to contract: a broadcast product
        from .pointwise import mul

        return mul(left, right)
    ndim = left.ndim
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:
                left = reduction.sum(left, i, keepdim=True)
            elif sr:
                right = reduction.sum(right, i, keepdim=True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * ndim
    for position, d in enumerate(lperm):
        operm[d] = position
    left = shape.reshape(shape.permute(left, lperm), lro_size, lo_size, sum_size)
    right = shape.reshape(shape.permute(right, rperm), lro_size, sum_size, ro_size)
    result = linalg.bmm(left, right)
    result = shape.permute(shape.view(result, out_size), operm)
    if not keepdim:
        result = shape.view(result, [n for d, n in enumerate(result.shape) if d not in sum_dims])
    return result


def _subscripts_to_equation(args):
    """The sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` as an equation, as
    ``torch.functional.einsum`` converts it (0-25: A-Z, 26-51: a-z, ``...`` for Ellipsis)."""
    def letters(sublist):
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append(ELLIPSIS)
            elif isinstance(s, int) and 0 <= s < 52:
                out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        return "".join(out)

    operands = list(args[0::2])
    equation = ",".join(letters(s) for s in args[1::2])
    if len(args) % 2 == 1:
        equation += "->" + letters(args[-1])
        operands = operands[:-1]
    return equation, operands


@export(method=False)
def einsum(*args):
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    else:
        equation, operands = _subscripts_to_equation(args)
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    op_labels, position, ell_index, ell_num_dim, out_num_dim, perm_index = _layout(equation, operands)

    label_size, ell_sizes = {}, [1] * ell_num_dim
    dim_counts = [0] * perm_index  # how many operands have a size other than 1 there
    ops = []
    for k, (labels, op) in enumerate(zip(op_labels, operands)):
        perm = [-1] * perm_index
        dim = 0
        for s in labels:
            if s == ELLIPSIS:  # the dims it covers, aligned to the right of the ellipsis dims
                covered = op.ndim - (len(labels) - 1)
                for j in range(ell_num_dim - covered, ell_num_dim):
                    if op.shape[dim] != 1:
                        if ell_sizes[j] not in (1, op.shape[dim]):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {k}has size "
                                f"{op.shape[dim]} which does not broadcast with previously seen ellipsis "
                                f"with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = op.shape[dim]
                        dim_counts[ell_index + j] += 1
                    perm[ell_index + j] = dim
                    dim += 1
            elif perm[position[s]] == -1:
                if op.shape[dim] != 1:
                    seen = label_size.get(s, 1)
                    if seen not in (1, op.shape[dim]):
                        raise RuntimeError(
                            f"einsum(): subscript {s} has size {op.shape[dim]} for operand {k} which does "
                            f"not broadcast with previously seen size {seen}")
                    label_size[s] = op.shape[dim]
                    dim_counts[position[s]] += 1
                perm[position[s]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, moved back where the label first was
                prev = perm[position[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {s} is repeated for operand {k} but the sizes don't match, "
                        f"{op.shape[dim]} != {op.shape[prev]}")
                op = movedim(diagonal(op, 0, prev, dim), -1, prev)
        for p, val in enumerate(perm):
            if val == -1:  # a dim this operand lacks: a new one of size 1
                op = shape.unsqueeze(op, dim)
                perm[p] = dim
                dim += 1
        ops.append(shape.permute(op, perm))

    while len(ops) > 1:  # left to right; each pair's product goes to the front
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:  # no later operand has it: contract it in this product
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:  # only one operand has it: sum it there first
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = reduction.sum(a, a_sum, keepdim=True)
        if b_sum:
            b = reduction.sum(b, b_sum, keepdim=True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims, keepdim=True))

    result = ops[0]
    if perm_index > out_num_dim:
        if len(operands) > 1:  # every contracted dim is size 1 by now
            return shape.view(result, list(result.shape[:out_num_dim]))
        return reduction.sum(result, list(range(out_num_dim, perm_index)))
    return result
