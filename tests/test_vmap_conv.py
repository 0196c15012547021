"""vmap over convolutions and pooling, beside torch.func: per-sample gradients of a small CNN (the
per-sample-gradients tutorial's CNN variant), jacrev/jacfwd/hessian through conv and pooling,
a weight per sample (``in_dims`` on the weight), and an ensemble of CNNs from
``stack_module_state``. Every one of these runs by batching rules (no "performance drop" loop),
and gives the loop's values: the same bits where the loop's products are the same products
(images folded into the batch, weights folded into the groups), within float32 rounding where
a batch of gradients for one image batch is one wider product (the weight gradient of
``vmap(vjp_fn)``/jacrev: the batch's rows stacked as output channels)."""
import warnings

import numpy as np
import pytest
import torch

import gradwalk as gw
from gradwalk import _fast
from gradwalk.ops import nn_ops

PATHS = {"compiled": 0, "reference": 1 << 62}  # nn_ops.CONV_FAST_MIN for each path


@pytest.fixture(params=sorted(PATHS))
def conv_path(request, monkeypatch):
    """Each test once on the compiled im2col/col2im (every size), once on the NumPy path."""
    if request.param == "compiled" and _fast.numba_njit() is None:
        pytest.skip("numba is off (GRADWALK_NO_NUMBA=1) or not installed: only the reference path runs")
    monkeypatch.setattr(nn_ops, "CONV_FAST_MIN", PATHS[request.param])
    return request.param


@pytest.fixture(autouse=True)
def no_fallback():
    """A batching rule missing for any op is a failure here, not a slow loop."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="There is a performance drop")
        yield


def arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def as_numpy(t):
    return t.detach().numpy()


def loop(f, in_dims, args):
    """What vmap computes, one sample at a time."""
    size = next(a.shape[d] for a, d in zip(args, in_dims) if d is not None)
    outs = [f(*[a if d is None else a.select(d, i) for a, d in zip(args, in_dims)]) for i in range(size)]
    if isinstance(outs[0], tuple):
        return tuple(gw.stack([o[k] for o in outs]) for k in range(len(outs[0])))
    return gw.stack(outs)


def check_vmap(make_f, in_dims, values, bits=True):
    """vmap(f) in gradwalk: the loop's bits (or values) and torch.func.vmap's values."""
    ours = make_f(gw)
    args = [gw.tensor(v) for v in values]
    got = gw.func.vmap(ours, in_dims=in_dims)(*args)
    want = torch.func.vmap(make_f(torch), in_dims=in_dims)(*[torch.tensor(v) for v in values])
    by_loop = loop(ours, in_dims, args)
    got, want, by_loop = [r if isinstance(r, tuple) else (r,) for r in (got, want, by_loop)]
    for g, w, lp in zip(got, want, by_loop):
        if bits:
            assert same_bits(as_numpy(g), as_numpy(lp))
        else:
            np.testing.assert_allclose(as_numpy(g), as_numpy(lp), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(as_numpy(g), as_numpy(w), rtol=1e-4, atol=1e-5)


def conv(**kw):
    return lambda lib: (lambda x, w, b: lib.nn.functional.conv2d(x, w, b, **kw))


# ---------------------------------------------------------------- vmap of conv2d itself

@pytest.mark.parametrize("in_dims", [(0, None, None), (None, 0, 0), (None, 0, None), (None, None, 0), (0, 0, 0)])
def test_vmap_conv2d_over_images_weights_or_both(in_dims, conv_path):
    x, w, b = arrays(0, (5, 4, 3, 9, 9), (5, 6, 3, 3, 3), (5, 6))
    values = [v if d is not None else v[0] for v, d in zip((x, w, b), in_dims)]
    check_vmap(conv(padding=1, stride=(1, 2)), in_dims, values)


@pytest.mark.parametrize("in_dims", [(None, 0, 0), (0, 0, 0), (0, None, None)])
def test_vmap_grouped_conv2d(in_dims, conv_path):
    x, w, b = arrays(1, (4, 2, 6, 8, 7), (4, 9, 2, 3, 2), (4, 9))
    values = [v if d is not None else v[0] for v, d in zip((x, w, b), in_dims)]
    check_vmap(conv(groups=3, dilation=(2, 1), padding=(1, 0)), in_dims, values)


@pytest.mark.parametrize("in_dims", [(0, None, None), (None, 0, 0), (0, 0, 0)])
def test_vmap_conv_transpose2d(in_dims, conv_path):
    x, w, b = arrays(2, (3, 2, 4, 5, 5), (3, 4, 3, 3, 3), (3, 3))
    values = [v if d is not None else v[0] for v, d in zip((x, w, b), in_dims)]
    check_vmap(lambda lib: (lambda x, w, b: lib.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1)),
               in_dims, values)


def test_grouped_conv_is_each_groups_conv_bit_for_bit(conv_path):
    # vmap folds a weight per sample into the groups: a conv with G groups must give each
    # group's own conv's bits (the same products), in the forward and both gradients
    x, w, g = arrays(3, (2, 12, 7, 7), (8, 3, 3, 3), (2, 8, 5, 5))
    xs, ws = gw.tensor(x, requires_grad=True), gw.tensor(w, requires_grad=True)
    out = gw.nn.functional.conv2d(xs, ws, groups=4)
    out.backward(gw.tensor(g))
    for k in range(4):
        xk, wk = gw.tensor(x[:, 3 * k:3 * k + 3], requires_grad=True), gw.tensor(w[2 * k:2 * k + 2], requires_grad=True)
        part = gw.nn.functional.conv2d(xk, wk)
        part.backward(gw.tensor(g[:, 2 * k:2 * k + 2]))
        assert same_bits(as_numpy(out)[:, 2 * k:2 * k + 2], as_numpy(part))
        assert same_bits(xs.grad.numpy()[:, 3 * k:3 * k + 3], xk.grad.numpy())
        assert same_bits(ws.grad.numpy()[2 * k:2 * k + 2], wk.grad.numpy())


# ---------------------------------------------------------------- per-sample gradients

def small_cnn(lib):
    """The per-sample-gradients tutorial's CNN, at digits size (1x8x8), with each pooling."""
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3), nn.ReLU(),
                         nn.AvgPool2d(2, 1), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(16, 10))


