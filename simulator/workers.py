"""One worker pool for every long command: ``--jobs N`` local processes, ``--cluster`` Ray.

Owns: ``Workers`` (an ordered map of a module-level function over picklable jobs: in this
process, on a pool of local processes, or as Ray tasks on a cluster), ``PoolError`` (a worker
died: one line, how it ended, the likely cause and the hint to give fewer ``--jobs``) and its
kind ``ClusterError`` (Ray could not be used or a task failed), starting or joining Ray
(``local``: a private instance with one CPU per worker, even where a cluster that ``ray start``
runs on this machine would be joined by default, started in a thread while the first jobs run in
this process; ``HOST:PORT``: a running cluster, checked first by a TCP connection and a trial
join in a child process, so an address where no Ray cluster answers is a one-line error within
seconds), ``TaskProgress`` and ``peak_rss``.

The work units are the plainly parallel ones: explorations of the readings matrix and of a
comparison, the slices of the exhaustive search, random-walk and hypothesis chunks, decidability
samples, seeded bugs, drive runs, the spec report's pictures. Results come back in job order
whatever the pool, and every job is independent of the others and of the pool's size, so a run's
output is the same for any number of workers. Ray is imported only when a cluster pool starts;
what its driver prints about a failure goes to standard error, never into a ``--json`` report.

Must not know: what the jobs compute, argument parsing, exit codes.
"""

from __future__ import annotations

import importlib.util
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Any, TypeVar

J = TypeVar("J")
R = TypeVar("R")

CONNECT_TIMEOUT = 5.0
"""Seconds to open a TCP connection to a ``--cluster ADDRESS`` before giving up."""
PROBE_TIMEOUT = 10.0
"""Seconds a trial join of a ``--cluster ADDRESS`` may take (see ``_probe``)."""
INSTALL_HINT = "pip install -e '.[cluster]'"
FEWER_JOBS = "try fewer --jobs"
"""The hint of every worker that died: each worker holds its own job's memory, so fewer of them
need less at once (``--jobs 1`` runs every job in the command's process)."""
MEMORY = "most likely the system's out-of-memory killer"
"""The likely cause of a worker killed without a word: the kernel's out-of-memory killer sends
SIGKILL (and Ray's workers die the same way)."""


class PoolError(Exception):
    """A job could not be run to its end: a worker died under it (one line, its likely cause and
    ``FEWER_JOBS``), or the cluster failed (``ClusterError``)."""


class ClusterError(PoolError):
    """The cluster could not be used, or a task on it failed or lost its worker."""


