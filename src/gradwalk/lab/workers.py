"""Snippets run in worker processes, so that a runaway one can be stopped.

A thread cannot be stopped from outside, and a snippet that allocates or computes for too long
must not slow the server. So the server keeps a small pool of worker processes. Each runs one
snippet at a time under an address-space limit (``RLIMIT_AS``); the server waits for the answer
at most ``limits.seconds`` and then kills the worker and starts a fresh one. The answer travels
back as finished JSON bytes, so the server process only copies it to the client.

    pool = WorkerPool(size=2)
    pool.start()
    status, body = pool.run("w = torch.tensor(1.0, requires_grad=True)\\n...", "pytorch")
    pool.close()
"""
import json
import multiprocessing
import os
import queue
import threading

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
    """Run one snippet (in a worker): ``(status, JSON bytes)``."""
    if mode in ("compare", "profile", "trace"):  # the PyTorch check and the profiler view
        from .figure_routes import run_tool

        return run_tool(source, mode, limits)
    from .interpreter import run_snippet

    try:
        body = json.dumps(run_snippet(source, mode, limits, sequence_start, earlier_passes),
                          allow_nan=False).encode()
    except SnippetError as error:
        return refusal(error)
    if len(body) > limits.response_bytes:
        return refusal(LimitError(f"the answer would be {len(body):,} bytes; the limit is "
                                  f"{limits.response_bytes:,} (fewer or smaller tensors, please)"))
    return 200, body


def _limit_memory(extra_bytes):
    """Let this process use ``extra_bytes`` of address space beyond what it has now."""
    try:
        import resource

        with open("/proc/self/statm") as f:
            current = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (current + extra_bytes, current + extra_bytes))
    except (ImportError, OSError, ValueError):
        pass  # not Linux: the element limits still bound what a snippet can allocate


def _worker_main(connection, limits):
    import warnings

    warnings.simplefilter("ignore")  # NumPy's overflow warnings etc. are not the server's log
    _limit_memory(limits.memory_bytes)
    while True:
        try:
            source, mode, sequence_start, earlier_passes = connection.recv()
        except (EOFError, OSError):
            return
        try:
            status, body = handle(source, mode, limits, sequence_start, earlier_passes)
        except MemoryError:
            status, body = refusal(LimitError("the snippet ran out of memory"))
        except Exception as error:  # noqa: BLE001 - a bug of the lab's; the worker lives on
            status, body = internal_error(error)
        connection.send((status, body))


class Worker:
    def __init__(self, context, limits):
        self.connection, child_end = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child_end, limits), daemon=True,
                                       name="gradwalk-lab-worker")
        self.process.start()
        child_end.close()

    def stop(self):
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.connection.close()


class WorkerPool:
    """``size`` worker processes; ``run`` blocks the calling thread until an answer or timeout."""

    def __init__(self, size=None, limits=DEFAULT_LIMITS):
        self.size = size or default_pool_size()
        self.limits = limits
        self.context = multiprocessing.get_context("forkserver")
        # torch (when installed) too, for "Check against PyTorch": imported once in the fork
        # server, it costs a worker nothing; imported per worker it would eat the time limit
        self.context.set_forkserver_preload(["gradwalk.lab.interpreter", "torch"])
        self.idle = queue.Queue()
        self.lock = threading.Lock()
        self.workers = []
        self.started = False

    def start(self):
        with self.lock:
            if self.started:
                return
            self.started = True
            for _ in range(self.size):
                self._add_worker()

    def _add_worker(self):
        worker = Worker(self.context, self.limits)
        self.workers.append(worker)
        self.idle.put(worker)

    def _replace(self, worker):
        worker.stop()
        with self.lock:
            if worker in self.workers:
                self.workers.remove(worker)
            if self.started:
                self._add_worker()

    def run(self, source, mode, sequence_start=0, earlier_passes=0):
        """``(status, body bytes)`` for one snippet; kills and replaces a worker that is late.
        ``sequence_start``: where the snippet's sequence numbers start (docs/lab-api.md)."""
        worker = self.idle.get()
        try:
            worker.connection.send((source, mode, sequence_start, earlier_passes))
            if worker.connection.poll(self.limits.seconds):
                status, body = worker.connection.recv()
                self.idle.put(worker)
                return status, body
            error = LimitError(f"the snippet ran longer than {self.limits.seconds:g} s and was "
                               f"stopped")
        except (EOFError, OSError):  # the worker died: killed for memory, or crashed
            error = LimitError("the snippet stopped its worker process (out of memory?)")
        self._replace(worker)
        return refusal(error)

    def pids(self):
        with self.lock:
            return [w.process.pid for w in self.workers]

    def close(self):
        with self.lock:
            self.started = False
            workers, self.workers = self.workers, []
        for worker in workers:
            worker.stop()


def default_pool_size():
    """One worker per core (at least one), shared out among uvicorn's server processes."""
    servers = int(os.environ.get("GRADWALK_LAB_SERVERS", "1"))
    return max(1, (os.cpu_count() or 1) // max(1, servers))
