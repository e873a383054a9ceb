"""Ray for ``acp-model explore --cluster``: starting or joining it, the search's actors, tasks.

Owns: ``Session`` (``local``: a private Ray instance with one CPU per worker, even where a
cluster that ``ray start`` runs on this machine would be joined by default; ``HOST:PORT``: a
running cluster, checked first by a TCP connection and a trial join in a child process, so an
address where no Ray cluster answers is a one-line error within seconds), ``RayPool`` (the
shards of ``simulator.explore_shard`` in Ray actors; successor batches go from actor to actor as
object references) and ``Session.map`` (random-walk chunks as Ray tasks). Every Ray failure
(a worker that died, an exception in one) becomes ``simulator.explore_cluster.ClusterError``;
what Ray's driver prints about it goes to standard error, never into a ``--json`` report.
``ray`` is imported only when a ``Session`` is made.

Must not know: the search itself (``simulator.explore_cluster``), argument parsing.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

from simulator.config import Config
from simulator.explore_cluster import ClusterError, ShardActor

CONNECT_TIMEOUT = 5.0
"""Seconds to open a TCP connection to a ``--cluster ADDRESS`` before giving up."""
PROBE_TIMEOUT = 10.0
"""Seconds a trial join of a ``--cluster ADDRESS`` may take (see ``_probe``)."""
INSTALL_HINT = "pip install -e '.[cluster]'"


class Session:
    """A connection to Ray for one run: ``local`` starts a private instance with ``workers``
    CPUs; ``HOST:PORT`` (or ``ray://HOST:PORT``) joins a running cluster."""

    def __init__(self, cluster: str, workers: int) -> None:
        if cluster != "local":
            _reachable(cluster)
        try:
            import ray
        except ImportError:
            raise ClusterError(f"--cluster needs Ray, which is not installed: {INSTALL_HINT}") from None
        self.ray = ray
        self.workers = workers
        self.cluster = cluster
        self.actors: list[Any] = []
        self.owned = not ray.is_initialized()
        """Whether this session started or joined Ray (and so ends it); a process that already
        runs Ray (a test's instance) keeps it."""
        if not self.owned:
            return
        import logging

        quiet: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
        }
        try:
            if cluster == "local":  # a new instance even where one runs already (ray start)
                ray.init(address="local", num_cpus=workers, **quiet)
            else:
                _probe(cluster)
                ray.init(address=cluster, **quiet)
        except ClusterError:
            raise
        except Exception as exc:  # Ray's own start-up and connection errors
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ClusterError(f"--cluster {cluster}: {first}") from None
        _errors_to_stderr()

    def pool(
        self,
        cfg: Config,
        faults: frozenset[str],
        symmetry: bool,
        monitors: bool,
        reduce: str = "none",
    ) -> RayPool:
        n = self.workers
        if not self.actors:
            # a private local instance has one CPU per worker; elsewhere the workers are spread
            # over the nodes without claiming CPUs (a claim the cluster cannot meet would wait)
            mine = self.owned and self.cluster == "local"
            options: dict[str, Any] = (
                {"num_cpus": 1} if mine else {"num_cpus": 0, "scheduling_strategy": "SPREAD"}
            )
            remote = self.ray.remote(max_restarts=0, **options)(ShardActor)
            self.actors = [remote.remote() for _ in range(n)]
        pool = RayPool(self.ray, self.actors)
        pool.each("start", [(i, n, cfg, faults, symmetry, monitors, reduce) for i in range(n)])
        return pool

    def map(self, fn: Callable[[Any], Any], jobs: list[Any]) -> Iterator[Any]:
        """``fn`` over ``jobs`` as Ray tasks, results in job order (as they arrive in order)."""
        self.release()
        task = self.ray.remote(num_cpus=1, max_retries=0)(fn)
        refs = [task.remote(job) for job in jobs]
        name = f"{getattr(fn, '__module__', '').rsplit('.', 1)[-1]}.{getattr(fn, '__name__', 'task')}"
        for i, ref in enumerate(refs):
            yield _get(self.ray, ref, f"task {i} ({name})")

    def release(self) -> None:
        """End the search's workers (they hold the CPUs the random mode's tasks need)."""
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []

    def close(self) -> None:
        self.release()
        if self.owned:
            self.ray.shutdown()


