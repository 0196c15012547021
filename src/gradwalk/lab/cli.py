"""``gradwalk lab``: serve the lab on http://127.0.0.1:8000 and open it in the browser.

    gradwalk lab [--host 127.0.0.1] [--port 8000] [--no-browser] [--workers N]

``--workers N`` starts N server processes (uvicorn builds one app per process with the
factory ``gradwalk.lab.server:create_app``); each keeps its share of snippet worker processes.

uvicorn runs with ``uvicorn_settings()``: h11 with a 16 KiB limit on a request's headers, a
deadline for them (``LabH11Protocol``: a request line and headers must arrive whole within
``Limits.body_seconds`` of the connection or of their first byte, else the connection is closed,
so slowloris connections do not pile up), idle keep-alive connections closed after 20 s, and at
most ``CONNECTIONS`` connections at once (uvicorn answers 503 past it). The app itself bounds
bodies and the work in flight (guard.py).
"""
import argparse
import os
import threading
import webbrowser

from .limits import DEFAULT_LIMITS

HEADER_BYTES = 16 * 1024  # a request line and headers larger than this get 400
KEEP_ALIVE_SECONDS = 20  # an idle connection is closed after this (a class's pages keep theirs)
CONNECTIONS = 1000  # open connections and requests at once, per server process

try:
    from uvicorn.protocols.http.h11_impl import H11Protocol
except ImportError:  # the lab's extra is missing: main() says how to install it
    H11Protocol = None

if H11Protocol is not None:
    class LabH11Protocol(H11Protocol):
        """uvicorn's h11 protocol with a deadline for each request's line and headers."""

        header_seconds = DEFAULT_LIMITS.body_seconds
        _header_deadline = None
        _header_bytes = 0

        def data_received(self, data):
            if self._header_deadline is None and (self.cycle is None or self.cycle.response_complete):
                self._arm()  # the first bytes of a request after an idle keep-alive gap
            if self._header_deadline is not None:  # between requests: this is a request line
                end = data.find(b"\r\n\r\n")
                self._header_bytes += len(data) if end < 0 else end
                if self._header_bytes > HEADER_BYTES:
                    text = f"the request's headers are larger than {HEADER_BYTES:,} bytes".encode()
                    self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                         b"content-type: text/plain; charset=utf-8\r\n"
                                         b"connection: close\r\ncontent-length: "
                                         + str(len(text)).encode() + b"\r\n\r\n" + text)
                    self.transport.close()
                    return
            super().data_received(data)

        def connection_made(self, transport):
            super().connection_made(transport)
            self._arm()

        def _arm(self):
            self._disarm()
            self._header_bytes = 0
            self._header_deadline = self.loop.call_later(self.header_seconds, self._too_slow)

        def _disarm(self):
            if self._header_deadline is not None:
                self._header_deadline.cancel()
                self._header_deadline = None

        def _too_slow(self):
            self._header_deadline = None
            if self.cycle is None or self.cycle.response_complete:  # still no whole request
                self.transport.close()

        def handle_events(self):
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete:
                self._disarm()  # a request's headers are in; the app bounds its body


        def connection_lost(self, exc):
            self._disarm()
            super().connection_lost(exc)


def uvicorn_settings():
    """The keyword arguments the lab gives ``uvicorn.run`` / ``uvicorn.Config``."""
    return {"http": LabH11Protocol, "h11_max_incomplete_event_size": HEADER_BYTES,
            "timeout_keep_alive": KEEP_ALIVE_SECONDS, "limit_concurrency": CONNECTIONS,
            "log_level": "warning"}


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="gradwalk lab", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: only this machine can connect)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--workers", type=int, default=1, help="server processes (default 1)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if H11Protocol is None:
        raise SystemExit("gradwalk lab needs the lab's extra: pip install 'gradwalk[lab]' "
                         "(uvicorn and starlette are missing)")
    import uvicorn

    if args.workers < 1:
        raise SystemExit("gradwalk lab: --workers must be at least 1")
    # read by every server process's app factory (create_app_from_env)
    os.environ["GRADWALK_LAB_SERVERS"] = str(args.workers)
    os.environ["GRADWALK_LAB_HOST"] = args.host
    host_in_url = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host_in_url}:{args.port}/"
    print(f"gradwalk lab: serving on {url} (Ctrl+C to stop)", flush=True)
    if not args.no_browser:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    uvicorn.run("gradwalk.lab.server:create_app_from_env", factory=True, host=args.host,
                port=args.port, workers=args.workers, **uvicorn_settings())
    return 0
