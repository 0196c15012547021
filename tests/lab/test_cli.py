"""``gradwalk lab``: serves on loopback by default, and ``--workers`` runs several server
processes from the app factory."""
import subprocess
import sys
import time

import httpx

from gradwalk.lab.cli import parse_args
from gradwalk.lab.presets import PRESETS


def test_defaults_are_loopback_port_8000_and_a_browser():
    args = parse_args([])
    assert (args.host, args.port, args.no_browser, args.workers) == ("127.0.0.1", 8000, False, 1)


def test_the_command_serves_the_lab_with_two_server_processes(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "gradwalk", "lab", "--no-browser", "--port", str(port),
               "--workers", "2"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{url}/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        # the workers start in the background: the first snippet may wait for one
        answer = httpx.post(f"{url}/api/run", json={"source": PRESETS[0]["source"]},
                            timeout=120).json()
        assert answer["ok"]
        assert httpx.get(f"{url}/api/health", headers={"host": "evil.example"}).status_code == 400
    finally:
        server.terminate()
        output = server.communicate(timeout=20)[0].decode()
    assert f"serving on http://127.0.0.1:{port}/" in output