def _errors_to_stderr() -> None:
    """Ray's driver prints the errors the cluster reports (a worker that died: a paragraph of
    advice) on standard output, from a thread, where ``--json`` writes the report: send them to
    standard error. (The run's own one-line error says what happened.) Ray looks the printer up
    in its module at each message, so replacing it there is enough; a Ray without it is left
    as it is."""
    try:
        from ray._private import worker
    except ImportError:  # pragma: no cover - Ray moved it
        return
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "to_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr.to_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


def _probe(cluster: str) -> None:
    """Fail fast when ``cluster`` (reachable, ``_reachable``) is no Ray cluster: a trial join
    in a child process within ``PROBE_TIMEOUT`` (Ray's own join retries for about 20 s,
    logging every second, when something else answers on the port)."""
    import subprocess
    import sys

    code = (
        "import logging, sys, ray; "
        "ray.init(address=sys.argv[1], log_to_driver=False, logging_level=logging.ERROR); ray.shutdown()"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, cluster], capture_output=True, text=True, timeout=PROBE_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        raise ClusterError(
            f"--cluster {cluster}: no Ray cluster answered there within {PROBE_TIMEOUT:.0f} s"
        ) from None
    if done.returncode != 0:
        errors = [ln for ln in done.stderr.splitlines() if "Error" in ln and "gcs_client" not in ln]
        why = errors[-1].strip() if errors else f"the trial join exited with {done.returncode}"
        raise ClusterError(f"--cluster {cluster}: cannot join the Ray cluster there ({why})")


def _reachable(cluster: str) -> None:
    """``cluster`` is HOST:PORT and takes a TCP connection within ``CONNECT_TIMEOUT``."""
    host, port = _address(cluster)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise ClusterError(
            f"--cluster {cluster}: cannot reach a Ray cluster there ({exc.strerror or exc})"
        ) from None


def _address(cluster: str) -> tuple[str, int]:
    rest = cluster.split("://", 1)[-1]
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"--cluster {cluster}: expected local or HOST:PORT (or ray://HOST:PORT)")
    return host, int(port)


def _get(ray: Any, refs: Any, what: str) -> Any:
    """``ray.get`` with a lost worker or a failure in one turned into ``ClusterError``."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayActorError as exc:
        raise ClusterError(f"a cluster worker died during {what} ({type(exc).__name__})") from None
    except ray.exceptions.RayError as exc:
        lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
        raise ClusterError(f"a cluster worker failed during {what}: {lines[-1] if lines else exc}") from None


class RayPool:
    """Shards in Ray actors; successor batches go from actor to actor as object references."""

    def __init__(self, ray: Any, actors: list[Any]) -> None:
        self.ray = ray
        self.actors = actors
        self.size = len(actors)

    def each(self, method: str, args: list[tuple[Any, ...]] | None = None) -> list[Any]:
        refs = [getattr(a, method).remote(*(args[i] if args else ())) for i, a in enumerate(self.actors)]
        return list(_get(self.ray, refs, method))

    def one(self, index: int, method: str, *args: Any) -> Any:
        return _get(self.ray, getattr(self.actors[index], method).remote(*args), method)

    def exchange(self, method: str = "expand_level", args: list[tuple[Any, ...]] | None = None) -> list[Any]:
        n = self.size
        if n == 1:  # one return value: the list of one batch
            a = self.actors[0]
            sent = getattr(a, method).remote(*(args[0] if args else ()))
            return list(_get(self.ray, [a.receive_all.remote(sent)], "a level of the search"))
        out = [
            getattr(a, method).options(num_returns=n).remote(*(args[i] if args else ()))
            for i, a in enumerate(self.actors)
        ]
        refs = [a.receive_level.remote(*[out[j][i] for j in range(n)]) for i, a in enumerate(self.actors)]
        return list(_get(self.ray, refs, "a level of the search"))

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
