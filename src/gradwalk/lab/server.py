"""The lab's web server: a Starlette app with the JSON API of docs/lab-api.md and the page.

    POST /api/run        {"source": "...", "mode": "pytorch" | "topo", "sequence_start": 0}
                         -> the run (see the doc)
    GET  /api/presets    the example snippets
    GET  /api/health     {"status": "ok", "version": "...", "workers": 2}
    GET  /openapi.json   the OpenAPI 3 description (openapi.py)
    GET  /               the page (static/, built from web/ by `npm run build`)

Requests are stateless: each snippet runs from scratch in a worker process (workers.py), so
uvicorn's ``--workers`` (or any ASGI deployment) scales the server over cores.

    uvicorn --factory gradwalk.lab.server:create_app
"""
import contextlib
import json
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.endpoints import HTTPEndpoint
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

import gradwalk

from . import figure_routes, lesson_routes
from .limits import DEFAULT_LIMITS
from .openapi import openapi_description
from .presets import presets
from .workers import WorkerPool

STATIC_DIR = Path(__file__).parent / "static"

# The page needs its own scripts, inline styles (CodeMirror) and WebAssembly (Graphviz), and
# talks only to this server.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; "
                           "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
                           "connect-src 'self'; object-src 'none'; base-uri 'none'; "
                           "frame-ancestors 'none'")

