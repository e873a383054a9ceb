"""What a newcomer meets first: the text of ``acp-model machines``, ``--help`` of every command
this module covers, and that every script and module entry point parses its arguments."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from cli.main import build_parser, main
from model.registry import MACHINES


def _cli(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(argv)
    return code, buf.getvalue()


def test_machines_text_keeps_every_column_apart() -> None:
    code, text = _cli(["machines"])
    assert code == 0
    lines = text.splitlines()
    for m in MACHINES:
        for r in m.rows:
            want = [r.source, r.trigger, r.dest, r.actor, *r.section.split()]
            rows = [ln.split() for ln in lines if ln.split()[: len(want)] == want]
            assert rows, f"{m.name}: no line with the separate cells {want}"
    # the longest names of every column are still followed by two spaces
    longest = max((r for m in MACHINES for r in m.rows), key=lambda r: len(r.trigger))
    assert any(f"{longest.trigger}  " in ln for ln in lines)


# -- entry points -----------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
NOT_OURS = {"setup.py", "properties/trace.py"}
"""setup.py is setuptools' entry point; properties/trace.py is owned by the traceability work."""


def _entry_points() -> list[Path]:
    found = []
    for path in sorted(REPO.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel.split("/")[0] in {".venv", "tests", "build"} or rel in NOT_OURS:
            continue
        text = path.read_text(encoding="utf-8")
        if path.name == "__main__.py" or re.search(r"^if __name__ == .__main__.:", text, re.M):
            found.append(path)
    return found


def _run_entry_point(path: Path, arg: str) -> int:
    """Run ``path`` as ``python path ARG`` (a benchmark) or ``python -m MODULE ARG`` would, in
    this process: its exit code."""
    rel = path.relative_to(REPO)
    with warnings.catch_warnings():  # runpy: "found in sys.modules": this run is a second copy
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            if rel.parts[0] == "benchmarks":
                sys.argv = [str(path), arg]
                runpy.run_path(str(path), run_name="__main__")
            else:
                module = ".".join(rel.with_suffix("").parts).removesuffix(".__main__")
                sys.argv = [module, arg]
                runpy.run_module(module, run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else 1
    return 0


def test_entry_points_are_found() -> None:
    names = {p.relative_to(REPO).as_posix() for p in _entry_points()}
    assert {"cli/__main__.py", "cli/main.py", "benchmarks/bench_simulator.py"} <= names


@pytest.mark.parametrize("path", _entry_points(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_entry_point_parses_its_arguments(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--help`` prints a usage and does nothing else (no file appears, in the current folder or
    in the repository); an unknown option is a usage error, exit 2, before any work. Run in this
    process (a real process: the test below)."""
    before = {p.name for p in REPO.iterdir()} | {p.name for p in path.parent.iterdir()}
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert _run_entry_point(path, "--help") == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("usage:")
    assert _run_entry_point(path, "--no-such-option") == 2
    assert "error" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    after = {p.name for p in REPO.iterdir()} | {p.name for p in path.parent.iterdir()}
    assert after == before


def test_the_installed_command_parses_its_arguments(tmp_path: Path) -> None:
    """The ``acp-model`` script that installing the project puts beside the interpreter, as a
    real process: ``--help`` is a usage and exit 0, an unknown option exit 2."""
    script = Path(sys.executable).with_name("acp-model")
    if not script.is_file():
        pytest.skip(f"{script}: not installed (pip install -e '.[dev]' puts it there)")
    runs = {  # both at once: each costs mostly its imports
        arg: subprocess.Popen(
            [str(script), arg], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for arg in ("--help", "--no-such-option")
    }
    (out, err), code = runs["--help"].communicate(timeout=60), runs["--help"].returncode
    assert code == 0, err
    assert out.startswith("usage: acp-model")
    (_, err), code = runs["--no-such-option"].communicate(timeout=60), runs["--no-such-option"].returncode
    assert code == 2
    assert "error" in err
    assert list(tmp_path.iterdir()) == []


# -- --help ----------------------------------------------------------------------------------

MINE = (
    "decidability",
    "diagrams",
    "explore",
    "machines",
    "mutants",
    "rules",
    "scenarios",
    "simulate",
    "spec-report",
)
"""The commands whose help this file holds to the rules (check, view and replay: test_check_cli)."""


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("command", MINE)
def test_every_option_has_a_description_and_its_default(command: str) -> None:
    sub = _subparsers()[command]
    assert sub.description, f"{command} has no description"
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help, f"{command} {name} has no help"
        if action.option_strings:  # positional arguments are required: no default to show
            assert "default" in action.help or "required" in action.help, f"{command} {name}: no default"
    text = sub.format_help()
    assert "%(default)" not in text and "None" not in text


@pytest.mark.parametrize("command", ["explore", "simulate"])
def test_features_lists_its_values(command: str) -> None:
    from simulator.peers.config import FEATURES

    features = next(a for a in _subparsers()[command]._actions if "--features" in a.option_strings)
    assert all(name in (features.help or "") for name in FEATURES)


def test_explore_and_simulate_accept_the_same_bound_options() -> None:
    def bounds(command: str) -> set[str]:
        sub = _subparsers()[command]
        group = next(g for g in sub._action_groups if g.title and g.title.startswith("bounds"))
        return {o for a in group._group_actions for o in a.option_strings}

    assert bounds("explore") - bounds("simulate") == {"--depth", "--max-states"}  # exhaustive only
    assert bounds("simulate") <= bounds("explore")


def test_mutants_text_has_a_header_and_says_what_each_bug_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layout of the text (the verdicts themselves: tests/test_mutants.py); each run is
    replaced by a verdict that caught nothing, so the table is made without running anything."""
    import simulator.analysis.mutants
    from simulator.analysis.mutants import MUTANTS, Verdict

    monkeypatch.setattr(simulator.analysis.mutants, "judge", lambda mutant, walks, steps: Verdict(mutant))
    code, text = _cli(["mutants", "--quiet"])
    lines = text.splitlines()
    assert lines[0].split() == ["mutant", "side", "breaks", "verdict"]
    assert lines[1] == "    what the seeded bug does"
    assert max(len(line) for line in lines) <= 100  # issue 35: it was 200 wide
    rows = [
        i for i, line in enumerate(lines) if line.split()[:1] and line.split()[0] in {m.name for m in MUTANTS}
    ]
    assert len(rows) == len(MUTANTS)
    for m, i in zip(MUTANTS, rows, strict=True):
        assert lines[i].split()[:4] == [m.name, m.side, m.intended_rule, "MISSED"]
        assert lines[i + 1].startswith("    ") and " ".join(m.description.split()).startswith(
            " ".join(lines[i + 1].split())
        )
    assert code == 1


def test_mutants_list_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import simulator.analysis.mutants
    from simulator.analysis.mutants import MUTANTS

    def never(*_: object) -> None:
        raise AssertionError("--list must not run a mutant")

    monkeypatch.setattr(simulator.analysis.mutants, "judge", never)
    code, text = _cli(["mutants", "--list"])
    lines = text.splitlines()
    assert code == 0 and lines[0].split() == ["mutant", "side", "breaks"]
    assert max(len(line) for line in lines) <= 100
    for m in MUTANTS:
        assert any(line.split()[:3] == [m.name, m.side, m.intended_rule] for line in lines), m.name
    assert f"{len(MUTANTS)} seeded bugs" in text
    code, text = _cli(["mutants", "--list", "--json", "--only", "cancel-as-end-turn"])
    assert code == 0 and json.loads(text) == [
        {
            "name": "cancel-as-end-turn",
            "side": "agent",
            "intended_rule": "TRANS-04",
            "description": "confirms a cancellation with end_turn",
        }
    ]


# -- help that says what the command does (issue 35) --------------------------------------------


def _option_help(command: str, option: str) -> str:
    action = next(a for a in _subparsers()[command]._actions if option in a.option_strings)
    return action.help or ""


def test_variant_and_drop_help_say_what_each_command_does_with_them() -> None:
    assert "simulated" not in _option_help("check", "--drop")
    assert "set aside" in _option_help("check", "--drop")
    assert "judge" not in _option_help("agent", "--variant")
    assert _option_help("agent", "--variant").startswith("play the Agent of a variant")
    assert "may break it" in _option_help("agent", "--drop")
    for command in ("simulate", "explore"):
        assert "simulated peers may break it" in _option_help(command, "--drop")


def test_readings_help_names_every_command_that_takes_a_reading() -> None:
    subs = _subparsers()
    taking = sorted(name for name, p in subs.items() if "--reading" in p._option_string_actions)
    assert len(taking) >= 10
    text = " ".join(subs["readings"].format_help().split())
    assert f"These {len(taking)} commands take --reading NAME=ALTERNATIVE: {', '.join(taking)}." in text
