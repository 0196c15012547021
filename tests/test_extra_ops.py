"""The ops of ``gradwalk/ops/extra.py`` side by side with PyTorch: value, node name,
``next_functions``, gradients, second-order gradients and forward mode; and gradients against
central differences in float64 (as ``test_ops_parity.py`` does for the core ops).
"""
import numpy as np
import pytest
import torch

import gradwalk
from parity import OpTable, assert_same, run_in, seed_gradient

LEAVES = {
    "a": [0.7, -1.3, 2.1, 0.4],
    "b": [1.5, 0.4, -0.8, -0.6],
    "u": [0.3, -0.6, 0.45, 0.1],  # inside (-1, 1), for asin/acos
    "p": [0.6, 1.7, 2.4, 1.1],  # positive, for logs
    "z": [0.5, 0.0, 2.0, -1.5],  # a zero, for cumprod
    "c": [1.2, 2.5, 1.05, 3.0],  # above 1, for acosh
    "w": [0.2, 0.7, 0.4, 0.9],  # lerp weights
    "A": [[0.3, -1.2, 0.8, 1.9], [1.1, 0.5, -0.4, 0.05], [-0.9, 1.4, 0.2, -0.7]],
    "T": [[1.0, 3.0, 1.0, 3.0], [2.0, 2.0, 0.5, 2.0], [0.5, -1.0, -1.0, 0.25]],  # ties, for cummax/cummin
    "M": [[0.3, -1.2, 0.8], [1.1, 0.5, -0.4], [-0.9, 1.4, 0.25]],
    "V": [[[0.3, -0.1, 0.4, 1.2], [1.0, -0.5, 0.9, 0.15], [0.2, 0.6, -0.5, -1.1]],
          [[-0.3, 0.5, 0.8, 0.35], [0.7, -0.2, 1.3, -0.8], [0.45, 0.1, -1.6, 0.9]]],
}

