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
    # the lab shows values, and a meta tensor has none: the first line fails, with an error naming it
    expected = ("NotImplementedError",) if "meta" in source else ("TypeError", "RuntimeError")
    assert error["type"] in expected and error["line"] == (1 if "meta" in source else 2), error
    if "meta" in source:
        assert "meta" in error["message"], error
    if route == "/api/compare":
        assert body["error"]["torch"]["type"] in ("TypeError", "RuntimeError")
    same_workers(client, lab_app, before)


# ---------------------------------------------------------------- the server under a class
# (issue 14's reliability defects; each test failed before its fix)

import gc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import weakref  # noqa: E402

import httpx  # noqa: E402
import uvicorn  # noqa: E402
from browser_support import ServerThread, free_port  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402
from starlette.routing import Route  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from gradwalk.lab import cli, compare  # noqa: E402
from gradwalk.lab.guard import RequestGuard  # noqa: E402
from gradwalk.lab.limits import DEFAULT_LIMITS  # noqa: E402
from gradwalk.lab.server import create_app  # noqa: E402

# legal, but far too long: each order of derivative of tanh builds a larger graph than the last
RUNAWAY = "x = torch.tensor(0.5, requires_grad=True)\ng = torch.tanh(x)\n" + "".join(
    "g, = torch.autograd.grad(g, x, create_graph=True)\n" for _ in range(40))
SLOW = DEFAULT_LIMITS.but(seconds=30.0, graph_nodes=10**9, total_elements=10**9)


class LabServer(ServerThread):
    """``app`` under uvicorn with the settings ``gradwalk lab`` uses (cli.uvicorn_settings)."""

    def __init__(self, app):
        self.app = app
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, **cli.uvicorn_settings())
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)


def wait_for(condition, what):
    for _ in range(2000):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def test_compare_releases_pytorchs_graph_after_each_run():
    """Its pre-hooks held every PyTorch graph (and the interpreter) alive: a worker filled up."""
    Interpreter = compare._torch_interpreter_class()
    source = "x = torch.randn(20, 20, requires_grad=True)\ny = torch.tanh(x @ x).sum()\ny.backward()"
    interpreter = Interpreter(source)
    interpreter.run(compare.parse(source))
    alive = weakref.ref(interpreter)
    del interpreter
    gc.collect()
    assert alive() is None


def test_a_worker_is_recycled_after_n_requests_and_when_its_memory_stays_high():
    app = create_app(DEFAULT_LIMITS.but(recycle_requests=2), pool_size=1)
    with TestClient(app) as client:
        [first] = app.state.pool.pids()
        for _ in range(2):
            assert client.post("/api/run", json={"source": NEURON}).json()["ok"]
        assert app.state.pool.pids() != [first]
    app = create_app(DEFAULT_LIMITS.but(recycle_bytes=1), pool_size=1)
    with TestClient(app) as client:
        [first] = app.state.pool.pids()
        source = "x = torch.ones(100, 100)\ny = x @ x"
        assert client.post("/api/run", json={"source": source}).json()["ok"]
        assert app.state.pool.pids() != [first]
        assert client.post("/api/run", json={"source": NEURON}).json()["ok"]


def test_a_worker_that_ran_out_of_memory_is_replaced():
    limits = DEFAULT_LIMITS.but(tensor_elements=10**10, total_elements=10**10,
                                memory_bytes=256 * 2**20)
    app = create_app(limits, pool_size=1)
    with TestClient(app) as client:
        [first] = app.state.pool.pids()
        response = client.post("/api/run", json={"source": "x = torch.ones(10**9)"})
        assert response.status_code == 422 and "out of memory" in response.json()["detail"]
        assert app.state.pool.pids() != [first]
        assert client.post("/api/run", json={"source": NEURON}).json()["ok"]


@pytest.mark.parametrize("source", [
    "x = torch.ones(1e8)",
    "x = torch.ones(torch.tensor(10**8))",
    "x = torch.ones(100).expand(torch.tensor(10**6), -1)",
    "x = torch.arange(torch.tensor(1e9))",
    "x = torch.add(input=torch.ones(10000), other=torch.ones(10000, 1))",
    "x = torch.matmul(input=torch.ones(8000, 1), other=torch.ones(1, 8000))",
])
def test_sizes_are_checked_before_anything_is_allocated(source):
    """In a worker with 128 MiB to spare, each of these would run out of memory if it were
    allocated first: the limit's own message says it never was."""
    app = create_app(DEFAULT_LIMITS.but(memory_bytes=128 * 2**20), pool_size=1)
    with TestClient(app) as client:
        body = client.post("/api/run", json={"source": source}).json()
        assert body["error"]["type"] == "LimitError", body["error"]
        assert "at most 10,000" in body["error"]["message"], body["error"]


