"""The Tensor's everyday API against PyTorch: factories and dtype inference, conversions, repr,
shape queries, and the autograd attributes (facts §7, §9)."""
import numpy as np
import pytest

import gradwalk
import torch
from parity import dtype_name, run_both

REPRS = [
    "torch.tensor(7.)", "torch.tensor(7)", "torch.tensor(0.6044)", "torch.tensor(-0.5)",
    "torch.tensor([1., 2.])", "torch.tensor([1, 2, 3])", "torch.tensor([[1, -2], [30, 4]])",
    "torch.tensor([1.5, 2.25, -3.0])", "torch.tensor([0.1, 0.2, 0.3])",
    "torch.tensor([1.123456789, 2.])",
    "torch.tensor([1e-5, 1.0])", "torch.tensor([1e10, 1.0])", "torch.tensor([123456.0, 1.0])",
    "torch.tensor([2000., 1.])", "torch.tensor([100., 2000.])", "torch.tensor([0.00012345, 12.5])",
    "torch.tensor(1e-8)", "torch.tensor(123456789.)", "torch.tensor([1.5e9, 3.5])",
    "torch.tensor([float('nan'), 1.0, float('inf')])", "torch.tensor([float('-inf'), 2.5])",
    "torch.tensor(float('nan'))", "torch.tensor([1e-5, 0., float('nan')])",
    "torch.tensor([0.0, -0.0])", "torch.zeros(3)", "torch.zeros(0)", "torch.zeros(2, 0)",
    "torch.tensor([True, False])", "torch.tensor(True)",
    "torch.tensor([1., 2.], requires_grad=True)", "torch.tensor(2.5, requires_grad=True) * 2",
    "torch.tensor([1., 2.], dtype=torch.float64)", "torch.tensor(3., dtype=torch.float64)",
    "torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True).sum()",
    "torch.tensor([1, 2], dtype=torch.int32)", "torch.arange(5)",
    "torch.ones(2, 3, dtype=torch.float64)",
    "torch.tensor([[1., 2.], [3., 4.]])", "torch.tensor([[1.5, -2.], [3., 4.25]], requires_grad=True)",
    "torch.tensor([[[1., 2.]], [[3., 4.]]])", "torch.arange(12.).reshape(3, 4) / 7",
    "torch.arange(30.) * 1.5", "torch.arange(2000.)", "torch.arange(1200).reshape(40, 30)",
    "torch.tensor([0.6044], requires_grad=True).tanh()",
]


