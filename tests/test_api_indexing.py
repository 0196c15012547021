"""Indexing, scatter and shape ops beside PyTorch: values, dtype, shape, the backward node's name,
the gradients that reach the inputs, and the errors for common mistakes."""
import warnings

import numpy as np
import pytest
import torch

import gradwalk as gw

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
S = rng.standard_normal((3, 4))


def run_beside_torch(fn, *arrays, grad=True):
    """``fn(lib, *tensors)`` in both libraries: same result and node; same gradients of a
    weighted sum of the result."""
    results, leaves = [], []
    for lib in (torch, gw):
        ts = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(lib, *ts)
        results.append(out)
        leaves.append(ts)
    t, g = results
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1] and tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    if t.requires_grad:
        assert g.grad_fn.name() == t.grad_fn.name()
        w = np.random.default_rng(1).standard_normal(tuple(t.shape))
        (t * torch.tensor(w, dtype=t.dtype)).sum().backward()
        (g * gw.tensor(w, dtype=g.dtype)).sum().backward()
        for a, b in zip(*leaves):
            if a.requires_grad:
                assert (a.grad is None) == (b.grad is None)
                if a.grad is not None:
                    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-10, atol=1e-12)
    return g


def raises_like_torch(fn):
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(type(expected.value)) as got:
        fn(gw)
    assert str(got.value) == str(expected.value)


# ---------------------------------------------------------------- scatter

def test_scatter_add_and_its_inplace_form():
    index = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
    run_beside_torch(lambda t, x, s: x.scatter_add(0, t.tensor(index), s[:2]), X, S)
    run_beside_torch(lambda t, x, s: t.scatter_add(x, 1, t.tensor(index[:, :2]), s[:2, :2]), X, S)
    run_beside_torch(lambda t, x, s: (x * 1).scatter_add_(0, t.tensor(index), s[:2]), X, S)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    index = np.array([[0, 1, 2, 0], [0, 2, 1, 0]])
    src = S[:2].copy()
    src[1, 0] = src[0, 0]  # a tie for amax/amin: the gradient is shared
    run_beside_torch(lambda t, x, s: x.scatter_reduce(0, t.tensor(index), s, reduce, include_self=include_self),
                     X, src)
    run_beside_torch(lambda t, x, s: (x + 0).scatter_reduce_(1, t.tensor(index), s, reduce), X, src)


def test_scatter_inplace_value_src_and_old_reduce():
    index = np.array([[0, 1, 2, 0]])
    run_beside_torch(lambda t, x, s: (x * 1).scatter_(0, t.tensor(index), s[:1]), X, S)
    run_beside_torch(lambda t, x: x.clone().scatter_(0, t.tensor(index), 2.0), X, grad=False)
    for reduce in ("add", "multiply"):
        run_beside_torch(lambda t, x, s: x.clone().scatter_(0, t.tensor(index), s, reduce=reduce), X, S, grad=False)
    y = gw.tensor(X, requires_grad=True).scatter(0, gw.tensor(index), 2.0, reduce="add")
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"


def test_scatter_errors():
    raises_like_torch(lambda t: t.zeros(3, 4).scatter_add(0, t.tensor([[0, 1]]), t.ones(1, 2, dtype=t.float64)))
    raises_like_torch(lambda t: t.zeros(3, 4).scatter_add(0, t.tensor([[0.0]]), t.ones(1, 2)))
    raises_like_torch(lambda t: t.zeros(3, 4).scatter_add(2, t.tensor([[0]]), t.ones(1, 2)))


# ---------------------------------------------------------------- index_*

def test_index_add_copy_fill():
    run_beside_torch(lambda t, x, s: x.index_add(1, t.tensor([0, 2]), s[:, :2], alpha=2), X, S)
    run_beside_torch(lambda t, x, s: t.index_add(x, 0, t.tensor([1, 1]), s[:2]), X, S)
    run_beside_torch(lambda t, x, s: (x * 1).index_add_(0, t.tensor([2]), s[:1]), X, S)
    run_beside_torch(lambda t, x, s: x.index_copy(1, t.tensor([3, 1]), s[:, :2]), X, S)
    run_beside_torch(lambda t, x, s: (x * 1).index_copy_(0, t.tensor([0]), s[:1]), X, S)
    run_beside_torch(lambda t, x: x.index_fill(1, t.tensor([3, 1]), 2.5), X)
    run_beside_torch(lambda t, x, v: x.index_fill(1, t.tensor([3, 1]), v), X, np.array(1.5))
    run_beside_torch(lambda t, x: (x * 1).index_fill_(0, t.tensor([1]), -1), X)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(reduce):
    run_beside_torch(lambda t, x, s: x.index_reduce(0, t.tensor([0, 2, 0]), s, reduce), X, S)
    run_beside_torch(lambda t, x, s: x.index_reduce(1, t.tensor([3, 3]), s[:, :2], reduce, include_self=False),
                     X, S)