# (id, expression, leaves that require grad)
CASES = [
    # scans
    ("cumsum", "a.cumsum(0)", "a"),
    ("cumsum_dim1", "torch.cumsum(A, 1)", "A"),
    ("cumsum_negative_dim", "V.cumsum(-2)", "V"),
    ("cumprod", "a.cumprod(0)", "a"),
    ("cumprod_dim1", "A.cumprod(1)", "A"),
    ("cumprod_with_zero", "z.cumprod(0)", "z"),
    ("logcumsumexp", "a.logcumsumexp(0)", "a"),
    ("logcumsumexp_dim1", "torch.logcumsumexp(A, 1)", "A"),
    ("logcumsumexp_negative_dim", "V.logcumsumexp(-2)", "V"),
    ("cummax", "a.cummax(0).values", "a"),
    ("cummax_dim1", "torch.cummax(A, 1)[0]", "A"),
    ("cummax_ties", "T.cummax(1).values", "T"),
    ("cummin", "A.cummin(0).values", "A"),
    ("cummin_negative_dim", "torch.cummin(V, -1)[0]", "V"),
    ("cummin_ties", "T.cummin(1).values", "T"),
    # sorting and selecting
    ("sort", "a.sort().values", "a"),
    ("sort_descending_dim0", "A.sort(0, descending=True)[0]", "A"),
    ("torch_sort", "torch.sort(A)[0]", "A"),
    ("topk", "a.topk(2).values", "a"),
    ("topk_smallest_dim0", "A.topk(2, dim=0, largest=False)[0]", "A"),
    ("median", "a.median()", "a"),
    ("median_dim", "A.median(1).values", "A"),
    ("median_keepdim", "A.median(0, keepdim=True)[0]", "A"),
    # shifts, triangles, diagonals
    ("roll", "a.roll(1)", "a"),
    ("roll_dims", "A.roll((1, -1), (0, 1))", "A"),
    ("roll_flat", "A.roll(2)", "A"),
    ("tril", "A.tril()", "A"),
    ("tril_offset", "torch.tril(M, -1)", "M"),
    ("triu", "A.triu(1)", "A"),
    ("triu_batched", "V.triu()", "V"),
    ("diag_vector", "a.diag()", "a"),
    ("diag_vector_offset", "torch.diag(a, 1)", "a"),
    ("diag_matrix", "A.diag()", "A"),
    ("diag_matrix_offset", "A.diag(1)", "A"),
    ("diagonal", "A.diagonal()", "A"),
    ("diagonal_offset", "M.diagonal(-1)", "M"),
    ("diagonal_dims", "torch.diagonal(V, 0, 1, 2)", "V"),
    ("trace", "A.trace()", "A"),
    ("trace_square", "torch.trace(M)", "M"),
    # elementwise
    ("atan", "a.atan()", "a"),
    ("arctan", "torch.arctan(a)", "a"),
    ("asin", "u.asin()", "u"),
    ("acos", "torch.acos(u)", "u"),
    ("sinh", "a.sinh()", "a"),
    ("cosh", "a.cosh()", "a"),
    ("log2", "p.log2()", "p"),
    ("log10", "torch.log10(p)", "p"),
    ("exp2", "a.exp2()", "a"),
    ("erf", "a.erf()", "a"),
    ("erfc", "a.erfc()", "a"),
    ("erfinv", "u.erfinv()", "u"),
    ("torch_erfinv", "torch.erfinv(u * 1.6)", "u"),
    ("asinh", "a.asinh()", "a"),
    ("arcsinh", "torch.arcsinh(A)", "A"),
    ("acosh", "c.acosh()", "c"),
    ("arccosh", "torch.arccosh(c)", "c"),
    ("atanh", "u.atanh()", "u"),
    ("arctanh", "torch.arctanh(u)", "u"),
    ("trunc", "a.trunc()", "a"),
    ("frac", "a.frac()", "a"),
    ("nan_to_num", "(a.log()).nan_to_num(0.0)", "a"),
    ("atan2", "torch.atan2(a, b)", "ab"),
    ("atan2_method_broadcast", "A.atan2(b)", "Ab"),
    ("logaddexp", "torch.logaddexp(a, b)", "ab"),
    ("fmod_scalar", "torch.fmod(a, 0.3)", "a"),
    ("fmod_tensor", "a.fmod(p)", "ap"),
    ("remainder_scalar", "a.remainder(0.3)", "a"),
    ("remainder_tensor", "torch.remainder(a, p)", "ap"),
    ("lerp_scalar", "torch.lerp(a, b, 0.3)", "ab"),
    ("lerp_scalar_high", "a.lerp(b, 0.8)", "ab"),
    ("lerp_tensor", "torch.lerp(a, b, w)", "abw"),
    ("addcmul", "torch.addcmul(a, b, p, value=2)", "abp"),
    ("addcmul_broadcast", "A.addcmul(b, p)", "Abp"),
    ("addcdiv", "torch.addcdiv(a, b, p, value=0.5)", "abp"),
    # statistics
    ("std_mean_std", "torch.std_mean(A)[0]", "A"),
    ("std_mean_both", "sum(torch.std_mean(A, 1))", "A"),
    ("var_mean_both", "sum(torch.var_mean(A, 0, keepdim=True))", "A"),
    ("var_mean_correction", "torch.var_mean(A, 1, correction=0)[0]", "A"),
    ("var_mean_mean", "torch.var_mean(V, (0, 2))[1]", "V"),
    ("dist", "torch.dist(a, b)", "ab"),
    ("dist_p1", "a.dist(b, 1)", "ab"),
    ("dist_p3", "a.dist(b, 3)", "ab"),
    ("dist_inf", "torch.dist(a, b, float('inf'))", "ab"),
    ("dist_broadcast", "torch.dist(A, b)", "Ab"),
    # masks and composites
    ("masked_select", "a.masked_select(a > 0)", "a"),
    ("masked_select_broadcast", "A.masked_select(torch.tensor([True, False, True, True]))", "A"),
    ("movedim", "V.movedim(0, 2)", "V"),
    ("movedim_many", "torch.movedim(V, (0, 1), (2, 0))", "V"),
    ("moveaxis", "V.moveaxis(-1, 0)", "V"),
    ("hstack", "torch.hstack([a, b])", "ab"),
    ("hstack_matrices", "torch.hstack([A, A * 2])", "A"),
    ("vstack", "torch.vstack([a, b])", "ab"),
    ("vstack_matrices", "torch.vstack([A, a])", "Aa"),
    ("meshgrid_ij", "torch.meshgrid(a, b[:3], indexing='ij')[1]", "ab"),
    ("meshgrid_xy", "torch.meshgrid([a, b[:3]], indexing='xy')[0]", "ab"),
    ("repeat_interleave", "a.repeat_interleave(2)", "a"),
    ("repeat_interleave_dim", "A.repeat_interleave(3, dim=1)", "A"),
    ("repeat_interleave_flat", "torch.repeat_interleave(A, 2)", "A"),
    ("repeat_interleave_tensor", "a.repeat_interleave(torch.tensor([1, 2, 0, 3]))", "a"),
]
IDS = [case[0] for case in CASES]
NOT_SMOOTH = {"cummax_ties", "cummin_ties", "trunc", "frac", "fmod_scalar", "fmod_tensor", "remainder_scalar",
              "remainder_tensor"}


