"""``gradwalk.func``: PyTorch's function transforms (``torch.func``) on gradwalk's autograd.

    >>> import gradwalk as torch
    >>> from gradwalk.func import grad, hessian
    >>> f = lambda x: torch.tanh(x ** 3 + 2 * x + 1)
    >>> x = torch.tensor(0.5, dtype=torch.float64)
    >>> grad(f)(x)
    tensor(0.1525, dtype=torch.float64)
    >>> grad(grad(f))(x)          # transforms compose: derivatives of any order
    tensor(-0.6489, dtype=torch.float64)

Reverse transforms (``grad``, ``vjp``, ``jacrev``) run ``autograd.grad`` with
``create_graph=True`` on fresh leaves that stand for the inputs; forward transforms (``jvp``,
``jacfwd``) open a forward AD level of their own and push dual tensors through. A transform
inside another keeps the graph and the tangents of the outer one, so ``jacfwd(jacrev(f))`` (the
Hessian) and ``grad(grad(f))`` just work. At the outermost transform the results are detached,
as PyTorch's are, unless an input already required grad.

``vmap`` runs the function once on the whole batch: a mapped tensor is a ``BatchedTensor`` that
shows the function one sample while every op runs on all of them, by its batching rule
(``_batching.py``). ``jacrev`` is ``vmap`` of a vjp over the rows of the identity and ``jacfwd``
``vmap`` of a jvp over its columns, as in PyTorch, so a Jacobian costs a few batched passes,
not one pass per row. As in functorch, what is the same for every row is computed once: jacfwd's
primal is unbatched (only its tangents carry the batch of columns), and jacrev's rows are one
backward pass of the one recorded graph on a batch of cotangents. Because the batch is otherwise
carried in the forward (the graph is recorded on the batched arrays), a reverse transform inside
``vmap`` differentiates batched (expanded) copies of its inputs, so its gradients are per sample.
"""
import functools
import threading

from ..autograd import forward_ad
from ..grad_mode import enable_grad
from ..ops.core import observers as _observers
from . import _batching


class _Depth(threading.local):
    value = 0  # how many transforms are running around the current call


_depth = _Depth()


class _transform:
    """Counts nesting, so that only the outermost transform detaches its results."""

    def __enter__(self):
        self.outermost = _depth.value == 0
        _depth.value += 1
        return self

    def __exit__(self, *exc):
        _depth.value -= 1
        return False


def _is_tensor(x):
    from ..tensor import Tensor

    return isinstance(x, Tensor)


# ---------------------------------------------------------------- small pytrees (tuples, lists, dicts)

def _flatten(tree):
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for item in tree:
            sub, spec = _flatten(item)
            leaves += sub
            specs.append(spec)
        return leaves, (type(tree), tuple(specs))
    if isinstance(tree, dict):
        leaves, specs = [], []
        for key in tree:
            sub, spec = _flatten(tree[key])
            leaves += sub
            specs.append((key, spec))
        return leaves, (dict, tuple(specs))
    return [tree], None


def _unflatten(leaves, spec):
    leaves = iter(leaves)

    def build(spec):
        if spec is None:
            return next(leaves)
        kind, children = spec
        if kind is dict:
            return {key: build(child) for key, child in children}
        return kind(build(child) for child in children)

    return build(spec)


def _map(fn, tree):
    leaves, spec = _flatten(tree)
    return _unflatten([fn(x) for x in leaves], spec)


# ---------------------------------------------------------------- argnums

def _check_argnums(argnums, num_args):
    def check(argnum):
        if not isinstance(argnum, int):
            raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
        if -num_args <= argnum < num_args:
            return argnum % num_args
        raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")

    if isinstance(argnums, int):
        return check(argnums)
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return tuple(check(a) for a in argnums)
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _pick(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[a] for a in argnums)


def _replace(args, argnums, new):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new
    else:
        for a, value in zip(argnums, new):
            args[a] = value
    return tuple(args)


# ---------------------------------------------------------------- reverse mode

def _fresh_leaf(t):
    """A tensor to differentiate with respect to: an alias of ``t`` that still carries ``t``'s
    graph (for an outer reverse transform) and its tangents (for an outer forward one).

    Under ``vmap`` it is batched at every running vmap (expanded where ``t`` is the same for all
    samples), so that its gradient is one per sample."""
    if _batching.running.stack:
        t = _batch_at_running(t)
        if type(t) is _batching.BatchedTensor:
            return _batching.wrap(_unbatched_fresh_leaf(t._phys), t._lv)
    return _unbatched_fresh_leaf(t)


