"""``gradwalk lab``: serve the lab on http://127.0.0.1:8000 and open it in the browser.

    gradwalk lab [--host 127.0.0.1] [--port 8000] [--no-browser] [--workers N]

``--workers N`` starts N server processes (uvicorn builds one app per process with the
factory ``gradwalk.lab.server:create_app``); each keeps its share of snippet worker processes.
"""
import argparse
import os
import threading
import webbrowser



def parse_args(argv):
    parser = argparse.ArgumentParser(prog="gradwalk lab", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: only this machine can connect)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--workers", type=int, default=1, help="server processes (default 1)")
    return parser.parse_args(argv)


def main(argv=None):
    import uvicorn

    args = parse_args(argv)
    if args.workers < 1:
        raise SystemExit("gradwalk lab: --workers must be at least 1")
    # read by every server process's app factory (create_app_from_env)
    os.environ["GRADWALK_LAB_SERVERS"] = str(args.workers)
    os.environ["GRADWALK_LAB_HOST"] = args.host
    host_in_url = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host_in_url}:{args.port}/"
    print(f"gradwalk lab: serving on {url} (Ctrl+C to stop)")
    if not args.no_browser:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    uvicorn.run("gradwalk.lab.server:create_app_from_env", factory=True, host=args.host,
                port=args.port, workers=args.workers, log_level="warning")
    return 0
