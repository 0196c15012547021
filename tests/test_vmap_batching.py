"""vmap with batching rules, and the transforms built on it, beside torch.func.

Each op inside vmap runs once on the whole batch (``gradwalk/func/_batching.py``); these tests
check that the values are torch.func's, that elementwise functions give the same bits as the
unbatched call, and that an op without a rule still works, with PyTorch's warning.
"""
import warnings

import numpy as np
import pytest
import torch

import gradwalk as gw
from gradwalk.func import _batching


def both(array, dtype=np.float64):
    array = np.asarray(array, dtype=dtype)
    return gw.tensor(array), torch.tensor(array)


def close(ours, theirs, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(np.asarray(ours.detach().numpy()), theirs.detach().numpy(), rtol=rtol, atol=atol)


rng = np.random.default_rng(0)


def test_elementwise_function_is_bit_equal_to_the_unbatched_call():
    x = gw.tensor(rng.standard_normal((7, 5)).astype(np.float32))

    def f(x):
        return gw.tanh(x) * gw.sigmoid(x + 0.5) - x.exp() / 3 + gw.relu(x) ** 2

    assert np.array_equal(gw.func.vmap(f)(x).numpy(), f(x).numpy())


def test_vmap_values_match_torch_func_on_reductions_views_and_matmul():
    xs, xt = both(rng.standard_normal((4, 3, 5)))
    ws, wt = both(rng.standard_normal((5, 2)))

    def make(lib):
        def f(x, w):
            y = (x @ w).softmax(-1) + x.sum(1).unsqueeze(-1)[:, :1]
            z = y.t().reshape(-1).view(2, 3).transpose(0, 1).expand(2, 3, 2)
            return z.mean(dim=(0, 2)) + x.amax() + x[1:, ::2].std() + lib.nn.functional.log_softmax(x, 1)[0, :3]
        return f

    close(gw.func.vmap(make(gw), in_dims=(0, None))(xs, ws), torch.func.vmap(make(torch), in_dims=(0, None))(xt, wt))


def test_in_dims_and_out_dims_as_pytorch():
    xs, xt = both(rng.standard_normal((3, 4)))
    ys, yt = both(rng.standard_normal((4,)))

    def f(x, y):
        return x * y, x.sum()

    ours = gw.func.vmap(f, in_dims=(1, 0), out_dims=(1, 0))(xs, ys)
    theirs = torch.func.vmap(f, in_dims=(1, 0), out_dims=(1, 0))(xt, yt)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        close(a, b)
    # an output that does not depend on the batch is expanded, as in PyTorch
    out = gw.func.vmap(lambda x: ys, in_dims=1)(xs)
    assert tuple(out.shape) == tuple(torch.func.vmap(lambda x: yt, in_dims=1)(xt).shape)


def test_nested_vmap_matches_torch():
    xs, xt = both(rng.standard_normal((2, 3, 4)))
    ws, wt = both(rng.standard_normal((4, 4)))

    def f(row, w):
        return (w @ row).tanh().sum()

    ours = gw.func.vmap(gw.func.vmap(f, in_dims=(0, None)), in_dims=(0, None))(xs, ws)
    theirs = torch.func.vmap(torch.func.vmap(f, in_dims=(0, None)), in_dims=(0, None))(xt, wt)
    close(ours, theirs)
    # the inner vmap over a different dim of the same input
    ours = gw.func.vmap(gw.func.vmap(lambda v: v * v.sum(), in_dims=1), in_dims=2)(xs)
    theirs = torch.func.vmap(torch.func.vmap(lambda v: v * v.sum(), in_dims=1), in_dims=2)(xt)
    close(ours, theirs)


def test_errors_as_pytorch():
    xs = gw.randn(3, 2)
    with pytest.raises(ValueError, match="at least one input must be mapped over"):
        gw.func.vmap(lambda x: x, in_dims=None)(xs)
    with pytest.raises(ValueError, match="Expected all tensors to have the same size in the mapped dimension"):
        gw.func.vmap(lambda x, y: x + y)(xs, gw.randn(4, 2))
    with pytest.raises(RuntimeError, match="calling .item"):
        gw.func.vmap(lambda x: x.sum().item())(xs)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        gw.func.vmap(lambda x: x if x.sum() > 0 else -x)(xs)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        gw.func.vmap(lambda x: x, randomness="sometimes")
    with pytest.raises(RuntimeError):  # torch raises the same: a batched tensor written into an unbatched one
        gw.func.vmap(lambda x: gw.zeros(2).add_(x))(xs)


# ---------------------------------------------------------------- randomness="error" / "different" / "same"

RANDOM_CASES = {
    "rand": lambda lib, x: lib.rand(3),
    "randn of 20 (16 at a time)": lambda lib, x: lib.randn(20),
    "rand_like": lambda lib, x: lib.rand_like(x),
    "randn_like": lambda lib, x: lib.randn_like(x),
    "x + rand": lambda lib, x: x + lib.rand(3, dtype=lib.float64),
    "randint": lambda lib, x: lib.randint(0, 10, (3,)),
    "randperm": lambda lib, x: lib.randperm(5),
    "normal of numbers": lambda lib, x: lib.normal(0.0, 1.0, (3,)),
    "normal_ of a batched tensor": lambda lib, x: x.clone().normal_(),
    "uniform_ of a batched tensor": lambda lib, x: x.clone().uniform_(-1, 1),
    "bernoulli_ of a batched tensor": lambda lib, x: x.clone().bernoulli_(0.3),
    "normal_ of an unbatched tensor": lambda lib, x: lib.zeros(3, dtype=lib.float64).normal_() + x,
    "bernoulli_ with batched p": lambda lib, x: lib.zeros(3, dtype=lib.float64).bernoulli_(x * 0.5),
    "dropout": lambda lib, x: lib.nn.functional.dropout(x + 1, 0.5),
    "dropout in place": lambda lib, x: lib.nn.functional.dropout(x.clone(), 0.5, inplace=True),
    "dropout, p=0 (nothing drawn)": lambda lib, x: lib.nn.functional.dropout(x, 0.0),
    "dropout, eval (nothing drawn)": lambda lib, x: lib.nn.functional.dropout(x, 0.5, training=False),
    "bernoulli": lambda lib, x: lib.bernoulli(x * 0.5),
    "multinomial": lambda lib, x: lib.multinomial(x, 2),
    "multinomial with replacement": lambda lib, x: lib.multinomial(x, 5, replacement=True),
    "normal(mean)": lambda lib, x: lib.normal(x, 2.0),
    "normal(mean, std)": lambda lib, x: lib.normal(x, x),
    "normal(unbatched mean)": lambda lib, x: lib.normal(lib.ones(3, dtype=lib.float64), 2.0) + x,
}


def run_random(lib, f, randomness, data):
    lib.manual_seed(0)
    try:
        return lib.func.vmap(lambda x: f(lib, x), randomness=randomness)(lib.tensor(data))
    except RuntimeError as e:
        return e


@pytest.mark.parametrize("randomness", ["error", "different", "same"])
@pytest.mark.parametrize("case", list(RANDOM_CASES))
def test_random_ops_under_vmap_follow_randomness_as_pytorch(case, randomness):
    # "error" raises PyTorch's error; "different" draws the whole batch at once (rand(3) under
    # a vmap of 4 is rand(4, 3)'s values), "same" one sample's draw for all: PyTorch's values
    data = np.random.default_rng(0).random((4, 3)) + 0.1
    ours = run_random(gw, RANDOM_CASES[case], randomness, data)
    theirs = run_random(torch, RANDOM_CASES[case], randomness, data)
    if isinstance(theirs, Exception):
        assert isinstance(ours, RuntimeError), ours
        assert str(ours) == str(theirs).split("\n")[0]
    else:
        assert not isinstance(ours, Exception), ours
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert np.array_equal(ours.numpy(), theirs.numpy())


def test_nested_randomness_and_jacfwd_randomness_as_pytorch():
    data = np.random.default_rng(1).random((4, 2, 3)) + 0.1

    def nested(lib, outer, inner):
        lib.manual_seed(0)
        f = lib.func.vmap(lib.func.vmap(lambda y: lib.rand(3, dtype=lib.float64) * y, randomness=inner),
                          randomness=outer)
        return f(lib.tensor(data))

    for outer, inner in (("different", "different"), ("same", "different"), ("different", "same")):
        assert np.array_equal(nested(gw, outer, inner).numpy(), nested(torch, outer, inner).numpy())
    for mode in ("same", "different"):
        jac = []
        for lib in (gw, torch):
            lib.manual_seed(0)
            jac.append(lib.func.jacfwd(lambda x: x * lib.rand(3, dtype=lib.float64), randomness=mode)(
                lib.tensor(np.ones(3))).numpy())
        assert np.array_equal(*jac)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        gw.func.jacfwd(lambda x: x * gw.rand(3, dtype=gw.float64))(gw.ones(3, dtype=gw.float64))


def test_an_op_without_a_rule_loops_and_warns_once_naming_it():
    xs, xt = both(rng.standard_normal((3, 4)))
    _batching._warned.discard("CumsumBackward0")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = gw.func.vmap(lambda x: x.cumsum(0) * 2)(xs)
        gw.func.vmap(lambda x: x.cumsum(0))(xs)
    messages = [str(w.message) for w in caught if "performance drop" in str(w.message)]
    assert len(messages) == 1 and "CumsumBackward0" in messages[0]
    close(ours, torch.func.vmap(lambda x: x.cumsum(0) * 2)(xt))


# ---------------------------------------------------------------- the jacobians/hessians tutorial

def predict(lib):
    def f(weight, bias, x):
        return lib.nn.functional.linear(x, weight, bias).tanh()
    return f


@pytest.mark.parametrize("d_in,d_out", [(16, 16), (5, 9), (9, 5)])
def test_jacrev_jacfwd_hessian_as_torch_func(d_in, d_out):
    (ws, wt), (bs, bt), (xs, xt) = (both(rng.standard_normal(s)) for s in ((d_out, d_in), (d_out,), (d_in,)))
    for transform in ("jacrev", "jacfwd"):
        ours = getattr(gw.func, transform)(predict(gw), argnums=2)(ws, bs, xs)
        theirs = getattr(torch.func, transform)(predict(torch), argnums=2)(wt, bt, xt)
        close(ours, theirs)
    close(gw.func.hessian(predict(gw), argnums=2)(ws, bs, xs),
          torch.func.hessian(predict(torch), argnums=2)(wt, bt, xt))
    # the Jacobian with respect to two arguments at once, and the batch Jacobian
    ours = gw.func.jacrev(predict(gw), argnums=(0, 1))(ws, bs, xs)
    theirs = torch.func.jacrev(predict(torch), argnums=(0, 1))(wt, bt, xt)
    for a, b in zip(ours, theirs):
        close(a, b)
    batch_s, batch_t = both(rng.standard_normal((4, d_in)))
    ours = gw.func.vmap(gw.func.jacrev(predict(gw), argnums=2), in_dims=(None, None, 0))(ws, bs, batch_s)
    theirs = torch.func.vmap(torch.func.jacrev(predict(torch), argnums=2), in_dims=(None, None, 0))(wt, bt, batch_t)
    close(ours, theirs)


def test_vmap_of_a_vjp_function_over_unit_vectors():
    (ws, wt), (bs, bt), (xs, xt) = (both(rng.standard_normal(s)) for s in ((6, 4), (6,), (4,)))
    _, vjp_ours = gw.func.vjp(lambda x: predict(gw)(ws, bs, x), xs)
    _, vjp_theirs = torch.func.vjp(lambda x: predict(torch)(wt, bt, x), xt)
    close(gw.func.vmap(vjp_ours)(gw.eye(6, dtype=gw.float64))[0],
          torch.func.vmap(vjp_theirs)(torch.eye(6, dtype=torch.float64))[0])


def test_hessian_of_a_scalar_function_and_jacfwd_of_jacrev():
    xs, xt = both(rng.standard_normal(7))

    def f(x):
        return (x.sin() * x.exp()).sum() + (x @ x) ** 2

    close(gw.func.hessian(f)(xs), torch.func.hessian(f)(xt))
    close(gw.func.jacrev(gw.func.jacrev(f))(xs), torch.func.jacrev(torch.func.jacrev(f))(xt))


def test_jacfwd_computes_the_primal_once_and_batches_only_the_tangents():
    # jacfwd is vmap(jvp) over unit tangents: the primal is the same for every column, so (as in
    # functorch) it stays unbatched and each op's jvp formula runs on the batch of tangents
    (ws, _), (xs, _) = both(rng.standard_normal((3, 4))), both(rng.standard_normal(4))
    seen = []

    def f(x):
        y = ws @ x
        seen.append((tuple(y.shape), _batching.levels_of(y)))
        return y.tanh()

    gw.func.jacfwd(f)(xs)
    assert seen == [((3,), ())]


def test_jacrev_and_hessian_run_the_function_once():
    # the rows of jacrev are one backward pass of the one recorded graph, on a batch of
    # cotangents (functorch's way), not the forward recorded again for the batch
    calls = []

    def f(x):
        calls.append(_batching.levels_of(x))
        return (x * 2).tanh()

    xs, xt = both(rng.standard_normal(3))
    close(gw.func.jacrev(f)(xs), torch.func.jacrev(lambda x: (x * 2).tanh())(xt))
    assert calls == [()]
    calls.clear()
    close(gw.func.hessian(lambda x: f(x).sum())(xs), torch.func.hessian(lambda x: (x * 2).tanh().sum())(xt))
    assert calls == [()]


def make_mixed_cases(lib):
    """jvp with unbatched primals under vmap meeting batched primals, and the nestings of
    jacfwd/jacrev/hessian with vmap around or inside them."""
    r = np.random.default_rng(5)
    x0, w = lib.tensor(r.standard_normal(3)), lib.tensor(r.standard_normal((3, 3)))
    ts, ys = lib.tensor(r.standard_normal((4, 3))), lib.tensor(r.standard_normal((4, 3)))
    fn = lib.func

    def g(x, y):
        return ((x * y) @ w).tanh() + x.sin()

    return {
        "vmap(jvp) with a batched closure": fn.vmap(lambda t, y: fn.jvp(lambda x: g(x, y), (x0,), (t,)))(ts, ys),
        "vmap(jacfwd)": fn.vmap(lambda y: fn.jacfwd(lambda x: g(x, y))(x0))(ys),
        "vmap(hessian)": fn.vmap(lambda y: fn.hessian(lambda x: g(x, y).sum())(x0))(ys),
        "jacfwd(vmap)": fn.jacfwd(lambda x: fn.vmap(lambda y: g(x, y))(ys))(x0),
        "jacfwd(jacfwd)": fn.jacfwd(fn.jacfwd(lambda x: (x @ w).tanh() * x.sum()))(x0),
        "jacrev(jacfwd)": fn.jacrev(fn.jacfwd(lambda x: (x @ w).tanh() * x.sum()))(x0),
        "hessian with indexing": fn.hessian(lambda x: (x ** 2).sum() * x[0] + x[1:].exp().sum())(x0),
    }


@pytest.mark.parametrize("case", list(make_mixed_cases(gw)))
def test_forward_mode_under_vmap_matches_torch_func(case):
    ours, theirs = make_mixed_cases(gw)[case], make_mixed_cases(torch)[case]
    for a, b in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)):
        assert tuple(a.shape) == tuple(b.shape)
        close(a, b)


