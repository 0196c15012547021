"""The digits MLP's step on its fast paths, beside PyTorch: ``nn.Linear`` calling addmm on
``weight.t()`` directly, ``cross_entropy``'s log_softmax, ``nll_loss`` knowing every target counts,
the bias gradient reduced in ``AddmmBackward0``, SGD and ``zero_grad``. Each fast path must leave the
same graph, saved values and gradients as the general one."""
import numpy as np
import pytest
import torch

import gradwalk
from conftest import assert_same, graph_structure

rng = np.random.default_rng(0)


def both(array, requires_grad=True):
    return gradwalk.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("target", [[0, 1, 2, 1], [0, -100, 2, 1], [0, 2, 2, 1]])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_nll_loss_total_weight_values_and_gradients_as_torch(reduction, weighted, target, ignore_index):
    x, tx = both(rng.standard_normal((4, 3)).astype(np.float32))
    if -100 in target and ignore_index != -100:
        target = [0, 1, 2, 1]
    w = np.array([1.0, 2.0, 3.0], np.float32) if weighted else None
    out = gradwalk.nn.functional.nll_loss(x, gradwalk.tensor(target), None if w is None else gradwalk.tensor(w),
                                          ignore_index=ignore_index, reduction=reduction)
    tout = torch.nn.functional.nll_loss(tx, torch.tensor(target), None if w is None else torch.tensor(w),
                                        ignore_index=ignore_index, reduction=reduction)
    assert_same(out, tout)
    # read before backward: PyTorch frees it with the other saved tensors
    assert_same(out.grad_fn._saved_total_weight, tout.grad_fn._saved_total_weight)
    assert out.grad_fn._saved_reduction == tout.grad_fn._saved_reduction
    g = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
    out.backward(gradwalk.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_nll_loss_in_half_precision_counts_ignored_targets_past_what_float16_holds():
    # 4097 targets, one ignored: float16(4096) == float16(4097), so the saved total weight alone
    # cannot tell that a target was ignored; its gradient row must still be zero
    n = 4097
    target = np.zeros(n, np.int64)
    target[5] = -100
    x = gradwalk.zeros(n, 2, dtype=gradwalk.float16, requires_grad=True)
    gradwalk.nn.functional.nll_loss(x, gradwalk.tensor(target)).backward()
    assert x.grad[5].abs().sum().item() == 0
    assert x.grad[4, 0].item() != 0


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("target", [[0, 1, 2, 3, 1], [0, -100, 2, 3, 1]])
def test_nll_loss_first_and_second_derivatives_by_central_differences(reduction, weighted, target):
    x = gradwalk.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    w = gradwalk.tensor(np.array([1.0, 2.0, 3.0, 0.5])) if weighted else None

    def f(x):
        return gradwalk.nn.functional.nll_loss(x.log_softmax(1), gradwalk.tensor(target), w, reduction=reduction)

    seed = gradwalk.tensor(np.array(0.7) if reduction != "none" else rng.standard_normal(5), requires_grad=True)
    assert gradwalk.autograd.gradcheck(f, (x,))
    assert gradwalk.autograd.gradgradcheck(f, (x,), (seed,))


def _digits_mlps(batch):
    """The benchmark's digits MLP in both libraries, with PyTorch's initial weights, and a batch."""
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                                 torch.nn.ReLU(), torch.nn.Linear(128, 10))
    ours = gradwalk.nn.Sequential(gradwalk.nn.Linear(64, 128), gradwalk.nn.ReLU(), gradwalk.nn.Linear(128, 128),
                                  gradwalk.nn.ReLU(), gradwalk.nn.Linear(128, 10))
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        p._data[...] = tp.detach().numpy()
    x = rng.random((batch, 64), dtype=np.float32)
    y = rng.integers(0, 10, batch)
    return ours, theirs, x, y


@pytest.mark.parametrize("batch", [32, 7])
def test_digits_mlp_steps_build_torchs_graph_and_make_its_updates(batch):
    ours, theirs, x, y = _digits_mlps(batch)
    names = {f"p{i}": p for i, p in enumerate(ours.parameters())}
    tnames = {f"p{i}": p for i, p in enumerate(theirs.parameters())}
    opt = gradwalk.optim.SGD(ours.parameters(), lr=0.1)
    topt = torch.optim.SGD(theirs.parameters(), lr=0.1)
    for _ in range(3):
        loss = gradwalk.nn.functional.cross_entropy(ours(gradwalk.tensor(x)), gradwalk.tensor(y))
        tloss = torch.nn.functional.cross_entropy(theirs(torch.tensor(x)), torch.tensor(y))
        assert graph_structure(loss, names) == graph_structure(tloss, tnames)
        assert_same(loss, tloss, rtol=1e-5)
        addmm = loss.grad_fn.next_functions[0][0].next_functions[0][0]
        taddmm = tloss.grad_fn.next_functions[0][0].next_functions[0][0]
        assert type(addmm).__name__ == type(taddmm).__name__ == "AddmmBackward0"
        for name in ("alpha", "beta", "mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes", "mat2_sym_strides"):
            assert getattr(addmm, "_saved_" + name) == getattr(taddmm, "_saved_" + name), name
        opt.zero_grad()
        topt.zero_grad()
        loss.backward()
        tloss.backward()
        for p, tp in zip(ours.parameters(), theirs.parameters()):
            assert_same(p.grad, tp.grad, rtol=1e-4, atol=1e-6)
            assert p.grad.is_contiguous() and p.grad._base is None
        opt.step()
        topt.step()
        for p, tp in zip(ours.parameters(), theirs.parameters()):
            assert_same(p, tp, rtol=1e-4, atol=1e-6)
            assert p._version == tp._version


