"""The one worker pool (``simulator.workers``) behind ``--jobs`` and ``--cluster`` of every long
command: the same answers for any pool, one-line errors, Ray imported only with ``--cluster``.

Default suite: a stand-in parallel pool runs the jobs in this process after a pickle round trip
of every job and result (what a process pool and Ray do to them) against the plain runs; local
worker processes against one process; usage and cluster errors. Deep suite: the commands with
``--cluster local`` against the same commands without it (needs Ray), and ``drive`` on two workers.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from diagrams.sequence import transcript_to_mermaid
from properties.variants import from_drops
from simulator.analysis.matrix import readings_matrix
from simulator.explore import run as explore_run
from simulator.explore.compare import compare
from simulator.progress import Progress
from simulator.workers import ClusterError, PoolError, Workers

ROOT = Path(__file__).resolve().parents[1]
LONG_COMMANDS = ("explore", "spec-report", "mutants", "drive", "decidability")


class PickledPool(Workers):
    """A parallel pool in this process: every job and result goes through pickle."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.calls: list[str] = []

    @property
    def parallel(self) -> bool:
        return True

    def map(self, fn: Callable[[Any], Any], jobs: Sequence[Any]) -> Iterator[Any]:
        self.calls.append(fn.__name__)
        for job in jobs:
            yield pickle.loads(pickle.dumps(fn(pickle.loads(pickle.dumps(job)))))


class Notes(Progress):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes().replace(str(root).encode(), b"OUT")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _no_seconds(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _no_seconds(v) for k, v in data.items() if "seconds" not in k and "per_second" not in k}
    if isinstance(data, list):
        return [_no_seconds(v) for v in data]
    return data


def _same(a: Any, b: Any, pa: Path, pb: Path) -> bool:
    return json.dumps(_no_seconds(a)).replace(str(pa), "OUT") == json.dumps(_no_seconds(b)).replace(
        str(pb), "OUT"
    )


def _options(out: Path, **kw: Any) -> explore_run.Options:
    base: dict[str, Any] = {"mode": "exhaustive", "slices": ("cancels",), "max_states": 1000}
    return explore_run.Options(**{**base, **kw}, out=str(out), diagram=transcript_to_mermaid)


def test_matrix_cells_as_jobs_give_the_plain_matrix_and_files(tmp_path: Path) -> None:
    faults = frozenset({"cancel-as-end-turn"})
    plain = readings_matrix(("cancel-takes-effect",), _options(tmp_path / "a", faults=faults))
    pool = PickledPool(3)
    notes = Notes()
    jobs = readings_matrix(("cancel-takes-effect",), _options(tmp_path / "b", faults=faults), pool, notes)
    assert pool.calls == ["compute_job"]
    assert jobs.jobs == 3 and plain.jobs == 1
    assert any(r.outcome.findings for r in plain.rows)  # files to compare
    assert _same(plain.to_json() | {"jobs": 0}, jobs.to_json() | {"jobs": 0}, tmp_path / "a", tmp_path / "b")
    files = _files(tmp_path / "b")
    assert files == _files(tmp_path / "a")
    assert any(name.endswith(".mmd") for name in files)
    assert len(notes.notes) == jobs.explorations
    assert "states/s across the pool" in notes.notes[-1] and " MB" in notes.notes[-1]