class Workers:
    """``size`` local processes (``cluster`` None; 1: everything runs in this process), or
    ``size`` Ray workers of ``cluster`` (``local`` or ``HOST:PORT``). A context manager: the
    processes or the Ray connection end with it."""

    def __init__(self, size: int = 1, cluster: str | None = None) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self.size = size
        self.cluster = cluster
        self._executor: ProcessPoolExecutor | None = None
        self._ray: Any = None
        self._starting: threading.Thread | None = None
        """The thread that starts Ray, holds it while the pool lives, and ends it."""
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._failure: ClusterError | None = None

    @property
    def parallel(self) -> bool:
        """Whether jobs leave this process (then progress callbacks do not reach it)."""
        return self.cluster is not None or self.size > 1

    def __enter__(self) -> Workers:
        if self.cluster is not None:
            self._start_ray(self.cluster)
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        self.close()
        if self._failure is not None and kind is None:  # Ray did not start, and no job said so
            raise self._failure

    def map(self, fn: Callable[[J], R], jobs: Sequence[J]) -> Iterator[R]:
        """``fn`` over ``jobs``, results in job order (each yielded as soon as it and every job
        before it are done). ``fn`` must be a module-level function and the jobs picklable
        whenever the pool is parallel."""
        if self.cluster is None and (self.size == 1 or len(jobs) <= 1):
            yield from map(fn, jobs)
            return
        first = 0
        if self.cluster is not None:
            if self._ray is None and self._starting is None:
                raise ClusterError("the Ray pool was used before it started (use it as a context manager)")
            # while Ray starts (``_run_ray``), the first jobs run here, in job order
            while self._starting is not None and not self._ready.is_set() and first < len(jobs):
                yield fn(jobs[first])
                first += 1
            if first == len(jobs):
                return
            self._started()
        # local processes: every job is sent at once (the executor queues them), so no worker
        # waits for the caller to take a result; on a cluster ``size`` jobs at a time (one with
        # more CPUs than asked for then runs ``size`` at once, as the local pool does), on a
        # private instance (``size`` CPUs) ``size`` more wait behind them; a new one is sent
        # whenever any ends (not only the next in order: a long job must not leave the other
        # workers idle), and the results are handed back in job order
        name = f"{getattr(fn, '__module__', '').rsplit('.', 1)[-1]}.{getattr(fn, '__name__', 'task')}"
        submit, wait_one, get = self._backend(fn, name)
        pending = iter(enumerate(jobs[first:], first))
        running: dict[Any, int] = {}  # task -> job index
        results: dict[int, Any] = {}

        def send() -> None:
            nxt = next(pending, None)
            if nxt is not None:
                running[submit(nxt[1])] = nxt[0]

        window = {None: len(jobs), "local": 2 * self.size}.get(self.cluster, self.size)
        for _ in range(window):
            send()
        for want in range(first, len(jobs)):
            while want not in results:
                ref = wait_one(list(running))
                index = running.pop(ref)
                results[index] = get(ref, f"task {index} ({name})")
                send()
            yield results.pop(want)

    def _backend(
        self, fn: Callable[[J], R], name: str
    ) -> tuple[Callable[[J], Any], Callable[[list[Any]], Any], Any]:
        """How to send a job of ``fn`` (called ``name``), wait for any sent one to end, and get its
        result: local processes (``concurrent.futures``) or Ray tasks. A local worker that dies
        (a signal, ``os._exit``) breaks the whole pool: every job sent fails with
        ``BrokenProcessPool``, raised here as a ``PoolError`` (``_lost``)."""
        if self.cluster is None:
            if self._executor is None:
                self._executor = ProcessPoolExecutor(max_workers=self.size)
            executor = self._executor

            def submit(job: J) -> Future[R]:
                try:
                    return executor.submit(fn, job)
                except BrokenProcessPool:  # it broke while the last result was taken
                    raise self._lost(name) from None

            def wait_future(futures: list[Future[R]]) -> Future[R]:
                return next(iter(wait(futures, return_when=FIRST_COMPLETED).done))

            def result(future: Future[R], _what: str) -> R:
                try:
                    return future.result()
                except BrokenProcessPool:
                    raise self._lost(name) from None

            return submit, wait_future, result
        ray = self._ray
        task = ray.remote(num_cpus=1, max_retries=0)(fn)
        return task.remote, lambda refs: ray.wait(refs, num_returns=1)[0][0], partial(_get, ray)

    def _lost(self, name: str) -> PoolError:
        """The error of a local pool that a worker's death broke: how the worker ended (its exit
        code, read once the pool has ended and waited for every worker; not which job it ran:
        every job sent fails alike) and the likely cause."""
        executor, self._executor = self._executor, None
        workers = list((getattr(executor, "_processes", None) or {}).values())  # private: best effort
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        how = _how_it_ended([w.exitcode for w in workers])
        return PoolError(f"a worker process {how} while running {name} jobs: {FEWER_JOBS}")

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=True)  # the caller stopped early: not run
            self._executor = None
        if self._starting is not None:  # the thread that started Ray ends it
            self._stop.set()
            self._starting.join()
            self._starting = None
        self._ray = None

    # -- Ray ----------------------------------------------------------------------------------

    def _start_ray(self, cluster: str) -> None:
        """Start (``local``) or join Ray in a thread (``_run_ray``); a private instance takes
        seconds to start (importing Ray, its processes, then this driver's connection), and
        ``map`` runs the first jobs here meanwhile; joining takes about a second: it is waited
        for, so that its failure comes at once."""
        if cluster != "local":
            _probe(cluster)
        loaded: Any = sys.modules.get("ray", False)  # None: an import of Ray is refused (a test)
        if loaded is None or (loaded is False and importlib.util.find_spec("ray") is None):
            raise ClusterError(f"--cluster needs Ray, which is not installed: {INSTALL_HINT}")
        self._starting = threading.Thread(target=self._run_ray, args=(cluster,), daemon=True)
        self._starting.start()
        if cluster != "local":
            self._started()

    def _run_ray(self, cluster: str) -> None:
        """Start or join Ray, then hold it until ``close`` (Ray's processes are bound to the
        thread that started them: they end with it)."""
        try:
            self._failure = self._init(cluster)
        finally:
            self._ready.set()
        if self._failure is None:
            self._stop.wait()
            self._ray.shutdown()

    def _init(self, cluster: str) -> ClusterError | None:
        """Import Ray and ``ray.init``; a failure is returned, for ``_started`` to raise."""
        import logging

        try:
            import ray
        except Exception as exc:  # an installation of Ray that cannot be imported
            return ClusterError(f"--cluster {cluster}: cannot import Ray ({type(exc).__name__}: {exc})")
        self._ray = ray
        logging.getLogger("ray").setLevel(logging.ERROR)  # its note on SIGTERM outside the main thread
        quiet: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
        }
        try:
            if cluster == "local":  # a new instance even where one runs already (ray start)
                # its workers at this process's priority, not Ray's default niceness 15: jobs that
                # start a process and wait for it by the clock (drive's Agents) would otherwise
                # starve on a loaded machine
                config = {"worker_niceness": 0}
                ray.init(address="local", num_cpus=self.size, _system_config=config, **quiet)
            else:
                ray.init(address=cluster, **quiet)
        except Exception as exc:  # Ray's own start-up and connection errors
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return ClusterError(f"--cluster {cluster}: {first}")
        _errors_to_stderr()
        return None

    def _started(self) -> None:
        """Wait for Ray to start; raise a failure to start."""
        if self._starting is not None:
            self._ready.wait()
        if self._failure is not None:
            raise self._failure