TABLE = OpTable(LEAVES)
build = TABLE.build


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_value_node_and_gradient_match_pytorch(case, dtype):
    _, expression, grad_leaves = case
    TABLE.check_against_torch(expression, grad_leaves, dtype)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in NOT_SMOOTH],
                         ids=[c[0] for c in CASES if c[0] not in NOT_SMOOTH])
def test_gradient_matches_central_differences(case):
    _, expression, grad_leaves = case
    TABLE.check_central_differences(expression, grad_leaves, allow_unused=True)


SECOND_ORDER = """
out = {expression}
leaves = [{leaves}]
grads = torch.autograd.grad((out * seed).sum(), leaves, create_graph=True, allow_unused=True)
total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
if torch.is_tensor(total) and total.requires_grad:
    total.backward()
"""


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_second_order_gradients_match_pytorch(case):
    _, expression, grad_leaves = case
    leaves = [name for name in LEAVES if name in grad_leaves]
    results = []
    for library in ("gradwalk", "torch"):
        module = gradwalk if library == "gradwalk" else torch
        first = build(library, "float64", expression, grad_leaves)["out"]
        snippet = TABLE.setup("float64", grad_leaves) + SECOND_ORDER.format(
            expression=expression, leaves=", ".join(leaves))
        env = {f"_{name}": np.array(value, dtype=np.float64) for name, value in LEAVES.items()}
        env["seed"] = module.tensor(seed_gradient(first))
        results.append(run_in(library, snippet, **env))
    ours, theirs = results
    for g_ours, g_theirs in zip(ours["grads"], theirs["grads"]):
        assert_same(g_ours, g_theirs, rtol=1e-10, atol=1e-12)
    for leaf in leaves:
        assert_same_or_zero(ours[leaf].grad, theirs[leaf].grad, rtol=1e-9, atol=1e-12)


def assert_same_or_zero(ours, theirs, **tol):
    """A second-order gradient that is zero everywhere: PyTorch may hold a ZeroTensor (or
    zeros) where gradwalk, whose non-smooth ops (sign, trunc, floor) record no graph, has None."""
    if ours is None and theirs is not None:
        assert theirs._is_zerotensor() or not theirs.any()
        return
    if theirs is not None and theirs._is_zerotensor():
        theirs = torch.zeros_like(theirs)
    assert_same(ours, theirs, **tol)


