"""``gradwalk.autograd.functional``: Jacobians, Hessians and their products, as in PyTorch.

    >>> import gradwalk as torch
    >>> from gradwalk.autograd.functional import jacobian
    >>> jacobian(lambda v: v ** 2, torch.tensor([0.5, 1.0]))
    tensor([[1., 0.],
            [0., 2.]])

Everything here is built from ``autograd.grad``: a vector-Jacobian product is one backward pass
with ``v`` as the seed; a Jacobian is one such pass per output element (``vectorize`` is accepted
and runs the same loop); second derivatives differentiate the first with ``create_graph=True``.
``jvp`` and ``hvp`` use the "double backward trick" as PyTorch does: the vjp is linear in its
seed ``u``, so differentiating it with respect to ``u`` gives the forward product.
"""
from ..grad_mode import enable_grad, is_grad_enabled, set_grad_enabled


def _as_tuple(value, arg_name, fn_name):
    from ..tensor import Tensor

    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, el in enumerate(values):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                    f"Tensors but the value at index {i} has type {type(el)}.")
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the given {arg_name} has type {type(el)}.")
    return is_tuple, values


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: a single Tensor in gives a Tensor out (per level of nesting)."""
    if isinstance(to_unpack, tuple):
        is_outer_tuple, is_inner_tuple = to_unpack
        if not is_inner_tuple:
            res = tuple(r[0] for r in res)
        if not is_outer_tuple:
            res = res[0]
        return res
    return res if to_unpack else res[0]


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh tensors to differentiate with respect to. With ``create_graph`` an input that already
    requires grad is aliased (so the result stays differentiable by an outer pass)."""
    result = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            result.append(inp.view_as(inp))
        else:
            result.append(inp.detach().requires_grad_(need_graph))
    return tuple(result)


def _grad_postprocess(values, create_graph):
    from ..tensor import Tensor

    if isinstance(values[0], Tensor) if values else True:
        return tuple(v if create_graph or v is None else v.detach() for v in values)
    return tuple(_grad_postprocess(v, create_graph) for v in values)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_NOT_DIFFERENTIABLE = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of "
               "the input. This is not allowed in strict mode. You should ensure that your function is "
               "thrice differentiable and that the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with "
                "respect to input {i} is independent of the input. This is not allowed in strict mode. "
                "You should ensure that your function is twice differentiable and that the jacobian "
                "depends on the inputs (this would be violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be "
               "computed in a differentiable manner from the input when running in strict mode.",
}


def _check_requires_grad(values, kind, strict):
    """In strict mode, every value must depend on the inputs."""
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode.")
        if not value.requires_grad:
            raise RuntimeError(_NOT_DIFFERENTIABLE[kind].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad; None for inputs they don't reach."""
    from . import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed "
            "in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not "
                   "allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using "
                         "the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    from ..ops.functions import zeros_like

    result = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            if "double" not in stage:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                   f"{i}. This is not allowed in strict mode when create_graph=True.")
            raise RuntimeError(f"The hessian of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode when create_graph=True.")
        result.append(g)
    return tuple(result)


def _prepare_v(v, refs, is_refs_tuple, create_graph, fn_name):
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, refs, is_refs_tuple)
    return v


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: one backward pass seeded with ``v``."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp")
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a "
                               "single Tensor with a single element.")
        with set_grad_enabled(True if create_graph else is_grad_enabled()):
            grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
            result = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` by the double backward trick."""
    from ..ops.functions import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp")
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function "
                               "is a single Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # u -> J^T u is linear in u, so its derivative with respect to u, applied to v, is J v
        seeds = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, seeds, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        with set_grad_enabled(True if create_graph else is_grad_enabled()):
            grads = _autograd_grad(grad_inputs, seeds, v, create_graph=create_graph)
            result = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_outputs_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian: for each output and input, a tensor of shape ``out.shape + in.shape``.
    Reverse mode takes one backward pass per output element, forward mode one tangent per input
    element."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has '
            'more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to '
            'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and `strategy=\"forward-mode\"` "
                "are not supported together (yet). Please either set `create_graph=False` or "
                "`strategy=\"reverse-mode\"`.")
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only implemented "
                "for `vectorize=True`.")
        return _jacobian_forward(func, inputs, strict)
    if vectorize and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
            "together. Please either set `strict=False` or `vectorize=False`.")
    from ..ops.functions import stack, zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        result = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]  # rows[k][j] = d out.flat[j] / d inputs[k]
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                grads = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (g, inp) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                               f"of input {k}. This is not allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                           f"of input {i}. This is not allowed in strict mode when "
                                           "create_graph=True.")
                    rows[k].append(g)
            result.append(tuple(
                _stacked(rows[k], out.shape + inp.shape, inp, stack) for k, inp in enumerate(inputs)))
        result = tuple(_grad_postprocess(r, create_graph) for r in result)
        return _tuple_postprocess(tuple(result), (is_outputs_tuple, is_inputs_tuple))