def test_compare_as_two_jobs_gives_the_plain_comparison(tmp_path: Path) -> None:
    variant = from_drops(["TRANS-04"])
    plain = compare(_options(tmp_path / "a", variant=variant), variant, {})
    pool = PickledPool(2)
    jobs = compare(_options(tmp_path / "b", variant=variant), variant, {}, pool=pool)
    assert pool.calls == ["compute_job"]
    assert _same(plain, jobs, tmp_path / "a", tmp_path / "b")
    assert any(d["kind"] == "set-aside" for d in jobs["compare"]["differences"])
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_exhaustive_slices_as_jobs_give_the_plain_report(tmp_path: Path) -> None:
    kw: dict[str, Any] = {"slices": ("cancels", "hook"), "faults": frozenset({"cancel-as-end-turn"})}
    plain = explore_run.run(_options(tmp_path / "a", **kw))
    pool = PickledPool(2)
    jobs = explore_run.run(_options(tmp_path / "b", **kw, pool=pool))
    assert pool.calls == ["search_slice"]
    assert plain["findings"] and len(plain["exhaustive"]["slices"]) == 2
    assert _same(plain, jobs, tmp_path / "a", tmp_path / "b")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def _cli(argv: list[str]) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "cli", *argv], cwd=ROOT, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def test_two_local_processes_give_the_report_of_one(tmp_path: Path) -> None:
    """Exhaustive slices, hypothesis chunks and walk chunks on two worker processes."""
    common = ["explore", "--json", "--quiet", "--mode", "both", "--slice", "cancels", "--slice", "hook",
              "--max-states", "1500", "--examples", "10", "--walks", "100",
              "--fault", "cancel-as-end-turn"]  # fmt: skip
    reports = []
    for jobs in ("1", "2"):
        code, out, err = _cli([*common, "--jobs", jobs, "--out", str(tmp_path / jobs)])
        assert code == 1, err[-500:]
        reports.append(json.loads(out))
    assert _same(reports[0], reports[1], tmp_path / "1", tmp_path / "2")
    assert _files(tmp_path / "1") == _files(tmp_path / "2")


def test_mutants_on_two_processes_print_the_same_json(tmp_path: Path) -> None:
    argv = ["mutants", "--json", "--quiet", "--walks", "2", "--only", "cancel-as-end-turn",
            "--only", "update-after-idle"]  # fmt: skip
    one, two = _cli([*argv, "--jobs", "1"]), _cli([*argv, "--jobs", "2"])
    assert one[0] == two[0] and one[1] == two[1], (one[2], two[2])
    assert [v["name"] for v in json.loads(one[1])] == ["cancel-as-end-turn", "update-after-idle"]


def test_decidability_on_two_processes_prints_the_same_json() -> None:
    """Samples of rules (OUT-02 and TOOL-03 share one) under the reading in force and under the
    other alternative of one reading, as jobs of two processes: the same bytes as one process."""
    argv = ["decidability", "--json", "--rule", "TRANS-04", "--rule", "OUT-02", "--rule", "TOOL-03",
            "--walks", "6", "--steps", "30", "--twin-nodes", "500", "--exhaustive-states", "100",
            "--readings", "cancel-takes-effect"]  # fmt: skip
    one, two = _cli([*argv, "--jobs", "1"]), _cli([*argv, "--jobs", "2"])
    assert one[0] == two[0] == 0 and one[1] == two[1], (one[2], two[2])
    assert [r["rule"] for r in json.loads(one[1])["rules"]] == ["TRANS-04", "OUT-02", "TOOL-03"]


@pytest.mark.parametrize("command", LONG_COMMANDS)
def test_every_long_command_takes_jobs_and_cluster(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert "--jobs N" in text and "--cluster local|ADDRESS" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explore", "--jobs", "0"], "--jobs 0: must be >= 1"),
        (["explore", "--workers", "2", "--jobs", "3"], "--workers is the older name of --jobs"),
        (["mutants", "--jobs", "0"], "--jobs 0: must be >= 1"),
        (["decidability", "--jobs", "0"], "--jobs 0: must be >= 1"),
        (["explore", "--cluster", " "], "--cluster: expected local or HOST:PORT"),
        (["explore", "--cluster", "no-port-here"], "--cluster no-port-here: expected local or HOST:PORT"),
        (["mutants", "--cluster", "127.0.0.1:1"], "--cluster 127.0.0.1:1: cannot reach a Ray cluster there"),
    ],
)
def test_pool_errors_are_one_line(tmp_path: Path, argv: list[str], message: str) -> None:
    """Checked before Ray is imported (so also where it is not installed)."""
    extra = (
        ["--mode", "exhaustive", "--slice", "session", "--out", str(tmp_path)] if argv[0] == "explore" else []
    )
    code, out, err = _cli([*argv, "--quiet", *extra] if argv[0] != "decidability" else argv)
    assert code == 2, err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert out == ""