def _errors_to_stderr() -> None:
    """Ray's driver prints the errors the cluster reports (a worker that died: a paragraph of
    advice) on standard output, from a thread, where ``--json`` writes the report: send them to
    standard error. Ray looks the printer up in its module at each message, so replacing it
    there is enough; a Ray without it is left as it is. Its note on a worker that died is
    dropped: the ``ClusterError`` of the task says it in one line (``_get``)."""
    try:
        from ray._private import worker
    except ImportError:  # pragma: no cover - Ray moved it
        return
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "to_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        lines = [ln for ln in data.get("lines", ()) if not str(ln).startswith(RAY_DEATH_NOTE)]
        if lines:
            original({**data, "lines": lines, "is_err": True}, ignore_prefix)

    to_stderr.to_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


_PROBE = """import socket, sys
try: socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=float(sys.argv[4])).close()
except OSError as exc: sys.exit("unreachable: " + str(exc.strerror or exc))
try: import logging, ray
except ImportError: sys.exit(0)  # the caller says Ray is not installed
ray.init(address=sys.argv[1], log_to_driver=False, logging_level=logging.ERROR); ray.shutdown()
"""


def _probe(cluster: str) -> None:
    """Fail fast when ``cluster`` is not HOST:PORT, takes no TCP connection within
    ``CONNECT_TIMEOUT``, or is no Ray cluster: a trial join within ``PROBE_TIMEOUT`` (Ray's own
    join retries for about 20 s when something else answers). Both in a child process: this
    package opens no socket of its own."""
    import subprocess

    host, _, port = cluster.split("://", 1)[-1].rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"--cluster {cluster}: expected local or HOST:PORT (or ray://HOST:PORT)")
    argv = [sys.executable, "-c", _PROBE, cluster, host, port, str(CONNECT_TIMEOUT)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        printed = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        if "InvalidAuthToken" in printed:  # Ray retries a refused token until our time is up
            raise ClusterError(
                f"--cluster {cluster}: the Ray cluster there wants an authentication token "
                "(set RAY_AUTH_MODE=token, and RAY_AUTH_TOKEN or ~/.ray/auth_token)"
            ) from None
        raise ClusterError(
            f"--cluster {cluster}: no Ray cluster answered there within {PROBE_TIMEOUT:.0f} s"
        ) from None
    said = done.stderr.strip().splitlines()
    if said and said[-1].startswith("unreachable: "):
        why = said[-1].removeprefix("unreachable: ")
        raise ClusterError(f"--cluster {cluster}: cannot reach a Ray cluster there ({why})")
    if done.returncode != 0:
        errors = [ln for ln in said if "Error" in ln and "gcs_client" not in ln]
        why = errors[-1].strip() if errors else f"the trial join exited with {done.returncode}"
        raise ClusterError(f"--cluster {cluster}: cannot join the Ray cluster there ({why})")


def _how_it_ended(codes: Sequence[int | None]) -> str:
    """How the first of a broken pool's workers ended, from their exit codes (a process's: -N for
    signal N): the pool ends the others with SIGTERM, so a worker that ended otherwise is the one
    that broke it. SIGKILL is, on Linux, most likely the kernel's out-of-memory killer."""
    ended = [c for c in codes if c]
    first = next((c for c in ended if c != -signal.SIGTERM), ended[0] if ended else None)
    if first is None:
        return f"ended abruptly ({MEMORY})"
    if first > 0:
        return f"exited with code {first}"
    try:
        called = signal.Signals(-first).name
    except ValueError:
        called = f"signal {-first}"
    if -first == signal.SIGKILL:
        return f"was killed ({called}: {MEMORY})"
    return f"was ended by {called}"


RAY_DEATHS = (
    "RayActorError",
    "WorkerCrashedError",
    "OutOfMemoryError",
    "NodeDiedError",
    "LocalRayletDiedError",
)
"""Ray's errors for a task whose worker (or node) died rather than a task that failed."""
RAY_DEATH_NOTE = "A worker died or was killed while executing a task"
"""How the paragraph of advice Ray's driver prints about a worker that died begins."""


def _get(ray: Any, ref: Any, what: str) -> Any:
    """``ray.get`` with a lost worker or a failure in a task turned into ``ClusterError``."""
    named = (getattr(ray.exceptions, n, None) for n in RAY_DEATHS)
    deaths = tuple(k for k in named if isinstance(k, type) and issubclass(k, BaseException))
    try:
        return ray.get(ref)
    except deaths as exc:
        kind = type(exc).__name__
        why = "Ray's memory monitor killed it" if kind == "OutOfMemoryError" else MEMORY
        raise ClusterError(f"a cluster worker died during {what}: {kind}, {why}: {FEWER_JOBS}") from None
    except ray.exceptions.RayError as exc:
        lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
        raise ClusterError(f"a cluster worker failed during {what}: {lines[-1] if lines else exc}") from None


class TaskProgress:
    """Progress of independent explorations run as jobs of a parallel pool (the readings matrix,
    the two runs of a comparison, the slices of the exhaustive search): after each, the jobs
    done, the states explored so far, states per second across the pool (wall time since the
    first job was sent) and the peak resident memory of the worker process that ran it."""

    def __init__(self, progress: Any, what: str, total: int) -> None:
        self.progress = progress
        self.what = what
        self.total = total
        self.count = 0
        self.states = 0
        self.t0 = time.perf_counter()
        progress.phase(f"{what}: {total} job(s) on the worker pool", total)

    def done(self, states: int, rss: int) -> None:
        self.count += 1
        self.states += states
        rate = self.states / max(time.perf_counter() - self.t0, 1e-9)
        self.progress.advance()
        self.progress.note(
            f"{self.count}/{self.total} done, {self.states:,} states, {rate:,.0f} states/s across the "
            f"pool, last job's worker peak {rss / 2**20:,.0f} MB"
        )


def peak_rss() -> int:
    """This process's peak resident memory in bytes (``VmHWM``; 0 where /proc is absent)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
