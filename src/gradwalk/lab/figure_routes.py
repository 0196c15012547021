"""HTTP routes of the lab's figures, its PyTorch comparison and its profiler view.

    GET  /api/figures                     the figures, their titles and parameters
    GET  /api/figures/<name>?x=0.8&...    one figure's numbers (figures.py), JSON
    GET  /api/figures/xor/stream?lr=0.05  XOR training, one JSON line per step (NDJSON), then
                                          the decision boundary
    POST /api/compare  {"source": ...}    the snippet on gradwalk and on real PyTorch (compare.py)
    POST /api/profile  {"source": ...}    the snippet under gradwalk.profiler: a timeline
    POST /api/profile/trace               the same run as a Chrome trace (a download)

The server mounts them with ``routes += figure_routes.routes``. Query parameters are read with
the types of the figure function's defaults, so each function's signature is its API; a number
must be finite and within ±1e6 (seeds and counts whole and non-negative), else a 400 names it.
Everything these routes compute runs in the server's worker pool, like a snippet (time and
memory limits, the shared admission limit, cancelled when the client leaves), or in a thread
when the routes are mounted without the lab's server (the tests' bare app): never in the event
loop.
"""
import asyncio
import inspect
import json
import math

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from . import figures
from .guard import error_body, parse_json, run_code
from .limits import DEFAULT_LIMITS, LimitError, SnippetError

TITLES = {
    "chain-rule": "The chain rule",
    "activation": "Activation slopes",
    "gradient-check": "Gradient check",
    "learning-rate": "Learning rate",
    "xor": "XOR",
    "paths-sum": "Paths sum",
    "forward-mode": "Forward mode",
    "dead-relu": "Dead ReLU",
}
MAX_SOURCE = 20_000
LARGEST = 1e6  # the largest magnitude of a figure's number parameter


def _parse(value, default, name):
    if isinstance(default, bool):
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise figures.FigureError(f"{name} must be true or false, got {value!r}")
    if isinstance(default, str):
        return value
    try:
        number = type(default)(value)
    except ValueError:
        raise figures.FigureError(f"{name} must be a {type(default).__name__}, got {value!r}") from None
    if not math.isfinite(number) or abs(number) > LARGEST:
        raise figures.FigureError(f"{name} must be a finite number between -{LARGEST:g} and "
                                  f"{LARGEST:g}, got {value!r}")
    if isinstance(number, int) and number < 0:
        raise figures.FigureError(f"{name} must be 0 or more, got {value!r}")
    return number


def figure_arguments(fn, query):
    """Keyword arguments for ``fn`` from the query string, typed like its defaults."""
    params = inspect.signature(fn).parameters
    unknown = set(query) - set(params)
    if unknown:
        raise figures.FigureError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
    return {name: _parse(query[name], params[name].default, name) for name in query}


def _bad_request(error):
    return JSONResponse(error_body("BadRequest", str(error)), status_code=400)


def run_figure(request_json, limits=DEFAULT_LIMITS):
    """``(status, JSON bytes)`` of one figure, ``request_json`` being ``{"name", "args"}``
    (``"name": "xor/stream"``: every event of the XOR training, as a list). In the lab this
    runs in a worker process (workers.py)."""
    request = json.loads(request_json)
    name, arguments = request["name"], request["args"]
    try:
        if name == "xor/stream":
            answer = list(figures.xor_training(**arguments))
        else:
            answer = figures.FIGURES[name](**arguments)
    except (figures.FigureError, ValueError, OverflowError, ZeroDivisionError) as error:
        # a check of the figure's own (FigureError) or one it did not make: a 400 either way
        return 400, json.dumps(error_body("BadRequest", f"{name}: {error}")).encode()
    return 200, json.dumps(answer, allow_nan=False).encode()


async def _compute(request, mode, payload):
    """``(status, body bytes)`` of ``mode`` ("compare", "profile", "trace", "figure") on
    ``payload``: in the server's worker pool when there is one, else in a thread."""
    pool = getattr(request.app.state, "pool", None)
    if pool is not None:
        return await pool.run(payload, mode)
    if mode == "figure":
        return await anyio.to_thread.run_sync(run_figure, payload)
    return await anyio.to_thread.run_sync(run_tool, payload, mode)


async def figure_index(request: Request):
    return JSONResponse([
        {"id": name, "title": TITLES[name],
         "params": {p.name: p.default for p in inspect.signature(fn).parameters.values()}}
        for name, fn in figures.FIGURES.items()])


