"""Checking gradients against finite differences: ``gradcheck``, ``gradgradcheck`` (PyTorch's API,
defaults and messages) and ``gradcheck_sweep`` (ours: how the error depends on the step ``h``).

    >>> import gradwalk as torch
    >>> from gradwalk.autograd import gradcheck
    >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    >>> gradcheck(torch.tanh, (x,))
    True

The numerical Jacobian uses central differences, ``(f(x + eps) - f(x - eps)) / (2 eps)``, one
input element at a time. The analytical one asks backward (one pass per output element, seeded
with a one-hot gradient) and, with ``check_forward_ad=True``, forward mode (one tangent per input
element). Both are laid out as PyTorch lays them out: one row per input element, one column per
output element.
"""
import math
import warnings

import numpy as np

from ..grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x):
    from ..tensor import Tensor

    return isinstance(x, Tensor)


def _check_inputs(inputs):
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp.dtype.name != "float64":
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating point or "
                    "complex. This check will likely fail if all the inputs are not of double precision "
                    "floating point or complex. ", UserWarning, stacklevel=4)
            if any(st == 0 and sz > 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                    "that are non-overlapping to be able to compute the numerical gradients correctly. "
                    "You should call .contiguous on the input before passing it to gradcheck.")
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of "
                         "them have requires_grad=True.")


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o.requires_grad)


def _diff_inputs(inputs):
    return [(j, inp) for j, inp in enumerate(inputs)
            if _is_tensor(inp) and inp.requires_grad and inp.is_floating_point()]


# ---------------------------------------------------------------- the two Jacobians

def _numerical_jacobians(func, inputs, eps):
    """``jac[j][i]``: d output i / d input j by central differences, shape (in_numel, out_numel)."""
    jacobians = []
    with no_grad():
        for _, inp in _diff_inputs(inputs):
            flat = inp._array().flat  # writing through it perturbs the input in place (an array,
            # not the NumPy scalar a 0-dim result may be held as: that would take no writes)
            columns = []
            for k in range(inp._data.size):
                original = flat[k].item()
                flat[k] = original + eps
                plus = [o._data.copy() for o in _tensor_outputs(func(*inputs))]
                flat[k] = original - eps
                minus = [o._data.copy() for o in _tensor_outputs(func(*inputs))]
                flat[k] = original
                columns.append([((p - m) / (2 * eps)).reshape(-1) for p, m in zip(plus, minus)])
            per_output = []
            for i, out in enumerate(_tensor_outputs(func(*inputs))):
                rows = [c[i] for c in columns]
                per_output.append(np.stack(rows) if rows else np.zeros((0, out._data.size)))
            jacobians.append(per_output)
    return jacobians


def _tensor_outputs(out):
    return [o for o in _as_tuple(out) if _is_tensor(o)]


def _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes):
    """Rows from backward, one pass per output element; run twice to catch non-reentrant backward."""
    from . import grad

    diff = [inp for _, inp in _diff_inputs(inputs)]
    first = _vjp_rows(grad, output, diff)
    second = _vjp_rows(grad, output, diff)
    for a, b in zip(first, second):
        if a.shape == b.shape and a.size and np.max(np.abs(a - b)) > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and grad_output "
                "multiple times gives different values, although analytical gradient matches numerical "
                f"gradient.The tolerance for nondeterminism was {nondet_tol}.")
    for inp, rows in zip(diff, first):
        if rows.shape != (inp.numel(), output.numel()):
            raise GradcheckError("Analytical gradient has incorrect size")
    return first


def _vjp_rows(grad, output, diff):
    from ..ops.functions import zeros_like

    columns = [[] for _ in diff]
    flat_size = output.numel()
    for k in range(flat_size):
        seed = zeros_like(output)
        seed._data.reshape(-1)[k] = 1
        grads = grad(output, diff, seed, retain_graph=True, allow_unused=True)
        for j, (g, inp) in enumerate(zip(grads, diff)):
            columns[j].append(np.zeros(inp.numel()) if g is None else g._data.reshape(-1).astype(np.float64))
    return [np.stack(c, axis=1) if c else np.zeros((inp.numel(), 0)) for c, inp in zip(columns, diff)]


def _forward_ad_jacobians(func, inputs):
    """``jac[j][i]`` from forward mode: one unit tangent per element of input j."""
    from . import forward_ad
    from ..ops.functions import zeros_like

    jacobians = []
    for j, inp in _diff_inputs(inputs):
        rows = []
        for k in range(inp.numel()):
            with forward_ad.dual_level():
                tangent = zeros_like(inp)
                tangent._data.reshape(-1)[k] = 1
                args = list(inputs)
                args[j] = forward_ad.make_dual(inp.detach(), tangent)
                outs = _tensor_outputs(func(*args))
                row = []
                for o in outs:
                    t = forward_ad.unpack_dual(o).tangent
                    row.append(np.zeros(o.numel()) if t is None else t._data.reshape(-1).astype(np.float64))
                rows.append(row)
        n_out = len(rows[0]) if rows else 0
        jacobians.append([np.stack([r[i] for r in rows]) for i in range(n_out)])
    return jacobians