def test_a_cluster_that_wants_a_token_is_named(monkeypatch: Any) -> None:
    """A Ray head started with token authentication refuses a join without the token, and Ray
    retries until the probe's time is up: the error says what the cluster wants, not only that
    it did not answer (what the probe printed so far comes back as bytes)."""
    said = b"gcs_client.cc:210: Failed to get cluster ID from GCS server: Unauthenticated: "
    said += b"RPC error: InvalidAuthToken"

    def timed_out(argv: list[str], **_: object) -> None:
        raise subprocess.TimeoutExpired(argv, 10.0, stderr=said)

    monkeypatch.setattr(subprocess, "run", timed_out)
    with pytest.raises(ClusterError) as err:
        Workers(2, "127.0.0.1:6390").__enter__()
    assert str(err.value).startswith(
        "--cluster 127.0.0.1:6390: the Ray cluster there wants an authentication token"
    )
    said = b""
    with pytest.raises(ClusterError) as err:
        Workers(2, "127.0.0.1:6390").__enter__()
    assert str(err.value) == "--cluster 127.0.0.1:6390: no Ray cluster answered there within 10 s"


def test_a_run_without_cluster_never_imports_ray(tmp_path: Path) -> None:
    # two small slices (about 7,500 states; session alone had about 100,000, searched in this
    # process since one slice makes no jobs): each slice's search is a job of the local pool
    code = (
        "import sys; from cli.main import main; "
        "rc = main(['explore', '--mode', 'exhaustive', '--slice', 'hook', '--slice', 'receipt_order', "
        f"'--jobs', '2', "
        f"'--quiet', '--out', {str(tmp_path)!r}]); "
        "assert rc == 0, rc; assert 'ray' not in sys.modules, 'ray imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-800:]


@pytest.mark.parametrize("command", ["explore", "mutants"])
def test_missing_ray_is_a_one_line_error_naming_the_extra(tmp_path: Path, command: str) -> None:
    argv = ["explore", "--mode", "exhaustive", "--slice", "session", "--out", str(tmp_path)]
    argv = argv if command == "explore" else ["mutants", "--walks", "1"]
    code = (
        "import sys; sys.modules['ray'] = None; from cli.main import main; "
        f"sys.exit(main({[*argv, '--quiet', '--cluster', 'local']!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"acp-model {command}: --cluster needs Ray, which is not installed: pip install -e '.[cluster]'"
    ]


def test_cluster_local_starts_its_own_instance_even_beside_a_running_one(monkeypatch: Any) -> None:
    """``ray.init()`` joins a cluster that ``ray start`` runs on this machine, and then refuses
    ``num_cpus``; ``--cluster local`` asks for a new instance by name, with one CPU a worker, its
    workers at this process's priority."""
    calls: list[dict[str, Any]] = []
    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False  # type: ignore[attr-defined]
    fake.init = lambda **kw: calls.append(kw)  # type: ignore[attr-defined]
    fake.shutdown = lambda: calls.append({"shutdown": True})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", fake)
    with Workers(3, "local"):
        pass
    assert [(c.get("address"), c.get("num_cpus")) for c in calls[:1]] == [("local", 3)]
    assert calls[0]["_system_config"] == {"worker_niceness": 0}  # not Ray's 15: drive's Agents starved
    assert calls[-1] == {"shutdown": True}


def _fake_ray(results: dict[Any, Any]) -> Any:
    class RayError(Exception):
        pass

    class ActorError(RayError):
        pass

    def get(ref: Any) -> Any:
        if isinstance(results.get(ref), Exception):
            raise results[ref]
        return results.get(ref, ref)

    def remote(**options: object) -> object:
        return lambda fn: types.SimpleNamespace(remote=lambda job: job)

    def wait(refs: list[Any], num_returns: int) -> tuple[list[Any], list[Any]]:
        done = sorted(refs, key=lambda ref: results.get(("order", ref), 0))  # the first to end
        return done[:num_returns], done[num_returns:]

    return types.SimpleNamespace(
        remote=remote, get=get, wait=wait, shutdown=lambda: None,
        exceptions=types.SimpleNamespace(RayError=RayError, RayActorError=ActorError),
    )  # fmt: skip


def test_ray_tasks_come_back_in_job_order_and_a_failure_is_named_by_its_function() -> None:
    """A stand-in for Ray: results in job order, however many workers; a task that fails is
    named by what it ran."""
    from simulator.explore.hypothesis_runs import run_chunk

    pool = Workers(2, "local")
    pool._ray = _fake_ray({})
    assert list(pool.map(run_chunk, [5, 6, 7, 8, 9])) == [5, 6, 7, 8, 9]
    fake = _fake_ray({})
    fake.get = lambda ref: (_ for _ in ()).throw(fake.exceptions.RayError("Traceback ...\nValueError: boom"))
    pool._ray = fake
    with pytest.raises(ClusterError) as err:
        list(pool.map(run_chunk, [1]))
    said = "a cluster worker failed during task 0 (hypothesis_runs.run_chunk): ValueError: boom"
    assert str(err.value) == said


def test_a_long_ray_task_leaves_no_worker_idle() -> None:
    """Two workers, the first job the longest: the other worker takes every later job while it
    runs (a task is sent whenever any ends), and the results still come back in job order."""
    from simulator.explore.hypothesis_runs import run_chunk

    fake = _fake_ray({("order", 5): 100})  # job 5 ends after every other
    ended: list[Any] = []
    get = fake.get
    fake.get = lambda ref: ended.append(ref) or get(ref)
    pool = Workers(2, "local")
    pool._ray = fake
    assert list(pool.map(run_chunk, [5, 6, 7, 8, 9])) == [5, 6, 7, 8, 9]
    assert ended == [6, 7, 8, 9, 5]


def test_while_a_private_ray_starts_the_first_jobs_run_here() -> None:
    """``--cluster local`` starts Ray in a thread: the jobs before it is up run in this process,
    the rest as tasks, and the results come back in job order; a start that failed is raised."""
    pool = Workers(2, "local")
    pool._ray = _fake_ray({})
    pool._starting = threading.Thread()  # a start in progress
    here: list[int] = []

    def fn(job: int) -> int:
        here.append(job)
        if len(here) == 2:
            pool._ready.set()  # Ray is up once the second job ends
        return job

    assert list(pool.map(fn, [5, 6, 7, 8, 9])) == [5, 6, 7, 8, 9]
    assert here == [5, 6]
    pool._failure = ClusterError("--cluster local: no room")
    with pytest.raises(ClusterError, match="no room"):
        list(pool.map(fn, [1, 2]))


# -- a worker that dies: one line, exit 2, nothing written ----------------------------------------

KILLED = "was killed (SIGKILL: most likely the system's out-of-memory killer)"


def _killed(job: int) -> int:
    """A job whose worker process is killed as the kernel's out-of-memory killer does it."""
    if job == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return job


def _kill(job: Any) -> Any:
    """A job whose worker process is killed whatever the job."""
    os.kill(os.getpid(), signal.SIGKILL)


def _exits(job: int) -> int:
    """A job that ends its worker process without a word."""
    os._exit(3)


@pytest.mark.parametrize(
    ("fn", "how"), [(_killed, KILLED), (_exits, "exited with code 3")], ids=["sigkill", "os-exit"]
)
def test_a_worker_that_dies_is_a_pool_error_saying_how(fn: Callable[[int], int], how: str) -> None:
    """``BrokenProcessPool`` (every job sent fails alike) becomes one line: how the worker ended,
    which function it ran, the hint; the pool is closed and its processes gone."""
    with pytest.raises(PoolError) as err, Workers(2) as pool:
        list(pool.map(fn, [1, 2, 3, 4]))
    assert (
        str(err.value)
        == f"a worker process {how} while running test_workers.{fn.__name__} jobs: try fewer --jobs"
    )
    assert pool._executor is None


def test_ray_names_a_dead_worker_and_its_likely_cause() -> None:
    """Ray's errors for a worker (or node) that died, as Ray raises them for a task killed by a
    signal or by its memory monitor: one line with the hint, not the task's failure."""
    from simulator.explore.hypothesis_runs import run_chunk

    fake = _fake_ray({})
    kinds = {n: type(n, (fake.exceptions.RayError,), {}) for n in ("WorkerCrashedError", "OutOfMemoryError")}
    fake.exceptions = types.SimpleNamespace(**vars(fake.exceptions), **kinds)
    pool = Workers(2, "local")
    for kind, why in [
        ("WorkerCrashedError", "most likely the system's out-of-memory killer"),
        ("OutOfMemoryError", "Ray's memory monitor killed it"),
    ]:
        fake.get = lambda ref, k=kinds[kind]: (_ for _ in ()).throw(k("The worker died unexpectedly ..."))
        pool._ray = fake
        with pytest.raises(ClusterError) as err:
            list(pool.map(run_chunk, [1]))
        said = f"died during task 0 (hypothesis_runs.run_chunk): {kind}, {why}: try fewer --jobs"
        assert str(err.value) == f"a cluster worker {said}"


def test_a_killed_worker_ends_a_command_with_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mutants --jobs 2`` in process, its job function killing its worker: exit 2, one line
    naming the command, no traceback, and no file in ``--out``."""
    from simulator.analysis import mutants

    monkeypatch.setattr(mutants, "judge_job", _kill)
    out = tmp_path / "o"
    argv = ["mutants", "--jobs", "2", "--walks", "1", "--steps", "3", "--quiet", "--out", str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    said = f"a worker process {KILLED} while running test_workers._kill jobs: try fewer --jobs"
    assert captured.err == f"acp-model mutants: {said}\n"
    assert captured.out == ""
    assert [p for p in out.rglob("*") if p.is_file()] == []


_SPEC_REPORT_KILLED = """import os, signal, sys
import simulator.analysis.decidability as d
def _decide_job(job):
    os.kill(os.getpid(), signal.SIGKILL)
d._decide_job = _decide_job
from cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_spec_report_whose_worker_is_killed_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """The crash of stop 49 (``spec-report --jobs 2``, a worker killed, a BrokenProcessPool
    traceback after 23 min), as a process: one line on stderr, exit 2, no file in ``--out``."""
    out = tmp_path / "sr"
    argv = ["spec-report", "--out", str(out), "--jobs", "2", "--readings", "none"]
    done = subprocess.run(
        [sys.executable, "-c", _SPEC_REPORT_KILLED, *argv], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2, done.stderr[-800:]
    said = f"a worker process {KILLED} while running __main__._decide_job jobs: try fewer --jobs"
    assert done.stderr == f"acp-model spec-report: {said}\n"
    assert [p for p in out.rglob("*") if p.is_file()] == []


# -- deep: a real local Ray, real agents ------------------------------------------------------------


def _cli_json(args: list[str], out: Path | None = None, agent: tuple[str, ...] = ()) -> Any:
    """Run a command for its JSON; the options go before `agent` (drive's `-- command...`), and
    drive, whose --quiet is another option's old name, is not given one."""
    quiet = [] if args[0] == "drive" else ["--quiet"]
    code, stdout, err = _cli([*args, "--json", *quiet, *(["--out", str(out)] if out else []), *agent])
    assert code in (0, 1), err[-800:]
    data = _no_seconds(json.loads(stdout))
    return json.loads(json.dumps(data).replace(str(out), "OUT")) if out else data


@pytest.mark.deep
def test_cli_runs_on_ray_equal_the_plain_runs(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")
    cluster = ["--cluster", "local", "--jobs", "2"]
    run = ["explore", "--mode", "both", "--slice", "cancels", "--slice", "hook", "--fault",
           "cancel-as-end-turn", "--examples", "30", "--walks", "200"]  # fmt: skip
    assert _cli_json([*run, *cluster], tmp_path / "r2") == _cli_json(run, tmp_path / "r1")
    assert _files(tmp_path / "r1") == _files(tmp_path / "r2")
    matrix = ["explore", "--readings", "cancel-takes-effect,patch-after-idle", "--slice", "cancels",
              "--fault", "cancel-as-end-turn"]  # fmt: skip
    plain = _cli_json([*matrix, "--jobs", "1"], tmp_path / "m1")
    assert plain["contradicting"]
    assert _cli_json([*matrix, *cluster], tmp_path / "m2") == plain
    comp = ["explore", "--drop", "TRANS-04", "--compare", "--mode", "exhaustive", "--slice", "cancels"]
    assert _cli_json([*comp, *cluster], tmp_path / "c2") == _cli_json(comp, tmp_path / "c1")
    mut = ["mutants", "--walks", "2", "--only", "cancel-as-end-turn"]
    assert _cli_json([*mut, *cluster]) == _cli_json(mut)


@pytest.mark.deep
def test_drive_on_two_workers_finds_what_one_finds(tmp_path: Path) -> None:
    """The served agent with a seeded bug, six runs: the same JSON (but its seconds) and the same
    files on one worker, on two and, with Ray, on a private cluster of two (the agent moves in
    the driver's turns, so its timing is not in the answer)."""
    argv = ["drive", "--runs", "6", "--steps", "20", "--shrink-budget", "6"]
    agent = ("--", sys.executable, "-m", "cli", "agent", "--fault", "cancel-as-end-turn")
    one = _cli_json([*argv, "--jobs", "1"], tmp_path / "1", agent)
    assert one["findings"] and one["runs"] == 6 and one["lockstep"] is True
    assert _cli_json([*argv, "--jobs", "2"], tmp_path / "2", agent) == one
    assert _files(tmp_path / "1") == _files(tmp_path / "2")
    try:
        import ray  # noqa: F401
    except ImportError:
        return
    assert _cli_json([*argv, "--cluster", "local", "--jobs", "2"], tmp_path / "r", agent) == one
    assert _files(tmp_path / "1") == _files(tmp_path / "r")


@pytest.mark.deep
def test_a_running_cluster_joined_by_address_gives_the_plain_answer(tmp_path: Path) -> None:
    """``--cluster HOST:PORT``: a cluster that ``ray start --head`` runs (no token) is joined, its
    tasks give the answer of one process, and the cluster keeps running after the command. The
    head runs in the foreground (``--block``) of a child ended by the test, so no other Ray
    instance of the machine is touched."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")
    import os
    import socket
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ray = str(Path(sys.executable).with_name("ray"))
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    start = [ray, "start", "--head", "--block", f"--port={port}", "--num-cpus=2", "--include-dashboard=false"]
    head = subprocess.Popen(start, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def up() -> bool:
        status = [ray, "status", "--address", f"127.0.0.1:{port}"]
        return subprocess.run(status, env=env, capture_output=True, timeout=60).returncode == 0

    try:
        deadline = time.monotonic() + 120
        while not up():
            assert head.poll() is None and time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(1)
        mut = ["mutants", "--walks", "2", "--only", "cancel-as-end-turn"]
        assert _cli_json([*mut, "--cluster", f"127.0.0.1:{port}", "--jobs", "2"]) == _cli_json(mut)
        assert up()
    finally:
        head.terminate()
        head.wait(timeout=120)


_RAY_KILLED = """import os, signal, sys
from simulator.workers import PoolError, Workers
MAIN = os.getpid()
def kill(job):
    if job == 3 and os.getpid() != MAIN:
        os.kill(os.getpid(), signal.SIGKILL)
    return job
with Workers(2, "local") as pool:
    pool._started()  # every job a Ray task
    try:
        list(pool.map(kill, list(range(8))))
    except PoolError as exc:
        sys.exit(str(exc))
"""


@pytest.mark.deep
def test_a_ray_task_whose_worker_is_killed_is_one_line() -> None:
    """A real private Ray instance, a task killed as the out-of-memory killer does: Ray raises
    ``WorkerCrashedError``, the pool one line, and Ray's paragraph of advice is not printed."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")
    done = subprocess.run([sys.executable, "-c", _RAY_KILLED], cwd=ROOT, capture_output=True, text=True)
    said = "a cluster worker died during task 3 (__main__.kill): WorkerCrashedError, most likely the "
    assert done.returncode == 1
    assert done.stderr == said + "system's out-of-memory killer: try fewer --jobs\n", done.stderr[-2000:]
