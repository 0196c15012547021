"""Every figure endpoint against the same computation done directly in PyTorch (and gradwalk)."""
import json
import math

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as TF

import gradwalk
from gradwalk.lab import figures

T64 = torch.float64


def get(client, figure, **params):
    response = client.get(f"/api/figures/{figure}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def torch_derivative(fn, x):
    t = torch.tensor(x, dtype=T64, requires_grad=True)
    y = fn(t)
    y.backward()
    return y.item(), t.grad.item()


TORCH_INNER = {"x**2": lambda x: x ** 2, "sin(x)": torch.sin, "3*x + 1": lambda x: 3 * x + 1,
               "exp(x)": torch.exp}
TORCH_OUTER = {"sin(u)": torch.sin, "u**3": lambda u: u ** 3, "tanh(u)": torch.tanh,
               "exp(-u)": lambda u: torch.exp(-u)}


def test_index_lists_every_figure(client):
    index = client.get("/api/figures").json()
    assert [f["id"] for f in index] == list(figures.FIGURES)
    assert index[0]["params"] == {"inner": "x**2", "outer": "sin(u)", "x": 0.8}


@pytest.mark.parametrize("inner", list(TORCH_INNER))
@pytest.mark.parametrize("outer", list(TORCH_OUTER))
def test_chain_rule_slopes_equal_pytorch(client, inner, outer):
    r = get(client, "chain-rule", inner=inner, outer=outer, x=-0.7)
    u, g1 = torch_derivative(TORCH_INNER[inner], -0.7)
    _, f1 = torch_derivative(TORCH_OUTER[outer], u)
    _, composite = torch_derivative(lambda t: TORCH_OUTER[outer](TORCH_INNER[inner](t)), -0.7)
    assert r["u"] == pytest.approx(u, rel=1e-12)
    assert r["inner_slope"] == pytest.approx(g1, rel=1e-12)
    assert r["outer_slope"] == pytest.approx(f1, rel=1e-12, abs=1e-15)
    assert r["composite"] == pytest.approx(composite, rel=1e-12, abs=1e-15)
    assert r["product"] == pytest.approx(r["composite"], rel=1e-12, abs=1e-15)
    assert r["finite_difference"] == pytest.approx(composite, rel=1e-7, abs=1e-9)
    assert len(r["curve"]["x"]) == len(r["curve"]["y"]) == len(r["curve"]["slope"])


def test_chain_rule_curve_slope_is_the_derivative_everywhere(client):
    r = get(client, "chain-rule", inner="sin(x)", outer="u**3", x=0.3)
    xs = torch.tensor(r["curve"]["x"], dtype=T64, requires_grad=True)
    (torch.sin(xs) ** 3).sum().backward()
    np.testing.assert_allclose(r["curve"]["slope"], xs.grad.numpy(), rtol=1e-12, atol=1e-15)


TORCH_ACTIVATIONS = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu,
                     "gelu": TF.gelu, "leaky_relu": TF.leaky_relu}


@pytest.mark.parametrize("name", list(TORCH_ACTIVATIONS))
@pytest.mark.parametrize("x", [-2.5, 0.0, 1.0])
def test_activation_slope_and_stacked_layers_equal_pytorch(client, name, x):
    act = TORCH_ACTIVATIONS[name]
    r = get(client, "activation", name=name, x=x, depth=12)
    value, slope = torch_derivative(act, x)
    assert r["value"] == pytest.approx(value, rel=1e-12, abs=1e-300)
    assert r["slope"] == pytest.approx(slope, rel=1e-12, abs=1e-300)
    t = torch.tensor(x, dtype=T64, requires_grad=True)
    a, expected = t, [1.0]
    for _ in range(12):
        a = act(a)
        expected.append(torch.autograd.grad(a, t, retain_graph=True)[0].item())
    np.testing.assert_allclose(r["stacked"]["grad"], expected, rtol=1e-12, atol=1e-300)


def test_sigmoid_vanishes_and_relu_does_not(client):
    sigmoid = get(client, "activation", name="sigmoid", x=1.0, depth=20)["stacked"]["grad"]
    relu = get(client, "activation", name="relu", x=1.0, depth=20)["stacked"]["grad"]
    assert sigmoid[-1] < 1e-12 and all(a > b for a, b in zip(sigmoid, sigmoid[1:]))
    assert relu == [1.0] * 21