def same_weights(ours, theirs):
    with gw.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            p.copy_(gw.tensor(q.detach().numpy()))


def per_sample_grads(lib, model, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(params, sample, target):
        out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))

    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y), loss, params


def test_per_sample_gradients_of_a_cnn_beside_torch_func(conv_path):
    ours, theirs = small_cnn(gw), small_cnn(torch)
    same_weights(ours, theirs)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, 6)
    got, loss, params = per_sample_grads(gw, ours, gw.tensor(x), gw.tensor(y))
    want = per_sample_grads(torch, theirs, torch.tensor(x), torch.tensor(y))[0]
    one_by_one = [gw.func.grad(loss)(params, gw.tensor(x[i]), gw.tensor(y[i])) for i in range(6)]
    for name in got:
        assert tuple(got[name].shape) == (6,) + tuple(params[name].shape)
        np.testing.assert_allclose(got[name].numpy(), want[name].numpy(), rtol=1e-4, atol=1e-6)
        # within float32 rounding of the loop: the Linear's batch of 1-row products runs as one
        # (batch, 16) @ (16, 10) product (another BLAS path); conv-only per-sample gradients are
        # the loop's bits (next test)
        loop_values = np.stack([g[name].numpy() for g in one_by_one])
        np.testing.assert_allclose(got[name].numpy(), loop_values, rtol=1e-5, atol=1e-7)


def test_per_sample_gradients_of_input_weight_and_bias(conv_path):
    x, w, b = arrays(5, (4, 3, 7, 7), (4, 5, 3, 3, 3), (4, 5))

    def make(lib):
        def loss(x, w, b):
            return (lib.nn.functional.conv2d(x.unsqueeze(0), w, b, padding=1).tanh() ** 2).sum()
        return lib.func.grad(loss, argnums=(0, 1, 2))

    check_vmap(make, (0, 0, 0), [x, w, b])
    check_vmap(make, (0, None, None), [x, w[0], b[0]])
    check_vmap(make, (None, 0, 0), [x[0], w, b])


def test_per_sample_gradients_through_every_pooling(conv_path):
    (x,) = arrays(6, (5, 3, 9, 9))

    def make(lib):
        F = lib.nn.functional

        def f(x):
            return (F.max_pool2d(x, 3, 2, padding=1).sin().sum() + (F.avg_pool2d(x, 2, padding=1) ** 2).sum()
                    + F.adaptive_avg_pool2d(x, (2, 3)).exp().sum())
        return lib.func.grad(f)

    check_vmap(make, (0,), [x])


# ---------------------------------------------------------------- jacobians and hessians

