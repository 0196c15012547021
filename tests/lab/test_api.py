"""The lab's JSON API (docs/lab-api.md): every preset's steps are the stepping API's steps, in the
order real PyTorch's engine runs the nodes (a pre-hook on every node), with PyTorch's gradients."""
import threading

import numpy as np
import pytest
import torch  # real PyTorch: these tests must fail, not skip, without it

import gradwalk
from gradwalk.lab.presets import PRESETS

PRESET_IDS = [p["id"] for p in PRESETS]
ERR_TWICE = "Trying to backward through the graph a second time"


def split_backward(source):
    """The snippet without its last line (``out.backward()``), and the output's name."""
    lines = source.rstrip("\n").split("\n")
    last = lines[-1]
    assert last.endswith(".backward()"), last
    return "\n".join(lines[:-1]), last[: -len(".backward()")]


def run_forward(library, source):
    """Run a preset's forward lines with ``torch`` bound to ``library``: its namespace."""
    namespace = {"torch": library}
    exec(source, namespace)  # test code running our own presets, not user text
    return namespace


def leaf_names(namespace, library):
    return {name: value for name, value in namespace.items()
            if isinstance(value, library.Tensor) and value.is_leaf and value.requires_grad}


def stepper_records(source, mode="pytorch"):
    """The stepping API on the same snippet, in a fresh thread (sequence numbers start at 0
    there, as in the lab's worker)."""
    out = {}

    def work():
        forward, output = split_backward(source)
        namespace = run_forward(gradwalk, forward)
        names = {t: name for name, t in leaf_names(namespace, gradwalk).items()}
        s = gradwalk.autograd.stepper(namespace[output], names=names, mode=mode)
        s.run()
        out["pass"] = s.to_dict()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return out["pass"]


