"""Every op, side by side with PyTorch: value, node name, ``next_functions``, gradients; and
gradients against central differences in float64.

Each case is one expression over a fixed set of leaves. The output is backwarded with a
non-uniform gradient (so a transposed or mis-broadcast gradient cannot hide behind a sum).
"""
import pytest
import torch

import gradwalk
from parity import OpTable, assert_same

LEAVES = {
    "a": [0.7, -1.3, 2.1],
    "b": [1.5, 0.4, -0.8],
    "p": [0.6, 1.7, 2.4],  # positive, for log/sqrt/pow
    "s": 0.9,
    "A": [[0.3, -1.2, 0.8], [1.1, 0.5, -0.4]],
    "B": [[0.2, -0.7, 1.3, 0.4], [0.9, 0.1, -0.6, 1.0], [-1.4, 0.6, 0.3, -0.2]],
    "C": [[0.5], [-1.0], [2.0]],
    "D": [[1.2, -0.3, 0.7, 0.1]],
    "W": [[0.1, 0.2, -0.3], [0.4, -0.5, 0.6], [0.7, 0.8, -0.9], [-0.2, 0.3, 0.5]],
    "V": [[[0.3, -0.1, 0.4], [1.0, -0.5, 0.9]], [[0.2, 0.6, -0.5], [-0.3, 0.5, 0.8]]],
    "U": [[[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]], [[-0.7, 0.8], [0.9, -1.0], [0.2, 0.3]]],
}

