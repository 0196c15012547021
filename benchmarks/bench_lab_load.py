"""Load on the lab's server: a class of students, and a crowd past capacity.

    python benchmarks/bench_lab_load.py                          # both scenarios, --workers 1
    python benchmarks/bench_lab_load.py --workers 2              # two server processes
    python benchmarks/bench_lab_load.py --scenario class --students 100 --seconds 60
    python benchmarks/bench_lab_load.py --scenario crowd --clients 200 --seconds 20
    python benchmarks/bench_lab_load.py --url http://127.0.0.1:8000   # a server already running

Starts `gradwalk lab --no-browser --workers N` on a free loopback port (unless --url), waits for
/api/health, then runs one or both scenarios (asyncio + httpx, one connection per client; traffic
to 127.0.0.1 only, every loop bounded by --seconds):

* class: --students students, each running one of the presets, then thinking for a random
  --think-min .. --think-max seconds (a student reads the answer before the next run), as a
  page does: a 503 is asked again after its Retry-After. Reports p50/p90/p99 latency of the
  answers (a retried request counts from its first try), 503s seen, errors. Target on 2 cores:
  100 students every 2-4 s, 0 errors, p99 < 300 ms.
* crowd: --clients clients each posting a thirty-step training loop (~50 ms of a worker) as
  soon as the last is answered, no think time, no retries (a 503 waits 50 ms): far past
  capacity. Every answer must be whole: a 200 with the full
  run (ok true, passes present) or a 503 with Retry-After and a JSON body; anything else (a
  transport error, a 5xx, a cut body) is counted as lost. Reports answers/s, the share shed.
"""
import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import time

import httpx

from gradwalk.lab.presets import PRESETS

BODIES = [{"source": p["source"], "mode": "pytorch"} for p in PRESETS]
# what the crowd runs: thirty training steps (~50 ms of a worker, a 140 KiB answer), so that
# one client process can ask for far more than two workers can do
TRAINING = {"source": "w = torch.tensor(0.5, requires_grad=True)\nx = torch.tensor(2.0)\n"
                      "for _ in range(30):\n    loss = (torch.tanh(w * x) - 0.5) ** 2\n"
                      "    loss.backward()\n    with torch.no_grad():\n"
                      "        w -= 0.1 * w.grad\n    w.grad.zero_()\n", "mode": "pytorch"}


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


class Tally:
    def __init__(self):
        self.latencies = []  # seconds, one per answered run
        self.busy = 0  # 503s received
        self.errors = []  # what went wrong, in words
        self.answers = 0


def whole_answer(response):
    """None if ``response`` is a whole answer (a full 200 run, or a 503 with Retry-After),
    else what is wrong with it. A 200 is checked by its ends, not parsed: httpx has checked
    its length, and parsing thousands of runs would make this client the bottleneck."""
    content = response.content
    if response.status_code == 200:
        whole = content.startswith(b'{"ok": true, ') and b'"passes": ' in content and (
            content.endswith(b"}"))
        return None if whole else "200 without a whole run"
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code} with a body that is not JSON"
    if response.status_code == 503:
        if "retry-after" not in response.headers:
            return "503 without Retry-After"
        return None if body.get("error", {}).get("type") == "Busy" else "503 without its error"
    return f"HTTP {response.status_code}: {response.text[:200]}"


async def student(http, rng, stop_at, think, tally):
    await asyncio.sleep(rng.uniform(0, think[1]))  # the class does not press Run at once
    while time.perf_counter() < stop_at:
        body = rng.choice(BODIES)
        start = time.perf_counter()
        for _ in range(6):  # as the page's fetchRetrying
            try:
                response = await http.post("/api/run", json=body)
            except httpx.HTTPError as error:
                tally.errors.append(type(error).__name__)
                break
            problem = whole_answer(response)
            if problem:
                tally.errors.append(problem)
                break
            if response.status_code == 200:
                tally.latencies.append(time.perf_counter() - start)
                break
            tally.busy += 1
            await asyncio.sleep(float(response.headers["retry-after"]) * rng.uniform(1, 1.5))
        await asyncio.sleep(rng.uniform(*think))


async def crowd_client(http, index, stop_at, tally):
    await asyncio.sleep(index * 0.01)
    while time.perf_counter() < stop_at:
        body = TRAINING
        start = time.perf_counter()
        try:
            response = await http.post("/api/run", json=body)
        except httpx.HTTPError as error:
            tally.errors.append(type(error).__name__)
            continue
        tally.answers += 1
        problem = whole_answer(response)
        if problem:
            tally.errors.append(problem)
        elif response.status_code == 200:
            tally.latencies.append(time.perf_counter() - start)
        else:
            tally.busy += 1
            await asyncio.sleep(0.05)  # a crowd, not a busy loop on one core