def test_gradient_check_sweep(client):
    r = get(client, "gradient-check", x=0.5, h=1e-5)
    _, exact = torch_derivative(lambda t: torch.tanh(t ** 3 + 2 * t + 1), 0.5)
    assert r["exact"] == pytest.approx(exact, rel=1e-15)
    assert r["exact"] == pytest.approx(0.15252425581397377, rel=1e-15)
    hs = r["h"]
    assert hs[0] == pytest.approx(1e-1) and hs[-1] == pytest.approx(1e-14) and len(hs) == 53
    # the same errors, computed directly in float64 with gradwalk's tanh (MKL's, as PyTorch's,
    # when installed: at small h the difference quotient is rounding noise, so another tanh,
    # NumPy's, gives other errors there)
    def f(v):
        t = gradwalk.tensor(v, dtype=gradwalk.float64)
        return gradwalk.tanh(t ** 3 + 2 * t + 1).item()
    for i in (0, 10, 30, 52):
        h = hs[i]
        assert r["central_error"][i] == pytest.approx(abs((f(0.5 + h) - f(0.5 - h)) / (2 * h) - exact),
                                                      rel=1e-3, abs=1e-15)
        assert r["one_sided_error"][i] == pytest.approx(abs((f(0.5 + h) - f(0.5)) / h - exact),
                                                        rel=1e-3, abs=1e-15)
    central, one_sided = r["best_central"], r["best_one_sided"]
    assert 1e-7 <= central["h"] <= 1e-4 and 1e-10 <= one_sided["h"] <= 1e-6
    assert central["error"] < 1e-10 < one_sided["error"]
    # truncation on the right, cancellation on the left of the best h
    assert r["central_error"][0] > 1e3 * central["error"]
    assert r["central_error"][-1] > 1e3 * central["error"]
    assert r["at"]["central_error"] == pytest.approx(r["central_error"][16], rel=1e-6)


def test_learning_rate_descends_or_diverges_like_pytorch(client):
    for lr, diverges in ((0.05, False), (0.15, True)):
        r = get(client, "learning-rate", lr=lr, steps=25)
        w = torch.tensor(2.0, dtype=T64, requires_grad=True)
        opt = torch.optim.SGD([w], lr=lr)
        ws, losses = [], []
        for _ in range(26):
            opt.zero_grad()
            loss = (w * 3.0 + 1.0 - 5.0) ** 2
            loss.backward()
            ws.append(w.item())
            losses.append(loss.item())
            opt.step()
        np.testing.assert_allclose(r["w"], ws, rtol=1e-12)
        np.testing.assert_allclose(r["loss"], losses, rtol=1e-12)
        assert r["diverges"] is diverges
        assert r["max_grad_difference"] <= 1e-9 * max(1.0, max(abs(g) for g in r["grad"]))
    assert r["loss"][-1] > 1e10  # diverged, while every gradient was exact


def torch_xor_losses(lr, seed, steps=100):
    g = torch.Generator().manual_seed(seed)  # the figure's weights, drawn by PyTorch from the same seed
    shapes = {"W1": (4, 2), "b1": (4,), "W2": (1, 4), "b2": (1,)}
    params = {k: torch.empty(shape, dtype=T64).uniform_(-1, 1, generator=g).requires_grad_()
              for k, shape in shapes.items()}
    X = torch.tensor(figures.XOR_X, dtype=T64)
    Y = torch.tensor(figures.XOR_Y, dtype=T64)
    losses = []
    for _ in range(steps):
        hidden = torch.tanh(X @ params["W1"].T + params["b1"])
        out = torch.tanh(hidden @ params["W2"].T + params["b2"]).reshape(-1)
        loss = ((out - Y) ** 2).sum()
        for p in params.values():
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params.values():
                p -= lr * p.grad
        losses.append(loss.item())
    return losses


def test_xor_trains_like_pytorch(client):
    r = get(client, "xor", lr=0.1, seed=3)
    np.testing.assert_allclose(r["loss"], torch_xor_losses(0.1, 3), rtol=1e-10)
    assert r["loss"][-1] < r["loss"][0]
    assert len(r["boundary"]["z"]) == len(r["boundary"]["axis"]) == 41