def _unbatched_fresh_leaf(t):
    if t.requires_grad:
        return t.view_as(t)
    leaf = t.detach()
    for level, tangent in (t._fw_grads or {}).items():
        forward_ad.set_tangent(leaf, level, tangent)
    return leaf.requires_grad_()


def _batch_at_running(t):
    """``t`` batched at every running vmap level (a copy per sample where it was not), except
    a level that batches only ``t``'s tangents (jacfwd's columns: the primal, and so its
    gradient, is the same for every column)."""
    have = _batching.levels_of(t)
    tangent_only = _batching.tangent_levels(t)
    for level, size, _ in _batching.running.stack:
        if level not in have and level not in tangent_only:
            # an expanded view, no copy: a batched product with it is one folded matmul (Bmm)
            t = _batching.add_level(t.unsqueeze(0).expand(size, *t.shape), 0, level)
    return t


def _levels(tensors):
    found = set()
    for x in tensors:
        if _is_tensor(x):
            found.update(_batching.levels_of(x))
    return tuple(sorted(found))


def _any_requires_grad(tree):
    return any(_is_tensor(x) and x.requires_grad for x in _flatten(tree)[0])


def _finish(tree, keep_graph):
    """Detach the results of the outermost transform (unless the inputs were on a graph)."""
    if keep_graph:
        return tree
    return _map(lambda x: x.detach() if _is_tensor(x) else x, tree)


def _grads(outputs, inputs, grad_outputs, retain_graph=True):
    """``autograd.grad`` that gives zeros (not None or an error) for unused inputs."""
    from ..autograd import grad as autograd_grad
    from ..ops.functions import zeros_like

    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    levels = _levels(list(outputs) + list(inputs) + list(grad_outputs))
    if levels:  # the graph is on the physical tensors: differentiate those
        outs, seeds = [], []
        for o, g in pairs:
            o = _batching.expanded(o, levels)
            outs.append(o)
            seeds.append(_ones_like(o) if g is None else _batching.expanded(g, levels))
        phys_inputs = [_batching.physical(x) for x in inputs]
        grads = autograd_grad(outs, phys_inputs, seeds, retain_graph=retain_graph, create_graph=True,
                              allow_unused=True)
        return [zeros_like(x) if g is None else _batching.wrap(g, _batching.levels_of(x))
                for g, x in zip(grads, inputs)]
    grads = autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                          create_graph=True, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def _batched_cotangent_grads(outputs, inputs, cotangents):
    """The gradients for cotangents batched at levels the graph is not (``extra``): the
    backward runs once, on gradients that are BatchedTensors at ``extra`` over the graph's
    physical arrays. None where the outputs and inputs are not all batched alike, or where a
    formula computed on a gradient's NumPy array (so the batch would be lost)."""
    from ..autograd import grad as autograd_grad
    from ..ops.functions import zeros_like

    graph_levels = {_batching.levels_of(t) for t in list(outputs) + list(inputs)}
    if len(graph_levels) != 1:
        return None
    levels = graph_levels.pop()
    outs, seeds = [], []
    for o, g in zip(outputs, cotangents):
        if o.requires_grad:
            outs.append(_batching.physical(o) if levels else o)
            seeds.append(_batching.partly_physical(g, levels))
    if not outs:
        return [zeros_like(x) for x in inputs]
    phys_inputs = [_batching.physical(x) for x in inputs] if levels else list(inputs)
    grads = autograd_grad(outs, phys_inputs, seeds, retain_graph=True, create_graph=True, allow_unused=True)
    result = []
    for g, x in zip(grads, inputs):
        if g is None:
            result.append(zeros_like(x))
            continue
        if type(g) is not _batching.BatchedTensor and type(g._data) is _batching.LogicalArray:
            return None  # NumPy ran on a batched gradient's first sample
        result.append(_batching.rewrap(g, levels))
    return result