# (id, expression, leaves that require grad). Every other leaf is still defined, without grad.
CASES = [
    # arithmetic, broadcasting, Python scalars on either side
    ("add", "a + b", "ab"),
    ("add_scalar", "a + 2.0", "a"),
    ("radd_scalar", "2.0 + a", "a"),
    ("add_alpha", "a.add(b, alpha=2)", "ab"),
    ("add_broadcast", "C + D", "CD"),
    ("add_rowvector", "A + a", "Aa"),
    ("add_0dim", "A + s", "As"),
    ("add_one_side_grad", "a + b", "a"),
    ("sub", "a - b", "ab"),
    ("sub_scalar", "a - 2.0", "a"),
    ("sub_alpha", "a.sub(b, alpha=3)", "ab"),
    ("rsub_float", "2.0 - a", "a"),
    ("rsub_int", "2 - a", "a"),
    ("rsub_tensors", "torch.rsub(a, b)", "ab"),
    ("mul", "a * b", "ab"),
    ("mul_scalar", "a * 2.0", "a"),
    ("rmul_scalar", "2.0 * a", "a"),
    ("mul_int", "a * 2", "a"),
    ("mul_self", "a * a", "a"),
    ("mul_broadcast", "C * D", "CD"),
    ("mul_0dim_tensor", "a * torch.tensor(2.)", "a"),
    ("div", "a / b", "ab"),
    ("div_scalar", "a / 2", "a"),
    ("rdiv", "2 / a", "a"),
    ("rdiv_one", "1 / a", "a"),
    ("div_broadcast", "A / p", "Ap"),
    ("pow_2", "a ** 2", "a"),
    ("pow_frac", "p ** 2.5", "p"),
    ("pow_neg", "p ** -1", "p"),
    ("pow_method", "a.pow(3)", "a"),
    ("square", "a.square()", "a"),
    ("pow_tensors", "p ** b", "pb"),
    ("torch_pow_tensors", "torch.pow(p, b)", "pb"),
    ("pow_0dim_exponent", "p ** torch.tensor(2.)", "p"),
    ("pow_0dim_base", "torch.tensor(2.) ** a", "a"),
    ("rpow", "2 ** a", "a"),
    ("torch_pow_scalar_base", "torch.pow(2.0, a)", "a"),
    ("neg", "-a", "a"),
    ("neg_method", "a.neg()", "a"),
    # elementwise
    ("exp", "a.exp()", "a"),
    ("log", "p.log()", "p"),
    ("sin", "torch.sin(a)", "a"),
    ("cos", "torch.cos(a)", "a"),
    ("tan", "torch.tan(a * 0.5)", "a"),
    ("tanh", "torch.tanh(a)", "a"),
    ("sigmoid", "torch.sigmoid(a)", "a"),
    ("relu", "a.relu()", "a"),
    ("torch_relu", "torch.relu(A)", "A"),
    ("sqrt", "p.sqrt()", "p"),
    ("rsqrt", "p.rsqrt()", "p"),
    ("abs", "a.abs()", "a"),
    ("log1p", "p.log1p()", "p"),
    ("expm1", "a.expm1()", "a"),
    ("reciprocal", "a.reciprocal()", "a"),
    ("sign", "a.sign()", "a"),
    ("floor", "a.floor()", "a"),
    ("round", "a.round()", "a"),
    ("clamp_min", "a.clamp(min=0)", "a"),
    ("clamp_both", "a.clamp(-1, 1)", "a"),
    ("clamp_max", "a.clamp(max=1)", "a"),
    ("clamp_tensor_min", "a.clamp(min=b)", "ab"),
    ("clamp_min_fn", "a.clamp_min(0)", "a"),
    ("clamp_max_fn", "a.clamp_max(0)", "a"),
    ("maximum", "torch.maximum(a, b)", "ab"),
    ("minimum", "torch.minimum(a, b)", "ab"),
    ("max_binary", "torch.max(a, b)", "ab"),
    ("where", "torch.where(a > 0, a, b)", "ab"),
    ("where_scalar", "torch.where(a > 0, a, 0.)", "a"),
    ("where_broadcast", "torch.where(C > 0, C, D)", "CD"),
    # reductions
    ("sum", "a.sum()", "a"),
    ("sum_2d", "A.sum()", "A"),
    ("sum_dim0", "A.sum(0)", "A"),
    ("sum_dim1_keepdim", "A.sum(1, keepdim=True)", "A"),
    ("sum_dims", "A.sum((0, 1))", "A"),
    ("sum_negative_dim", "V.sum(-1)", "V"),
    ("mean", "a.mean()", "a"),
    ("mean_dim", "A.mean(0)", "A"),
    ("mean_keepdim", "A.mean(1, keepdim=True)", "A"),
    ("max_all", "A.max()", "A"),
    ("min_all", "A.min()", "A"),
    ("max_dim_values", "A.max(0).values", "A"),
    ("max_dim_index0", "A.max(dim=1)[0]", "A"),
    ("min_dim_keepdim", "A.min(1, keepdim=True).values", "A"),
    ("amax", "A.amax(1)", "A"),
    ("amin", "A.amin(0)", "A"),
    ("var", "A.var()", "A"),
    ("std_dim", "A.std(1)", "A"),
    ("prod", "a.prod()", "a"),
    ("logsumexp", "A.logsumexp(1)", "A"),
    ("norm", "a.norm()", "a"),
    # linear algebra
    ("dot", "a @ b", "ab"),
    ("torch_dot", "torch.dot(a, b)", "ab"),
    ("mv", "A @ a", "Aa"),
    ("torch_mv", "torch.mv(A, a)", "Aa"),
    ("mm", "A @ B", "AB"),
    ("mm_method", "A.mm(B)", "AB"),
    ("matmul_fn", "torch.matmul(A, B)", "AB"),
    ("vec_mat", "a @ B", "aB"),
    ("batched_mat", "V @ B", "VB"),
    ("bmm", "torch.bmm(V, U)", "VU"),
    ("batched_matmul", "V @ U", "VU"),
    ("mm_one_side", "A @ B", "B"),
    ("t", "A.t()", "A"),
    ("t_1d", "a.t()", "a"),
    # shape ops and indexing
    ("T", "A.T", "A"),
    ("permute", "V.permute(2, 0, 1)", "V"),
    ("transpose", "A.transpose(0, 1)", "A"),
    ("mT", "A.mT", "A"),
    ("reshape", "A.reshape(6)", "A"),
    ("view", "A.view(3, 2)", "A"),
    ("view_minus_one", "V.view(-1, 3)", "V"),
    ("flatten", "V.flatten()", "V"),
    ("view_as", "a.view_as(b)", "a"),
    ("reshape_noncontiguous", "A.t().reshape(6)", "A"),
    ("contiguous", "A.t().contiguous()", "A"),
    ("select", "a[0]", "a"),
    ("select_row", "A[0]", "A"),
    ("select_column", "A[:, 1]", "A"),
    ("select_negative", "a[-1]", "a"),
    ("select_twice", "A[0, 1]", "A"),
    ("select_chain", "A[0][1]", "A"),
    ("slice", "a[1:3]", "a"),
    ("slice_step", "a[::2]", "a"),
    ("slice_2d", "A[:, 1:]", "A"),
    ("narrow", "a.narrow(0, 1, 2)", "a"),
    ("index_list", "a[[0, 2]]", "a"),
    ("index_repeated", "a[[0, 0, 2]]", "a"),
    ("index_bool", "a[a > 0]", "a"),
    ("index_pairs", "A[[0, 1], [1, 2]]", "A"),
    ("index_tensor", "A[torch.tensor([1, 0, 1])]", "A"),
    ("unsqueeze", "a.unsqueeze(0)", "a"),
    ("index_none", "a[None]", "a"),
    ("index_ellipsis_none", "a[..., None]", "a"),
    ("squeeze_all", "C.squeeze()", "C"),
    ("squeeze_dim", "C.squeeze(1)", "C"),
    ("expand", "a.expand(2, 3)", "a"),
    ("expand_minus_one", "C.expand(-1, 4)", "C"),
    ("cat", "torch.cat([a, b])", "ab"),
    ("cat_dim1", "torch.cat([A, A * 2], 1)", "A"),
    ("cat_mixed_grad", "torch.cat([a, b])", "a"),
    ("stack", "torch.stack([a, b])", "ab"),
    ("stack_dim1", "torch.stack([a, b], 1)", "ab"),
    ("split", "a.split(1)[0]", "a"),
    ("split_sizes", "B.split([1, 3], 1)[1]", "B"),
    ("chunk", "a.chunk(3)[1]", "a"),
    ("unbind", "a.unbind()[1]", "a"),
    ("unbind_dim1", "torch.unbind(A, 1)[2]", "A"),
    ("clone", "A.clone()", "A"),
    ("flip", "a.flip(0)", "a"),
    ("repeat", "a.repeat(2)", "a"),
    ("gather", "A.gather(1, torch.tensor([[0, 2], [1, 1]]))", "A"),
    ("index_select", "A.index_select(1, torch.tensor([2, 0]))", "A"),
    ("masked_fill", "a.masked_fill(a > 1, 0.)", "a"),
    ("to_double", "a.double() * 1.5", "a"),
    # softmax family and losses
    ("softmax", "A.softmax(1)", "A"),
    ("softmax_dim0", "torch.softmax(A, 0)", "A"),
    ("log_softmax", "A.log_softmax(1)", "A"),
    ("F_softmax", "F.softmax(A, dim=1)", "A"),
    ("F_log_softmax", "F.log_softmax(A, dim=-1)", "A"),
    ("F_relu", "F.relu(a)", "a"),
    ("F_sigmoid", "F.sigmoid(a)", "a"),
    ("F_tanh", "F.tanh(a)", "a"),
    ("mse_loss", "F.mse_loss(a, b)", "ab"),
    ("mse_loss_sum", "F.mse_loss(a, b, reduction='sum')", "ab"),
    ("mse_loss_none", "F.mse_loss(a, b, reduction='none')", "ab"),
    ("cross_entropy", "F.cross_entropy(A, torch.tensor([2, 0]))", "A"),
    ("cross_entropy_sum", "F.cross_entropy(A, torch.tensor([1, 0]), reduction='sum')", "A"),
    ("nll_loss", "F.nll_loss(A.log_softmax(1), torch.tensor([2, 1]))", "A"),
    ("bce", "F.binary_cross_entropy(torch.sigmoid(a), torch.sigmoid(b).detach())", "a"),
    ("bce_logits", "F.binary_cross_entropy_with_logits(a, torch.sigmoid(b).detach())", "a"),
    ("linear", "F.linear(A, W, b[:1].expand(4).contiguous())", "AW"),
    ("linear_bias", "F.linear(A, W, D[0])", "AWD"),
    ("linear_no_bias", "F.linear(A, W)", "AW"),
    ("l1_loss", "F.l1_loss(a, b)", "ab"),
]

