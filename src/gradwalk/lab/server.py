"""The lab's web server: a Starlette app with the JSON API of docs/lab-api.md and the page.

    POST /api/run        {"source": "...", "mode": "pytorch" | "topo", "sequence_start": 0}
                         -> the run (see the doc)
    GET  /api/presets    the example snippets
    GET  /api/health     {"status": "ok", "version": "...", "workers": 2}
    GET  /openapi.json   the OpenAPI 3 description (openapi.py)
    GET  /               the page (static/, built from web/ by `npm run build`)

Requests are stateless: each snippet runs from scratch in a worker process (workers.py), so
uvicorn's ``--workers`` (or any ASGI deployment) scales the server over cores. Every request
passes guard.py's ``RequestGuard`` (JSON POSTs from the lab's own page only, bounded bodies, the
security headers on every answer); every route that runs code shares one admission limit (503
with Retry-After past it) and is cancelled when its client hangs up.

    uvicorn --factory gradwalk.lab.server:create_app
"""
import contextlib
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.endpoints import HTTPEndpoint
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Match, Route
from starlette.staticfiles import StaticFiles

import gradwalk

from . import figure_routes, lesson_routes
from .guard import (CONTENT_SECURITY_POLICY, Admission, RequestGuard, error_response, parse_json,
                    run_code)
from .limits import DEFAULT_LIMITS
from .openapi import openapi_description
from .presets import presets
from .workers import WorkerPool

STATIC_DIR = Path(__file__).parent / "static"

__all__ = ["create_app", "create_app_from_env", "CONTENT_SECURITY_POLICY", "error_response"]

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


class LabAPI:
    def __init__(self, limits, pool, admission):
        self.limits = limits
        self.pool = pool
        self.admission = admission

    @property
    def in_flight(self):
        """Requests that run code, running or waiting for a worker."""
        return self.admission.in_flight

    async def run(self, request):
        # RequestGuard has checked the content type and origin and read the body (bounded)
        payload, problem = parse_json(await request.body())
        problem = problem or _check_payload(payload)
        if problem:
            return error_response(400, "BadRequest", problem)

        async def work():
            status, answer = await self.pool.run(
                payload["source"], payload.get("mode", "pytorch"),
                payload.get("sequence_start", 0), payload.get("earlier_passes", 0))
            return Response(answer, status_code=status, media_type="application/json")

        return await run_code(request, work)

    async def presets(self, request):
        return JSONResponse(presets())

    async def health(self, request):
        return JSONResponse({"status": "ok", "version": gradwalk.__version__,
                             "workers": len(self.pool.pids())})

    async def load(self, request):
        """What the server is doing now: for a teacher watching a class, and the load bench."""
        return JSONResponse({"in_flight": self.admission.in_flight,
                             "limit": self.admission.limit, "refused": self.admission.refused,
                             "queued": self.pool.queued(), "workers": len(self.pool.pids()),
                             "workers_replaced": self.pool.replaced})

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


def create_app(limits=DEFAULT_LIMITS, pool_size=None, static_dir=STATIC_DIR, allowed_hosts=None,
               lessons_dir=None, workers_in_background=False):
    """The lab's ASGI app. ``allowed_hosts``: Host headers to accept (None: any); the CLI
    passes the loopback names when it binds to loopback, which stops DNS-rebinding pages.
    ``workers_in_background``: serve at once and start the worker processes meanwhile (the
    first snippets wait for them); else the app starts serving once they are up."""
    pool = WorkerPool(pool_size, limits)
    admission = Admission(limits.concurrent)
    api = LabAPI(limits, pool, admission)
    static_dir = Path(static_dir)
    routes = [
        Route("/api/run", RunEndpoint),  # a class: other methods get 405 with Allow: POST
        Route("/api/presets", api.presets, methods=["GET"]),
        Route("/api/health", api.health, methods=["GET"]),
        Route("/api/load", api.load, methods=["GET"]),
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
        if workers_in_background:
            pool.start_in_background()
        else:
            await anyio.to_thread.run_sync(pool.start)
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(pool.close)

    def accepts_post(path):
        scope = {"type": "http", "path": path, "method": "POST", "root_path": ""}
        return any(route.matches(scope)[0] is Match.FULL for route in app.router.routes)

    middleware = [Middleware(RequestGuard, limits=limits, accepts_post=accepts_post)]
    if allowed_hosts:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.pool = pool
    app.state.api = api
    app.state.admission = admission
    app.state.limits = limits
    app.state.static_dir = static_dir
    return app


def create_app_from_env():
    """The factory ``gradwalk lab`` gives uvicorn: loopback-only Host headers when bound to
    loopback (GRADWALK_LAB_HOST), the pool shared out over GRADWALK_LAB_SERVERS processes."""
    import os

    host = os.environ.get("GRADWALK_LAB_HOST", "127.0.0.1")
    loopback = host in ("127.0.0.1", "localhost", "::1")
    return create_app(allowed_hosts=["127.0.0.1", "localhost", "[::1]", "::1"] if loopback else None,
                      workers_in_background=True)