def _mismatch(analytical, numerical, output_idx, input_idx, forward=False):
    from ..ops.functions import tensor

    mode = "computed with forward mode " if forward else ""
    return (f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{tensor(numerical)}\nanalytical:{tensor(analytical)}\n")


def _allclose(a, n, rtol, atol):
    return a.shape == n.shape and np.allclose(a, n, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- gradcheck

def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when the analytical Jacobian of ``func`` at ``inputs`` matches central differences.
    (``fast_mode`` runs the same full check.)"""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_grad_dtypes,
                          check_forward_ad, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, check_forward_ad,
               check_backward_ad):
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    numerical = _numerical_jacobians(func, inputs, eps)  # [input][output], every tensor output
    all_outputs = _tensor_outputs(func_out)
    if not outputs:
        for per_input in numerical:
            for jac in per_input:
                if np.any(jac != 0):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    keep = [i for i, o in enumerate(all_outputs) if o.requires_grad]
    if check_forward_ad:
        forward = _forward_ad_jacobians(func, inputs)
        for i, out_idx in enumerate(keep):
            for j, (n_per_out, a_per_out) in enumerate(zip(numerical, forward)):
                if not _allclose(a_per_out[out_idx], n_per_out[out_idx], rtol, atol):
                    raise GradcheckError(_mismatch(a_per_out[out_idx], n_per_out[out_idx], i, j, True))
    if check_backward_ad:
        for i, (out_idx, out) in enumerate(zip(keep, outputs)):
            analytical = _analytical_jacobian(inputs, out, nondet_tol, check_grad_dtypes)
            for j, (a, n_per_out) in enumerate(zip(analytical, numerical)):
                if not _allclose(a, n_per_out[out_idx], rtol, atol):
                    raise GradcheckError(_mismatch(a, n_per_out[out_idx], i, j))
        _check_backward_multiplies_by_grad_output(outputs, inputs)
    return True


def _check_backward_multiplies_by_grad_output(outputs, inputs):
    """With zero output gradients every input gradient must be zero."""
    from . import grad
    from ..ops.functions import zeros_like

    diff = [inp for _, inp in _diff_inputs(inputs)]
    grads = grad(outputs, diff, [zeros_like(o) for o in outputs], retain_graph=True, allow_unused=True)
    for g in grads:
        if g is not None and np.any(g._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradient: the second derivatives, through backward with create_graph."""
    from . import grad
    from ..ops.functions import rand

    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple(
            (rand(*o.shape, dtype=o.dtype if o.is_floating_point() else "float64") * 2 - 1).requires_grad_()
            for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)

    def gradient_of_func(*args):
        inputs_part, seeds = args[:-num_outputs], args[-num_outputs:]
        with enable_grad():
            outs = _differentiable_outputs(func(*inputs_part))
            diff = [inp for _, inp in _diff_inputs(inputs_part)]
            grads = grad(outs, diff, seeds, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(gradient_of_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, fast_mode=fast_mode, masked=masked)


# ---------------------------------------------------------------- gradcheck_sweep (ours)

def _default_hs():
    return [float(h) for h in np.logspace(-1, -14, 27)]  # two points per decade


def gradcheck_sweep(fn, x, hs=None, *, direction=None, dtype=None):
    """How finite differences err as the step ``h`` shrinks: the seeds' "too big is truncation,
    too small is cancellation" figure, as data for the lab to plot.

    ``fn`` maps a tensor (or a float) to a tensor; its sum is differentiated at ``x`` along
    ``direction`` (all ones by default). For each h the one-sided estimate
    ``(f(x + h v) - f(x)) / h`` and the central one ``(f(x + h v) - f(x - h v)) / 2h`` are compared
    with the exact directional derivative from autograd. Returns plain floats and lists::

        {"hs": [...], "exact": 0.0707, "forward_errors": [...], "central_errors": [...],
         "best_h": {"forward": ..., "central": ...}, "best_error": {...},
         "regions": {"forward": {"truncation": [h_lo, h_hi], "cancellation": [h_lo, h_hi]}, ...},
         "dtype": "float64", "machine_epsilon": 2.22e-16}

    On the truncation side (h above the best h) the error shrinks like h (one-sided) or h**2
    (central); on the cancellation side it grows like machine_epsilon / h.
    """
    from . import grad
    from ..ops.functions import ones_like, tensor

    if not _is_tensor(x):
        x = tensor(x, dtype=dtype or "float64")
    elif dtype is not None:
        x = x.to(dtype)
    x = x.detach()
    v = ones_like(x) if direction is None else direction.detach().to(x.dtype)
    hs = _default_hs() if hs is None else [float(h) for h in hs]

    def f(point):
        return float(fn(point).sum().item())

    with enable_grad():
        leaf = x.clone().requires_grad_()
        (g,) = grad(fn(leaf).sum(), leaf)
    exact = float((g * v).sum().item())
    with no_grad():
        f0 = f(x)
        forward_errors, central_errors = [], []
        for h in hs:
            plus, minus = f(x + v * h), f(x - v * h)
            forward_errors.append(abs((plus - f0) / h - exact))
            central_errors.append(abs((plus - minus) / (2 * h) - exact))
    result = {"hs": hs, "exact": exact, "forward_errors": _json_floats(forward_errors),
              "central_errors": _json_floats(central_errors), "best_h": {}, "best_error": {},
              "regions": {}, "dtype": x.dtype.name,
              "machine_epsilon": float(np.finfo(x._data.dtype).eps)}
    for name, errors in (("forward", forward_errors), ("central", central_errors)):
        best = min(range(len(hs)), key=lambda i: errors[i] if math.isfinite(errors[i]) else math.inf)
        result["best_h"][name] = hs[best]
        result["best_error"][name] = _json_float(errors[best])
        above = [h for h in hs if h >= hs[best]]
        below = [h for h in hs if h < hs[best]]
        result["regions"][name] = {
            "truncation": [min(above), max(above)] if above else None,
            "cancellation": [min(below), max(below)] if below else None,
        }
    return result


def _json_float(value):
    return float(value) if math.isfinite(value) else None


def _json_floats(values):
    return [_json_float(v) for v in values]


__all__ = ["GradcheckError", "gradcheck", "gradgradcheck", "gradcheck_sweep"]
