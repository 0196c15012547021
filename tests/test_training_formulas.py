"""The training hot path beside PyTorch: addmm's alpha/beta and saved layouts, the weight gradient's
layout, nll_loss/log_softmax gradients, and the same gradients whether a backward formula runs on
NumPy arrays (plain ``backward()``) or through recorded ops (``create_graph=True``, profiler)."""
import numpy as np
import pytest
import torch

import gradwalk
from conftest import assert_same

rng = np.random.default_rng(0)


def both(array, requires_grad=True):
    return gradwalk.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


@pytest.mark.parametrize("alpha, beta", [(1, 1), (3, 2), (0.5, 0)])
def test_addmm_alpha_beta_values_gradients_and_saved_layouts(alpha, beta):
    b, tb = both(rng.standard_normal(2).astype(np.float32))
    a, ta = both(rng.standard_normal((4, 3)).astype(np.float32))
    w, tw = both(rng.standard_normal((2, 3)).astype(np.float32))
    out = gradwalk.addmm(b, a, w.t(), beta=beta, alpha=alpha)
    tout = torch.addmm(tb, ta, tw.t(), beta=beta, alpha=alpha)
    assert_same(out, tout)
    for name in ("alpha", "beta", "mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes", "mat2_sym_strides"):
        assert getattr(out.grad_fn, "_saved_" + name) == getattr(tout.grad_fn, "_saved_" + name), name
    out.sum().backward()
    tout.sum().backward()
    for x, tx in ((b, tb), (a, ta), (w, tw)):
        assert_same(x.grad, tx.grad)


def test_mm_saves_sizes_always_and_strides_of_inputs_that_need_grad():
    a, ta = both(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=False)
    w, tw = both(rng.standard_normal((2, 3)).astype(np.float32))
    fn, tfn = (a @ w.t()).grad_fn, (ta @ tw.t()).grad_fn
    for name in ("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides"):
        assert getattr(fn, "_saved_" + name) == getattr(tfn, "_saved_" + name), name


def test_linear_weight_gradient_is_contiguous_and_a_view_in_its_hook_as_in_torch():
    seen = {}
    for lib in (gradwalk, torch):
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 2)
        x = lib.randn(4, 3, requires_grad=True)

        def hook(g, name=lib.__name__):
            seen[name] = (g._base is not None, g.is_contiguous())

        layer.weight.register_hook(hook)
        layer(x).sum().backward()
        assert layer.weight.grad.is_contiguous() and layer.weight.grad._base is None
    assert seen["gradwalk"] == seen["torch"]


@pytest.mark.parametrize("batch", [1, 5])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_gradients_match_torch(batch, reduction):
    logits = rng.standard_normal((batch, 4)).astype(np.float32)
    target = rng.integers(0, 4, batch)
    x, tx = both(logits)
    out = gradwalk.nn.functional.cross_entropy(x, gradwalk.tensor(target), reduction=reduction)
    tout = torch.nn.functional.cross_entropy(tx, torch.tensor(target), reduction=reduction)
    assert_same(out, tout)
    w = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
    (out * gradwalk.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    assert_same(x.grad, tx.grad)


def test_nll_loss_ignore_index_and_bad_targets_as_torch():
    x, tx = both(rng.standard_normal((3, 4)).astype(np.float32))
    target = np.array([1, -100, 3])
    out = gradwalk.nn.functional.nll_loss(x, gradwalk.tensor(target))
    tout = torch.nn.functional.nll_loss(tx, torch.tensor(target))
    assert_same(out, tout)
    out.backward()
    tout.backward()
    assert_same(x.grad, tx.grad)
    for bad in ([1, 4, 0], [1, -1, 0]):
        with pytest.raises(IndexError, match=f"Target {[b for b in bad if not 0 <= b < 4][0]} is out of bounds"):
            gradwalk.nn.functional.nll_loss(x, gradwalk.tensor(np.array(bad)))


def _mlp_grads(mode):
    gradwalk.manual_seed(0)
    model = gradwalk.nn.Sequential(gradwalk.nn.Linear(5, 8), gradwalk.nn.ReLU(), gradwalk.nn.Linear(8, 8),
                                   gradwalk.nn.Tanh(), gradwalk.nn.Linear(8, 4), gradwalk.nn.Sigmoid())
    x = gradwalk.tensor(np.random.default_rng(1).standard_normal((6, 5)).astype(np.float32))
    y = gradwalk.tensor(np.array([0, 1, 2, 3, 1, 0]))
    out = model(x)
    loss = gradwalk.nn.functional.cross_entropy(out * 2.0, y) + gradwalk.nn.functional.softmax(out, 1).pow(2).sum()
    if mode == "create_graph":
        loss.backward(create_graph=True)
    elif mode == "profiler":
        with gradwalk.profiler.profile():
            loss.backward()
    else:
        loss.backward()
    return [p.grad.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("mode", ["create_graph", "profiler"])
def test_formulas_on_arrays_give_the_same_gradients_as_recorded_formulas(mode):
    for plain, other in zip(_mlp_grads("plain"), _mlp_grads(mode)):
        np.testing.assert_array_equal(plain, other)


def test_python_numbers_keep_the_tensor_dtype():
    for dtype in (gradwalk.float32, gradwalk.float64):
        x = gradwalk.ones(2, dtype=dtype, requires_grad=True)
        for y in (x * 2.5, 2 * x, x + True, 1 - x, x / 3):
            assert y.dtype is dtype