W45 = np.random.default_rng(3).standard_normal((4, 5))
OP_CASES = {  # one function per op family, of a (3, 4) input
    "exp, log, sqrt": lambda L, x: x.exp() + x.log() * x.sqrt(),
    "pow, 1/x, 2**x": lambda L, x: x ** 3 - 1 / x + 2 ** x,
    "relu, gelu, softplus, silu": lambda L, x: L.relu(x - 1) + L.nn.functional.gelu(x) * L.nn.functional.softplus(x)
    + L.nn.functional.silu(x),
    "softmax, log_softmax": lambda L, x: x.softmax(-1) * x.log_softmax(0),
    "sum, mean, amax, std, prod": lambda L, x: x.sum(1) + x.mean(1) * x.amax(1) - x.std(1) + x.prod(1),
    "max, var, norm (0-dim)": lambda L, x: x.max() * x.var() + x.norm(),
    "0-dim sum of 0-dim": lambda L, x: x.max().sum() * x.min().mean(),
    "logsumexp, cumsum": lambda L, x: x.logsumexp(1).unsqueeze(1) * x.cumsum(1),
    "matmul, einsum, outer": lambda L, x: (x @ L.tensor(W45)).sum(0) + L.einsum("ij,jk->k", x, L.tensor(W45))
    + L.outer(x[0], x[1]).sum(0).sum(),
    "indexing, gather, index_select": lambda L, x: x[1:, ::2] * x[0, 1]
    + x.gather(1, L.tensor([[0, 1], [2, 3], [1, 1]]))[:2] + x.index_select(1, L.tensor([0, 3]))[:2],
    "cat, stack, split, unbind": lambda L, x: L.cat([x, x * 2], 1)[:, 2:6] + L.stack([x, x.exp()]).sum(0)
    + x.split(2, 1)[1].repeat(1, 2) + x.unbind(0)[2],
    "where, clamp, abs, masked_fill": lambda L, x: L.where(x > 1, x, x ** 2) + x.clamp(0.7, 1.2) + (x - 1).abs()
    + x.masked_fill(x > 1.2, 0.0),
    "views: t, permute, expand, flip, roll": lambda L, x: x.t().t() * x[:1].expand(3, 4) + x.flip(0).roll(1, 1)
    + x.unsqueeze(0).permute(1, 2, 0).squeeze(-1),
    "topk, sort, tril, diagonal, trace": lambda L, x: x.topk(2, 1)[0].sum(1) + x.sort(1)[0][:, 0]
    + x[:, :3].tril().sum(1) + x[:, :3].diagonal() * x[:, :3].trace(),
    "losses: mse, cross_entropy, bce": lambda L, x: L.nn.functional.mse_loss(x, L.ones(3, 4, dtype=L.float64))
    + L.nn.functional.cross_entropy(x, L.tensor([0, 3, 1]))
    + L.nn.functional.binary_cross_entropy(x.sigmoid(), L.ones(3, 4, dtype=L.float64) * 0.3),
    "conv2d, max_pool2d, avg_pool2d": lambda L, x: L.nn.functional.conv2d(
        x.reshape(1, 1, 3, 4), L.ones(1, 1, 2, 2, dtype=L.float64)).sum() * L.nn.functional.max_pool2d(
        x.reshape(1, 1, 3, 4), 2).sum() + L.nn.functional.avg_pool2d(x.reshape(1, 1, 3, 4), 2).sum(),
    "embedding": lambda L, x: L.nn.functional.embedding(L.tensor([0, 2, 2]), x) * 2,
}


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "hessian"])
@pytest.mark.parametrize("case", list(OP_CASES))
def test_jacobians_and_hessians_of_op_families_as_torch_func(case, transform):
    x = np.random.default_rng(4).random((3, 4)) + 0.5
    results = []
    for lib in (gw, torch):
        f = OP_CASES[case]
        g = (lambda x, lib=lib: f(lib, x).sum() ** 2) if transform == "hessian" else (lambda x, lib=lib: f(lib, x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an op without a rule loops (and says so): not the point here
            results.append(getattr(lib.func, transform)(g)(lib.tensor(x)))
    close(*results)


# ---------------------------------------------------------------- per-sample gradients

def test_per_sample_gradients_of_an_mlp_as_torch_func():
    gw.manual_seed(0)
    torch.manual_seed(0)
    models = [lib.nn.Sequential(lib.nn.Linear(10, 16), lib.nn.ReLU(), lib.nn.Linear(16, 16), lib.nn.Tanh(),
                                lib.nn.Linear(16, 3)) for lib in (gw, torch)]
    data = rng.standard_normal((8, 10)).astype(np.float32)
    targets = rng.integers(0, 3, 8)

    def per_sample(lib, model):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(params, sample, target):
            out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))

        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(data), lib.tensor(targets))

    ours, theirs = per_sample(gw, models[0]), per_sample(torch, models[1])
    assert ours.keys() == theirs.keys()
    for name in ours:
        assert tuple(ours[name].shape) == tuple(theirs[name].shape)
        close(ours[name], theirs[name], rtol=1e-4, atol=1e-6)