IDS = [case[0] for case in CASES]


TABLE = OpTable(LEAVES)
build = TABLE.build


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_value_node_and_gradient_match_pytorch(case, dtype):
    _, expression, grad_leaves = case
    TABLE.check_against_torch(expression, grad_leaves, dtype)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in (
    "sign", "floor", "round")], ids=[c[0] for c in CASES if c[0] not in ("sign", "floor", "round")])
def test_gradient_matches_central_differences(case):
    """Analytical float64 gradients against central differences of gradwalk's own forward."""
    _, expression, grad_leaves = case
    TABLE.check_central_differences(expression, grad_leaves)


def test_integer_results_never_require_grad():
    a = gradwalk.tensor([0.5, -1.0, 2.0], requires_grad=True)
    for result in (a > 0, a.argmax(), a.max(0).indices, a.long(), a == a):
        assert not result.requires_grad and result.grad_fn is None


def test_multi_output_nodes_share_one_node_with_output_numbers():
    a = gradwalk.tensor([0.5, -1.0, 2.0], requires_grad=True)
    parts = a.unbind()
    assert len({id(p.grad_fn) for p in parts}) == 1
    assert [p.output_nr for p in parts] == [0, 1, 2]
    unbind = parts[0].grad_fn
    y = parts[0] * 1 + parts[2] * 3
    first, third = (fn for fn, _ in y.grad_fn.next_functions)
    assert first.next_functions[0] == (unbind, 0) and third.next_functions[0] == (unbind, 2)
    y.backward()
    assert a.grad.tolist() == [1.0, 0.0, 3.0]


def test_calling_a_node_directly_returns_unreduced_gradients():
    """As in PyTorch, the engine (not the formula) sums broadcast gradients."""
    for lib in (gradwalk, torch):
        c = lib.ones(3, 1, requires_grad=True)
        d = lib.ones(1, 4, requires_grad=True)
        grads = (c + d).grad_fn(lib.ones(3, 4))
        assert [tuple(g.shape) for g in grads] == [(3, 4), (3, 4)]
        grads = (c * 3).grad_fn(lib.ones(3, 1))
        assert grads[1] is None and grads[0].tolist() == [[3.0], [3.0], [3.0]]


def test_mixed_dtypes_promote_and_cast_gradients_back():
    gw, pt = (build(lib, "float32", "a * b.double()", "ab") for lib in ("gradwalk", "torch"))
    assert_same(gw["out"], pt["out"])
    gw["out"].sum().backward()
    pt["out"].sum().backward()
    assert_same(gw["a"].grad, pt["a"].grad)
    assert_same(gw["b"].grad, pt["b"].grad)