def test_printed_reprs_show_no_heap_addresses(client):
    source = ("x = torch.tensor(1.0, requires_grad=True)\ny = x * 2\n"
              "print(y.grad_fn, y.grad_fn.next_functions)")
    [printed] = client.post("/api/run", json={"source": source}).json()["prints"]
    assert printed == "<MulBackward0 object> ((<AccumulateGrad object>, 0), (None, 0))\n"


@pytest.mark.parametrize("route,body", [
    ("/api/compare", b'{"source": "x = 1"}'),
    ("/api/profile", b'{"source": "x = 1"}'),
    ("/api/profile/trace", b'{"source": "x = 1"}'),
    ("/api/run", b'{"source": "x = 1"}'),
])
def test_every_post_must_be_json_from_the_labs_own_page(client, route, body):
    as_text = client.post(route, content=body, headers={"content-type": "text/plain"})
    assert as_text.status_code == 415 and "application/json" in as_text.json()["detail"]
    json_headers = {"content-type": "application/json"}
    other_site = client.post(route, content=body,
                             headers={**json_headers, "origin": "http://evil.example"})
    assert other_site.status_code == 403 and "http://evil.example" in other_site.json()["detail"]
    fetched = client.post(route, content=body, headers={**json_headers, "sec-fetch-site": "cross-site"})
    assert fetched.status_code == 403
    own = client.post(route, content=body, headers={**json_headers, "origin": "http://testserver"})
    assert own.status_code == 200


@pytest.mark.parametrize("route", ["/api/compare", "/api/profile", "/api/profile/trace"])
def test_large_and_deeply_nested_bodies_are_4xx_on_every_route(client, route):
    huge = client.post(route, content=b'{"source": "' + b"x" * 1_000_000 + b'"}',
                       headers={"content-type": "application/json"})
    assert huge.status_code == 413 and "65,536 bytes" in huge.json()["detail"]
    nested = client.post(route, content=b"[" * 50_000, headers={"content-type": "application/json"})
    assert nested.status_code == 400 and "not valid JSON" in nested.json()["detail"]


@pytest.mark.parametrize("path,named", [
    ("/api/figures/xor?seed=-1", "seed"),
    ("/api/figures/xor?lr=nan", "lr"),
    ("/api/figures/paths-sum?x=nan", "x"),
    ("/api/figures/paths-sum?y=1e308", "y"),
    ("/api/figures/dead-relu?x1=nan", "x1"),
    ("/api/figures/dead-relu?x2=1e308", "x2"),
    ("/api/figures/dead-relu?b=inf", "b"),
    ("/api/figures/xor/stream?delay_ms=nan", "delay_ms"),
    ("/api/figures/xor/stream?seed=-5", "seed"),
    ("/api/figures/activation?depth=10.5", "depth"),
])
def test_every_bad_parameter_is_a_400_naming_it_with_the_security_headers(client, path, named):
    response = client.get(path)
    assert response.status_code == 400, response.text[:300]
    assert response.json()["detail"].startswith(named + " "), response.json()["detail"]
    assert "default-src 'self'" in response.headers["content-security-policy"]


def test_the_security_headers_are_on_every_answer_a_500_included():
    async def broken(request):
        raise RuntimeError("a bug")

    app = Starlette(routes=[Route("/broken", broken)],  # as server.py builds the lab's app
                    middleware=[Middleware(RequestGuard, limits=DEFAULT_LIMITS)])
    with TestClient(app, raise_server_exceptions=False) as client:
        for path, status in (("/broken", 500), ("/nowhere", 404)):
            response = client.get(path)
            assert response.status_code == status
            assert response.headers["x-content-type-options"] == "nosniff"
        assert client.get("/broken").json()["error"]["type"] == "InternalError"


def test_figures_run_in_the_worker_pool_under_the_time_limit():
    """They ran in the event loop: 8 parallel xor?steps=500 froze every endpoint."""
    app = create_app(DEFAULT_LIMITS.but(seconds=0.01), pool_size=1)
    with TestClient(app) as client:
        response = client.get("/api/figures/xor?steps=500")
        assert response.status_code == 422 and "ran longer than 0.01 s" in response.json()["detail"]
        streamed = client.get("/api/figures/xor/stream?steps=500&delay_ms=0")
        assert streamed.status_code == 422
    app = create_app(pool_size=1)
    with TestClient(app) as client:
        lines = client.get("/api/figures/xor/stream?steps=5&delay_ms=0").text.splitlines()
        assert [json.loads(line).get("step") for line in lines] == [0, 1, 2, 3, 4, None]