FORWARD_MODE = """
leaves = [{leaves}]
tangents = [torch.linspace(-1.0, 1.0, x.numel(), dtype=torch.float64).reshape(x.shape) for x in leaves]
def f({leaves}):
    return {expression}
value, tangent = torch.func.jvp(f, tuple(leaves), tuple(tangents))
"""


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_mode_matches_pytorch(case):
    _, expression, grad_leaves = case
    leaves = ", ".join(name for name in LEAVES if name in grad_leaves)
    snippet = TABLE.setup("float64", "") + FORWARD_MODE.format(expression=expression, leaves=leaves)
    env = {f"_{name}": np.array(value, dtype=np.float64) for name, value in LEAVES.items()}
    ours = run_in("gradwalk", snippet.replace("torch.func.jvp", "_func.jvp"), _func=gradwalk.func, **env)
    theirs = run_in("torch", snippet, **env)
    assert_same(ours["value"], theirs["value"], rtol=1e-10, atol=1e-12)
    assert_same(ours["tangent"], theirs["tangent"], rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- outputs without gradients

NO_GRAD = [
    "a.argsort()",
    "A.argsort(0, descending=True)",
    "torch.argsort(A, dim=1)",
    "a.sort()[1]",
    "A.topk(2, 1)[1]",
    "A.median(1)[1]",
    "T.cummax(1)[1]",
    "T.cummin(0)[1]",
    "torch.tensor([3, 1, 3, 1]).cummin(0)[1]",
    "torch.tensor([3, 1, 3, 1]).cummax(0)[0]",
    "a.nonzero()",
    "z.nonzero()",
    "torch.nonzero(A > 0, as_tuple=True)[1]",
    "z.count_nonzero()",
    "torch.count_nonzero(A > 0, dim=1)",
    "(a > 0).any()",
    "A.any()",
    "(A > 0).all(1)",
    "torch.all(A > -2, dim=0, keepdim=True)",
    "torch.any(z)",
    "torch.tensor([3, -7, 5]).fmod(2)",
    "torch.tensor([3, -7, 5]).remainder(2)",
    "torch.tensor([3, -7, 5]) .cumsum(0)",
    "torch.tensor([1, 2, 3]).trunc()",
    "torch.tensor([[1, 2], [3, 4]]).trace()",
    "torch.tensor([3, 1, 2]).sort()[0]",
]


@pytest.mark.parametrize("expression", NO_GRAD)
def test_integer_and_boolean_results_match_pytorch(expression):
    ours = build("gradwalk", "float64", expression, "aAz")["out"]
    theirs = build("torch", "float64", expression, "aAz")["out"]
    assert_same(ours, theirs)
    assert not ours.requires_grad and ours.grad_fn is None


def test_sort_and_median_return_named_values_and_indices():
    x = gradwalk.tensor([[1.0, 3.0, 1.0, 3.0], [2.0, 2.0, 5.0, 5.0]])
    ref = torch.tensor(x.tolist())
    for ours, theirs in ((x.sort(1), ref.sort(1)), (x.median(1), ref.median(1)),
                         (x.sort(1, descending=True), ref.sort(1, descending=True))):
        assert ours.values.tolist() == theirs.values.tolist()
        assert ours.indices.tolist() == theirs.indices.tolist()


def test_median_ties_share_the_gradient_as_in_pytorch():
    gw, pt = (build(lib, "float64", "torch.tensor([[1., 3., 1., 3.], [2., 2., 5., 5.]], "
                    "requires_grad=True)", "") for lib in ("gradwalk", "torch"))
    for ns in (gw, pt):
        ns["out"].median().backward()
    assert_same(gw["out"].grad, pt["out"].grad)


def test_diagonal_is_a_view_that_writes_through():
    for lib in (gradwalk, torch):
        m = lib.zeros(3, 3)
        m.diagonal().add_(1.0)
        assert m.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_sort_nan_order_matches_pytorch():
    values = [1.0, float("nan"), -2.0, 3.0]
    for descending in (False, True):
        ours = gradwalk.tensor(values).sort(descending=descending)
        theirs = torch.tensor(values).sort(descending=descending)
        assert ours.indices.tolist() == theirs.indices.tolist()


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_cummin_ties_and_nan_match_pytorch(op):
    rows = [[1.0, 3.0, 1.0, 3.0, 2.0], [1.0, float("nan"), 1.0, 3.0, float("nan")], [2.0, 2.0, 2.0, 2.0, 2.0]]
    for dim in (0, 1):
        ours = getattr(gradwalk.tensor(rows), op)(dim)
        theirs = getattr(torch.tensor(rows), op)(dim)
        assert type(ours).__name__ == type(theirs).__name__ == op
        assert_same(ours.values, theirs.values)
        assert ours.indices.tolist() == theirs.indices.tolist()
    ours, theirs = getattr(gradwalk.tensor(2.5), op)(0), getattr(torch.tensor(2.5), op)(0)
    assert_same(ours.values, theirs.values)
    assert ours.indices.tolist() == theirs.indices.tolist()


def test_erfinv_edges_match_pytorch():
    values = [-1.0, -0.999999, -0.5, -0.0, 0.0, 1e-300, 0.3, 0.75, 1 - 2 ** -53, 1.0, 1.5, float("nan")]
    for dtype in ("float64", "float32"):
        ours = gradwalk.tensor(values, dtype=getattr(gradwalk, dtype)).erfinv()
        theirs = torch.tensor(values, dtype=getattr(torch, dtype)).erfinv()
        assert_same(ours, theirs, rtol=4e-16 if dtype == "float64" else 1.2e-7, atol=0)