def torch_order(source):
    """``(label, first gradient received)`` per node, in the order PyTorch's engine runs them."""
    forward, output = split_backward(source)
    namespace = run_forward(torch, forward)
    leaves = {id(t): name for name, t in leaf_names(namespace, torch).items()}
    rows, seen, stack = [], set(), [namespace[output].grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        label = type(node).__name__
        if hasattr(node, "variable"):
            label = f"AccumulateGrad({leaves[id(node.variable)]})"
        node.register_prehook(lambda grads, label=label: rows.append(
            (label, grads[0].detach().numpy().copy())))
        stack.extend(fn for fn, _ in node.next_functions)
    namespace[output].backward()
    return rows, {name: t.grad for name, t in leaf_names(namespace, torch).items()}


def step_label(graph, step):
    node = next(n for n in graph["nodes"] if n["id"] == step["node"])
    if node["kind"] == "accumulate":
        return f"AccumulateGrad({node['variable']})"
    return step["name"]


def data(tensor_json):
    return np.array(tensor_json["data"], dtype=np.float64)


def run(client, source, mode="pytorch"):
    response = client.post("/api/run", json={"source": source, "mode": mode})
    assert response.status_code == 200, response.text
    return response.json()


# ---------------------------------------------------------------- presets

def test_presets_are_the_seeds_examples(client):
    response = client.get("/api/presets")
    assert response.status_code == 200
    presets = response.json()
    assert [p["id"] for p in presets] == PRESET_IDS
    assert {"neuron", "mixed", "squared-error", "two-paths", "relu", "dead-relu",
            "broadcasting"} <= set(PRESET_IDS)
    for p in presets:
        assert p["title"] and p["source"].rstrip().endswith(".backward()")


@pytest.mark.parametrize("preset", PRESETS, ids=PRESET_IDS)
def test_preset_steps_are_the_stepping_apis(client, preset):
    answer = run(client, preset["source"])
    assert answer["ok"] and answer["error"] is None
    [lab_pass] = answer["passes"]
    expected = stepper_records(preset["source"])
    assert lab_pass["steps"] == expected["steps"]
    assert lab_pass["grads"] == expected["grads"]
    without_forward = [{k: v for k, v in n.items() if k != "forward"}
                       for n in expected["graph"]["nodes"]]
    assert [{k: v for k, v in n.items() if k != "forward"}
            for n in lab_pass["graph"]["nodes"]] == without_forward
    assert lab_pass["graph"]["edges"] == expected["graph"]["edges"]


@pytest.mark.parametrize("preset", PRESETS, ids=PRESET_IDS)
def test_preset_order_and_gradients_are_pytorchs(client, preset):
    answer = run(client, preset["source"])
    [lab_pass] = answer["passes"]
    order, torch_grads = torch_order(preset["source"])
    labels = [step_label(lab_pass["graph"], s) for s in lab_pass["steps"]]
    assert labels == [label for label, _ in order]
    for step, (label, grad) in zip(lab_pass["steps"], order):
        np.testing.assert_allclose(data(step["grad_in"][0]), grad, rtol=1e-5, atol=1e-7,
                                   err_msg=label)
    for leaf in answer["leaves"]:
        np.testing.assert_allclose(data(leaf["grad"]), torch_grads[leaf["name"]].numpy(),
                                   rtol=1e-5, atol=1e-7, err_msg=leaf["name"])
        assert leaf["grad"]["dtype"] == str(torch_grads[leaf["name"]].dtype).replace("torch.", "")


def test_the_neuron_as_the_seeds_tell_it(client):
    answer = run(client, PRESETS[0]["source"])
    assert [leaf["name"] for leaf in answer["leaves"]] == ["w", "x", "b"]
    grads = {leaf["name"]: leaf["grad"]["data"] for leaf in answer["leaves"]}
    assert grads == pytest.approx({"w": 1.26947918, "x": 0.31736979, "b": 0.63473959})
    [y] = answer["values"]
    assert (y["name"], y["line"], y["grad_fn"], y["seq"]) == ("y", 4, "TanhBackward0", 2)
    graph = answer["passes"][0]["graph"]
    assert graph["seed"] == {"shape": [], "dtype": "float32", "data": 1.0}
    forward = {n["name"]: n["forward"]["name"] for n in graph["nodes"] if n["forward"]}
    assert forward["TanhBackward0"] == "y"
    assert forward["AddBackward0"] == "w * x + b"
    assert forward["MulBackward0"] == "w * x"
    by_leaf = {n["variable"]: n["id"] for n in graph["nodes"] if n["variable"]}
    assert {leaf["name"]: leaf["node"] for leaf in answer["leaves"]} == by_leaf
    assert answer["passes"][0]["steps"][0]["text"] == (
        "popped TanhBackward0 (seq 2) with gradient 1, sent 0.6347 to AddBackward0")


def test_topo_mode_same_gradients_different_order(client):
    mixed = PRESETS[1]["source"]
    pytorch, topo = run(client, mixed, "pytorch"), run(client, mixed, "topo")
    assert topo["mode"] == "topo"
    for a, b in zip(topo["leaves"], pytorch["leaves"]):
        assert data(a["grad"]) == pytest.approx(data(b["grad"]))
    order = [s["node"] for s in topo["passes"][0]["steps"]]
    assert order != [s["node"] for s in pytorch["passes"][0]["steps"]]
    assert topo["passes"][0]["steps"] == stepper_records(mixed, "topo")["steps"]


# ---------------------------------------------------------------- passes and errors

NEURON = PRESETS[0]["source"]


def test_backward_again_fails_as_in_pytorch(client):
    answer = run(client, NEURON + "y.backward()\n")
    assert answer["ok"] is False and answer["error"] is None
    first, second = answer["passes"]
    assert first["error"] is None
    assert second["error"]["type"] == "RuntimeError"
    assert second["error"]["message"].startswith(ERR_TWICE)
    assert (second["error"]["line"], second["error"]["col"], second["call"]) == (6, 1, "y.backward()")
    assert second["steps"][-1]["error"]["type"] == "RuntimeError"
    # the leaves keep the first pass's gradients
    assert answer["leaves"][0]["grad"]["data"] == pytest.approx(1.26947918)


def test_backward_again_with_retain_graph_accumulates(client):
    source = NEURON.replace("y.backward()", "y.backward(retain_graph=True)") + "y.backward()\n"
    answer = run(client, source)
    assert answer["ok"] and [p["error"] for p in answer["passes"]] == [None, None]
    assert answer["passes"][0]["call"] == "y.backward(retain_graph=True)"
    assert answer["passes"][0]["graph"]["nodes"][0]["saved"][0]["freed"] is False
    assert answer["leaves"][0]["grad"]["data"] == pytest.approx(2 * 1.26947918)


def test_autograd_grad_is_a_pass_that_returns_gradients(client):
    source = """\
x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
L = x * y + x * x
gx, gy = torch.autograd.grad(L, [x, y])
print(gx, gy)
"""
    answer = run(client, source)
    assert answer["ok"], answer
    [grad_pass] = answer["passes"]
    assert grad_pass["call"] == "torch.autograd.grad(L, [x, y])"
    assert [data(r) for r in grad_pass["result"]] == [7.0, 2.0]
    assert [leaf["grad"] for leaf in answer["leaves"]] == [None, None]
    assert answer["prints"] == ["tensor(7.) tensor(2.)\n"]


def test_an_error_outside_a_pass_has_its_line_and_column(client):
    source = ("a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
              "b = torch.tensor([1.0, 2.0, 3.0])\n"
              "c = a + b\n")
    answer = run(client, source)
    assert answer["ok"] is False and answer["passes"] == []
    error = answer["error"]
    assert (error["type"], error["line"], error["col"]) == ("RuntimeError", 3, 5)
    assert error["message"] == str(_torch_error("torch.tensor([1.0, 2.0]) + torch.tensor([1.0, 2.0, 3.0])"))


def _torch_error(expression):
    try:
        eval(expression, {"torch": torch})  # test code: PyTorch's own message to compare with
    except RuntimeError as error:
        return error
    raise AssertionError("torch raised nothing")


def test_non_scalar_backward_gives_pytorchs_message(client):
    source = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 2\ny.backward()\n"
    answer = run(client, source)
    assert answer["error"]["message"] == "grad can be implicitly created only for scalar outputs"
    assert answer["error"]["line"] == 3


def test_each_request_is_a_fresh_process(client):
    first = run(client, NEURON)
    second = run(client, NEURON)
    assert first == second  # sequence numbers start at 0 every time


def torch_sequence_numbers_twice(source):
    """The output's node's sequence number when PyTorch runs the forward pass twice in one fresh
    thread (its counter is thread-local and starts at 0 there)."""
    out = []

    def work():
        forward, output = split_backward(source)
        for _ in range(2):
            out.append(run_forward(torch, forward)[output].grad_fn._sequence_nr())

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return out


def test_new_forward_pass_continues_the_sequence_numbers(client):
    first = run(client, NEURON)
    assert first["next_sequence_nr"] == 3
    response = client.post("/api/run", json={"source": NEURON, "sequence_start": 3})
    assert response.status_code == 200, response.text
    second = response.json()
    assert second["ok"] and second["next_sequence_nr"] == 6
    # as in PyTorch: the same forward pass again gives the output's node 5 instead of 2
    assert [first["values"][0]["seq"], second["values"][0]["seq"]] == \
        torch_sequence_numbers_twice(NEURON) == [2, 5]
    graph_1, graph_2 = first["passes"][0]["graph"], second["passes"][0]["graph"]
    seqs = {n["name"]: n["seq"] for n in graph_2["nodes"] if n["seq"] is not None}
    assert seqs == {"MulBackward0": 3, "AddBackward0": 4, "TanhBackward0": 5}
    for a, b in zip(graph_1["nodes"], graph_2["nodes"], strict=True):
        assert (a["id"], a["name"], a["variable"]) == (b["id"], b["name"], b["variable"])
        assert b["seq"] == (None if a["seq"] is None else a["seq"] + 3)
    assert graph_1["edges"] == graph_2["edges"]
    steps_1, steps_2 = first["passes"][0]["steps"], second["passes"][0]["steps"]
    assert [(s["node"], s["name"]) for s in steps_1] == [(s["node"], s["name"]) for s in steps_2]
    assert [s["grad_in"] for s in steps_1] == [s["grad_in"] for s in steps_2]
    assert steps_2[0]["text"].startswith("popped TanhBackward0 (seq 5) ")
    assert first["passes"][0]["grads"] == second["passes"][0]["grads"]
    assert first["leaves"] == second["leaves"]
    # a third pass goes on from there; 0 is a fresh Python again
    third = client.post("/api/run", json={"source": NEURON, "sequence_start": 6}).json()
    assert third["values"][0]["seq"] == 8 and third["next_sequence_nr"] == 9
    assert run(client, NEURON) == first


def test_the_pytorch_check_shows_sequence_numbers_from_the_snippets_start(client):
    from gradwalk.lab import compare

    expected = [("TanhBackward0", 2), ("AddBackward0", 1), ("MulBackward0", 0)]
    answers = [client.post("/api/compare", json={"source": NEURON}).json(),
               compare.compare(NEURON, sequence_start=3)]  # a "New forward pass" run
    for answer in answers:
        assert answer["same"] and answer["differences"] == 0, answer
        rows = answer["passes"][0]["rows"]
        functions = [(r["gradwalk"]["name"], r["gradwalk"]["seq"]) for r in rows
                     if r["gradwalk"]["seq"] is not None]
        assert functions == expected
        assert all(r["gradwalk"]["seq"] == r["torch"]["seq"] for r in rows)


def test_health_and_openapi(client):
    health = client.get("/api/health").json()
    assert health["status"] == "ok" and health["version"] == gradwalk.__version__
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    assert {"/api/run", "/api/presets", "/api/health"} <= set(spec["paths"])
    request = spec["components"]["schemas"]["RunRequest"]["properties"]["sequence_start"]
    assert (request["minimum"], request["maximum"], request["default"]) == (0, 1_000_000_000, 0)
    assert "next_sequence_nr" in spec["components"]["schemas"]["RunResponse"]["required"]


def test_page_or_build_instructions(client, tmp_path):
    from starlette.testclient import TestClient

    from gradwalk.lab.server import create_app

    page = client.get("/")
    assert page.status_code == 200 and "<html" in page.text.lower()
    assert "content-security-policy" in page.headers
    with TestClient(create_app(static_dir=tmp_path, pool_size=1)) as bare:
        missing = bare.get("/")
    assert missing.status_code == 503
    assert "npm run build" in missing.text and "Traceback" not in missing.text


# ---------------------------------------------------------------- what the lessons teach

def torch_error(source):
    """The error real PyTorch raises for ``source`` (run with ``torch`` bound to torch)."""
    try:
        exec(source, {"torch": torch})  # our own test text, not user input
    except RuntimeError as error:
        return str(error)
    raise AssertionError("PyTorch raised nothing")


@pytest.mark.parametrize("source,line", [
    ("x = torch.tensor(1.0, requires_grad=True)\nx += 1", 2),
    ("x = torch.tensor([1.0, 2.0], requires_grad=True)\nx *= 2", 2),
    ("x = torch.tensor(1.0, requires_grad=True)\ny = x.exp()\ny += 1\ny.backward()", 4),
    ("x = torch.tensor(0.5, requires_grad=True)\ny = torch.tanh(x)\ny *= 2\ny.backward()", 4),
])
def test_in_place_pitfalls_raise_pytorchs_errors(client, source, line):
    body = client.post("/api/run", json={"source": source}).json()
    error = body["error"] or next(p["error"] for p in body["passes"] if p["error"])
    assert (error["type"], error["message"], error["line"]) == (
        "RuntimeError", torch_error(source), line)


def test_no_grad_and_enable_grad_blocks(client):
    source = ("w = torch.tensor(2.0, requires_grad=True)\n"
              "with torch.no_grad():\n"
              "    y = w * 3\n"
              "    with torch.enable_grad():\n"
              "        z = w * 3\n"
              "print(y.requires_grad, y.grad_fn, z.grad_fn.name())\n")
    body = client.post("/api/run", json={"source": source}).json()
    assert body["ok"], body["error"]
    assert body["prints"] == ["False None MulBackward0\n"]


def test_a_few_training_steps_in_a_loop_match_pytorch(client):
    """``.grad`` accumulates over backward calls until zeroed, as the lessons show."""
    source = ("w = torch.tensor(1.0, requires_grad=True)\n"
              "x = torch.tensor(2.0)\n"
              "for _ in range(3):\n"
              "    loss = (w * x - 1.0) ** 2\n"
              "    loss.backward()\n"
              "print(w.grad)\n"
              "for step in range(4):\n"
              "    w.grad.zero_()\n"
              "    loss = (w * x - 1.0) ** 2\n"
              "    loss.backward()\n"
              "    with torch.no_grad():\n"
              "        w -= 0.05 * w.grad\n"
              "print(w, step)\n")
    body = client.post("/api/run", json={"source": source}).json()
    assert body["ok"], body["error"]
    printed = []
    exec(source, {"torch": torch, "print": lambda *a: printed.append(" ".join(map(str, a)) + "\n")})
    assert body["prints"] == printed
    assert body["prints"][0] == "tensor(12.)\n"  # 3 passes of 4: accumulated, not replaced
    assert len(body["passes"]) == 7