def hold_the_only_slot(url, app, source=RUNAWAY):
    """Start a slow request in a thread; return it once the lab counts it in flight."""
    slow = threading.Thread(target=httpx.post, args=(f"{url}/api/run",),
                            kwargs={"json": {"source": source}, "timeout": 60})
    slow.start()
    wait_for(lambda: app.state.admission.in_flight == 1, "the slow request in flight")
    return slow


def test_one_admission_limit_for_every_route_that_runs_code():
    app = create_app(SLOW.but(seconds=3.0, concurrent=1), pool_size=1)
    with LabServer(app) as url:
        slow = hold_the_only_slot(url, app)
        for method, path, body in [("POST", "/api/run", {"source": NEURON}),
                                   ("POST", "/api/compare", {"source": NEURON}),
                                   ("POST", "/api/profile", {"source": NEURON}),
                                   ("POST", "/api/profile/trace", {"source": NEURON}),
                                   ("GET", "/api/figures/xor", None),
                                   ("GET", "/api/figures/xor/stream", None)]:
            busy = httpx.request(method, url + path, json=body)
            assert busy.status_code == 503, path
            assert busy.headers["retry-after"] == "1" and "try again" in busy.json()["detail"]
        # what runs no code is served all the same
        assert httpx.get(f"{url}/api/health").status_code == 200
        assert httpx.get(f"{url}/api/presets").status_code == 200
        slow.join(30)
        assert httpx.post(f"{url}/api/run", json={"source": NEURON}).json()["ok"]


def test_the_work_of_a_client_that_hung_up_is_cancelled():
    """64 slow snippets from clients that hang up at once delayed the next one by ~160 s."""
    app = create_app(SLOW, pool_size=1)
    with LabServer(app) as url:
        [first] = app.state.pool.pids()
        body = json.dumps({"source": RUNAWAY}).encode()
        for _ in range(8):
            with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as s:
                s.sendall(b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Content-Type: application/json\r\n"
                          b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        # the one that was running had its worker killed (its time limit is 30 s, far off);
        # the others left the queue: nothing is in flight any more
        wait_for(lambda: app.state.pool.replaced >= 1, "the running snippet's worker killed")
        wait_for(lambda: app.state.admission.in_flight == 0, "the queued requests gone")
        assert app.state.pool.pids() != [first]
        assert httpx.post(f"{url}/api/run", json={"source": NEURON}, timeout=30).json()["ok"]


def test_a_killed_chrome_trace_export_leaves_no_files():
    app = create_app(SLOW.but(seconds=3.0), pool_size=1)
    with TestClient(app) as client:
        [worker] = app.state.pool.workers
        folder = worker.temp_dir
        assert os.path.isdir(folder)
        response = client.post("/api/profile/trace", json={"source": RUNAWAY})
        assert response.status_code == 422
        assert not os.path.exists(folder)  # the killed worker's folder went with it
        [fresh] = app.state.pool.workers
        ok = client.post("/api/profile/trace", json={"source": NEURON})
        assert ok.status_code == 200 and os.listdir(fresh.temp_dir) == []


def test_slow_and_oversized_requests_are_cut_off():
    LabServer_ = LabServer
    limits = DEFAULT_LIMITS.but(body_seconds=0.5)
    app = create_app(limits, pool_size=1)
    old = cli.LabH11Protocol.header_seconds
    cli.LabH11Protocol.header_seconds = 0.5
    try:
        with LabServer_(app) as url:
            address = ("127.0.0.1", int(url.rsplit(":", 1)[1]))
            # slowloris: headers that never end are closed
            with socket.create_connection(address, timeout=20) as s:
                s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1")
                assert s.recv(1000) == b""  # closed by the server, no answer
            # an endless chunked body gets 408
            with socket.create_connection(address, timeout=20) as s:
                s.sendall(b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                          b"1\r\n{\r\n")
                assert s.recv(1000).startswith(b"HTTP/1.1 408")
            # 16 MB of headers: refused
            big = httpx.get(f"{url}/api/health", headers={"x-big": "a" * 100_000})
            assert big.status_code == 431
            assert httpx.get(f"{url}/api/health").status_code == 200
    finally:
        cli.LabH11Protocol.header_seconds = old
