"""The distributed exhaustive search gives the single process's answers; Ray stays out unless asked.

Default suite (no Ray needed): the sharded search run in this process (``LocalPool``: the same
``Shard`` code the Ray actors run, without the transport) against the single-process search
on a small slice with a seeded bug, and with ``--reduce por`` on several slices; state bytes and
recipes carried between two workers' numberings; ``--cluster`` usage errors; an ``explore`` run
without ``--cluster`` never imports Ray; a missing Ray is a one-line error.

Deep suite (``-m deep``; skipped with a reason when Ray is not installed): one module-scoped
local Ray instance; every default slice on two Ray workers against one process, without and
with the reduction; one worker
against two; a worker killed mid-search; random walks and hypothesis's example chunks merged
from Ray tasks; the random mode's ``report.json`` byte for byte in one process and on one and
two Ray workers.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.cluster import Session
from cli.main import main
from simulator import explore_bfs, explore_cluster, explore_hypothesis, explore_random
from simulator.explore_codec import Codec, Sent, stable
from simulator.explore_shard import Shard

ROOT = Path(__file__).resolve().parents[1]


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _answers(r: explore_bfs.BfsResult) -> dict[str, Any]:
    """Everything the report takes from a search, timing aside."""
    return {
        "stats": {k: v for k, v in r.stats_json().items()},
        "counterexamples": [
            (c.rule, c.source, c.explanation, c.found_by, c.events, c.hits) for c in r.counterexamples
        ],
        "exercised": dict(r.exercised),
        "events": dict(r.events),
        "rows": dict(r.rows),
        "entity": dict(r.entity),
    }


# -- default suite --------------------------------------------------------------------------------


def test_sharded_search_in_process_gives_the_single_process_answers() -> None:
    """Two in-process shards, a seeded bug that a view rule catches (its hits depend on the
    order breaches are met in): same numbers, shortest counterexamples, hits and coverage."""
    cfg = explore_bfs.SLICE_BY_NAME["bg_requests"].cfg
    faults = frozenset({"move-on-update"})
    one = explore_bfs.explore(cfg, faults, name="bg_requests")
    pool = explore_cluster.local_pool(2, cfg, faults)
    lines: list[str] = []
    two = explore_cluster.search(pool, cfg, faults, name="bg_requests", progress=lines.append)
    assert one.counterexamples, "the seeded bug must be found for the comparison to mean something"
    assert _answers(two) == _answers(one)
    assert two.foreground == one.foreground
    # every shard owns some states: the work was shared
    assert all(len(s.numbers) > 0 for s in pool.shards)
    # progress: one line per level, states/s across the shards, frontier, memory per worker
    assert len(lines) == one.max_depth
    assert "frontier" in lines[0] and "states/s" in lines[0] and "MB per worker" in lines[0]
    assert f"{one.states:,} states" in lines[-1]


@pytest.mark.parametrize(
    ("slice_name", "fault", "workers"),
    [
        ("tools", None, 2),
        ("bg_requests", None, 3),
        ("cancels", None, 2),
        ("cancels", "cancel-as-end-turn", 2),
    ],
)
def test_sharded_search_with_the_reduction_gives_the_single_process_reduced_answers(
    slice_name: str, fault: str | None, workers: int
) -> None:
    """``--reduce por`` on shards: the cycle proviso, decided level by level from the owners'
    visited sets, makes the very graph the single process makes (states, transitions, one-sided
    states, cycles, findings, rows). ``tools`` has cycles."""
    sl = explore_bfs.SLICE_BY_NAME[slice_name]
    faults = frozenset({fault}) if fault else frozenset()
    one = explore_bfs.explore(sl.cfg, faults, name=sl.name, reduce="por")
    assert one.one_side_states > 0  # the reduction did something
    assert bool(one.counterexamples) == bool(fault)
    pool = explore_cluster.local_pool(workers, sl.cfg, faults, reduce="por")
    got = explore_cluster.search(pool, sl.cfg, faults, name=sl.name, reduce="por")
    assert _answers(got) == _answers(one)
    assert got.stats_json()["reduce"] == "por"


def test_a_reduced_sharded_search_refuses_a_depth_limit() -> None:
    cfg = explore_bfs.SLICE_BY_NAME["tools"].cfg
    pool = explore_cluster.local_pool(2, cfg, frozenset(), reduce="por")
    with pytest.raises(ValueError, match="depth"):
        explore_cluster.search(pool, cfg, depth=3, reduce="por")


def test_state_bytes_carry_a_state_between_two_numberings() -> None:
    """A state reached in one worker is rebuilt from its recipes in another that has only the
    initial state, and names the same state there."""
    cfg = explore_bfs.SLICE_BY_NAME["tools"].cfg
    a = Shard(0, 2, cfg, frozenset())
    b = Shard(1, 2, cfg, frozenset())
    st = explore_bfs.root_state(a.parts)
    children: list[Any] = []
    with a.parts.stepping(), b.parts.stepping():
        for _ in range(6):  # walk a few steps in ``a``
            children.clear()
            a.expand(st, children)
            st = next(c for _, c, _, _ in reversed(children) if c is not None)
        data = a.codec.state_bytes(st)
        recipes: list[Any] = []
        a.codec.recipes_for(st, Sent(), recipes)
        assert recipes, "a state six steps in has parts the other worker never saw"
        b.codec.read(recipes)
        there = b.codec.state(data)
        assert b.codec.state_bytes(there) == data
        assert b.parts.agents.keys[there[0]] == a.parts.agents.keys[st[0]]
    assert len(data) < 100
    assert isinstance(a.codec, Codec)


def test_stable_encoding_does_not_depend_on_set_order() -> None:
    assert stable(frozenset({"a", "b", ("c", 1)})) == stable(frozenset({("c", 1), "b", "a"}))
    assert stable({"x": 1, "y": (2, None)}) == stable({"y": (2, None), "x": 1})
    assert stable((1, "1")) != stable(("1", 1))
    assert stable(True) != stable(1)
    with pytest.raises(TypeError):
        stable(object())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cluster", "no-port-here"], "--cluster no-port-here: expected local or HOST:PORT"),
        (["--cluster", " "], "--cluster: expected local or HOST:PORT"),
        (["--cluster", "local", "--graph", "{tmp}/g.graphml"], "--graph is not available with --cluster"),
        (["--cluster", "127.0.0.1:1"], "--cluster 127.0.0.1:1: cannot reach a Ray cluster there"),
    ],
)
def test_cluster_usage_errors_are_one_line(tmp_path: Path, argv: list[str], message: str) -> None:
    """Checked before Ray is imported (so also where it is not installed)."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = _cli(
        ["explore", "--mode", "exhaustive", "--slice", "session", "--quiet", "--out", str(tmp_path), *argv]
    )
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert out == ""