def _stacked(rows, shape, inp, stack):
    if not rows:  # an output with no elements
        from ..ops.functions import zeros

        return zeros(shape, dtype=inp.dtype)
    return stack(rows, 0).reshape(shape)


def _jacobian_forward(func, inputs, strict):
    """Forward mode: push one unit tangent per input element through ``func``."""
    from . import forward_ad
    from ..ops.functions import stack, zeros, zeros_like

    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not "
            "supported together (yet). Please either set `strict=False` or `strategy=\"reverse-mode\"`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = tuple(inp.detach() for inp in inputs)
    columns = None  # columns[i][k]: list over input k's elements of d out_i / d input_k[e]
    is_outputs_tuple = False
    outputs = None
    for k, inp in enumerate(inputs):
        for e in range(inp.nelement()):
            level = forward_ad._enter_level()
            try:
                duals = []
                for m, other in enumerate(inputs):
                    tangent = zeros_like(other)
                    if m == k:
                        tangent.view(-1)[e] = 1.0
                    duals.append(forward_ad.make_dual(other, tangent, level=level))
                out = func(*duals)
                is_outputs_tuple, outs = _as_tuple(out, "outputs of the user-provided function",
                                                   "jacobian")
                tangents = [forward_ad.unpack_dual(o, level=level).tangent for o in outs]
                outputs = outs
            finally:
                forward_ad._exit_level(level)
            if columns is None:
                columns = [[[] for _ in inputs] for _ in outs]
            for i, (o, t) in enumerate(zip(outs, tangents)):
                columns[i][k].append(t if t is not None else zeros(o.shape, dtype=o.dtype))
    result = []
    for i, out in enumerate(outputs):
        per_input = []
        for k, inp in enumerate(inputs):
            cols = columns[i][k]
            if not cols:
                per_input.append(zeros(out.shape + inp.shape, dtype=out.dtype))
                continue
            stacked = stack(cols, -1)  # out.shape + (inp.numel,)
            per_input.append(stacked.reshape(out.shape + inp.shape).detach())
        result.append(tuple(per_input))
    return _tuple_postprocess(tuple(result), (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    from ..tensor import Tensor

    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_gradient(func, inputs, v, create_graph, strict, fn_name):
    """Shared start of vhp/hvp: outputs, the gradient (with its graph) and the checked ``v``."""
    from ..tensor import Tensor

    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, fn_name)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is "
                           "a single Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a "
                           "single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, is_outputs_tuple, outputs, v, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)``: backward through the gradient, seeded with ``v``."""
    with enable_grad():
        is_inputs_tuple, inputs, is_outputs_tuple, outputs, v, jac = _scalar_function_gradient(
            func, inputs, v, create_graph, strict, "vhp")
        with set_grad_enabled(True if create_graph else is_grad_enabled()):
            grads = _autograd_grad(jac, inputs, v, create_graph=create_graph)
            result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` by the double backward trick (equal to vhp: H is symmetric)."""
    from ..ops.functions import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs, is_outputs_tuple, outputs, v, jac = _scalar_function_gradient(
            func, inputs, v, create_graph, strict, "hvp")
        seeds = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, seeds, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
        with set_grad_enabled(True if create_graph else is_grad_enabled()):
            grads = _autograd_grad(double_back, seeds, v, create_graph=create_graph)
            result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]