def test_index_errors():
    raises_like_torch(lambda t: t.zeros(3, 4).index_add(0, t.tensor([0, 1]), t.ones(3, 4)))
    raises_like_torch(lambda t: t.zeros(3, 4).index_add(3, t.tensor([0, 1]), t.ones(2, 4)))


# ---------------------------------------------------------------- masked_scatter, *_scatter

def test_masked_scatter():
    run_beside_torch(lambda t, x, s: x.masked_scatter(x > 0, s), X, S)
    run_beside_torch(lambda t, x, s: x.masked_scatter(t.tensor([True, False, True, False]), s), X, S)
    run_beside_torch(lambda t, x, s: (x * 1).masked_scatter_(x < 0, s), X, S)
    raises_like_torch(lambda t: t.zeros(3, 4).masked_scatter(t.ones(3, 4, dtype=t.bool), t.ones(2)))


def test_select_slice_diagonal_scatter():
    run_beside_torch(lambda t, x, s: t.select_scatter(x, s[0], 0, 1), X, S)
    run_beside_torch(lambda t, x, s: x.select_scatter(s[:, 0], 1, -1), X, S)
    run_beside_torch(lambda t, x, s: t.slice_scatter(x, s[:, :2], 1, 1, None, 2), X, S)
    run_beside_torch(lambda t, x, s: x.slice_scatter(s[:1]), X[:1], S)
    run_beside_torch(lambda t, x, s: t.diagonal_scatter(x, s[0, :3], 1), X, S)
    run_beside_torch(lambda t, x, s: x.diagonal_scatter(s[0, :2], -1), X, S)


def test_take_along_dim_argwhere_unravel_index():
    run_beside_torch(lambda t, x: t.take_along_dim(x, t.tensor([[0], [2], [1]]), 1), X)
    run_beside_torch(lambda t, x: x.take_along_dim(t.tensor([[0, 3]]), dim=1), X)
    run_beside_torch(lambda t, x: t.take_along_dim(x, t.tensor([5, 1])), X)
    run_beside_torch(lambda t, x: t.argwhere(x > 0), X)
    got = gw.unravel_index(gw.tensor([5, 7, -1]), (3, 4))
    expected = torch.unravel_index(torch.tensor([5, 7, -1]), (3, 4))
    assert [g.tolist() for g in got] == [e.tolist() for e in expected]


# ---------------------------------------------------------------- shape ops

def joined(split):
    """A split's outputs as one tensor (each part reaches the backward)."""
    return lambda t, *a: t.cat([part.reshape(-1) for part in split(t, *a)])


def test_views_as_strided_unfold_broadcast_to():
    run_beside_torch(lambda t, x: x.as_strided((2, 2), (1, 2), 1), X)
    run_beside_torch(lambda t, x: t.as_strided(x, (3, 3), (1, 1)), X)  # overlapping windows
    run_beside_torch(lambda t, x: x.t().as_strided((2, 2), (4, 1)), X)
    for dim, size, step in ((1, 2, 1), (0, 2, 1), (1, 3, 2)):
        y = run_beside_torch(lambda t, x: x.unfold(dim, size, step), X)
        assert y._base is not None
    run_beside_torch(lambda t, x: t.broadcast_to(x, (2, 3, 4)), X)
    run_beside_torch(lambda t, x: x.unflatten(1, (2, -1)), X)
    run_beside_torch(lambda t, x: x.t().ravel(), X)