def _ones_like(t):
    from ..ops.functions import ones_like

    return ones_like(t)


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of a function returning a scalar tensor."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _transform() as t, enable_grad():
            nums = _check_argnums(argnums, len(args))
            keep = not t.outermost or _any_requires_grad(args)
            diff_args = _map(_fresh_leaf, _pick(args, nums))
            output = func(*_replace(args, nums, diff_args), **kwargs)
            aux = None
            if has_aux:
                output, aux = _split_aux(output, "grad_and_value(f)(*args)")
            if not _is_tensor(output):
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                    f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            leaves, spec = _flatten(diff_args)
            grads = _unflatten(_grads([output], leaves, [None]), spec)
            value = (output, aux) if has_aux else output
            return _finish(grads, keep), _finish(value, keep)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a function returning a scalar tensor (``(gradient, aux)`` with has_aux)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = grad_and_value(func, argnums, has_aux)(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives one gradient per primal."""
    with _transform() as t, enable_grad():
        keep = not t.outermost or _any_requires_grad(primals)
        diff_primals = _map(_fresh_leaf, primals)
        output = func(*diff_primals)
        aux = None
        if has_aux:
            output, aux = _split_aux(output, "vjp(f, *primals)")
    out_leaves, out_spec = _flatten(output)
    for o in out_leaves:
        if not _is_tensor(o):
            raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
    in_leaves, in_spec = _flatten(diff_primals)

    def vjp_fn(cotangents):
        from ..ops.functions import tensor as make_tensor

        leaves, spec = _flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure "
                               "of outputs to the function. cotangents: "
                               f"{spec}, primal output: {out_spec}")
        leaves = [c if _is_tensor(c) else make_tensor(c, dtype=o.dtype) for c, o in zip(leaves, out_leaves)]
        for i, (c, o) in enumerate(zip(leaves, out_leaves)):
            if c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and "
                                   f"output[{i}] has a shape of {o.shape}.")
        with _transform() as inner, enable_grad():
            keep_grads = keep or not inner.outermost or _any_requires_grad(cotangents)
            grads = None
            if set(_levels(leaves)) - set(_levels(in_leaves)):
                # a batch of cotangents (vmap(vjp_fn), jacrev's rows) for a graph recorded for
                # one: the backward formulas run on the batch, as functorch's
                grads = _batched_cotangent_grads(out_leaves, in_leaves, leaves)
                if grads is None:  # the graph's levels differ: record it again for the batch
                    return vjp(func, *primals, has_aux=has_aux)[1](cotangents)
            if grads is None:
                grads = _grads(out_leaves, in_leaves, leaves)
        return _finish(_unflatten(grads, in_spec), keep_grads)

    result = (_finish(output, keep), vjp_fn)
    return result + (_finish(aux, keep),) if has_aux else result


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian by reverse mode: ``vmap`` of the vjp over the rows of the identity (one
    batched backward pass). Shape ``out.shape + in.shape``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from ..ops.functions import eye, zeros

        with _transform() as t, enable_grad():
            nums = _check_argnums(argnums, len(args))
            keep = not t.outermost or _any_requires_grad(args)
            diff_args = _pick(args, nums)

            def f_of_diff(*diff):
                return func(*_replace(args, nums, diff[0] if isinstance(nums, int) else diff), **kwargs)

            primals = (diff_args,) if isinstance(nums, int) else diff_args
            res = vjp(f_of_diff, *primals, has_aux=has_aux)
            output, vjp_fn = res[0], res[1]
            aux = res[2] if has_aux else None
            out_leaves, out_spec = _flatten(output)
            in_leaves, in_spec = _flatten(diff_args)
            total = sum(o.numel() for o in out_leaves)
            per_output = []
            if total:
                # the rows of the identity, cut into one cotangent per output (a batch of ``total``)
                identity = eye(total, dtype=out_leaves[0].dtype)
                basis, start = [], 0
                for o in out_leaves:
                    basis.append(identity[:, start:start + o.numel()].reshape((total,) + tuple(o.shape)))
                    start += o.numel()
                rows = vmap(vjp_fn)(_unflatten(basis, out_spec))  # one gradient per primal
                rows = _flatten(rows[0] if isinstance(nums, int) else rows)[0]
                start = 0
                for o in out_leaves:
                    jac = [r[start:start + o.numel()].reshape(tuple(o.shape) + tuple(inp.shape))
                           for r, inp in zip(rows, in_leaves)]
                    per_output.append(_unflatten(jac, in_spec))
                    start += o.numel()
            else:
                for o in out_leaves:
                    per_output.append(_unflatten([zeros(tuple(o.shape) + tuple(inp.shape), dtype=inp.dtype)
                                                  for inp in in_leaves], in_spec))
            result = _finish(_unflatten(per_output, out_spec), keep)
            return (result, _finish(aux, keep)) if has_aux else result

    return wrapper


def _split_aux(output, call):
    """``(output, aux)`` from what a has_aux function returned; ``call`` is how PyTorch's message
    names the transform (``"vjp(f, *primals)"``)."""
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{call}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


# ---------------------------------------------------------------- forward mode

def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` in one forward pass with dual tensors."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be "
                           "valid to call f(*primals).")
    if strict:
        raise RuntimeError("jvp(f, primals, tangents, strict=True): strict=True is not implemented yet.")
    flat_primals, primals_spec = _flatten(primals)
    flat_tangents, tangents_spec = _flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python structure. "
            "For example, if primals is a tuple of 3 tensors, tangents also must be. Got primals with "
            f"structure {primals_spec} and tangents with structure {tangents_spec}")
    for name, leaves in (("primals", flat_primals), ("tangents", flat_tangents)):
        for x in leaves:
            if not _is_tensor(x):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected {name} to only contain Tensors, "
                                   f"got {type(x)}")
    return _jvp(func, primals, tangents, has_aux)


def _jvp(func, primals, tangents, has_aux):
    from ..ops.functions import zeros_like

    with _transform() as t:
        keep = not t.outermost or _any_requires_grad(primals) or _any_requires_grad(tangents)
        level = forward_ad._enter_level()
        try:
            flat_primals, spec = _flatten(primals)
            flat_tangents, _ = _flatten(tangents)
            if _levels(flat_primals):  # batched primals: duals of the physical tensors, all batched
                batch = _levels(list(flat_primals) + list(flat_tangents))
                duals = [_batching.wrap(forward_ad.make_dual(_batching.expanded(p, batch).contiguous(),
                                                             _batching.expanded(tg, batch), level=level), batch)
                         for p, tg in zip(flat_primals, flat_tangents)]
            else:
                # the primals are one for all samples (jacfwd's columns batch only the tangents):
                # the primal is computed once, and each op's jvp formula runs on the batched
                # tangents, as in functorch
                duals = [forward_ad.make_dual(p, tg, level=level) for p, tg in zip(flat_primals, flat_tangents)]
            output = func(*_unflatten(duals, spec))
            aux = None
            if has_aux:
                output, aux = _split_aux(output, "jvp(f, primals, tangents)")
            out_leaves, out_spec = _flatten(output)
            primal_outs, tangent_outs = [], []
            for o in out_leaves:
                if not _is_tensor(o):
                    raise RuntimeError("jvp(f, primals, tangents): expected f(*args) to return only tensors, "
                                       f"got unsupported type {type(o)}")
                lv = _batching.levels_of(o)
                if lv:
                    p, tg = forward_ad.unpack_dual(_batching.physical(o), level=level)
                    p, tg = _batching.wrap(p, lv), (None if tg is None else _batching.rewrap(tg, lv))
                else:
                    p, tg = forward_ad.unpack_dual(o, level=level)
                primal_outs.append(p)
                tangent_outs.append(tg if tg is not None else zeros_like(p))
        finally:
            forward_ad._exit_level(level)
        result = (_finish(_unflatten(primal_outs, out_spec), keep),
                  _finish(_unflatten(tangent_outs, out_spec), keep))
        return result + (_finish(aux, keep),) if has_aux else result


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode: ``vmap`` of the jvp over the columns of the identity (one
    batched forward pass with dual tensors). Shape ``out.shape + in.shape``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from ..ops.functions import eye, zeros

        with _transform() as t:
            nums = _check_argnums(argnums, len(args))
            keep = not t.outermost or _any_requires_grad(args)
            diff_args = _pick(args, nums)
            in_leaves, in_spec = _flatten(diff_args)

            def f_of_diff(*diff):
                return func(*_replace(args, nums, _unflatten(diff, in_spec)), **kwargs)

            total = sum(x.numel() for x in in_leaves)
            if not total:  # no input elements at all: evaluate once for the shapes
                output = f_of_diff(*in_leaves)
                aux = None
                if has_aux:
                    output, aux = output
                out_leaves, out_spec = _flatten(output)
                result = _unflatten([_unflatten([zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype)
                                                 for x in in_leaves], in_spec) for o in out_leaves], out_spec)
                result = _finish(result, keep)
                return (result, _finish(aux, keep)) if has_aux else result
            identity = eye(total, dtype=in_leaves[0].dtype)
            basis, start = [], 0
            for x in in_leaves:  # column block of each input: a batch of ``total`` unit tangents
                basis.append(identity[:, start:start + x.numel()].reshape((total,) + tuple(x.shape)))
                start += x.numel()

            def push(*tangents):
                res = _jvp(f_of_diff, tuple(in_leaves), tuple(tangents), has_aux)
                return res[1], (res[0], res[2]) if has_aux else res[0]

            tangent_out, value = vmap(push, randomness=randomness)(*basis)
            value = _map(lambda v: v[0] if _is_tensor(v) else v, value)  # the same for every column
            output, aux = value if has_aux else (value, None)
            out_leaves, out_spec = _flatten(output)
            tangent_leaves = _flatten(tangent_out)[0]
            per_output = []
            for o, tg in zip(out_leaves, tangent_leaves):
                columns = tg.movedim(0, -1)  # out.shape + (total,)
                jac, start = [], 0
                for x in in_leaves:
                    jac.append(columns[..., start:start + x.numel()].reshape(tuple(o.shape) + tuple(x.shape)))
                    start += x.numel()
                per_output.append(_unflatten(jac, in_spec))
            result = _finish(_unflatten(per_output, out_spec), keep)
            return (result, _finish(aux, keep)) if has_aux else result

    return wrapper


def hessian(func, argnums=0):
    """``jacfwd(jacrev(func))``: forward-over-reverse, as PyTorch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------- vmap

def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Map ``func`` over a batch dimension: one call on the whole batch, each op by its batching
    rule (``_batching.py``). ``in_dims``/``out_dims``: an int (or None) per argument / output, or
    one for all; a dict or list argument is mapped leaf by leaf."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    name = getattr(func, "__name__", func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                f"compatible with the structure of `inputs`. in_dims has structure {len(dims)} but inputs "
                f"has structure {len(args)}.")
        for d in dims:
            if d is not None and not isinstance(d, int):
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims must be an int or "
                                 f"None for each input, got {d!r}")
        sizes = set()
        for a, d in zip(args, dims):
            if d is None:
                continue
            for leaf in _flatten(a)[0]:
                if not _is_tensor(leaf):
                    raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                                     f"input but the input is of type {type(leaf)}. We cannot vmap over "
                                     "non-Tensor arguments, please use None as the respective in_dim")
                if not -leaf.dim() <= d < max(leaf.dim(), 1) or leaf.dim() == 0:
                    raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                                     f"input, but that input is a Tensor of dimensionality {leaf.dim()} so "
                                     f"expected in_dim to satisfy -{leaf.dim()} <= in_dim < {leaf.dim()}.")
                sizes.add(leaf.shape[d])
        if not sizes:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): "
                             "Got in_dims=None for all inputs; at least one input must be mapped over.")
        if len(sizes) > 1:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): "
                             "Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sorted(sizes)} for the mapped dimension")
        size = sizes.pop()
        running = _batching.running
        running.counter += 1
        level = running.counter
        running.stack.append((level, size, randomness))
        if len(running.stack) == 1:
            _observers.vmap = _batching.dispatch
            _observers.refresh()
        try:
            batched = [a if d is None else _map(lambda t: _batching.add_level(t, d, level), a)
                       for a, d in zip(args, dims)]
            output = func(*batched, **kwargs)
        finally:
            running.stack.pop()
            if not running.stack:
                _observers.vmap = None
                _observers.refresh()
        leaves, spec = _flatten(output)
        odims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(leaves)
        if len(odims) != len(leaves):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                             f"with the structure of `outputs`. out_dims has structure {len(odims)} but "
                             f"outputs has structure {len(leaves)}.")
        result = []
        for x, od in zip(leaves, odims):
            if not _is_tensor(x):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. "
                                 "Did you mean to set out_dims= to None for output?")
            if od is None:
                if level in _batching.levels_of(x):
                    raise ValueError(f"vmap({name}, ...): out_dims=None for an output that is batched")
                result.append(x)
            else:
                result.append(_batching.remove_level(x, level, od, size))
        return _unflatten(result, spec)

    return wrapper


from .functional_call import functional_call, stack_module_state  # noqa: E402

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state"]
