"""F.pad in every mode beside PyTorch: values, gradients, negative padding (cropping) and the
errors PyTorch raises for impossible paddings. (reflect/replicate/circular once padded zeros.)"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import gradwalk
import gradwalk.nn.functional as GF

CASES = [((1, 1, 3, 3), (1, 2, 2, 1)), ((2, 3, 5), (2, -1)), ((1, 2, 4, 4, 4), (1, 0, 2, 3, 0, 1)),
         ((3, 4), (3, 2)), ((2, 1, 3), (-1, 2)), ((1, 2, 3, 4), (0, 3, 2, -1))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("shape, padding", CASES)
def test_pad_matches_pytorch(mode, shape, padding):
    x = np.random.default_rng(0).standard_normal(shape)
    theirs, mine = torch.tensor(x, requires_grad=True), gradwalk.tensor(x, requires_grad=True)
    expected = TF.pad(theirs, padding, mode=mode)
    got = GF.pad(mine, padding, mode=mode)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=0, atol=0)
    weights = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    (expected * torch.tensor(weights)).sum().backward()
    (got * gradwalk.tensor(weights)).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, padding, mode", [
    ((1, 1, 3), (3, 3), "reflect"), ((1, 1, 3, 3), (1, 1, 1, 1, 1, 1), "reflect"),
    ((1, 1, 3, 3), (1, 1), "reflect"), ((3,), (1, 1), "replicate"), ((1, 1, 3), (4, 0), "circular"),
    ((1, 1, 3), (1,), "constant"), ((1, 1, 3), (1, 1), "mirror"), ((2, 2), (1,) * 6, "constant")])
def test_pad_errors_match_pytorch(shape, padding, mode):
    with pytest.raises(Exception) as theirs:
        TF.pad(torch.zeros(shape), padding, mode=mode)
    with pytest.raises(type(theirs.value), match=None) as mine:
        GF.pad(gradwalk.zeros(shape), padding, mode=mode)
    assert str(mine.value) == str(theirs.value)
