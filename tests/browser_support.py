"""What the lab's browser tests share: Debian's chromium (Playwright never downloads a browser
here) and uvicorn serving an app on a free loopback port in a daemon thread."""
import contextlib
import socket
import threading
import time

import uvicorn

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-extensions", "--disable-default-apps", "--no-pings",
                  "--dns-prefetch-disable"]


def free_port():
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """uvicorn serving ``app`` on 127.0.0.1 in a daemon thread, for as long as the block runs."""

    def __init__(self, app):
        self.app = app
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        for _ in range(800):  # up to 20 s on a busy machine
            if self.server.started:
                break
            time.sleep(0.025)
        else:
            raise RuntimeError("uvicorn did not start")
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


def watched_page(page, live_server, viewport, static_dir):
    """Yield ``page`` with its console and network watched (the built bundle checked first);
    afterwards assert no console error but those a test expects (it appends patterns to
    ``page.expected_console_errors``) and no request that left the machine."""
    import re

    for name in ("index.html", "main.js", "main.css"):
        assert (static_dir / name).is_file(), (
            f"the page is not built ({static_dir / name} is missing): "
            f"run `cd web && npm ci && npm run build`")
    errors, external = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def guard(route):
        url = route.request.url
        if url.startswith(live_server) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            external.append(url)
            route.abort()

    page.route("**/*", guard)
    page.set_viewport_size(viewport)
    page.expected_console_errors = []
    yield page
    unexpected = [e for e in errors
                  if not any(re.search(p, e) for p in page.expected_console_errors)]
    assert unexpected == []
    assert external == []
