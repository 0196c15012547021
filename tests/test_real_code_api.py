"""APIs that real scripts use, run under gradwalk and under PyTorch side by side.

Each test is the kind of line found in tutorials, lecture notebooks and textbooks (NumPy-style
keywords, ``torch.func.functional_call``, ``torch.autograd.Variable``, ``nn.utils``, ...), run by
both libraries; values, shapes and errors must agree.
"""
import pytest
import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from parity import assert_same, run_both, run_in


def both_values(snippet, *names):
    gw, pt = run_both(snippet)
    for name in names:
        assert_same(gw[name], pt[name])
    return gw, pt


# ---------------------------------------------------------------- NumPy's keyword names

def test_numpy_keywords_axis_and_keepdims_as_pytorch_accepts_them():
    gw, pt = run_both("""
        x = torch.arange(12.).reshape(3, 4) - 5
        results = [
            x.sum(axis=0), torch.sum(x, axis=1, keepdims=True), x.mean(axis=0, keepdims=True),
            x.cumsum(axis=1), torch.cumsum(x, axis=0), x.max(axis=1).values,
            torch.max(x, axis=0, keepdims=True).indices, x.min(axis=1)[0], x.std(axis=0),
            x.var(axis=1, keepdims=True), x.argmax(axis=1), torch.argmin(x, axis=0),
            torch.softmax(x, axis=0), x.log_softmax(axis=1), torch.cat([x, x], axis=0),
            torch.stack([x, x], axis=1), x.unsqueeze(axis=0), x.amax(axis=1), x.logsumexp(axis=1),
            x.prod(axis=0), torch.prod(x, axis=1, keepdims=True),
        ]
    """)
    for a, b in zip(gw["results"], pt["results"], strict=True):
        assert_same(a, b)


def test_a_numpy_keyword_beside_its_pytorch_name_is_refused_as_pytorch_refuses_it():
    for library in ("gradwalk", "torch"):
        with pytest.raises(TypeError, match=r"sum\(\) got an unexpected keyword argument 'axis'"):
            run_in(library, "torch.ones(2, 3).sum(dim=0, axis=0)")


def test_factories_take_size_as_a_keyword():
    gw, pt = run_both("""
        shapes = [torch.randn(size=(2, 3)).shape, torch.zeros(size=(2,)).shape,
                  torch.ones(size=[2, 1]).shape, torch.rand(size=(1,)).shape,
                  torch.empty(size=(4,)).shape, torch.randint(0, 5, size=(3,)).shape]
        filled = torch.full(size=(2,), fill_value=3.)
        zeros = torch.zeros(size=(2, 2), dtype=torch.float64)
    """)
    assert gw["shapes"] == pt["shapes"]
    assert_same(gw["filled"], pt["filled"])
    assert_same(gw["zeros"], pt["zeros"])


# ---------------------------------------------------------------- utils.data

def test_a_sampler_with_replacement_draws_lazily_as_pytorchs_does():
    # the lecture scripts' "train for a fixed number of steps" loader: 1e10 samples, read a few
    gw, pt = run_both("""
        from itertools import islice
        data = torch.utils.data.TensorDataset(torch.arange(10.).reshape(5, 2), torch.arange(5))
        sampler = torch.utils.data.RandomSampler(data, replacement=True, num_samples=int(1e10))
        loader = torch.utils.data.DataLoader(data, batch_size=4, sampler=sampler)
        batches = list(islice(loader, 3))
        sizes = len(sampler), len(loader), [tuple(x.shape) for x, y in batches]
        in_range = all(0 <= int(i) < 5 for x, y in batches for i in y)
    """)
    assert gw["sizes"] == pt["sizes"] == (10**10, 2_500_000_000, [(4, 2)] * 3)
    assert gw["in_range"] and pt["in_range"]
