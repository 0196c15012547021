"""Snippets run in worker processes, so that a runaway one can be stopped.

A thread cannot be stopped from outside, and a snippet that allocates or computes for too long
must not slow the server. So the server keeps a small pool of worker processes. Each runs one
request at a time under an address-space limit (``RLIMIT_AS``); the server waits for the answer
at most ``limits.seconds`` and then kills the worker and starts a fresh one. The answer travels
back as finished JSON bytes, so the server process only copies it to the client.

The pool is asynchronous: a request waits for a free worker, and for its answer, without holding
a thread, so a queue of requests costs the server nothing but memory. A request that is
cancelled (its client hung up) leaves the queue, or, when its snippet is already running, has
its worker killed and replaced: no work is done for a client that left.

A worker is replaced, after it answered, when it ran out of memory, when it holds more than
``limits.recycle_bytes`` more than when it started (what a snippet allocated and the allocator
kept), or when it has served ``limits.recycle_requests`` requests; so no request can make later
requests fail. Each worker has its own temporary folder, removed with the worker, so a worker
killed in the middle of writing a file (the Chrome-trace export) leaves nothing on disk.

    pool = WorkerPool(size=2)
    pool.start()
    status, body = await pool.run("w = torch.tensor(1.0, requires_grad=True)\\n...", "pytorch")
    pool.close()
"""
import collections
import gc
import json
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading

import anyio
import anyio.from_thread
import anyio.lowlevel

from .limits import DEFAULT_LIMITS, LimitError, SnippetError

# HTTP status for each kind of refusal (see server.py and the OpenAPI description)
STATUS = {"SyntaxError": 400, "SnippetError": 400, "LimitError": 422}


def refusal(error, status=None):
    """The JSON body and status for a snippet the lab will not run."""
    body = {"ok": False, "mode": None, "leaves": [], "values": [], "passes": [], "prints": [],
            "error": error.to_dict(), "detail": _detail(error)}
    return status or STATUS.get(error.kind, 400), json.dumps(body).encode()


def internal_error(error):
    """A 500 for an error in the lab itself (not the snippet's): the worker keeps serving."""
    error = SnippetError(f"the lab failed on this snippet ({type(error).__name__}: {error}); "
                         f"this is a bug in gradwalk's lab, please report it with the snippet")
    error.kind = "InternalError"
    return refusal(error, 500)


def _detail(error):
    where = f"line {error.line}, col {error.col}: " if error.line is not None else ""
    return f"{error.kind}: {where}{error.message}"


def handle(source, mode, limits, sequence_start=0, earlier_passes=0):
    """Run one request (in a worker): ``(status, JSON bytes)``. ``mode``: "pytorch" or "topo"
    (a snippet), "compare", "profile" or "trace" (the tools), "figure" (``source`` is the JSON
    ``{"name", "args"}`` of one figure, figure_routes.py)."""
    if mode in ("compare", "profile", "trace"):  # the PyTorch check and the profiler view
        from .figure_routes import run_tool

        return run_tool(source, mode, limits)
    if mode == "figure":
        from .figure_routes import run_figure

        return run_figure(source, limits)
    from .interpreter import run_snippet

    try:
        body = json.dumps(run_snippet(source, mode, limits, sequence_start, earlier_passes), allow_nan=False).encode()
    except SnippetError as error:
        if getattr(error, "out_of_memory", False):
            raise MemoryError(error) from None  # _worker_main replies, then the worker goes
        return refusal(error)
    if len(body) > limits.response_bytes:
        return refusal(LimitError(f"the answer would be {len(body):,} bytes; the limit is "
                                  f"{limits.response_bytes:,} (fewer or smaller tensors, please)"))
    return 200, body