async def run_clients(url, count, make_client):
    tally = Tally()
    limits = httpx.Limits(max_connections=count + 10, max_keepalive_connections=count + 10)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        for body in BODIES:  # warm up: one of each preset
            await http.post("/api/run", json=body)
        start = time.perf_counter()
        await asyncio.gather(*(make_client(http, i, tally) for i in range(count)))
        return tally, time.perf_counter() - start


PROBE = """
import sys, time, httpx
url, seconds, source = sys.argv[1], float(sys.argv[2]), sys.argv[3]
stop = time.perf_counter() + seconds
with httpx.Client(timeout=60) as http:
    while time.perf_counter() < stop:
        start = time.perf_counter()
        r = http.post(url + "/api/run", json={"source": source})
        print(r.status_code, round((time.perf_counter() - start) * 1000), flush=True)
        time.sleep(0.5)
"""


def start_probe(url, seconds):
    """One more student, in a process of its own (the crowd's client process is saturated, so
    its latencies are mostly its own queueing): what a newcomer sees while the lab is full."""
    return subprocess.Popen([sys.executable, "-c", PROBE, url, str(seconds), PRESETS[0]["source"]],
                            stdout=subprocess.PIPE, text=True)


def report_probe(probe):
    rows = [line.split() for line in probe.communicate(timeout=120)[0].splitlines()]
    answered = sorted(int(ms) for status, ms in rows if status == "200")
    busy = [int(ms) for status, ms in rows if status == "503"]
    other = [status for status, _ in rows if status not in ("200", "503")]
    print(f"    a newcomer (own process, a run every 0.5 s): {len(answered)} answered, p50 "
          f"{percentile(answered, 50):.0f} ms, max {max(answered, default=0)} ms; {len(busy)} "
          f"503s in {max(busy, default=0)} ms or less; {len(other)} other")


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else float("nan")


def report(name, tally, elapsed):
    ms = [x * 1000 for x in tally.latencies]
    print(f"  {name}: {len(ms)} runs answered in {elapsed:.1f} s ({len(ms) / elapsed:.1f} /s)")
    if ms:
        print(f"    latency   p50 {percentile(ms, 50):.0f} ms   p90 {percentile(ms, 90):.0f} ms   "
              f"p99 {percentile(ms, 99):.0f} ms   max {max(ms):.0f} ms   mean "
              f"{statistics.fmean(ms):.0f} ms")
    print(f"    503s      {tally.busy}" + (
        f"  ({tally.busy / max(1, tally.answers):.0%} of answers)" if tally.answers else ""))
    print(f"    errors    {len(tally.errors)}" + (
        f"  ({sorted(set(tally.errors))[:5]})" if tally.errors else ""))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=["class", "crowd", "both"], default="both")
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--think-min", type=float, default=2.0)
    parser.add_argument("--think-max", type=float, default=4.0)
    parser.add_argument("--clients", type=int, default=200, help="crowd size")
    parser.add_argument("--seconds", type=float, default=30, help="per scenario")
    parser.add_argument("--workers", "--server-workers", dest="workers", type=int, default=1,
                        help="gradwalk lab --workers (server processes)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--url", help="use a server that is already running")
    args = parser.parse_args(argv)

    process, url = (None, args.url) if args.url else start_server(args.workers)
    failed = False
    try:
        print(f"lab load: server workers {args.workers}, {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.1f} before")
        if args.scenario in ("class", "both"):
            rng = random.Random(args.seed)
            stop_at = time.perf_counter() + args.seconds
            think = (args.think_min, args.think_max)
            tally, elapsed = asyncio.run(run_clients(
                url, args.students, lambda http, i, t: student(http, random.Random(rng.random()),
                                                               stop_at, think, t)))
            report(f"class of {args.students}, a run every {args.think_min:g}-{args.think_max:g} s",
                   tally, elapsed)
            failed |= bool(tally.errors)
        if args.scenario in ("crowd", "both"):
            stop_at = time.perf_counter() + args.seconds
            probe = start_probe(url, args.seconds - 2)
            tally, elapsed = asyncio.run(run_clients(
                url, args.clients, lambda http, i, t: crowd_client(http, i, stop_at, t)))
            report(f"crowd of {args.clients}, no think time", tally, elapsed)
            report_probe(probe)
            print(f"    lost      {len(tally.errors)} (answers that were neither a whole run nor "
                  f"a 503 with Retry-After)")
            failed |= bool(tally.errors)
        print(f"  load average after {os.getloadavg()[0]:.1f}")
        if process is None:
            return 1 if failed else 0
        print("  server:", httpx.get(f"{url}/api/load").text)
    finally:
        if process is not None:
            process.terminate()
            process.wait(20)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
