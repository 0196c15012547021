"""Load on the lab's server: N concurrent clients post the presets for a while.

    python benchmarks/bench_lab_load.py                       # 20 clients, 30 s, own server
    python benchmarks/bench_lab_load.py --clients 50 --seconds 10 --server-workers 2
    python benchmarks/bench_lab_load.py --url http://127.0.0.1:8000   # a server already running

Starts `gradwalk lab --no-browser` on a free port (unless --url), waits for /api/health, then
runs the clients (asyncio + httpx, one connection each, each request right after the last) and
prints requests/s, latency percentiles and errors (any answer but 200 with ok=true, or a
transport error). Target on 2 cores: 0 errors and p99 < 200 ms at 20 clients.
"""
import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time

import httpx

from gradwalk.lab.presets import PRESETS


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(server_workers):
    port = free_port()
    command = [sys.executable, "-m", "gradwalk", "lab", "--no-browser", "--port", str(port),
               "--workers", str(server_workers)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/health").status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the lab did not start")


async def client(url, index, stop_at, latencies, errors):
    bodies = [{"source": p["source"], "mode": "pytorch"} for p in PRESETS]
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        k = index
        while time.perf_counter() < stop_at:
            body = bodies[k % len(bodies)]
            k += 1
            start = time.perf_counter()
            try:
                response = await http.post("/api/run", json=body)
                ok = response.status_code == 200 and response.json()["ok"]
                problem = None if ok else f"HTTP {response.status_code}"
            except httpx.HTTPError as error:
                problem = type(error).__name__
            latencies.append(time.perf_counter() - start)
            if problem:
                errors.append(problem)


async def load(url, clients, seconds):
    latencies, errors = [], []
    async with httpx.AsyncClient(base_url=url) as http:  # warm up: one of each preset
        for p in PRESETS:
            await http.post("/api/run", json={"source": p["source"]})
    start = time.perf_counter()
    stop_at = start + seconds
    await asyncio.gather(*(client(url, i, stop_at, latencies, errors) for i in range(clients)))
    return latencies, errors, time.perf_counter() - start


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--server-workers", type=int, default=1,
                        help="gradwalk lab --workers (server processes)")
    parser.add_argument("--url", help="use a server that is already running")
    args = parser.parse_args(argv)

    process = None
    url = args.url
    if url is None:
        process, url = start_server(args.server_workers)
    try:
        latencies, errors, elapsed = asyncio.run(load(url, args.clients, args.seconds))
    finally:
        if process is not None:
            process.terminate()
            process.wait(20)
    ms = [x * 1000 for x in latencies]
    print(f"lab load: {args.clients} clients, {elapsed:.1f} s, server workers "
          f"{args.server_workers}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"  requests   {len(ms)}  ({len(ms) / elapsed:.1f} /s)")
    print(f"  latency    p50 {percentile(ms, 50):.1f} ms   p90 {percentile(ms, 90):.1f} ms   "
          f"p99 {percentile(ms, 99):.1f} ms   max {max(ms):.1f} ms   mean "
          f"{statistics.fmean(ms):.1f} ms")
    print(f"  errors     {len(errors)}" + (f"  ({sorted(set(errors))})" if errors else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
