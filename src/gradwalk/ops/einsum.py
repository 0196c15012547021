"""``einsum``, built from existing ops in the order PyTorch's ``at::einsum`` uses
(aten/src/ATen/native/Linear.cpp), so the graph has PyTorch's nodes and backward comes free:

1. each operand: a repeated label becomes a ``diagonal``; a missing label an ``unsqueeze``; then
   one ``permute`` to the common order (output labels first, then the contracted ones);
2. one operand: a ``sum`` over the contracted labels;
   several: folded left to right by ``sumproduct_pair`` (``permute``, ``reshape`` to 3-D,
   ``bmm``, ``view``, ``permute``), each contracted label summed out once no later operand has it;
3. a ``view`` to the output's shape.

    >>> a, b = gradwalk.ones(2, 3), gradwalk.ones(3, 4)
    >>> gradwalk.einsum("ij,jk->ik", a, b).shape
    torch.Size([2, 4])
"""
from ._util import export
from . import linalg, reduction, shape
from .extra import diagonal, movedim


def _parse(equation, operands):
    equation = equation.replace(" ", "")
    if "..." in equation:
        raise NotImplementedError("gradwalk: einsum with '...' (ellipsis) is not supported yet")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    for term, op in zip(terms, operands):
        if not all(c.isalpha() for c in term):
            raise RuntimeError(f"einsum(): invalid subscript given at index {equation.index(term)} in the "
                               "equation string, subscripts must be in [a-zA-Z]")
        if len(term) != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) does not "
                               f"match the number of dimensions ({op.ndim}) for operand "
                               f"{terms.index(term)} and no ellipsis was given")
    if not arrow:  # implicit output: the labels seen once, in alphabetical order
        counts = {}
        for c in "".join(terms):
            counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, n in counts.items() if n == 1))
    return terms, rhs


def _sumproduct_pair(left, right, sum_dims, keepdim=True):
    """``(left * right).sum(sum_dims)`` as a batched matrix product, as PyTorch computes it."""
    if not sum_dims:  # nothing to contract: a broadcast product
        from .pointwise import mul

        return mul(left, right)
    ndim = left.ndim
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] > 1, right.shape[i] > 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("einsum(): operands do not broadcast with remapped shapes "
                                       f"(original->remapped): {list(left.shape)} and {list(right.shape)}")
                sum_size *= left.shape[i]
            elif sl:
                left = reduction.sum(left, i, keepdim=True)
            elif sr:
                right = reduction.sum(right, i, keepdim=True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("einsum(): operands do not broadcast with remapped shapes "
                                   f"(original->remapped): {list(left.shape)} and {list(right.shape)}")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    sums = [d for d in range(ndim) if d in sum_dims]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sums)
                + [right.shape[d] for d in ro])
    lperm = lro + lo + sums + ro
    rperm = lro + sums + ro + lo
    operm = [0] * ndim
    for position, d in enumerate(lperm):
        operm[d] = position
    left = shape.reshape(shape.permute(left, lperm), lro_size, lo_size, sum_size)
    right = shape.reshape(shape.permute(right, rperm), lro_size, sum_size, ro_size)
    result = linalg.bmm(left, right)
    result = shape.permute(shape.view(result, out_size), operm)
    if not keepdim:
        for d in reversed(sums):
            result = shape.squeeze(result, d)
    return result


@export(method=False)
def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, out_labels = _parse(equation, operands)
    contracted = []
    for term in terms:
        for c in term:
            if c not in out_labels and c not in contracted:
                contracted.append(c)
    order = list(out_labels) + contracted  # the common layout of every operand
    position = {c: i for i, c in enumerate(order)}
    permuted = []
    for term, op in zip(terms, operands):
        labels = list(term)
        i = 0
        while i < len(labels):  # a repeated label: its diagonal, moved back where it was
            j = labels.index(labels[i])
            if j < i:
                op = movedim(diagonal(op, 0, j, i), -1, j)
                del labels[i]
                continue
            i += 1
        perm = [-1] * len(order)
        for dim, c in enumerate(labels):
            perm[position[c]] = dim
        ndim = len(labels)
        for k, p in enumerate(perm):
            if p == -1:  # a label this operand lacks: a new dim of size 1
                op = shape.unsqueeze(op, -1)
                perm[k] = ndim
                ndim += 1
        permuted.append(shape.permute(op, perm))
    n_out = len(out_labels)
    if len(permuted) == 1:
        result = permuted[0]
        if contracted:
            result = reduction.sum(result, list(range(n_out, len(order))))
        return result
    # the last operand in which each contracted dim still has size > 1
    last = {d: max([k for k, op in enumerate(permuted) if op.shape[d] != 1], default=0)
            for d in range(n_out, len(order))}
    result = permuted[0]
    for k in range(1, len(permuted)):
        sum_dims = {d for d, last_k in last.items() if last_k <= k}
        if k < len(permuted) - 1:
            sum_dims = {d for d in sum_dims if last[d] == k}
        result = _sumproduct_pair(result, permuted[k], sum_dims, keepdim=True)
    if result.ndim != n_out:  # the contracted dims, kept as 1s, go
        result = shape.view(result, [result.shape[d] for d in range(n_out)])
    return result