def test_tile_and_rotations():
    run_beside_torch(lambda t, x: x.tile((2,)), X)
    run_beside_torch(lambda t, x: t.tile(x, (2, 1, 2)), X)
    for k in (1, 2, 3, -1, 0):
        run_beside_torch(lambda t, x: x.rot90(k), X)
    run_beside_torch(lambda t, x: t.rot90(x, 1, [1, 0]), X)
    run_beside_torch(lambda t, x: x.fliplr(), X)
    run_beside_torch(lambda t, x: t.flipud(x), X)


def test_splits():
    run_beside_torch(joined(lambda t, x: x.tensor_split(3, 1)), X)
    run_beside_torch(joined(lambda t, x: t.tensor_split(x, [1, 5], 1)), X)
    run_beside_torch(joined(lambda t, x: x.tensor_split(t.tensor([1, 2]))), X)
    run_beside_torch(joined(lambda t, x: x.hsplit(2)), X)
    run_beside_torch(joined(lambda t, x: t.vsplit(x, [1])), X)
    run_beside_torch(joined(lambda t, x: x.reshape(1, 3, 4).dsplit(2)), X)
    run_beside_torch(joined(lambda t, x: x.split_with_sizes([1, 3], 1)), X)
    run_beside_torch(joined(lambda t, x: x.unsafe_split(2, 1)), X)
    run_beside_torch(joined(lambda t, x: t.unsafe_chunk(x, 2)), X)
    parts = gw.tensor(X, requires_grad=True).unsafe_split(2)
    assert [p.grad_fn.name() for p in parts] == ["UnsafeSplitBackward0"] * 2 and parts[0]._base is None


def test_diff_atleast_and_stacks():
    run_beside_torch(lambda t, x: x.diff(), X)
    run_beside_torch(lambda t, x: t.diff(x, n=2, dim=0), X)
    run_beside_torch(lambda t, x, s: x.diff(prepend=s[:, :1], append=s), X, S)
    run_beside_torch(lambda t, x: (x > 0).diff(), X)
    run_beside_torch(lambda t, x: t.atleast_1d(x.sum()), X)
    run_beside_torch(lambda t, x: t.atleast_2d(x[0]), X)
    run_beside_torch(lambda t, x: t.atleast_3d(x), X)
    run_beside_torch(lambda t, x: t.atleast_3d(x[0]), X)
    assert [tuple(a.shape) for a in gw.atleast_2d(gw.zeros(2), gw.zeros(()))] == [(1, 2), (1, 1)]
    run_beside_torch(lambda t, x, s: t.column_stack([x[0], s[1]]), X, S)
    run_beside_torch(lambda t, x, s: t.column_stack([x, s[:, 0]]), X, S)
    run_beside_torch(lambda t, x, s: t.block_diag(x, s[0], s[1, 1]), X, S)
    run_beside_torch(lambda t, x, s: t.cartesian_prod(x[0], s[0, :2]), X, S)
    run_beside_torch(lambda t, x: t.combinations(x[0]), X)
    run_beside_torch(lambda t, x: t.combinations(x[0], 3, with_replacement=True), X)


def test_diagonals_triangles_vander():
    run_beside_torch(lambda t, x: x.diag_embed(), X)
    run_beside_torch(lambda t, x: t.diag_embed(x, 1, 0, 2), X)
    run_beside_torch(lambda t, x: x.diagflat(-1), X)
    run_beside_torch(lambda t, x: x[0].diagflat(), X)
    run_beside_torch(lambda t: t.tril_indices(3, 4, 1))
    run_beside_torch(lambda t: t.triu_indices(4, 3, -1))
    run_beside_torch(lambda t: t.tril_indices(3, 3, dtype=t.int32))
    run_beside_torch(lambda t: t.vander(t.tensor([1, 2, 3])))
    # (PyTorch's own vander backward fails on its version check: values only, gradient by hand)
    run_beside_torch(lambda t, x: t.vander(x[0], 3, True), X, grad=False)
    x = gw.tensor([2.0, 3.0], requires_grad=True)
    gw.vander(x, 3).sum().backward()  # d/dx (x**2 + x + 1) = 2x + 1
    assert x.grad.tolist() == [5.0, 7.0]