@pytest.mark.parametrize("expression", REPRS)
def test_repr_matches_pytorch(expression):
    ours = eval(expression, {"torch": gradwalk})
    theirs = eval(expression, {"torch": torch})
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("expression", [
    "torch.tensor(1.5)", "torch.tensor(2)", "torch.tensor(True)", "torch.tensor([1, 2.5])",
    "torch.tensor([[1, 2], [3, 4]])", "torch.tensor([])", "torch.tensor(np.float64(1.5))",
    "torch.tensor(np.array([1.5, 2.0]))", "torch.tensor(np.array([1, 2], dtype=np.int32))",
    "torch.from_numpy(np.array([1.5, 2.0]))", "torch.zeros(2, 3)", "torch.ones((2, 3))",
    "torch.full((2,), 3.0)", "torch.full((2,), 3)", "torch.empty(2, 2)", "torch.arange(5)",
    "torch.arange(0, 1, 0.25)", "torch.arange(1.0, 4.0)", "torch.linspace(0, 1, 5)", "torch.eye(3)",
    "torch.rand(2, 3)", "torch.randn(4)", "torch.randint(0, 10, (3,))",
    "torch.zeros_like(torch.ones(2, dtype=torch.float64))", "torch.ones_like(torch.tensor([1, 2]))",
    "torch.randn_like(torch.ones(3))", "torch.ones(2).to(torch.float64)", "torch.ones(2).double()",
    "torch.tensor([1, 2]).float()", "torch.ones(2).long()", "torch.ones(2, dtype=torch.int64)",
    "torch.ones(2).to(dtype=torch.float64)", "torch.tensor([1.7, -1.7]).int()", "torch.ones(2).bool()",
])
def test_factories_and_conversions_infer_dtype_and_shape_like_pytorch(expression):
    ours = eval(expression, {"torch": gradwalk, "np": np})
    theirs = eval(expression, {"torch": torch, "np": np})
    assert dtype_name(ours) == dtype_name(theirs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    if "rand" not in expression and "empty" not in expression:
        assert ours.tolist() == theirs.tolist()


def test_manual_seed_makes_random_factories_repeatable():
    gradwalk.manual_seed(3)
    first = gradwalk.randn(5).tolist()
    gradwalk.manual_seed(3)
    assert gradwalk.randn(5).tolist() == first
    assert all(0 <= v < 1 for v in gradwalk.rand(100).tolist())
    assert set(gradwalk.randint(0, 3, (200,)).tolist()) == {0, 1, 2}


def test_shape_queries_and_conversions():
    for ns in run_both("""
        A = torch.arange(6.).reshape(2, 3)
        facts = [tuple(A.shape), tuple(A.size()), A.size(1), A.size(-1), A.dim(), A.ndim, A.numel(),
                 A.T.shape == (3, 2), A[1, 2].item(), A.tolist(), A.numpy().tolist(),
                 A.shape == torch.Size([2, 3]), len(A), A.is_floating_point(),
                 torch.tensor(3).item(), type(torch.tensor(3).item()).__name__,
                 type(torch.tensor(3.5).item()).__name__, float(torch.tensor(2.5)), int(torch.tensor(4))]
    """):
        rows = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        assert ns["facts"] == [(2, 3), (2, 3), 3, 3, 2, 2, 6, True, 5.0, rows, rows, True, 2, True, 3,
                               "int", "float", 2.5, 4]


def test_numpy_shares_memory():
    for lib in (gradwalk, torch):
        t = lib.zeros(3)
        t.numpy()[0] = 5.0
        assert t.tolist() == [5.0, 0.0, 0.0]
        a = np.zeros(2)
        lib.from_numpy(a)[1] = 3.0
        assert a.tolist() == [0.0, 3.0]


def test_autograd_attributes():
    for ns in run_both("""
        x = torch.tensor([1., 2.], requires_grad=True)
        plain = torch.tensor([1., 2.])
        y = x * 2
        d = y.detach()
        with torch.no_grad():
            z = x * 2
        facts = [x.is_leaf, x.requires_grad, x.grad_fn is None, x.grad,
                 y.is_leaf, y.requires_grad, type(y.grad_fn).__name__,
                 d.is_leaf, d.requires_grad, d.grad_fn,
                 z.is_leaf, z.requires_grad, plain.is_leaf, plain.requires_grad,
                 x.retains_grad, x._version, y.output_nr]
        plain.requires_grad_()
        after = [plain.requires_grad, plain.is_leaf]
        y.retain_grad()
        y.sum().backward()
        retained = [y.retains_grad, y.grad.tolist(), x.grad.tolist()]
        d.mul_(10)
        shared = y.tolist()
        y.detach_()
        detached = [y.requires_grad, y.grad_fn, y.is_leaf]
    """):
        assert ns["facts"] == [True, True, True, None, False, True, "MulBackward0", True, False, None,
                               True, False, True, False, False, 0, 0]
        assert ns["after"] == [True, True]
        assert ns["retained"] == [True, [1.0, 1.0], [2.0, 2.0]]
        assert ns["shared"] == [20.0, 40.0]  # detach shares storage
        assert ns["detached"] == [False, None, True]


def test_requires_grad_propagates_only_through_float_ops_with_grad_on():
    for ns in run_both("""
        x = torch.tensor([1., 2.], requires_grad=True)
        n = torch.tensor([1, 2])
        flags = [(x * n).requires_grad, (n * 2).requires_grad, (x > 0).requires_grad,
                 x.argmax().requires_grad, x.round().requires_grad, type(x.round().grad_fn).__name__,
                 x.long().requires_grad, (x.detach() * 2).requires_grad]
        with torch.enable_grad():
            inside = (x * 2).requires_grad
        with torch.no_grad():
            with torch.enable_grad():
                nested = (x * 2).requires_grad
            off = (x * 2).requires_grad
        torch.set_grad_enabled(False)
        disabled = (x * 2).requires_grad, torch.is_grad_enabled()
        torch.set_grad_enabled(True)
    """):
        assert ns["flags"] == [True, False, False, False, True, "RoundBackward0", False, False]
        assert (ns["inside"], ns["nested"], ns["off"], ns["disabled"]) == (True, True, False, (False, False))


def test_no_grad_as_decorator_and_inference_mode():
    for lib in (gradwalk, torch):
        x = lib.ones(2, requires_grad=True)

        @lib.no_grad()
        def double(t):
            return t * 2

        assert not double(x).requires_grad
        with lib.inference_mode():
            y = x * 2
            assert lib.is_inference_mode_enabled() and not lib.is_grad_enabled()
        assert y.is_inference() and not y.requires_grad
        assert lib.is_grad_enabled()


def test_wrapped_scalars_never_promote():
    for ns in run_both("""
        f = torch.ones(2)
        i = torch.tensor([1, 2])
        dtypes = [f * 2.5, f + 1, i * 2, i * 2.5, i / 2, f * torch.tensor(2., dtype=torch.float64),
                  f * torch.ones(2, dtype=torch.float64), 2 ** i, i ** 2, -i, i + True]
        dtypes = [str(t.dtype) for t in dtypes]
    """):
        assert ns["dtypes"] == ["torch.float32", "torch.float32", "torch.int64", "torch.float32",
                                "torch.float32", "torch.float32", "torch.float64", "torch.int64",
                                "torch.int64", "torch.int64", "torch.int64"]


def test_import_gradwalk_as_torch_runs_an_ordinary_snippet():
    """A small training loop written for PyTorch, run unchanged under both."""
    gw, pt = run_both("""
        X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
        Y = torch.tensor([[0.], [1.], [1.], [0.]])
        W1 = torch.tensor([[0.5, -0.4, 0.3], [-0.2, 0.6, 0.1]], requires_grad=True)
        b1 = torch.zeros(3, requires_grad=True)
        W2 = torch.tensor([[0.7], [-0.5], [0.2]], requires_grad=True)
        b2 = torch.zeros(1, requires_grad=True)
        losses = []
        for step in range(20):
            h = torch.tanh(X @ W1 + b1)
            pred = torch.sigmoid(h @ W2 + b2)
            loss = ((pred - Y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for p in (W1, b1, W2, b2):
                    p -= 0.5 * p.grad
                    p.grad = None
            losses.append(loss.item())
    """)
    np.testing.assert_allclose(gw["losses"], pt["losses"], rtol=1e-5)
    np.testing.assert_allclose(gw["W1"].detach().numpy(), pt["W1"].detach().numpy(), rtol=1e-5)
