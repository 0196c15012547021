"""The lab keeps serving a classroom (issue 14): what a snippet does is the snippet's answer,
never a dead worker; non-finite numbers come back as "inf", "-inf" and "nan"."""
import pytest
import torch  # real PyTorch: the compare cases need it

from gradwalk.lab.presets import PRESETS

NEURON = PRESETS[0]["source"]


def same_workers(client, lab_app, before):
    """The pool's processes are the ones it had before, and they still answer."""
    assert lab_app.state.pool.pids() == before
    assert client.post("/api/run", json={"source": NEURON}).json()["ok"]


@pytest.mark.parametrize("source,name,expected", [
    ("x = torch.tensor(1.0)\ny = x / 0.0", "y", "inf"),
    ("x = torch.tensor(-1.0)\ny = x / 0.0", "y", "-inf"),
    ("y = torch.log(torch.tensor(0.0))", "y", "-inf"),
    ("x = torch.tensor(0.0)\ny = x / 0.0", "y", "nan"),
    ("y = torch.log(torch.tensor([0.0, 1.0, -1.0]))", "y", ["-inf", 0.0, "nan"]),
])
def test_a_0dim_inf_or_nan_is_shown_as_such(client, lab_app, source, name, expected):
    before = lab_app.state.pool.pids()
    response = client.post("/api/run", json={"source": source})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ok"], body["error"]
    [value] = [v for v in body["values"] if v["name"] == name]
    assert value["value"]["data"] == expected
    same_workers(client, lab_app, before)


def test_sqrt_at_zero_backward_gives_an_inf_gradient_as_pytorch(client, lab_app):
    before = lab_app.state.pool.pids()
    source = "w = torch.tensor(0.0, requires_grad=True)\ny = torch.sqrt(w)\ny.backward()"
    body = client.post("/api/run", json={"source": source}).json()
    assert body["ok"] and body["passes"][0]["error"] is None
    w = torch.tensor(0.0, requires_grad=True)
    torch.sqrt(w).backward()
    assert w.grad.item() == float("inf")
    assert body["leaves"][0]["grad"]["data"] == "inf"
    steps = body["passes"][0]["steps"]
    assert "inf" in steps[0]["text"] and all(s.get("error") is None for s in steps)
    same_workers(client, lab_app, before)


@pytest.mark.parametrize("route", ["/api/profile", "/api/profile/trace", "/api/compare"])
def test_inf_and_nan_on_every_route(client, lab_app, route):
    before = lab_app.state.pool.pids()
    source = "x = torch.tensor(1.0, requires_grad=True)\ny = x / 0.0\ny.backward()"
    response = client.post(route, json={"source": source})
    assert response.status_code == 200, response.text
    if route == "/api/compare":
        answer = response.json()
        assert answer["same"], answer
        assert answer["passes"][0]["rows"][0]["torch"]["grad_in"][0]["data"] == 1.0
    same_workers(client, lab_app, before)


@pytest.mark.parametrize("route", ["/api/run", "/api/compare"])
@pytest.mark.parametrize("source", [
    "x = torch.tensor([1.0, 2.0])\ny = x.expand(size=torch.tensor([2, 2]))",
    "x = torch.tensor([1.0, 2.0])\ny = x.repeat(repeats=torch.tensor([2, 2]))",
    "x = torch.ones(2, device='meta', requires_grad=True)\nx.grad = torch.ones(2, device='meta')",
    "x = torch.ones(2, device='meta', requires_grad=True)\ny = (x * 2).sum()\ny.backward()",
])
def test_a_snippets_error_is_a_snippet_error_not_a_dead_worker(client, lab_app, route, source):
    before = lab_app.state.pool.pids()
    response = client.post(route, json={"source": source})
    assert response.status_code == 200, response.text
    body = response.json()
    error = body["error"] if route == "/api/run" else body["error"]["gradwalk"]
    # gradwalk has no meta device: the first line fails there, as on a PyTorch without it
    assert error["type"] in ("TypeError", "RuntimeError") and error["line"] == (
        1 if "meta" in source else 2), error
    if route == "/api/compare":
        assert body["error"]["torch"]["type"] in ("TypeError", "RuntimeError")
    same_workers(client, lab_app, before)