def test_shape_errors():
    for bad in (lambda t: t.zeros(3, 4).unflatten(1, (3, 2)),
                lambda t: t.zeros(4).rot90(),
                lambda t: t.zeros(3, 4).rot90(1, [0, 0]),
                lambda t: t.zeros(3, 4).hsplit(3),
                lambda t: t.zeros(3).vsplit(1),
                lambda t: t.zeros(3).unfold(0, 4, 1),
                lambda t: t.zeros(()).diff(),
                lambda t: t.combinations(t.zeros(2, 3)),
                lambda t: t.block_diag(t.zeros(2, 2, 2)),
                lambda t: t.zeros(3).fliplr()):
        raises_like_torch(bad)


# ---------------------------------------------------------------- small queries and factories

def test_queries_beside_torch():
    for lib in (torch, gw):
        x = lib.zeros(3, 4)
        assert (x.nbytes, x.itemsize, x.ndimension()) == (48, 4, 2)
        assert lib.is_nonzero(lib.tensor([2])) and x.is_same_size(lib.zeros(3, 4))
        assert not lib.is_signed(lib.tensor([1], dtype=lib.uint8)) and lib.tensor([1.0]).is_signed()
        assert not lib.is_complex(x)
        assert str(lib.result_type(lib.tensor([1]), 2.5)).endswith("float32")
        assert str(lib.result_type(lib.tensor(1.0, dtype=lib.float64), lib.zeros(2))).endswith("float32")
        assert [lib.can_cast(a, b) for a, b in ((lib.int32, lib.bool), (lib.bool, lib.int8),
                                                (lib.float64, lib.float16), (lib.float, lib.int))] == [
            False, True, True, False]
        assert lib.empty_strided((2, 3), (1, 2)).stride() == (1, 2)
        assert x.new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)
        assert str(lib.scalar_tensor(3).dtype).endswith("float32") and lib.scalar_tensor(3).item() == 3.0
        lib.fill_(x, 2.0)
        assert x.sum().item() == 24.0 and lib.zero_(x) is x and x.sum().item() == 0.0
        y = lib.ones(2, requires_grad=True) * 2
        assert lib.detach_(y) is y and y.grad_fn is None
        a = np.zeros(2)
        shared = lib.asarray(a)
        a[0] = 5
        assert shared.tolist() == [5.0, 0.0] and lib.asarray(x) is x
        assert str(lib.asarray([1, 2]).dtype).endswith("int64")
    raises_like_torch(lambda t: t.tensor([1, 2]).is_nonzero())
    raises_like_torch(lambda t: t.tensor([]).is_nonzero())


# ---------------------------------------------------------------- functional ops at the top level

A = rng.standard_normal((4, 5))
B = rng.standard_normal((4, 5))
IMAGES = rng.standard_normal((2, 8, 3, 3))
SIGNALS = rng.standard_normal((2, 3, 8))


def test_pixel_shuffle_prelu_constant_pad():
    run_beside_torch(lambda t, y: t.pixel_shuffle(y, 2), IMAGES)
    run_beside_torch(lambda t, y: t.nn.functional.pixel_unshuffle(y, 3), IMAGES)
    run_beside_torch(lambda t, a, w: t.prelu(a, w), A, np.array([0.2]))
    run_beside_torch(lambda t, y, w: t.nn.functional.prelu(y, w), IMAGES, rng.standard_normal(8))
    run_beside_torch(lambda t, a: t.constant_pad_nd(a, (1, 2)), A)
    run_beside_torch(lambda t, a: t.constant_pad_nd(a, (1, -2, 0, 1), 3.0), A)
    raises_like_torch(lambda t: t.pixel_shuffle(t.zeros(1, 3, 2, 2), 2))


def test_one_d_pools_are_the_two_d_pools_between_unsqueeze_and_squeeze():
    y = run_beside_torch(lambda t, z: t.max_pool1d(z, 2), SIGNALS)
    assert y.grad_fn.next_functions[0][0].name() == "MaxPool2DWithIndicesBackward0"
    run_beside_torch(lambda t, z: t.nn.functional.max_pool1d(z, 3, 2, 1), SIGNALS)
    run_beside_torch(lambda t, z: t.avg_pool1d(z, 2), SIGNALS)
    run_beside_torch(lambda t, z: t.adaptive_avg_pool1d(z, 3), SIGNALS)


