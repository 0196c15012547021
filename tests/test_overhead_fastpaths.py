"""The per-op fast paths of a minibatch step give what the general paths give, beside PyTorch:
matmul's 2-D dispatch, the plain in-place write (an optimizer's ``p.data += ...``), the array
path of ViewBackward0, and the small-batch embedding gradient."""
import numpy as np
import pytest
import torch

import gradwalk as gw
from gradwalk.ops._scatter import index_add_rows, index_add_rows_reference


def test_mm_by_matmul_records_pytorchs_node_and_values():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, 5)).astype(np.float32)
    x, w = gw.tensor(a, requires_grad=True), gw.tensor(b, requires_grad=True)
    tx, tw = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    y, ty = x @ w, tx @ tw
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "MmBackward0"
    assert y.dtype == gw.float32
    y.sum().backward()
    ty.sum().backward()
    assert np.allclose(x.grad.numpy(), tx.grad.numpy()) and np.allclose(w.grad.numpy(), tw.grad.numpy())
    for dtype in ("int64", "float64"):
        assert (gw.ones(2, 3, dtype=getattr(gw, dtype)) @ gw.ones(3, 2, dtype=getattr(gw, dtype))).dtype \
            == getattr(gw, dtype)


def test_mm_errors_are_pytorchs():
    for lib in (gw, torch):
        with pytest.raises(RuntimeError) as mixed:
            lib.ones(2, 3) @ lib.ones(3, 2, dtype=lib.float64)
        with pytest.raises(RuntimeError) as shapes:
            lib.ones(2, 3) @ lib.ones(2, 2)
        if lib is gw:
            ours = (str(mixed.value), str(shapes.value))
    assert ours == (str(mixed.value), str(shapes.value))


def test_an_sgd_update_through_data_writes_in_place_and_bumps_the_version():
    rng = np.random.default_rng(1)
    w0, g0 = rng.standard_normal((30, 200)).astype(np.float32), rng.standard_normal((30, 200)).astype(np.float32)
    results = []
    for lib in (gw, torch):
        p = lib.tensor(w0.copy(), requires_grad=True)
        p.grad = lib.tensor(g0)
        data = p.data
        before = data._version
        data += -0.1 * p.grad
        results.append((p.detach().numpy().copy(), data._version - before, p._version))
    (ours, bump, version), (theirs, torch_bump, torch_version) = results
    assert ours.tobytes() == theirs.tobytes()
    assert (bump, version) == (torch_bump, torch_version) == (1, 0)


def test_a_plain_in_place_write_keeps_pytorchs_checks():
    view = gw.ones(3, 4)[1:]
    view.mul_(2)  # a view, no graph: written through to the base
    assert view._base.numpy()[1:].tolist() == [[2.0] * 4] * 2 and view._base._version == 1
    for lib in (gw, torch):
        with pytest.raises(RuntimeError) as err:
            lib.ones(3).add_(lib.ones(2, 3))
        if lib is gw:
            ours = str(err.value)
    assert ours == str(err.value)


def test_view_backward_gives_pytorchs_gradient_and_double_backward():
    rng = np.random.default_rng(2)
    e = rng.standard_normal((8, 3, 10)).astype(np.float32)
    w = rng.standard_normal((30, 5)).astype(np.float32)
    grads = []
    for lib in (gw, torch):
        x = lib.tensor(e, requires_grad=True)
        y = (x.view(-1, 30) @ lib.tensor(w)).tanh().sum()
        (gx,) = lib.autograd.grad(y, x, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.pow(2).sum(), x)
        grads.append((gx.detach().numpy().copy(), ggx.numpy().copy()))
    assert np.allclose(grads[0][0], grads[1][0], atol=1e-6) and np.allclose(grads[0][1], grads[1][1], atol=1e-5)


def test_a_minibatch_embedding_gradient_is_the_sequential_sums_bit_for_bit():
    rng = np.random.default_rng(3)
    for _ in range(200):
        m, d, rows_out = int(rng.integers(1, 2048)), int(rng.integers(1, 40)), int(rng.integers(1, 300))
        flat = rng.integers(0, rows_out, m).astype(rng.choice([np.int64, np.int32]))
        rows = rng.standard_normal((m, d)).astype(rng.choice([np.float32, np.float64]))
        rows[rng.random((m, d)) < 0.2] = -0.0
        fast, reference = index_add_rows(rows_out, flat, rows), index_add_rows_reference(rows_out, flat, rows)
        assert fast.dtype == reference.dtype and fast.tobytes() == reference.tobytes()
    C = rng.standard_normal((27, 10)).astype(np.float32)
    X = rng.integers(0, 27, (32, 3))
    g = rng.standard_normal((32, 3, 10)).astype(np.float32)
    ours, theirs = gw.tensor(C, requires_grad=True), torch.tensor(C, requires_grad=True)
    ours[gw.tensor(X)].backward(gw.tensor(g))
    theirs[torch.tensor(X)].backward(torch.tensor(g))
    assert ours.grad.numpy().tobytes() == theirs.grad.numpy().tobytes()


def test_a_float_tensor_and_a_python_number_without_a_graph_as_pytorch():
    rng = np.random.default_rng(4)
    for dtype in ("float16", "float32", "float64"):
        data = rng.standard_normal((3, 4)).astype(dtype)
        for number in (-0.1, 3, 0.0, 1e10, float("nan")):
            for name in ("mul", "add", "sub", "rsub"):
                ours = getattr(gw, name)(gw.tensor(data), number)
                theirs = getattr(torch, name)(torch.tensor(data), number)
                assert str(ours.dtype) == str(theirs.dtype)
                assert np.allclose(ours.numpy(), theirs.numpy(), equal_nan=True, rtol=1e-3)
    x = gw.ones(2, requires_grad=True)
    assert type((x * 2.0).grad_fn).__name__ == "MulBackward0"  # with grad: recorded
    with gw.no_grad():
        assert not (x * 2.0).requires_grad
    with pytest.raises(OverflowError):
        gw.ones(2) * 2**70  # as PyTorch: an int too big to convert
