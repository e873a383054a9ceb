"""Independent explorations as cluster tasks: the readings matrix and ``--compare`` give, with
``--cluster``, the answers and files of the runs without it.

Default suite: a stand-in session runs the tasks in this process, after a pickle round trip of
every job and every result (what Ray does to them), against the plain runs; progress names
states/s across the cluster and the task's memory; usage errors are one line. Deep suite: the
command with ``--cluster local --workers 2`` against the command without it.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from diagrams.sequence import transcript_to_mermaid
from properties.variants import from_drops
from simulator import explore_run
from simulator.explore_compare import compare
from simulator.matrix import readings_matrix
from simulator.progress import Progress

ROOT = Path(__file__).resolve().parents[1]


class FakeSession:
    """What ``cli.cluster.Session`` offers the task runners, in this process."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.calls: list[str] = []

    def map(self, fn: Callable[[Any], Any], jobs: list[Any]) -> Iterator[Any]:
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
        return {k: _no_seconds(v) for k, v in data.items() if k not in ("seconds", "total_seconds")}
    if isinstance(data, list):
        return [_no_seconds(v) for v in data]
    return data


def _options(out: Path, **kw: Any) -> explore_run.Options:
    return explore_run.Options(
        mode="exhaustive",
        slices=("cancels",),
        max_states=1000,
        out=str(out),
        diagram=transcript_to_mermaid,
        **kw,
    )


def test_matrix_cells_as_tasks_give_the_plain_matrix_and_files(tmp_path: Path) -> None:
    faults = frozenset({"cancel-as-end-turn"})
    plain = readings_matrix(("cancel-takes-effect",), _options(tmp_path / "a", faults=faults), jobs=1)
    session = FakeSession(3)
    notes = Notes()
    tasks = readings_matrix(
        ("cancel-takes-effect",), _options(tmp_path / "b", faults=faults), session=session, progress=notes
    )
    assert session.calls == ["compute_cell"]
    assert tasks.jobs == 3
    assert any(r.outcome.findings for r in plain.rows)  # files to compare
    a, b = plain.to_json(), tasks.to_json()
    assert json.dumps(_no_seconds(a)).replace(str(tmp_path / "a"), "OUT") == json.dumps(
        _no_seconds(b)
    ).replace(str(tmp_path / "b"), "OUT")
    files = _files(tmp_path / "b")
    assert files == _files(tmp_path / "a")
    assert any(name.endswith(".mmd") for name in files)
    assert len(notes.notes) == tasks.explorations
    assert "states/s across the cluster" in notes.notes[-1] and " MB" in notes.notes[-1]
    assert notes.notes[-1].startswith(f"{tasks.explorations}/{tasks.explorations} done")


def test_compare_as_two_tasks_gives_the_plain_comparison(tmp_path: Path) -> None:
    variant = from_drops(["TRANS-04"])
    plain = compare(_options(tmp_path / "a", variant=variant), variant, {})
    session = FakeSession(2)
    tasks = compare(_options(tmp_path / "b", variant=variant), variant, {}, session=session)
    assert session.calls == ["compute_run"]
    assert json.dumps(_no_seconds(plain)).replace(str(tmp_path / "a"), "OUT") == json.dumps(
        _no_seconds(tasks)
    ).replace(str(tmp_path / "b"), "OUT")
    assert any(d["kind"] == "set-aside" for d in tasks["compare"]["differences"])
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--readings", "cancel-takes-effect", "--jobs", "2"], "--jobs does not apply with --cluster"),
        (["--drop", "TRANS-04"], "except with --compare"),
    ],
)
def test_cluster_task_usage_errors_are_one_line(
    extra: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["explore", "--mode", "exhaustive", "--quiet", "--cluster", "local", "--out", str(tmp_path)]
    argv += extra
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


# -- deep: a real local Ray -------------------------------------------------------------------------


def _cli_json(args: list[str], out: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "cli", "explore", "--json", "--quiet", "--out", str(out), *args],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-800:]
    data: dict[str, Any] = _no_seconds(json.loads(done.stdout))
    return json.loads(json.dumps(data).replace(str(out), "OUT"))


@pytest.mark.deep
def test_cli_matrix_and_compare_on_ray_equal_the_plain_runs(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")
    cluster = ["--cluster", "local", "--workers", "2"]
    # both modes: a cell run in a Ray worker (a fresh process) and one run in the command's
    # process after other cells give the same hypothesis counts too
    matrix = ["--readings", "cancel-takes-effect,patch-after-idle", "--mode", "both", "--slice",
              "cancels", "--fault", "cancel-as-end-turn", "--examples", "30", "--walks", "200"]  # fmt: skip
    plain = _cli_json([*matrix, "--jobs", "1"], tmp_path / "m1")
    assert plain["contradicting"]
    assert _cli_json([*matrix, *cluster], tmp_path / "m2") == plain
    assert _files(tmp_path / "m1") == _files(tmp_path / "m2")
    comp = ["--drop", "TRANS-04", "--compare", "--mode", "exhaustive", "--slice", "cancels",
            "--slice", "hook"]  # fmt: skip
    plain = _cli_json(comp, tmp_path / "c1")
    assert plain["compare"]["differences"]
    assert _cli_json([*comp, *cluster], tmp_path / "c2") == plain


def test_a_failed_cluster_task_is_named_by_its_function() -> None:
    """A task that fails on the cluster is named by what it ran (a random-walk chunk or a chunk
    of hypothesis examples), not always as a random walk. A stand-in for Ray, no cluster."""
    import types

    from cli.cluster import ClusterError, Session
    from simulator.explore_hypothesis import run_chunk

    class RayError(Exception):
        pass

    class ActorError(RayError):
        pass

    def get(ref: object) -> object:
        raise RayError("Traceback ...\nValueError: boom")

    def remote(**options: object) -> object:
        return lambda fn: types.SimpleNamespace(remote=lambda job: job)

    fake = types.SimpleNamespace(
        remote=remote, get=get, kill=lambda actor: None,
        exceptions=types.SimpleNamespace(RayError=RayError, RayActorError=ActorError),
    )  # fmt: skip
    session = Session.__new__(Session)
    session.ray, session.actors = fake, []
    with pytest.raises(ClusterError) as err:
        list(session.map(run_chunk, [1]))
    said = "a cluster worker failed during task 0 (explore_hypothesis.run_chunk): ValueError: boom"
    assert str(err.value) == said