def test_similarities_and_kl_div_and_rms_norm():
    run_beside_torch(lambda t, a, b: t.cosine_similarity(a, b), A, B)
    run_beside_torch(lambda t, a, b: t.nn.functional.cosine_similarity(a, b, dim=0), A, B)
    d = gw.pairwise_distance(gw.tensor(A), gw.tensor(B))  # (PyTorch's node: NormBackward1)
    np.testing.assert_allclose(d.numpy(), torch.pairwise_distance(torch.tensor(A), torch.tensor(B)).numpy())
    run_beside_torch(lambda t, a, b: t.kl_div(a, b.abs()), A, B)  # reduces nothing by default
    run_beside_torch(lambda t, a, b: t.kl_div(a, b.abs(), 1), A, B)
    run_beside_torch(lambda t, a, b: t.nn.functional.kl_div(a, b.abs(), reduction="batchmean"), A, B)
    run_beside_torch(lambda t, a, b: t.nn.functional.kl_div(a, b, reduction="sum", log_target=True), A, B)
    run_beside_torch(lambda t, a: t.rms_norm(a, (5,)), A)
    run_beside_torch(lambda t, a, w: t.nn.functional.rms_norm(a, [5], w, 1e-3), A, B[0])


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"])
def test_dropouts_draw_pytorchs_masks(name):
    def drop(t, y):
        t.manual_seed(3)
        return getattr(t, name)(y, 0.4, True)

    run_beside_torch(drop, IMAGES)


def test_torch_forms_take_pytorchs_positional_arguments():
    def drop_(t, a):
        t.manual_seed(3)
        return t.dropout_(a * 1, 0.4, True)

    run_beside_torch(drop_, A)
    run_beside_torch(lambda t, w: t.embedding(w, t.tensor([[0, 2], [3, 3]])), A)
    run_beside_torch(lambda t, w: t.embedding(w, t.tensor([[0, 2], [3, 3]]), 3), A)
    run_beside_torch(lambda t, a, w, b: t.layer_norm(a, (5,), w, b, 1e-5, False), A, B[0], B[1])
    stats = (lambda t: t.zeros(8, dtype=t.float64), lambda t: t.ones(8, dtype=t.float64))
    run_beside_torch(lambda t, y: t.batch_norm(y, None, None, stats[0](t), stats[1](t), True, 0.1, 1e-5, False),
                     IMAGES)
    run_beside_torch(lambda t, y: t.instance_norm(y, None, None, None, None, True, 0.1, 1e-5, False), IMAGES)
    run_beside_torch(lambda t, y: t.max_pool2d(y, 2), IMAGES)
    weight = rng.standard_normal((4, 8, 2, 2))
    run_beside_torch(lambda t, y, w: t.conv2d(y, w, None, 1, 1), IMAGES, weight)
    run_beside_torch(lambda t, y, w: t.conv_transpose2d(y, w), IMAGES, weight.reshape(8, 4, 2, 2))
    target = 1 / (1 + np.exp(-B))
    run_beside_torch(lambda t, a: t.binary_cross_entropy_with_logits(a, t.tensor(target), None, None, 2), A)


def test_group_norm():
    y = run_beside_torch(lambda t, x: t.group_norm(x, 4), IMAGES)
    assert (y.grad_fn._saved_N, y.grad_fn._saved_C, y.grad_fn._saved_HxW, y.grad_fn._saved_group) == (2, 8, 9, 4)
    run_beside_torch(lambda t, x, w, b: t.nn.functional.group_norm(x, 2, w, b), IMAGES, rng.standard_normal(8),
                     rng.standard_normal(8))
    run_beside_torch(lambda t, x, w: t.group_norm(x.reshape(2, 8, 9), 8, w), IMAGES, rng.standard_normal(8))
    raises_like_torch(lambda t: t.group_norm(t.zeros(2, 6, 3), 4))


