"""Progress on standard error: drawn only for a phase that lasts a second, as a bar where the
total is known, never when standard error is not a terminal or with --quiet; and every long
phase of explore, simulate, mutants and diagrams reports to it."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli import progress as cli_progress
from cli.main import main
from cli.progress import TerminalProgress, make
from simulator.progress import NULL, Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_drawn_before_a_second_then_a_bar() -> None:
    clock, out = Clock(), Tty()
    p = TerminalProgress(out, clock, thread=False)
    p.phase("random walks", 200)
    p.advance(50)
    clock.now += 0.9
    p.tick()
    assert out.getvalue() == ""
    clock.now += 0.2
    p.tick()
    assert out.getvalue() == "\rrandom walks: [######..................] 50/200 25% 1 s"
    p.advance(150)
    p.done()
    assert out.getvalue().endswith("\rrandom walks: [########################] 200/200 100% 1 s\n")


def test_a_phase_without_total_shows_its_count_and_note() -> None:
    clock, out = Clock(), Tty()
    p = TerminalProgress(out, clock, thread=False)
    p.phase("exhaustive, slice core")
    p.note("1,234 states")
    clock.now += 3
    p.tick()
    assert out.getvalue() == "\rexhaustive, slice core: 1,234 states 3 s"
    p.phase("writing")  # the drawn phase is finished on its own line
    assert out.getvalue().endswith("3 s\n")
    p.done()
    assert out.getvalue().count("\n") == 1  # the short phase drew nothing


def test_a_short_phase_draws_nothing() -> None:
    clock, out = Clock(), Tty()
    p = TerminalProgress(out, clock, thread=False)
    p.phase("quick", 10)
    p.advance(10)
    clock.now += 0.5
    p.tick()
    p.done()
    assert out.getvalue() == ""


def test_quiet_or_not_a_terminal_means_no_progress() -> None:
    assert make(quiet=True, stream=Tty()) is NULL
    assert make(quiet=False, stream=io.StringIO()) is NULL
    shown = make(quiet=False, stream=Tty())
    assert isinstance(shown, TerminalProgress)
    shown.stopped.set()


class Recorder(Progress):
    def __init__(self) -> None:
        self.phases: list[tuple[str, int | None]] = []
        self.advanced = 0

    def phase(self, name: str, total: int | None = None) -> None:
        self.phases.append((name, total))

    def advance(self, n: int = 1) -> None:
        self.advanced += n


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    rec = Recorder()
    monkeypatch.setattr(cli_progress, "make", lambda quiet, stream=None: rec)
    return rec


def test_explore_reports_every_phase(recorder: Recorder, tmp_path: Path, capsys: Any) -> None:
    tiny = ["--prompts", "1", "--tool-calls", "0", "--permissions", "0", "--background", "0",
            "--capacity", "1", "--features", "cancel"]  # fmt: skip
    argv = ["explore", *tiny, "--examples", "30", "--walks", "300", "--steps", "20", "--fault",
            "answer-twice", "--graph", str(tmp_path / "g.graphml"), "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 1
    names = [n for n, _ in recorder.phases]
    assert "exhaustive, slice custom" in names, names
    assert "writing the state graph (GraphML)" in names
    assert ("hypothesis, round 1", 30) in recorder.phases
    assert ("random walks", 300) in recorder.phases
    assert any(n.startswith("random walks, shrinking") for n in names)
    assert any(n.startswith("hypothesis, shrinking") for n in names)


def test_simulate_reports_its_steps(recorder: Recorder, tmp_path: Path, capsys: Any) -> None:
    assert main(["simulate", "--steps", "50", "--out", str(tmp_path / "s.ndjson")]) == 0
    assert recorder.phases == [("random walk", 50), ("random walk, settling", None)]
    assert recorder.advanced >= 50


def test_mutants_report_each_run(recorder: Recorder, capsys: Any) -> None:
    main(["mutants", "--walks", "0", "--only", "cancel-as-end-turn", "--only", "usage-no-size"])
    assert recorder.phases == [("mutants", 3)]
    assert recorder.advanced == 3


def test_diagrams_report_each_part(recorder: Recorder) -> None:
    from diagrams import generate

    generate.write(Path("unused"), files={}, progress=recorder)
    assert recorder.phases == [("diagrams: writing files", 0)]
    names = []

    class Names(Progress):
        def phase(self, name: str, total: int | None = None) -> None:
            names.append(name)

    generate.scenario_files(Names())
    assert names == ["diagrams: scenario sequence diagrams"]


def test_no_progress_when_standard_error_is_not_a_terminal(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cli", "simulate", "--steps", "3000", "--out", str(tmp_path / "x.ndjson")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
