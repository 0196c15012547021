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

``vmap`` is a loop: it calls the function once per slice and stacks the results.
"""
import functools
import threading

from ..autograd import forward_ad
from ..grad_mode import enable_grad


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
    graph (for an outer reverse transform) and its tangents (for an outer forward one)."""
    if t.requires_grad:
        return t.view_as(t)
    leaf = t.detach()
    for level, tangent in (t._fw_grads or {}).items():
        forward_ad.set_tangent(leaf, level, tangent)
    return leaf.requires_grad_()


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
    grads = autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                          create_graph=True, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


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
            grads = _grads(out_leaves, in_leaves, leaves)
        return _finish(_unflatten(grads, in_spec), keep_grads)

    result = (_finish(output, keep), vjp_fn)
    return result + (_finish(aux, keep),) if has_aux else result


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian by reverse mode: one vjp per output element. Shape ``out.shape + in.shape``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from ..ops.functions import stack, zeros

        with _transform() as t, enable_grad():
            nums = _check_argnums(argnums, len(args))
            keep = not t.outermost or _any_requires_grad(args)
            diff_args = _map(_fresh_leaf, _pick(args, nums))
            output = func(*_replace(args, nums, diff_args), **kwargs)
            aux = None
            if has_aux:
                output, aux = _split_aux(output, "jacrev(f, ...)(*args)")
            out_leaves, out_spec = _flatten(output)
            in_leaves, in_spec = _flatten(diff_args)
            per_output = []
            for out in out_leaves:
                flat = out.reshape(-1)
                rows = [_grads([flat[j]], in_leaves, [None]) for j in range(out.numel())]
                jac = []
                for k, inp in enumerate(in_leaves):
                    if rows:
                        jac.append(stack([r[k] for r in rows]).reshape(out.shape + inp.shape))
                    else:
                        jac.append(zeros(out.shape + inp.shape, dtype=inp.dtype))
                per_output.append(_unflatten(jac, in_spec))
            result = _unflatten(per_output, out_spec)
            result = _finish(result, keep)
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
                p, tg = forward_ad.unpack_dual(o, level=level)
                primal_outs.append(p)
                tangent_outs.append(tg if tg is not None else zeros_like(p))
        finally:
            forward_ad._exit_level(level)
        result = (_finish(_unflatten(primal_outs, out_spec), keep),
                  _finish(_unflatten(tangent_outs, out_spec), keep))
        return result + (_finish(aux, keep),) if has_aux else result


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode: one jvp per input element. Shape ``out.shape + in.shape``."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from ..ops.functions import stack, zeros, zeros_like

        with _transform() as t:
            nums = _check_argnums(argnums, len(args))
            keep = not t.outermost or _any_requires_grad(args)
            diff_args = _pick(args, nums)
            in_leaves, in_spec = _flatten(diff_args)

            def f_of_diff(*diff):
                return func(*_replace(args, nums, _unflatten(diff, in_spec)), **kwargs)

            columns = []  # per input leaf, per element: the tangents of the outputs
            output = aux = None
            for k, inp in enumerate(in_leaves):
                cols = []
                for e in range(inp.numel()):
                    basis = [zeros_like(x) for x in in_leaves]
                    basis[k]._data.reshape(-1)[e] = 1  # a unit tangent along element e of input k
                    res = _jvp(f_of_diff, tuple(in_leaves), tuple(basis), has_aux)
                    output, tangent_out = res[0], res[1]
                    if has_aux:
                        aux = res[2]
                    cols.append(_flatten(tangent_out)[0])
                columns.append(cols)
            if output is None:  # no input elements at all: evaluate once for the shapes
                output = f_of_diff(*in_leaves)
                if has_aux:
                    output, aux = output
            out_leaves, out_spec = _flatten(output)
            per_output = []
            for i, out in enumerate(out_leaves):
                jac = []
                for k, inp in enumerate(in_leaves):
                    cols = [c[i] for c in columns[k]]
                    if cols:
                        jac.append(stack(cols, -1).reshape(out.shape + inp.shape))
                    else:
                        jac.append(zeros(out.shape + inp.shape, dtype=out.dtype))
                per_output.append(_unflatten(jac, in_spec))
            result = _finish(_unflatten(per_output, out_spec), keep)
            return (result, _finish(aux, keep)) if has_aux else result

    return wrapper


def hessian(func, argnums=0):
    """``jacfwd(jacrev(func))``: forward-over-reverse, as PyTorch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------- vmap (a loop)

def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Map ``func`` over a batch dimension: one call per slice, results stacked."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from ..ops.functions import stack

        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"vmap({getattr(func, '__name__', func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                f"compatible with the structure of `inputs`. in_dims has structure {len(dims)} but inputs "
                f"has structure {len(args)}.")
        sizes = {leaf.shape[d] for a, d in zip(args, dims) if d is not None
                 for leaf in _flatten(a)[0] if _is_tensor(leaf)}
        if not sizes:
            raise ValueError(f"vmap({getattr(func, '__name__', func)}, in_dims={in_dims}, ...)(<inputs>): "
                             "Got in_dims=None for all inputs; at least one input must be mapped over.")
        if len(sizes) > 1:
            raise ValueError(f"vmap({getattr(func, '__name__', func)}, in_dims={in_dims}, ...)(<inputs>): "
                             "Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sorted(sizes)} for the mapped dimension")
        results = []
        for i in range(sizes.pop()):
            sliced = [a if d is None else _map(lambda t: t.select(d, i) if _is_tensor(t) else t, a)
                      for a, d in zip(args, dims)]  # a dict of parameters is mapped leaf by leaf
            results.append(func(*sliced, **kwargs))
        leaves_per_call = [_flatten(r)[0] for r in results]
        spec = _flatten(results[0])[1]
        odims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(leaves_per_call[0])
        stacked = [stack([leaves[j] for leaves in leaves_per_call], odims[j])
                   for j in range(len(leaves_per_call[0]))]
        return _unflatten(stacked, spec)

    return wrapper


from .functional_call import functional_call, stack_module_state  # noqa: E402

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state"]