def test_conv1d_and_conv_transpose1d():
    weight = rng.standard_normal((4, 3, 3))
    y = run_beside_torch(lambda t, z, w: t.conv1d(z, w), SIGNALS, weight)
    assert y.grad_fn._saved_stride == (1,) and len(y.grad_fn.next_functions) == 3  # (the bias edge)
    run_beside_torch(lambda t, z, w, b: t.nn.functional.conv1d(z, w, b, 2, 1, 2), SIGNALS, weight,
                     rng.standard_normal(4))
    run_beside_torch(lambda t, z, w: t.nn.functional.conv1d(z, w, groups=3, padding="same"), SIGNALS,
                     rng.standard_normal((6, 1, 3)))
    run_beside_torch(lambda t, z, w: t.conv1d(z[0], w), SIGNALS, weight)  # unbatched
    weight_t = rng.standard_normal((3, 2, 3))
    run_beside_torch(lambda t, z, w: t.conv_transpose1d(z, w), SIGNALS, weight_t)
    run_beside_torch(lambda t, z, w, b: t.nn.functional.conv_transpose1d(z, w, b, 2, 1, 1), SIGNALS, weight_t,
                     rng.standard_normal(2))
    # create_graph: the gradient of a gradient, as PyTorch's
    sums = []
    for lib in (torch, gw):
        x, w = lib.tensor(SIGNALS, requires_grad=True), lib.tensor(weight, requires_grad=True)
        g, = lib.autograd.grad(lib.conv1d(x, w).sum(), x, create_graph=True)
        (g ** 2).sum().backward()
        sums.append(w.grad.numpy())
    np.testing.assert_allclose(sums[1], sums[0], rtol=1e-12)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 1.5, float("inf"), 0.0])
def test_cdist_and_pdist(p):
    rows, others = rng.standard_normal((6, 4)), rng.standard_normal((5, 4))
    run_beside_torch(lambda t, a, b: t.cdist(a, b, p), rows, others)
    run_beside_torch(lambda t, a: t.pdist(a, p), rows)
    run_beside_torch(lambda t, a: t.nn.functional.pdist(a, p), rows)


def test_cdist_takes_the_matrix_product_path_as_pytorch():
    many, others = rng.standard_normal((30, 4)), rng.standard_normal((5, 4))
    run_beside_torch(lambda t, a, b: t.cdist(a, b), many, others)  # ViewBackward0 over the product
    run_beside_torch(lambda t, a, b: t.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), others, others)
    run_beside_torch(lambda t, a, b: t.cdist(a.reshape(2, 15, 4), b), many, others)
    raises_like_torch(lambda t: t.cdist(t.zeros(3, 4), t.zeros(2, 3)))


# ---------------------------------------------------------------- forward mode

def jvp_beside_torch(fn, *arrays):
    results = []
    for lib in (torch, gw):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(a), lib.tensor(0.5 + 0.1 * a)) for a in arrays]
            primal, tangent = fw.unpack_dual(fn(lib, *duals))
            results.append((primal.numpy().copy(), tangent.numpy().copy()))
    (p_t, t_t), (p_g, t_g) = results
    np.testing.assert_allclose(p_g, p_t)
    np.testing.assert_allclose(t_g, t_t, rtol=1e-10, atol=1e-12)


def test_forward_mode_tangents():
    index = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
    jvp_beside_torch(lambda t, x, s: x.scatter_add(0, t.tensor(index), s[:2]), X, S)
    jvp_beside_torch(lambda t, x, s: x.index_add(1, t.tensor([0, 2]), s[:, :2], alpha=2), X, S)
    jvp_beside_torch(lambda t, x, s: x.index_copy(1, t.tensor([3, 1]), s[:, :2]), X, S)
    jvp_beside_torch(lambda t, x: x.index_fill(1, t.tensor([3, 1]), 2.5), X)
    jvp_beside_torch(lambda t, x, s: x.masked_scatter(t.tensor(X > 0), s), X, S)
    jvp_beside_torch(lambda t, x, s: t.select_scatter(x, s[0], 0, 1), X, S)
    jvp_beside_torch(lambda t, x, s: t.slice_scatter(x, s[:, :2], 1, 1, None, 2), X, S)
    jvp_beside_torch(lambda t, x, s: t.diagonal_scatter(x, s[0, :3], 1), X, S)
    jvp_beside_torch(lambda t, x: x.unfold(1, 2, 1), X)
    jvp_beside_torch(lambda t, x: x.rot90(1), X)
    jvp_beside_torch(lambda t, x: x.diag_embed(), X)
    jvp_beside_torch(lambda t, y: t.pixel_shuffle(y, 2), IMAGES)
    jvp_beside_torch(lambda t, y: t.nn.functional.pixel_unshuffle(y, 3), IMAGES)
    jvp_beside_torch(lambda t, x: t.constant_pad_nd(x, (1, -2, 0, 1), 3.0), X)
    jvp_beside_torch(lambda t, x, w: t.prelu(x, w), X, np.array([0.3]))