MISSING_BUNDLE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gradwalk lab: page not built</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem}
code,pre{background:#f3f3f3;padding:.1rem .3rem;border-radius:4px}</style></head>
<body><h1>The lab's page has not been built yet</h1>
<p>The server is running and its API works (try <a href="/api/health">/api/health</a> and
<a href="/api/presets">/api/presets</a>), but the page itself, <code>{static}/index.html</code>,
is missing.</p>
<p>Build it from the repository root (needs Node 20 and npm):</p>
<pre>cd web &amp;&amp; npm ci &amp;&amp; npm run build</pre>
<p>or run <code>bash scripts/setup.sh</code>, which also does it. Then reload this page.</p>
</body></html>
"""


def error_response(status, type_, message, headers=None):
    """A refusal outside the snippet (bad JSON, too large, busy), with docs/lab-api.md's ERROR."""
    return JSONResponse({"detail": message, "error": {"type": type_, "message": message,
                                                      "line": None, "col": None}},
                        status_code=status, headers=headers)


class LabAPI:
    def __init__(self, limits, pool):
        self.limits = limits
        self.pool = pool
        self.in_flight = 0  # requests running or waiting for a worker (one event loop: no lock)

    async def run(self, request):
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return error_response(415, "UnsupportedMediaType",
                                  "send the snippet as JSON (Content-Type: application/json)")
        body = await self.read_body(request)
        if isinstance(body, Response):
            return body
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            return error_response(400, "BadRequest", "the body is not valid JSON")
        problem = _check_payload(payload)
        if problem:
            return error_response(400, "BadRequest", problem)
        if self.in_flight >= self.limits.concurrent:
            return error_response(503, "Busy", f"the lab is running {self.in_flight} snippets "
                                               f"already; try again in a moment")
        self.in_flight += 1
        try:
            status, answer = await anyio.to_thread.run_sync(
                self.pool.run, payload["source"], payload.get("mode", "pytorch"),
                payload.get("sequence_start", 0), payload.get("earlier_passes", 0))
        finally:
            self.in_flight -= 1
        return Response(answer, status_code=status, media_type="application/json")

    async def read_body(self, request):
        """The body, read up to the limit: a 1 MB body is refused without being kept."""
        limit = self.limits.body_bytes
        too_large = error_response(413, "LimitError", f"the request body is larger than the "
                                                      f"limit of {limit:,} bytes")
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return too_large
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                return too_large
            chunks.append(chunk)
        return b"".join(chunks)

    async def presets(self, request):
        return JSONResponse(presets())

    async def health(self, request):
        return JSONResponse({"status": "ok", "version": gradwalk.__version__,
                             "workers": len(self.pool.pids())})

    async def openapi(self, request):
        return JSONResponse(openapi_description(self.limits))


class RunEndpoint(HTTPEndpoint):
    async def post(self, request):
        return await request.app.state.api.run(request)


def _check_payload(payload):
    if not isinstance(payload, dict):
        return 'the body must be a JSON object: {"source": "...", "mode": "pytorch"}'
    if not isinstance(payload.get("source"), str):
        return '"source" (the snippet, a string) is required'
    if payload.get("mode", "pytorch") not in ("pytorch", "topo"):
        return '"mode" must be "pytorch" or "topo"'
    start = payload.get("sequence_start", 0)
    if type(start) is not int or start < 0:
        return '"sequence_start" must be a non-negative integer (0: a fresh Python)'
    earlier = payload.get("earlier_passes", 0)
    if type(earlier) is not int or earlier < 0:
        return '"earlier_passes" must be a non-negative integer (0: .grad starts as None)'
    unknown = set(payload) - {"source", "mode", "sequence_start", "earlier_passes"}
    if unknown:
        return f"unknown fields: {', '.join(sorted(unknown))}"
    return None


async def missing_bundle(request):
    return HTMLResponse(MISSING_BUNDLE_PAGE.replace("{static}", str(request.app.state.static_dir)),
                        status_code=503)


class SecurityHeaders:
    """Adds the page's Content-Security-Policy and friends to every response."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = message.setdefault("headers", [])
                headers.append((b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"referrer-policy", b"no-referrer"))
            await send(message)

        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        await self.app(scope, receive, send_with_headers)


def create_app(limits=DEFAULT_LIMITS, pool_size=None, static_dir=STATIC_DIR, allowed_hosts=None,
               lessons_dir=None):
    """The lab's ASGI app. ``allowed_hosts``: Host headers to accept (None: any); the CLI
    passes the loopback names when it binds to loopback, which stops DNS-rebinding pages."""
    pool = WorkerPool(pool_size, limits)
    api = LabAPI(limits, pool)
    static_dir = Path(static_dir)
    routes = [
        Route("/api/run", RunEndpoint),  # a class: other methods get 405 with Allow: POST
        Route("/api/presets", api.presets, methods=["GET"]),
        Route("/api/health", api.health, methods=["GET"]),
        Route("/openapi.json", api.openapi, methods=["GET"]),
    ]
    routes += figure_routes.routes  # the figures, the PyTorch check, the profiler view
    routes += lesson_routes.routes(static_dir, missing_bundle, lessons_dir)  # lessons; the page's paths
    if (static_dir / "index.html").is_file():
        # a Route, not a Mount, so that a wrong method on /api/... gets that route's 405
        routes.append(Route("/{path:path}", StaticFiles(directory=static_dir, html=True),
                            methods=["GET", "HEAD"]))
    else:
        routes.append(Route("/", missing_bundle, methods=["GET"]))
        routes.append(Route("/index.html", missing_bundle, methods=["GET"]))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await anyio.to_thread.run_sync(pool.start)
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(pool.close)

    middleware = [Middleware(SecurityHeaders)]
    if allowed_hosts:
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.pool = pool
    app.state.api = api
    app.state.limits = limits
    app.state.static_dir = static_dir
    return app


def create_app_from_env():
    """The factory ``gradwalk lab`` gives uvicorn: loopback-only Host headers when bound to
    loopback (GRADWALK_LAB_HOST), the pool shared out over GRADWALK_LAB_SERVERS processes."""
    import os

    host = os.environ.get("GRADWALK_LAB_HOST", "127.0.0.1")
    loopback = host in ("127.0.0.1", "localhost", "::1")
    return create_app(allowed_hosts=["127.0.0.1", "localhost", "[::1]", "::1"] if loopback else None)
