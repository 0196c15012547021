"""The digits MLP's step on its fast paths, beside PyTorch: ``nn.Linear`` calling addmm on
``weight.t()`` directly, ``cross_entropy``'s log_softmax, ``nll_loss`` knowing every target counts,
the bias gradient reduced in ``AddmmBackward0``, SGD and ``zero_grad``. Each fast path must leave the
same graph, saved values and gradients as the general one."""
import numpy as np
import pytest
import torch

import gradwalk
from conftest import assert_same

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