def test_xor_stream_is_one_json_line_per_step_then_the_boundary(client):
    with client.stream("GET", "/api/figures/xor/stream", params={"lr": 0.05, "delay_ms": 0}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        events = [json.loads(line) for line in response.iter_lines() if line]
    assert [e["step"] for e in events[:-1]] == list(range(100))
    assert events[-1]["done"] is True
    np.testing.assert_allclose([e["loss"] for e in events[:-1]], torch_xor_losses(0.05, 0), rtol=1e-10)
    assert client.get("/api/figures/xor/stream", params={"lr": 5}).status_code == 400


def test_paths_sum_plus_equals_and_the_assignment_bug(client):
    good = get(client, "paths-sum", x=2.0, y=3.0, z=4.0)
    assert good["x_grad"] == 7.0 == good["engine_grads"]["x"] == good["expected_x_grad"]
    assert good["grads"] == {"x": 7.0, "y": 2.0, "z": 2.0}
    bad = get(client, "paths-sum", x=2.0, y=3.0, z=4.0, bug=True)
    # PyTorch runs x*z's MulBackward0 (seq 1) before x*y's (seq 0): with `=`, x keeps y only
    x = torch.tensor(2.0, requires_grad=True)
    xy, xz = x * 3.0, x * 4.0
    order = []
    for node, label in ((xy.grad_fn, "x*y"), (xz.grad_fn, "x*z")):
        node.register_prehook(lambda grads, label=label: order.append(label))
    (xy + xz).backward()
    assert order == [s["node"] for s in bad["steps"] if s["name"] == "MulBackward0"]
    assert bad["x_grad"] == 3.0 != bad["expected_x_grad"]
    assert bad["engine_grads"]["x"] == 7.0  # the engine itself is right; only the replay assigns


def test_forward_mode_equals_pytorch_forward_ad(client):
    r = get(client, "forward-mode", x=0.5)
    with fwAD.dual_level():
        x = fwAD.make_dual(torch.tensor(0.5, dtype=T64), torch.tensor(1.0, dtype=T64))
        primal, tangent = fwAD.unpack_dual(torch.tanh(x ** 3 + 2 * x + 1))
    assert r["value"] == pytest.approx(primal.item(), rel=1e-15)
    assert r["tangent"] == pytest.approx(tangent.item(), rel=1e-14)
    assert round(r["tangent"], 5) == 0.15252 and r["reverse"] == pytest.approx(r["tangent"], rel=1e-14)
    assert [line["tangent"] for line in r["lines"]] == pytest.approx([1.0, 0.75, 2.0, 2.75, 2.75, tangent.item()])
    assert [line["value"] for line in r["lines"]][:5] == pytest.approx([0.5, 0.125, 1.0, 1.125, 2.125])


@pytest.mark.parametrize("b", [1.0, -5.9, -6.0, -10.0])
def test_dead_relu_gradients_equal_pytorch(client, b):
    r = get(client, "dead-relu", b=b)
    x1 = torch.tensor(2.0, dtype=T64, requires_grad=True)
    x2 = torch.tensor(3.0, dtype=T64, requires_grad=True)
    tb = torch.tensor(b, dtype=T64, requires_grad=True)
    torch.relu(x1 * x2 + tb).backward()
    assert (r["grads"]["x1"], r["grads"]["x2"], r["grads"]["b"]) == (x1.grad.item(), x2.grad.item(), tb.grad.item())
    assert r["dead"] is (b <= -6.0)
    if r["dead"]:
        assert all(v == 0 for v in r["grads"].values() if v != r["grads"]["y"])


def test_dead_relu_sweep_equals_pytorch(client):
    r = get(client, "dead-relu")
    bs = torch.tensor(r["sweep"]["b"], dtype=T64, requires_grad=True)
    x1 = torch.full_like(bs, 2.0).requires_grad_()
    torch.relu(x1 * 3.0 + bs).sum().backward()
    assert r["sweep"]["b_grad"] == bs.grad.tolist()
    assert r["sweep"]["x1"] == x1.grad.tolist()


@pytest.mark.parametrize("name, params", [
    ("chain-rule", {"inner": "cube(x)"}), ("chain-rule", {"x": "nine"}), ("activation", {"depth": 99}),
    ("learning-rate", {"lr": -1}), ("paths-sum", {"bug": "maybe"}), ("dead-relu", {"colour": 1}),
])
def test_bad_parameters_are_400_with_a_reason(client, name, params):
    response = client.get(f"/api/figures/{name}", params=params)
    assert response.status_code == 400
    assert response.json()["detail"]


def test_unknown_figure_is_404(client):
    assert client.get("/api/figures/nope").status_code == 404


def test_numbers_are_json_safe_for_divergence():
    r = figures.learning_rate(lr=0.2, steps=100)
    text = json.dumps(r, allow_nan=False)  # no NaN/Infinity tokens, ever
    assert all(isinstance(v, (float, str)) for v in r["loss"])
    assert math.isfinite(r["contraction"]) and text
