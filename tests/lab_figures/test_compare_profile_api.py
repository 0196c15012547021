"""The "Check against PyTorch" and profiler endpoints, through the lab's own server."""
import json

import pytest
import torch

from gradwalk.lab import compare
from gradwalk.lab.presets import presets

PRESETS = presets()


@pytest.fixture(scope="module")
def lab(live_server):
    import httpx

    with httpx.Client(base_url=live_server, timeout=60) as c:
        yield c


@pytest.mark.parametrize("preset", PRESETS, ids=[p["id"] for p in PRESETS])
def test_every_preset_matches_pytorch(lab, preset):
    r = lab.post("/api/compare", json={"source": preset["source"]})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["available"] and answer["torch_version"] == torch.__version__
    assert answer["same"] and answer["differences"] == 0
    rows = answer["passes"][0]["rows"]
    assert rows and all(row["gradwalk"] == {**row["gradwalk"], "name": row["torch"]["name"],
                                            "seq": row["torch"]["seq"]} for row in rows)


def test_compare_rows_are_pytorchs_prehook_order():
    source = PRESETS[0]["source"]  # the neuron
    answer = compare.compare(source)
    names = [(row["torch"]["name"], row["torch"]["seq"]) for row in answer["passes"][0]["rows"]]
    w = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-0.3, requires_grad=True)
    y = torch.tanh(w * x + b)
    first = y.grad_fn.next_functions[0][0].next_functions[0][0]._sequence_nr()  # the mul's
    seen, order, stack = set(), [], [y.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        fn.register_prehook(lambda grads, fn=fn: order.append(fn))
        stack.extend(f for f, _ in fn.next_functions)
    y.backward()
    expected = [(fn.name(), None if fn._sequence_nr() >= 2**64 - 1 else fn._sequence_nr() - first)
                for fn in order]
    assert names == expected


def test_a_difference_is_flagged():
    source = "x = torch.tensor(2.0, requires_grad=True)\ny = x * x\ny.backward()"
    ours = compare.run_snippet(source)
    theirs = compare.run_on_torch(source)
    ours["passes"][0]["steps"][0]["seq"] = 7  # as if gradwalk numbered the node wrongly
    ours["passes"][0]["grads"]["x"]["data"] = 5.0
    passes, error, count = compare.side_by_side(ours, theirs)
    assert passes[0]["rows"][0]["differs"] == ["seq"]
    assert [g["differs"] for g in passes[0]["grads"]] == [True]
    assert count == 2 and not error["differs"]


def test_errors_are_compared_too():
    answer = compare.compare("x = torch.tensor(2.0, requires_grad=True)\ny = x * x\n"
                             "y.backward()\ny.backward()")
    second = answer["passes"][1]["error"]
    assert second["gradwalk"]["message"] == second["torch"]["message"] and not second["differs"]
    assert answer["same"]


def test_random_numbers_are_shared_so_gradients_agree():
    answer = compare.compare("x = torch.randn(3, requires_grad=True)\ny = (x * x).sum()\ny.backward()")
    assert answer["same"]


def test_without_torch_the_answer_says_how_to_install_it(monkeypatch, client):
    monkeypatch.setattr(compare, "torch_available", lambda: False)
    r = client.post("/api/compare", json={"source": PRESETS[0]["source"]})
    assert r.status_code == 200
    answer = r.json()
    assert answer["available"] is False and "pip install torch==2.13.0" in answer["install"]


def test_a_snippet_the_lab_refuses_is_refused_for_both(lab):
    r = lab.post("/api/compare", json={"source": "import os"})
    assert r.status_code == 400 and "imports are not allowed" in r.json()["detail"]


def test_profile_timeline_links_forward_ops_to_their_backward_nodes(lab):
    r = lab.post("/api/profile", json={"source": PRESETS[0]["source"]})
    assert r.status_code == 200, r.text
    t = r.json()
    events = t["events"]
    forward = [(e["name"], e["seq"]) for e in events if e["kind"] == "forward"]
    backward = [(e["name"], e["seq"]) for e in events if e["kind"] == "backward"]
    assert forward == [("aten::mul", 0), ("aten::add", 1), ("aten::tanh", 2)]
    assert backward == [("TanhBackward0", 2), ("AddBackward0", 1), ("AccumulateGrad", None),
                        ("MulBackward0", 0), ("AccumulateGrad", None), ("AccumulateGrad", None)]
    for link in t["links"]:
        assert events[link["forward"]]["seq"] == events[link["backward"]]["seq"] == link["seq"]
    assert sorted(link["seq"] for link in t["links"]) == [0, 1, 2]
    mul = next(e for e in events if e["name"] == "MulBackward0")
    assert [e["name"] for e in events if e["parent"] == mul["id"]] == ["aten::mul", "aten::mul"]


def test_chrome_trace_download_is_valid_json(lab):
    r = lab.post("/api/profile/trace", json={"source": PRESETS[1]["source"]})
    assert r.status_code == 200
    assert "attachment" in r.headers["content-disposition"]
    trace = json.loads(r.text)
    assert {"schemaVersion", "traceEvents", "displayTimeUnit"} <= set(trace)
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    flows = [e for e in trace["traceEvents"] if e.get("cat") == "fwdbwd"]
    assert ops and all({"name", "ts", "dur", "pid", "tid"} <= set(e) for e in ops)
    assert len(flows) % 2 == 0 and flows


def test_bad_bodies_are_400(client):
    assert client.post("/api/compare", content=b"nope").status_code == 400
    assert client.post("/api/profile", json={"code": "x"}).status_code == 400