def _memory_use():
    """``(address space, resident)`` bytes of this process (zeros where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            size, resident = f.read().split()[:2]
        page = os.sysconf("SC_PAGE_SIZE")
        return int(size) * page, int(resident) * page
    except (OSError, ValueError):
        return 0, 0


def _limit_memory(extra_bytes):
    """Let this process use ``extra_bytes`` of address space beyond what it has now."""
    try:
        import resource

        with open("/proc/self/statm") as f:
            current = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (current + extra_bytes, current + extra_bytes))
    except (ImportError, OSError, ValueError):
        pass  # not Linux: the element limits still bound what a snippet can allocate


def _give_back_memory():
    """Collect cycles and hand freed heap pages back to the system (glibc keeps them)."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _worker_main(connection, limits, temp_dir):
    import warnings

    warnings.simplefilter("ignore")  # NumPy's overflow warnings etc. are not the server's log
    tempfile.tempdir = temp_dir  # removed by the pool with this worker, even if it is killed
    os.environ["TMPDIR"] = temp_dir
    from .. import _fast, _mkl

    _mkl.library()  # MKL (when installed) mapped before the limit: its libraries are not the snippet's
    _limit_memory(limits.memory_bytes)
    _fast.disable()  # snippets are small: no compile time or LLVM inside their limits
    # what the fork server imported (torch, gradwalk) lives as long as the worker: out of the
    # collector's sight, a full collection after each request costs microseconds, not 150 ms
    gc.freeze()
    base_size, base_resident = _memory_use()
    while True:
        try:
            source, mode, sequence_start, earlier_passes = connection.recv()
        except (EOFError, OSError):
            return
        out_of_memory = False
        try:
            status, body = handle(source, mode, limits, sequence_start, earlier_passes)
        except MemoryError as error:
            out_of_memory = True  # what it allocated may stay mapped: this worker is replaced
            given = error.args[0] if error.args else None
            status, body = refusal(given if isinstance(given, LimitError) else LimitError(
                f"the snippet ran out of memory (limit {limits.memory_bytes // 2**20} MiB)"))
        except Exception as error:  # noqa: BLE001 - a bug of the lab's; the worker lives on
            status, body = internal_error(error)
        _give_back_memory()
        # a worker that still holds memory (what a snippet allocated, or the address space a
        # MemoryError left mapped) is replaced once it has answered
        size, resident = _memory_use()
        recycle = (out_of_memory or resident - base_resident > limits.recycle_bytes
                   or size - base_size > limits.memory_bytes // 2)
        connection.send((status, body, recycle))


class Worker:
    def __init__(self, context, limits):
        self.temp_dir = tempfile.mkdtemp(prefix="gradwalk-lab-worker-")
        self.connection, child_end = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child_end, limits,
                                                                  self.temp_dir),
                                       daemon=True, name="gradwalk-lab-worker")
        self.process.start()
        child_end.close()
        self.served = 0

    def stop(self):
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.connection.close()
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def exit_reason(self):
        """Why a worker whose pipe closed stopped, in words."""
        self.process.join(1)
        code = self.process.exitcode
        if code == -signal.SIGKILL:
            return "was killed (out of memory?)"
        if code is None:
            return "stopped answering"
        return f"crashed (exit code {code})"