def test_bmm_with_an_operand_expanded_along_the_batch_and_outer_products():
    # vmap's per-sample copies of a weight are expanded views; bmm folds them into one product
    a, w, col = (rng.standard_normal(s) for s in ((5, 2, 3), (3, 4), (5, 3, 1)))
    cases = [lambda lib, a, w, col: lib.bmm(a, w.expand(5, 3, 4)),
             lambda lib, a, w, col: lib.bmm(w.t().expand(5, 4, 3), a.transpose(1, 2)),
             lambda lib, a, w, col: lib.bmm(w.expand(5, 3, 4).transpose(1, 2), w.t()[:3].expand(5, 3, 3)),
             lambda lib, a, w, col: lib.bmm(col, a[:, :1, :])]  # (5, 3, 1) @ (5, 1, 3): outer products
    for case in cases:
        ours = [gw.tensor(x, requires_grad=True) for x in (a, w, col)]
        theirs = [torch.tensor(x, requires_grad=True) for x in (a, w, col)]
        out_s, out_t = case(gw, *ours), case(torch, *theirs)
        close(out_s, out_t)
        out_s.sum().backward()
        out_t.sum().backward()
        for x, y in zip(ours, theirs):
            if y.grad is not None:
                close(x.grad, y.grad)
    col32, row32 = rng.standard_normal((4, 6, 1)).astype(np.float32), rng.standard_normal((4, 1, 5)).astype(np.float32)
    assert np.array_equal(gw.bmm(gw.tensor(col32), gw.tensor(row32)).numpy(), np.matmul(col32, row32))


def test_per_sample_gradients_of_mse_and_a_batched_embedding_lookup():
    table_s, table_t = both(rng.standard_normal((27, 4)))
    idx = rng.integers(0, 27, (5, 3))
    ys, yt = both(rng.standard_normal((5, 12)))

    def make(lib, table):
        def loss(table, index, y):
            return lib.nn.functional.mse_loss(lib.nn.functional.embedding(index, table).reshape(-1), y)
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))

    close(make(gw, table_s)(table_s, gw.tensor(idx), ys), make(torch, table_t)(table_t, torch.tensor(idx), yt))
