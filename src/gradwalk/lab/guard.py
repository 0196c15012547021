"""What every request to the lab goes through before and around its route.

``RequestGuard`` (ASGI middleware, outermost) on every request:
  * a POST must be JSON (415) and, when the browser names its ``Origin``, come from the lab's own
    page (403): another site the student visits cannot make their lab run code (CSRF);
  * the body is read here, up to ``limits.body_bytes`` (413) and within ``limits.body_seconds``
    (408), so no route reads 100 MB or waits forever for an endless chunked body;
  * every response carries the security headers, a 500 included (an error in a route becomes
    a JSON 500 here, with the headers).

``Admission``: one limit for every route that runs code (snippets, the PyTorch check, the
profiler, the figures). Past ``limits.concurrent`` requests in flight, a request is answered at
once with 503 and ``Retry-After``; the page waits that long and retries.

``run_code(request, pool, ...)``: admission, then the work in the worker pool, cancelled when
the client hangs up.
"""
import json

import anyio
from starlette.responses import JSONResponse

# The page needs its own scripts, inline styles (CodeMirror) and WebAssembly (Graphviz), and
# talks only to this server.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; "
                           "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
                           "connect-src 'self'; object-src 'none'; base-uri 'none'; "
                           "frame-ancestors 'none'")
SECURITY_HEADERS = [(b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer")]
RETRY_AFTER_SECONDS = 1


def error_body(type_, message):
    """docs/lab-api.md's refusal outside a snippet: ``detail`` and ``error``."""
    return {"detail": message, "error": {"type": type_, "message": message, "line": None,
                                         "col": None}}


def error_response(status, type_, message, headers=None):
    """A refusal outside the snippet (bad JSON, too large, busy), with docs/lab-api.md's ERROR."""
    return JSONResponse(error_body(type_, message), status_code=status, headers=headers)


def busy_response(in_flight):
    return error_response(503, "Busy", f"the lab is running {in_flight} requests already; "
                                       f"try again in a moment",
                          headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


class Admission:
    """Requests that run code, in flight at once (running or waiting for a worker)."""

    def __init__(self, limit):
        self.limit = limit
        self.in_flight = 0  # one event loop: no lock
        self.refused = 0

    def try_enter(self):
        if self.in_flight >= self.limit:
            self.refused += 1
            return False
        self.in_flight += 1
        return True

    def leave(self):
        self.in_flight -= 1


def parse_json(body):
    """The JSON value of ``body``, or a message saying why not (deep nesting included)."""
    try:
        return json.loads(body), None
    except (ValueError, RecursionError):
        return None, "the body is not valid JSON (or is nested too deeply)"


async def run_code(request, work):
    """Admit the request, run ``await work()``, and cancel it if the client hangs up first.
    ``work`` returns a response; a full lab answers 503."""
    admission = getattr(request.app.state, "admission", None)
    if admission is not None and not admission.try_enter():
        return busy_response(admission.in_flight)
    try:
        result = None
        async with anyio.create_task_group() as group:
            async def watch_disconnect():
                while True:
                    message = await request.receive()
                    if message["type"] == "http.disconnect":
                        group.cancel_scope.cancel()  # the client left: stop its work
                        return

            async def do_work():
                nonlocal result
                result = await work()
                group.cancel_scope.cancel()  # done: stop watching

            group.start_soon(watch_disconnect)
            group.start_soon(do_work)
        if result is None:  # cancelled: nobody is listening, but ASGI wants an answer
            return error_response(499, "ClientClosedRequest", "the client closed the request")
        return result
    finally:
        if admission is not None:
            admission.leave()


class RequestGuard:
    """The ASGI middleware described in the module docstring."""

    def __init__(self, app, limits, accepts_post=None):
        self.app = app
        self.limits = limits
        # path -> whether a route takes POSTs there (a POST elsewhere gets the router's 405)
        self.accepts_post = accepts_post or (lambda path: True)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def send_with_headers(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + SECURITY_HEADERS
            await send(message)

        async def answer(status, type_, text, headers=()):
            body = json.dumps(error_body(type_, text)).encode()
            await send_with_headers({"type": "http.response.start", "status": status,
                                     "headers": [(b"content-type", b"application/json"),
                                                 (b"content-length", str(len(body)).encode()),
                                                 *headers]})
            await send({"type": "http.response.body", "body": body})

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refused = self.check_post(scope, headers)
        if refused:
            return await answer(*refused)
        body = await self.read_body(headers, receive)
        if isinstance(body, tuple):
            return await answer(*body)
        replayed = False

        async def receive_replayed():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        try:
            await self.app(scope, receive_replayed, send_with_headers)
        except Exception:  # noqa: BLE001 - any route's bug: a JSON 500 with the headers
            if started:
                raise
            await answer(500, "InternalError", "the lab failed on this request (a bug in "
                                               "gradwalk's lab; the server's log has the details)")
            raise

    def check_post(self, scope, headers):
        """``(status, type, message)`` for a POST the lab refuses, else None."""
        if scope["method"] != "POST" or not self.accepts_post(scope["path"]):
            return None
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return (415, "UnsupportedMediaType",
                    "send the request as JSON (Content-Type: application/json)")
        origin = headers.get("origin")
        if headers.get("sec-fetch-site") == "cross-site" or (
                origin is not None and origin != self.own_origin(scope, headers)):
            return (403, "Forbidden", f"the lab answers POSTs from its own page only, not from "
                                      f"{origin or 'another site'}")
        return None

    @staticmethod
    def own_origin(scope, headers):
        return f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"

    async def read_body(self, headers, receive):
        """The whole body (bytes), or ``(status, type, message)`` when it is too large or too
        slow to arrive."""
        limit = self.limits.body_bytes
        too_large = (413, "LimitError", f"the request body is larger than the limit of "
                                        f"{limit:,} bytes")
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return too_large
        chunks, size = [], 0
        with anyio.move_on_after(self.limits.body_seconds):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return b"".join(chunks)
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    return too_large
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
        return (408, "RequestTimeout", f"the request body took longer than "
                                       f"{self.limits.body_seconds:g} s to arrive")
