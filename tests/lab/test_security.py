"""Hostile snippets: each gets a clear 4xx answer that says what went wrong, and the server keeps
serving. The snippets run in worker processes; a runaway one is killed, not waited for."""
import threading

import pytest

from gradwalk.lab.limits import DEFAULT_LIMITS
from gradwalk.lab.presets import PRESETS
from gradwalk.lab.server import create_app


NEURON = PRESETS[0]["source"]
GRAPH_BOMB = "x = torch.tensor(1.0, requires_grad=True)\n" + "\n".join(
    "x = x" + " * x" * 30 for _ in range(150))

# (snippet, status, words the message must contain)
HOSTILE = [
    ("import os", 400, "imports are not allowed"),
    ("from os import system", 400, "imports are not allowed"),
    ("import torch.nn.functional as os, subprocess", 400, "imports are not allowed"),
    ("().__class__.__bases__", 400, "attributes starting with '_'"),
    ("x = torch.tensor(1.0)\nx.grad_fn.__class__", 400, "attributes starting with '_'"),
    ("__import__('os')", 400, "names starting with '_'"),
    ("open('/etc/passwd').read()", 400, "open(...) is not allowed"),
    ("getattr(torch, 'load')", 400, "getattr(...) is not allowed"),
    ("eval('1 + 1')", 400, "eval(...) is not allowed"),
    ("exec('import os')", 400, "exec(...) is not allowed"),
    ("torch.load('/etc/passwd')", 400, "torch.load is not in the lab's list"),
    ("F.__dict__", 400, "attributes starting with '_'"),
    ("print.__self__", 400, "attributes starting with '_'"),
    ("torch.autograd.Function", 400, "torch.autograd.Function is not in the lab's list"),
    ("x = torch.tensor(1.0)\nx.numpy()", 400, ".numpy() is not in the lab's list"),
    ("x = torch.tensor(1.0, requires_grad=True)\nx.register_hook(print)", 400,
     ".register_hook() is not in the lab's list"),
    ("f = lambda: 0", 400, "lambda not allowed"),
    ("while True:\n    pass", 400, "loops (while) not allowed"),
    ("for i in range(10**9):\n    pass", 400, "loops here are `for _ in range(k):` with k a whole number"),
    ("for _ in range(1_000_000):\n    pass", 422, "loops are limited to 1,000 rounds"),
    ("for x in [1, 2]:\n    pass", 400, "loops here are `for _ in range(k):`"),
    ("for _ in range(3):\n    break", 400, "break not allowed"),
    ("for _ in range(1000):\n    for _ in range(1000):\n        for _ in range(1000):\n            pass",
     422, "the snippet ran more than 5,000 statements"),
    ("w = torch.ones(100, requires_grad=True)\ny = (w * w).sum()\nfor _ in range(1000):\n"
     "    y.backward(retain_graph=True)", 422, "passes are limited to 200"),
    ("x = torch.ones(10000)\nwith torch.no_grad():\n    for _ in range(1000):\n        x += 1",
     422, "tensor elements in all; the limit is 200,000"),
    ("x = torch.ones(10)\nfor _ in range(1000):\n    print(x)", 422,
     "printed more than 20,000 characters"),
    ("with open('/etc/passwd'):\n    pass", 400, "with blocks here are `with torch.no_grad():`"),
    ("with torch.no_grad() as g:\n    pass", 400, "without `as`"),
    ("x = torch.tensor(1.0)\nx.grad_fn += 1", 400, "works on a name (x += 1), on x.grad and on x.data"),
    ("s = 'a'\ns *= 10**9", 400, "*= works on numbers and tensors, not on str"),
    ("x = 2\nx **= 10**10", 422, "would need about 10,000,000,000 bits"),
    ("x = 10**18\nx *= 10**18", 422, "integers are limited to 64 bits"),
    ("with torch.no_grad():\n" + "    x = 1\n" * 201, 422, "statements; the limit is 200"),
    ("xs = [i for i in range(10)]", 400, "comprehensions not allowed"),
    ("def f():\n    return 1", 400, "function definitions (def) not allowed"),
    ("s = f'{1:>1000000000}'", 400, "f-strings not allowed"),
    ("s = 'a' * 10**9", 400, "* works on numbers and tensors, not on str"),
    ("s = [0] * 10**9", 400, "* works on numbers and tensors, not on list"),
    ("x = torch.tensor(1.0)\nx.grad_fn = None", 400, "you can assign to names"),
    ("x = (1", 400, "was never closed"),
    ("torch.ones(10**9)", 422, "one tensor may have at most 10,000"),
    ("torch.randn(100000, 100000)", 422, "one tensor may have at most"),
    ("torch.arange(1e12)", 422, "one tensor may have at most"),
    ("torch.linspace(0, 1, steps=10**8)", 422, "one tensor may have at most"),
    ("x = torch.ones(10000)\ny = x + torch.ones(10000, 1)", 422, "the result would have 100,000,000"),
    ("x = torch.ones(100).expand(10**6, -1)", 422, "one tensor may have at most"),
    ("x = torch.ones(100).repeat(10**6)", 422, "one tensor may have at most"),
    ("x = torch.ones(100, 100) @ torch.ones(100, 100)\ny = torch.ones(5000, 2) @ torch.ones(2, 5000)",
     422, "the product would have 25,000,000"),
    ("2**10**10", 422, "would need about 10,000,000,000 bits"),
    ("y = 10**18 * 10**18", 422, "integers are limited to 64 bits"),
    ("(" * 10_000 + ")" * 10_000, 422, "brackets are nested more than 64 deep"),
    ("(" * 5_000 + "1" + ")" * 5_000, 422, "brackets are nested more than 64 deep"),
    ("y = " + "-" * 10_000 + "1", 422, "nested too deeply"),
    ("x = 1" + " + 1" * 3000, 422, "nested too deeply"),
    ("x = 1" + " + 1" * 100, 422, "nested more than 64 levels"),
    ("x = torch.tensor(1.0)\nx" + ".grad" * 3000, 422, "nested too deeply"),
    ("x = 1\n" * 201, 422, "201 statements; the limit is 200"),
    (GRAPH_BOMB, 422, "the graph is limited to 500"),
    ("x = 1\n" + "y = 'a'\n" * 5000, 422, "the limit is 20,000"),
]