def test_zero_grad_drops_or_zeros_every_gradient_as_torch():
    for lib in (gradwalk, torch):
        layer = lib.nn.Linear(3, 2)
        opt = lib.optim.SGD(layer.parameters(), lr=0.1)
        layer(lib.ones(4, 3)).sum().backward()
        weight_grad = layer.weight.grad
        opt.zero_grad(set_to_none=False)
        assert layer.weight.grad is weight_grad and float(weight_grad.abs().sum()) == 0
        assert layer.weight.grad._version == 1
        opt.zero_grad()
        assert layer.weight.grad is None and layer.bias.grad is None
        opt.zero_grad()  # again, with nothing to drop
        layer.zero_grad()
        assert layer.weight.grad is None


def test_linear_reads_a_subclass_weight_property_and_a_replaced_weight():
    class Tied(gradwalk.nn.Linear):
        @property
        def weight(self):  # what forward must use, though _parameters holds a "weight" too
            return gradwalk.ones(self.out_features, self.in_features)

    layer = Tied(3, 2)
    assert "weight" in layer._parameters
    assert np.array_equal(layer(gradwalk.ones(1, 3)).detach().numpy(), 3 + layer.bias.detach().numpy()[None])
    plain = gradwalk.nn.Linear(3, 2)
    del plain.weight
    plain.weight = gradwalk.zeros(2, 3)  # a plain tensor attribute now, as weight_norm leaves it
    assert np.array_equal(plain(gradwalk.ones(1, 3)).detach().numpy(), plain.bias.detach().numpy()[None])


@pytest.mark.parametrize("scalars", [{}, {"alpha": 1.0, "beta": 1.0}, {"alpha": 1, "beta": 2}])
def test_addmm_saves_alpha_and_beta_as_given_as_torch(scalars):
    saved = []
    for lib in (gradwalk, torch):
        b, a, w = lib.zeros(2, requires_grad=True), lib.ones(3, 4), lib.ones(2, 4, requires_grad=True)
        fn = lib.addmm(b, a, w.t(), **scalars).grad_fn
        saved.append([(repr(getattr(fn, "_saved_" + name)), type(getattr(fn, "_saved_" + name)))
                      for name in ("alpha", "beta", "mat1_sym_strides", "mat2_sym_strides")])
    assert saved[0] == saved[1]
    fn = gradwalk.nn.functional.linear(gradwalk.ones(3, 4), gradwalk.ones(2, 4, requires_grad=True),
                                       gradwalk.zeros(2, requires_grad=True)).grad_fn
    assert (fn._saved_alpha, fn._saved_beta) == (1, 1) and type(fn._saved_alpha) is int


# inf - inf in the shift: NumPy warns, and the filter gradwalk installs at import is dropped by
# pytest's own catch_warnings (test_inf_minus_inf_is_nan_without_a_warning_as_torch checks it outside)
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("shape", [(16, 10), (256, 3), (64, 32), (64, 33), (15, 10), (4, 3)])
@pytest.mark.parametrize("fn", ["log_softmax", "softmax", "logsumexp"])
def test_softmax_family_shifts_a_batch_of_few_classes_as_torch(shape, fn):
    """A batch of at least 16 rows with at most 32 classes takes the row maxima from the
    transposed copy (NumPy reduces a short last axis row by row); values and gradients must be
    torch's, including rows holding nan, inf and -inf."""
    data = rng.standard_normal(shape).astype(np.float32) * 4
    data[1, 0] = np.nan
    data[2, :] = -np.inf
    data[3, -1] = np.inf
    x, tx = both(data)
    if fn == "logsumexp":
        out, tout = gradwalk.logsumexp(x, 1), torch.logsumexp(tx, 1)
    else:
        out, tout = getattr(gradwalk.nn.functional, fn)(x, 1), getattr(torch.nn.functional, fn)(tx, 1)
    assert_same(out, tout, atol=1e-6, rtol=1e-6)
    out.backward(gradwalk.ones(out.shape))
    tout.backward(torch.ones(tout.shape))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6, equal_nan=True)
