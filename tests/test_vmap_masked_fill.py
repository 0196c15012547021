"""masked_fill under vmap beside torch.func.vmap: a mask batched with the input, a batched mask on
an unbatched input, an unbatched mask, a broadcast mask, gradients, and masked_fill_."""
import numpy as np
import torch

import gradwalk as gw

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 3)).astype(np.float32)
MASK = rng.random((4, 3)) < 0.5


def both(fn_gw, fn_torch, *args, in_dims=0):
    out = gw.func.vmap(fn_gw, in_dims=in_dims)(*[gw.tensor(a) for a in args])
    ref = torch.func.vmap(fn_torch, in_dims=in_dims)(*[torch.tensor(a) for a in args])
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    return out


def test_mask_batched_with_the_input():
    out = both(lambda x, m: x.masked_fill(m, -1.0), lambda x, m: x.masked_fill(m, -1.0), X, MASK)
    np.testing.assert_array_equal(out.numpy(), np.where(MASK, -1.0, X))  # each sample its own mask


def test_batched_mask_on_an_unbatched_input():
    both(lambda x, m: x.masked_fill(m, 0.0), lambda x, m: x.masked_fill(m, 0.0), X[0], MASK, in_dims=(None, 0))


def test_unbatched_mask_and_broadcast_mask():
    both(lambda x, m: x.masked_fill(m, 2.0), lambda x, m: x.masked_fill(m, 2.0), X, MASK[0], in_dims=(0, None))
    column = rng.random((4, 1)) < 0.5  # one flag per sample, broadcast over its 3 elements
    both(lambda x, m: x.masked_fill(m, 2.0), lambda x, m: x.masked_fill(m, 2.0), X, column)


def test_gradients_through_masked_fill_per_sample():
    def loss(lib):
        return lambda x, m: x.masked_fill(m, 0.0).pow(2).sum()

    out = gw.func.vmap(gw.func.grad(loss(gw)))(gw.tensor(X), gw.tensor(MASK))
    ref = torch.func.vmap(torch.func.grad(loss(torch)))(torch.tensor(X), torch.tensor(MASK))
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_in_place_masked_fill_under_vmap():
    def fill(x, m):
        y = x.clone()
        y.masked_fill_(m, 5.0)
        return y

    both(fill, fill, X, MASK)