def test_jacrev_and_jacfwd_through_conv_and_pooling(conv_path):
    x, w = arrays(7, (1, 2, 6, 6), (3, 2, 3, 3))
    results = {}
    for lib in (gw, torch):
        F = lib.nn.functional
        X, W = lib.tensor(x), lib.tensor(w)

        def f(x, w):
            return F.max_pool2d(F.conv2d(x, w, padding=1).tanh(), 2)

        results[lib] = (lib.func.jacrev(f, argnums=(0, 1))(X, W),
                        lib.func.jacfwd(lambda x: F.adaptive_avg_pool2d(F.conv2d(x, W), 2))(X))
    (rev_x, rev_w), fwd = results[gw]
    (want_x, want_w), want_fwd = results[torch]
    assert tuple(rev_x.shape) == tuple(want_x.shape) == (1, 3, 3, 3, 1, 2, 6, 6)
    for got, want in ((rev_x, want_x), (rev_w, want_w), (fwd, want_fwd)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_vmap_of_vjp_through_conv_matches_the_loop(conv_path):
    # jacrev's rows: one backward pass on a batch of cotangents. Input and bias gradients are
    # the loop's bits; the weight gradient is one product over the stacked cotangents (within
    # float32 rounding of the loop's)
    x, w, b = arrays(8, (2, 3, 8, 8), (4, 3, 3, 3), (4,))
    out, vjp_fn = gw.func.vjp(lambda x, w, b: gw.nn.functional.conv2d(x, w, b, padding=1),
                              gw.tensor(x), gw.tensor(w), gw.tensor(b))
    (cotangents,) = arrays(9, (5,) + tuple(out.shape))
    got = gw.func.vmap(vjp_fn)(gw.tensor(cotangents))
    by_loop = [vjp_fn(gw.tensor(c)) for c in cotangents]
    gx, gw_, gb = [np.stack([r[k].numpy() for r in by_loop]) for k in range(3)]
    assert same_bits(got[0].numpy(), gx)
    np.testing.assert_allclose(got[1].numpy(), gw_, rtol=1e-5, atol=1e-5)
    assert same_bits(got[2].numpy(), gb)
    _, torch_vjp = torch.func.vjp(lambda x, w, b: torch.nn.functional.conv2d(x, w, b, padding=1),
                                  torch.tensor(x), torch.tensor(w), torch.tensor(b))
    want = torch.func.vmap(torch_vjp)(torch.tensor(cotangents))
    for g, t in zip(got, want):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-4, atol=1e-5)


def test_hessian_of_a_tiny_cnn_wrt_its_weight(conv_path):
    x, w = arrays(10, (1, 2, 5, 5), (2, 2, 3, 3))
    results = {}
    for lib in (gw, torch):
        F = lib.nn.functional

        def f(w, x):
            return F.avg_pool2d(F.max_pool2d(F.conv2d(x, w, padding=1).tanh(), 2, 1), 2).sum()

        results[lib] = lib.func.hessian(f)(lib.tensor(w), lib.tensor(x))
    assert tuple(results[gw].shape) == (2, 2, 3, 3, 2, 2, 3, 3)
    np.testing.assert_allclose(results[gw].numpy(), results[torch].numpy(), rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- ensembles

@pytest.mark.parametrize("one_minibatch", [True, False])
def test_ensemble_of_two_cnns_with_stack_module_state(one_minibatch, conv_path):
    torch.manual_seed(1)
    torch_nets = [small_cnn(torch) for _ in range(2)]
    for p in torch_nets[1].parameters():  # two different models
        p.data.normal_(std=0.3)
    ours = [small_cnn(gw) for _ in range(2)]
    for a, b in zip(ours, torch_nets):
        same_weights(a, b)
    x = np.random.default_rng(11).standard_normal((2, 4, 1, 8, 8)).astype(np.float32)
    in_dims = (0, 0, None) if one_minibatch else (0, 0, 0)  # one minibatch for all, or one each
    results = {}
    for lib, nets in ((gw, ours), (torch, torch_nets)):
        params, buffers = lib.func.stack_module_state(nets)

        def run(params, buffers, data, lib=lib, nets=nets):
            return lib.func.functional_call(nets[0], (params, buffers), (data,))

        data = lib.tensor(x[0]) if one_minibatch else lib.tensor(x)
        results[lib] = lib.func.vmap(run, in_dims=in_dims)(params, buffers, data)
    each = gw.stack([net(gw.tensor(x[0] if one_minibatch else x[i])) for i, net in enumerate(ours)])
    assert same_bits(results[gw].detach().numpy(), each.detach().numpy())
    np.testing.assert_allclose(results[gw].detach().numpy(), results[torch].detach().numpy(), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- nestings

def test_nested_vmap_over_weights_then_images(conv_path):
    x, w = arrays(12, (4, 2, 7, 7), (3, 5, 2, 3, 3))

    def make(lib):
        conv = lambda x, w: lib.nn.functional.conv2d(x, w, padding=1)  # noqa: E731
        return lib.func.vmap(lib.func.vmap(conv, in_dims=(0, None)), in_dims=(None, 0))

    got = make(gw)(gw.tensor(x), gw.tensor(w))
    want = make(torch)(torch.tensor(x), torch.tensor(w))
    assert tuple(got.shape) == (3, 4, 5, 7, 7)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_per_sample_jacobians_and_a_per_sample_gradient_penalty(conv_path):
    x, w = arrays(13, (3, 2, 2, 6, 6), (4, 2, 3, 3))

    def jacobians(lib):
        F = lib.nn.functional
        return lib.func.vmap(lib.func.jacrev(lambda x, w: F.max_pool2d(F.conv2d(x, w).tanh(), 2).sum(0)),
                             in_dims=(0, None))

    def penalty(lib):  # grad of a function of a gradient (double backward through conv), per sample
        def pen(w, x):
            g = lib.func.grad(lambda x: lib.nn.functional.conv2d(x, w, padding=1).tanh().sum())(x)
            return (g ** 2).sum()
        return lib.func.vmap(lib.func.grad(pen), in_dims=(None, 0))

    check_vmap(jacobians, (0, None), [x, w])
    check_vmap(penalty, (None, 0), [w, x])