async def figure(request: Request):
    name = request.path_params["name"]
    fn = figures.FIGURES.get(name)
    if fn is None:
        return JSONResponse({"detail": f"no figure named {name!r}"}, status_code=404)
    try:
        arguments = figure_arguments(fn, dict(request.query_params))
    except figures.FigureError as error:
        return _bad_request(error)

    async def work():
        status, body = await _compute(request, "figure",
                                      json.dumps({"name": name, "args": arguments}))
        return Response(body, status_code=status, media_type="application/json")

    return await run_code(request, work)


async def xor_stream(request: Request):
    """Newline-delimited JSON, one line per training step, so the page draws the loss live;
    ``delay_ms`` spaces the steps out so a person can watch (0 in tests)."""
    query = dict(request.query_params)
    delay = query.pop("delay_ms", "15")
    try:
        delay_ms = float(delay)
        if not 0 <= delay_ms <= 200:  # nan too
            raise ValueError
    except ValueError:
        return _bad_request(figures.FigureError(f"delay_ms must be a number from 0 to 200, "
                                                f"got {delay!r}"))
    try:
        arguments = figure_arguments(figures.xor_training, query)
    except figures.FigureError as error:
        return _bad_request(error)

    async def work():
        # the whole training runs first (bounded: steps <= 500), in a worker; then the lines
        # go out spaced by delay_ms, so that a person can watch, without holding a worker
        status, body = await _compute(request, "figure",
                                      json.dumps({"name": "xor/stream", "args": arguments}))
        if status != 200:
            return Response(body, status_code=status, media_type="application/json")
        return StreamingResponse(lines(json.loads(body), delay_ms / 1000),
                                 media_type="application/x-ndjson",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    return await run_code(request, work)


async def lines(events, delay_s):
    for event in events:
        if delay_s and "done" not in event and event is not events[0]:
            await asyncio.sleep(delay_s)
        yield json.dumps(event) + "\n"



async def _source(request: Request):
    # RequestGuard has checked the content type and origin and read the body (bounded)
    body, problem = parse_json(await request.body())
    if problem:
        raise figures.FigureError(problem)
    source = body.get("source") if isinstance(body, dict) else None
    if not isinstance(source, str):
        raise figures.FigureError("the body must be JSON: {\"source\": \"...\"}")
    if len(source) > MAX_SOURCE:
        raise figures.FigureError(f"the snippet is longer than {MAX_SOURCE} characters")
    return source


def run_tool(source, tool, limits=DEFAULT_LIMITS):
    """``(status, JSON bytes)`` of one tool run; in the lab this runs in a worker process
    (workers.py), under the same time and memory limits as a snippet."""
    from . import compare, profile
    from .workers import refusal

    try:
        if tool == "compare":
            answer = compare.compare(source, limits)
        elif tool == "profile":
            answer = profile.profile_timeline(source, limits)
        else:
            answer = profile.chrome_trace(source, limits)
    except SnippetError as error:
        if getattr(error, "out_of_memory", False):
            raise MemoryError(error) from None  # the worker replies, then is replaced
        return refusal(error)
    body = json.dumps(answer, allow_nan=False).encode()
    if len(body) > limits.response_bytes:
        return refusal(LimitError(f"the answer would be {len(body):,} bytes; the limit is "
                                  f"{limits.response_bytes:,}"))
    return 200, body


async def _run_tool(request: Request, tool):
    """Read the snippet and run ``tool`` on it: in the server's worker pool when there is one
    (server.py), else in a thread (a bare app, as in the tests)."""
    try:
        source = await _source(request)
    except figures.FigureError as error:
        return None, _bad_request(error)

    async def work():
        status, body = await _compute(request, tool, source)
        response = Response(body, status_code=status, media_type="application/json")
        if status == 200 and tool == "trace":
            response.headers["Content-Disposition"] = 'attachment; filename="gradwalk-trace.json"'
        return response

    response = await run_code(request, work)
    return response.status_code, response


async def compare_route(request: Request):
    return (await _run_tool(request, "compare"))[1]


async def profile_route(request: Request):
    return (await _run_tool(request, "profile"))[1]


async def profile_trace_route(request: Request):
    return (await _run_tool(request, "trace"))[1]


routes = [
    Route("/api/figures", figure_index, methods=["GET"]),
    Route("/api/figures/xor/stream", xor_stream, methods=["GET"]),
    Route("/api/figures/{name}", figure, methods=["GET"]),
    Route("/api/compare", compare_route, methods=["POST"]),
    Route("/api/profile", profile_route, methods=["POST"]),
    Route("/api/profile/trace", profile_trace_route, methods=["POST"]),
]