class WorkerPool:
    """``size`` worker processes; ``await run(...)`` waits for a free one, then its answer."""

    def __init__(self, size=None, limits=DEFAULT_LIMITS):
        self.size = size or default_pool_size()
        self.limits = limits
        self.context = multiprocessing.get_context("forkserver")
        # torch (when installed) too, for "Check against PyTorch": imported once in the fork
        # server, it costs a worker nothing; imported per worker it would eat the time limit
        self.context.set_forkserver_preload(["gradwalk.lab.interpreter", "torch"])
        self.lock = threading.Lock()  # start/close/replace may run in threads
        self.workers = []
        self.idle = collections.deque()
        self.waiting = collections.deque()  # _Turns of requests waiting for a worker
        self.started = False
        self.replaced = 0  # workers stopped and started again (for /api/health and tests)

    # ---- life cycle (blocking: call from a thread or before the event loop runs)
    def start(self):
        with self.lock:
            if self.started:
                return
            self.started = True
        for _ in range(self.size):
            self.idle.append(self._new_worker())

    def start_in_background(self):
        """Start the workers from a thread, handing each to the pool as it comes up (call in
        the event loop): the server answers at once, the first snippets wait for a worker."""
        with self.lock:
            if self.started:
                return
            self.started = True
        token = anyio.lowlevel.current_token()

        def start_all():
            for _ in range(self.size):
                try:
                    worker = self._new_worker()
                except Exception:  # noqa: BLE001 - closed meanwhile, or the system refused
                    return
                try:
                    anyio.from_thread.run_sync(self._release, worker, token=token)
                except RuntimeError:  # the event loop has ended
                    return

        threading.Thread(target=start_all, name="gradwalk-lab-start-workers", daemon=True).start()

    def _new_worker(self):
        worker = Worker(self.context, self.limits)
        with self.lock:
            self.workers.append(worker)
        return worker

    def _retire(self, worker):
        """Stop ``worker`` and start its replacement (blocking; run in a thread)."""
        worker.stop()
        with self.lock:
            if worker in self.workers:
                self.workers.remove(worker)
            self.replaced += 1
            if not self.started:
                return None
        return self._new_worker()

    def close(self):
        with self.lock:
            self.started = False
            workers, self.workers = self.workers, []
        self.idle.clear()
        for worker in workers:
            worker.stop()

    def pids(self):
        with self.lock:
            return [w.process.pid for w in self.workers]

    # ---- running (in the event loop)
    async def run(self, source, mode, sequence_start=0, earlier_passes=0):
        """``(status, body bytes)`` for one request. Cancelling it (the client left) while it
        waits takes it out of the queue; while it runs, kills its worker."""
        worker = await self._acquire()
        outcome = None
        try:
            worker.connection.send((source, mode, sequence_start, earlier_passes))
            with anyio.move_on_after(self.limits.seconds):
                outcome = await self._answer(worker)
        except (EOFError, OSError):  # the worker died
            outcome = refusal(LimitError(f"the snippet stopped its worker process: it "
                                         f"{worker.exit_reason()}"))
            await self._replace(worker)
            return outcome
        except BaseException:  # cancelled: the client left while its snippet ran
            await self._replace(worker)
            raise
        if outcome is None:
            await self._replace(worker)
            return refusal(LimitError(f"the snippet ran longer than {self.limits.seconds:g} s "
                                      f"and was stopped"))
        status, body, recycle = outcome
        worker.served += 1
        if recycle or worker.served >= self.limits.recycle_requests:
            await self._replace(worker)
        else:
            self._release(worker)
        return status, body

    async def _answer(self, worker):
        # A thread per *running* request (at most one per worker; queued ones hold none). It
        # is abandoned when the request is cancelled: killing the worker then ends its read.
        return await anyio.to_thread.run_sync(worker.connection.recv, abandon_on_cancel=True)

    async def _acquire(self):
        """A free worker; the longest-waiting request gets the next one (first come, first
        served: a released worker is handed to the waiter, never left for a newcomer)."""
        if self.idle and not self.waiting:
            return self.idle.popleft()
        turn = _Turn()
        self.waiting.append(turn)
        try:
            await turn.ready.wait()
        except BaseException:  # cancelled: the client left while it waited
            if turn.worker is not None:
                self._release(turn.worker)  # handed over just now: pass it on
            else:
                self.waiting.remove(turn)
            raise
        return turn.worker

    def _release(self, worker):
        if self.waiting:
            turn = self.waiting.popleft()
            turn.worker = worker
            turn.ready.set()
        else:
            self.idle.append(worker)

    async def _replace(self, worker):
        with anyio.CancelScope(shield=True):  # a replacement must happen, cancelled or not
            fresh = await anyio.to_thread.run_sync(self._retire, worker)
        if fresh is not None:
            self._release(fresh)

    def queued(self):
        """Requests waiting for a worker."""
        return len(self.waiting)


class _Turn:
    """A request waiting for a worker: set ``ready`` once ``worker`` is its."""

    def __init__(self):
        self.ready = anyio.Event()
        self.worker = None


def default_pool_size():
    """One worker per core (at least one), shared out among uvicorn's server processes."""
    servers = int(os.environ.get("GRADWALK_LAB_SERVERS", "1"))
    return max(1, (os.cpu_count() or 1) // max(1, servers))