def test_explore_without_cluster_never_imports_ray(tmp_path: Path) -> None:
    code = (
        "import sys; from cli.main import main; "
        f"rc = main(['explore', '--mode', 'exhaustive', '--slice', 'session', "
        f"'--quiet', '--out', {str(tmp_path)!r}]); "
        "assert rc == 0, rc; "
        "assert 'ray' not in sys.modules and 'simulator.explore_cluster' not in sys.modules, 'ray imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-800:]


def test_cluster_local_starts_its_own_instance_even_beside_a_running_one(monkeypatch: Any) -> None:
    """``ray.init()`` joins a cluster that ``ray start`` runs on this machine, and then refuses
    ``num_cpus``; ``--cluster local`` asks for a new instance by name."""
    import types

    calls: list[dict[str, Any]] = []
    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False  # type: ignore[attr-defined]
    fake.init = lambda **kw: calls.append(kw)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", fake)
    session = Session("local", 3)
    assert session.owned
    assert [(c["address"], c["num_cpus"]) for c in calls] == [("local", 3)]


def test_missing_ray_is_a_one_line_error_naming_the_extra(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['ray'] = None; from cli.main import main; "
        f"sys.exit(main(['explore', '--mode', 'exhaustive', '--slice', 'session', '--quiet', "
        f"'--out', {str(tmp_path)!r}, '--cluster', 'local']))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "acp-model explore: --cluster needs Ray, which is not installed: pip install -e '.[cluster]'"
    ]


# -- deep suite: a real local Ray -----------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_session() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield ray
    finally:
        ray.shutdown()


def _on_ray(
    workers: int, sl: explore_bfs.Slice, faults: frozenset[str] = frozenset(), reduce: str = "none"
) -> explore_bfs.BfsResult:
    session = Session("local", workers)
    try:
        pool = session.pool(sl.cfg, faults, False, True, reduce)
        return explore_cluster.search(pool, sl.cfg, faults, name=sl.name, reduce=reduce)
    finally:
        session.close()


@pytest.mark.deep
@pytest.mark.parametrize("sl", explore_bfs.SLICES, ids=lambda s: s.name)
def test_every_default_slice_on_two_ray_workers(ray_session: Any, sl: explore_bfs.Slice) -> None:
    assert _answers(_on_ray(2, sl)) == _answers(explore_bfs.explore(sl.cfg, name=sl.name))


@pytest.mark.deep
@pytest.mark.parametrize("sl", explore_bfs.SLICES, ids=lambda s: s.name)
def test_every_default_slice_reduced_on_two_ray_workers(ray_session: Any, sl: explore_bfs.Slice) -> None:
    single = explore_bfs.explore(sl.cfg, name=sl.name, reduce="por")
    assert _answers(_on_ray(2, sl, reduce="por")) == _answers(single)


@pytest.mark.deep
@pytest.mark.parametrize(
    ("slice_name", "fault"), [("hook", "cancel-as-end-turn"), ("bg_requests", "repeat-idle-counts")]
)
def test_seeded_bugs_one_ray_worker_and_two_agree(ray_session: Any, slice_name: str, fault: str) -> None:
    sl = explore_bfs.SLICE_BY_NAME[slice_name]
    faults = frozenset({fault})
    single = _answers(explore_bfs.explore(sl.cfg, faults, name=sl.name))
    assert single["counterexamples"]
    assert _answers(_on_ray(1, sl, faults)) == single
    assert _answers(_on_ray(2, sl, faults)) == single


@pytest.mark.deep
def test_a_killed_worker_ends_the_search_with_partial_figures(ray_session: Any) -> None:
    sl = explore_bfs.SLICE_BY_NAME["core"]
    session = Session("local", 2)
    try:
        pool = session.pool(sl.cfg, frozenset(), False, True)
        levels: list[str] = []

        def kill_at_level_five(line: str) -> None:
            levels.append(line)
            if len(levels) == 5:
                ray_session.kill(pool.actors[1])

        with pytest.raises(explore_cluster.ClusterError) as caught:
            explore_cluster.search(pool, sl.cfg, name=sl.name, progress=kill_at_level_five)
    finally:
        session.close()
    assert "worker died" in str(caught.value)
    assert caught.value.partial["depth"] == 5
    assert caught.value.partial["states"] > 1
    assert caught.value.partial["slice"] == "core"


@pytest.mark.deep
def test_ray_error_reports_go_to_stderr_not_to_the_json(monkeypatch: Any) -> None:
    """A dead worker makes Ray's driver print a paragraph on standard output (where ``--json``
    writes the report); the session sends it to standard error."""
    worker = pytest.importorskip("ray._private.worker", reason="Ray is not installed")
    from cli import cluster

    got: list[dict[str, Any]] = []
    monkeypatch.setattr(worker, "print_to_stdstream", lambda data, ignore_prefix: got.append(data))
    cluster._errors_to_stderr()
    cluster._errors_to_stderr()  # a second session does not wrap it twice
    worker.print_to_stdstream({"lines": ["A worker died"], "pid": "raylet", "is_err": False}, False)
    assert got == [{"lines": ["A worker died"], "pid": "raylet", "is_err": True}]


@pytest.mark.deep
def test_random_walks_merged_from_ray_tasks_match_one_process(ray_session: Any) -> None:
    cfg = explore_bfs.SLICE_BY_NAME["core"].cfg
    faults = frozenset({"cancel-as-end-turn"})
    here = explore_random.explore(cfg, faults, seed=3, walks=600, steps=40)
    session = Session("local", 2)
    try:
        there = explore_random.explore(cfg, faults, seed=3, walks=600, steps=40, chunk_map=session.map)
    finally:
        session.close()
    assert here.counterexamples
    assert [(c.rule, c.events, c.found_by, c.hits) for c in there.counterexamples] == [
        (c.rule, c.events, c.found_by, c.hits) for c in here.counterexamples
    ]
    assert (there.events, there.rows, there.exercised, there.stops) == (
        here.events,
        here.rows,
        here.exercised,
        here.stops,
    )


@pytest.mark.deep
def test_hypothesis_chunks_merged_from_ray_tasks_match_one_process(ray_session: Any) -> None:
    """Hypothesis's example chunks as Ray tasks (each ``isolated`` in a worker that loaded other
    modules): the same merged examples, coverage and counterexamples as in this process."""
    cfg = explore_bfs.SLICE_BY_NAME["core"].cfg
    faults = frozenset({"cancel-as-end-turn"})
    kw: dict[str, Any] = {"seed": 3, "examples": 250, "steps": 30}
    assert len(explore_hypothesis.chunks(250)) == 3
    here = explore_hypothesis.explore(cfg, faults, **kw)
    session = Session("local", 2)
    try:
        there = explore_hypothesis.explore(cfg, faults, chunk_map=session.map, **kw)
    finally:
        session.close()
    assert here.counterexamples
    assert [(c.rule, c.events, c.found_by, c.hits) for c in there.counterexamples] == [
        (c.rule, c.events, c.found_by, c.hits) for c in here.counterexamples
    ]
    assert there.stats_json() == here.stats_json()
    assert (there.stats.rows, there.stats.exercised, there.stats.observer.entity) == (
        here.stats.rows,
        here.stats.exercised,
        here.stats.observer.entity,
    )


@pytest.mark.deep
def test_random_mode_report_is_byte_identical_for_any_number_of_ray_workers(tmp_path: Path) -> None:
    """``--mode random --seed 7 --json --out DIR``: the same ``DIR/report.json``, byte for byte,
    in one process, with ``--cluster local --workers 1`` and with ``--workers 2`` (walks and
    hypothesis chunks both on the workers)."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")
    out = tmp_path / "out"

    def report(extra: list[str]) -> bytes:
        done = subprocess.run(
            [sys.executable, "-m", "cli", "explore", "--mode", "random", "--seed", "7", "--json",
             "--quiet", "--examples", "250", "--walks", "600", "--out", str(out), *extra],
            cwd=ROOT, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-800:]
        assert json.loads(done.stdout)["random"]["examples"] > 250  # three chunks ran
        return (out / "report.json").read_bytes()

    single = report([])
    assert report(["--cluster", "local", "--workers", "1"]) == single
    assert report(["--cluster", "local", "--workers", "2"]) == single


@pytest.mark.deep
def test_cli_cluster_report_equals_the_single_process_report(tmp_path: Path) -> None:
    """What the issue asks: ``--cluster local --workers 2 --mode exhaustive --json`` on every
    default slice gives the single-process report (timing and output folder aside)."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")

    def report(extra: list[str], out: Path) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "cli", "explore", "--mode", "exhaustive", "--json", "--quiet",
             "--out", str(out), *extra],
            cwd=ROOT, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-800:]
        got = json.loads(done.stdout)
        for key in ("timing", "output", "report_file"):
            got.pop(key)
        return _untimed(got)

    single = report([], tmp_path / "one")
    cluster = report(["--cluster", "local", "--workers", "2"], tmp_path / "two")
    assert cluster == single


def _untimed(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if not k.endswith(("seconds", "per_second"))}
    if isinstance(obj, list):
        return [_untimed(x) for x in obj]
    return obj