def message_of(response):
    body = response.json()
    assert body["detail"] and body["error"]["message"]
    return body["error"]["message"]


@pytest.mark.parametrize("source,status,words", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_snippet_is_refused_clearly(client, source, status, words):
    response = client.post("/api/run", json={"source": source})
    assert response.status_code == status, response.text[:300]
    assert words in message_of(response)
    assert client.get("/api/health").json()["status"] == "ok"


def test_refusals_say_where(client):
    body = client.post("/api/run", json={"source": "x = 1\ny = x + open('f')"}).json()
    assert (body["error"]["type"], body["error"]["line"], body["error"]["col"]) == ("SnippetError", 2, 9)
    assert body["detail"].startswith("SnippetError: line 2, col 9: open(...) is not allowed")
    assert "A snippet may use" in body["detail"]  # and says what is allowed


def test_a_megabyte_body_is_413(client):
    response = client.post("/api/run", json={"source": "x = 1\n" * 175_000})
    assert response.status_code == 413
    assert "larger than the limit of 65,536 bytes" in message_of(response)
    assert client.get("/api/health").json()["status"] == "ok"


def test_a_million_node_graph_is_refused_before_it_is_built(client):
    source = "x = torch.tensor(1.0, requires_grad=True)\ny = x" + " * x" * 1_000_000
    response = client.post("/api/run", json={"source": source})
    assert response.status_code == 413
    assert client.post("/api/run", json={"source": NEURON}).json()["ok"]


@pytest.mark.parametrize("body,content_type,status", [
    (b"not json", "application/json", 400),
    (b'{"mode": "pytorch"}', "application/json", 400),
    (b'{"source": 1}', "application/json", 400),
    (b'{"source": "x = 1", "mode": "fast"}', "application/json", 400),
    (b'{"source": "x = 1", "extra": 1}', "application/json", 400),
    (b'{"source": "x = 1", "sequence_start": -1}', "application/json", 400),
    (b'{"source": "x = 1", "sequence_start": 1.5}', "application/json", 400),
    (b'{"source": "x = 1", "sequence_start": "3"}', "application/json", 400),
    (b'{"source": "x = 1", "sequence_start": true}', "application/json", 400),
    (b'{"source": "x = 1", "sequence_start": null}', "application/json", 400),
    (b"[" * 100_000, "application/json", 413),
    (b'{"source": "x = 1"}', "text/plain", 415),  # a form on another site can't post JSON
])
def test_malformed_requests_are_4xx(client, body, content_type, status):
    response = client.post("/api/run", content=body, headers={"content-type": content_type})
    assert response.status_code == status
    assert message_of(response)


def test_sequence_start_is_limited(client):
    limit = DEFAULT_LIMITS.sequence_start
    at_limit = client.post("/api/run", json={"source": NEURON, "sequence_start": limit})
    assert at_limit.status_code == 200 and at_limit.json()["next_sequence_nr"] == limit + 3
    for start in (limit + 1, 2**64 - 1, 10**30):
        response = client.post("/api/run", json={"source": NEURON, "sequence_start": start})
        assert response.status_code == 422, start
        body = response.json()
        assert body["error"]["type"] == "LimitError" and body["ok"] is False
        assert f"the limit is {limit:,}" in message_of(response) and '"sequence_start"' in body["detail"]
    negative = client.post("/api/run", json={"source": NEURON, "sequence_start": -3})
    assert negative.status_code == 400 and "non-negative integer" in message_of(negative)
    # the graph limit counts the nodes the snippet made, wherever the numbers start
    bomb = client.post("/api/run", json={"source": GRAPH_BOMB, "sequence_start": limit})
    assert bomb.status_code == 422 and "the graph is limited to 500" in message_of(bomb)
    assert client.post("/api/run", json={"source": NEURON}).json()["ok"]


def test_snippets_in_a_worker_process(client, lab_app):
    before = lab_app.state.pool.pids()
    assert client.post("/api/run", json={"source": NEURON}).json()["ok"]
    assert lab_app.state.pool.pids() == before and threading.get_ident() not in before


# A computation that is legal but runs far too long: each order of derivative of tanh builds a
# larger graph than the last.
RUNAWAY = "x = torch.tensor(0.5, requires_grad=True)\ng = torch.tanh(x)\n" + "".join(
    "g, = torch.autograd.grad(g, x, create_graph=True)\n" for _ in range(40))


def test_a_runaway_snippet_is_stopped_and_its_worker_replaced():
    from starlette.testclient import TestClient

    limits = DEFAULT_LIMITS.but(seconds=0.5, graph_nodes=10**9, total_elements=10**9)
    app = create_app(limits, pool_size=1)
    with TestClient(app) as client:
        [before] = app.state.pool.pids()
        response = client.post("/api/run", json={"source": RUNAWAY})
        assert response.status_code == 422
        assert "ran longer than 0.5 s and was stopped" in message_of(response)
        assert app.state.pool.pids() != [before]
        assert client.get("/api/health").json() == {"status": "ok", "version": "0.1.0", "workers": 1}
        assert client.post("/api/run", json={"source": NEURON}).json()["ok"]


def test_a_worker_has_a_memory_limit():
    from starlette.testclient import TestClient

    limits = DEFAULT_LIMITS.but(tensor_elements=10**10, total_elements=10**10,
                                memory_bytes=256 * 2**20)
    app = create_app(limits, pool_size=1)
    with TestClient(app) as client:
        response = client.post("/api/run", json={"source": "x = torch.ones(10**9)"})
        assert response.status_code == 422
        assert "out of memory" in message_of(response)
        assert client.post("/api/run", json={"source": NEURON}).json()["ok"]


def test_too_many_requests_at_once_get_503(serve):
    import httpx

    limits = DEFAULT_LIMITS.but(seconds=3.0, graph_nodes=10**9, total_elements=10**9,
                                concurrent=1)
    app = create_app(limits, pool_size=1)
    with serve(app) as url:
        slow = threading.Thread(target=httpx.post, args=(f"{url}/api/run",),
                                kwargs={"json": {"source": RUNAWAY}, "timeout": 30})
        slow.start()
        for _ in range(2000):
            if app.state.api.in_flight == 1:
                break
            threading.Event().wait(0.005)
        busy = httpx.post(f"{url}/api/run", json={"source": NEURON})
        assert busy.status_code == 503
        assert "try again" in message_of(busy)
        slow.join(30)
        assert httpx.post(f"{url}/api/run", json={"source": NEURON}).json()["ok"]


def test_only_loopback_host_names_when_bound_to_loopback(live_server):
    import httpx

    assert httpx.get(f"{live_server}/api/health").status_code == 200
    rebound = httpx.get(f"{live_server}/api/health", headers={"host": "evil.example"})
    assert rebound.status_code == 400
