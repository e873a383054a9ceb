"""``acp-model explore`` as a newcomer meets it: outputs checked before the work, a report that
survives a late write failure and says where it was written, ``-`` for the graph, the examples
asked against those run, seeded bugs named by their mutant.

Runs use a tiny custom slice (about two hundred states) and a few random examples.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from cli.main import main
from simulator.explore import run as explore_run

TINY = [
    "--prompts", "1", "--tool-calls", "0", "--permissions", "0", "--background", "0",
    "--capacity", "1", "--features", "cancel,hold",
]  # fmt: skip
RANDOM = ["--examples", "10", "--walks", "20", "--steps", "15"]


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def no_run(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fails the test if the exploration starts."""
    started: list[Any] = []

    def run(*args: Any, **kwargs: Any) -> Any:
        started.append(args)
        raise AssertionError("the exploration started before its outputs were checked")

    monkeypatch.setattr(explore_run, "run", run)
    return started


@pytest.mark.parametrize(
    "option",
    [
        ["--out", "{blocker}/sub"],
        ["--out", "{blocker}"],
        ["--out", "-"],
        ["--graph", "{blocker}/g.graphml"],
        ["--graph", "{tmp}"],
        ["--database", "{blocker}/db"],
    ],
)
def test_outputs_are_checked_before_any_work(tmp_path: Path, no_run: list[Any], option: list[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    argv = [a.format(blocker=blocker, tmp=tmp_path) for a in option]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "out")]
    code, out, err = _cli(["explore", *argv])
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("acp-model explore: "), err
    assert no_run == []
    assert not (tmp_path / "out").exists()  # the check creates nothing


def test_a_late_write_failure_still_prints_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = explore_run.write_atomic

    def failing(path: Any, data: Any) -> None:
        if Path(path).name == "report.json":
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(explore_run, "write_atomic", failing)
    out_dir = tmp_path / "out"
    code, out, err = _cli(["explore", "--mode", "exhaustive", *TINY, "--fault", "cancel-as-end-turn",
                           "--out", str(out_dir)])  # fmt: skip
    assert code == 2
    assert "findings: 1 rule(s) broken" in out and "TRANS-04" in out  # the report is not lost
    assert f"{out_dir / 'report.json'}: cannot write (No space left on device)" in out
    assert err == f"acp-model explore: {out_dir / 'report.json'}: cannot write (No space left on device)\n"
    assert (out_dir / "exhaustive-TRANS-04.ndjson").exists()  # what could be written was


def test_the_report_says_where_it_was_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = _cli(["explore", "--mode", "exhaustive", *TINY])
    assert code == 0
    assert "report: out/explore/report.json (this report as JSON, without timing)" in out
    assert (tmp_path / "out" / "explore" / "report.json").is_file()
    code, out, _ = _cli(["explore", "--mode", "exhaustive", *TINY, "--json"])
    assert json.loads(out)["report_file"] == "out/explore/report.json"


def test_graph_dash_writes_graphml_to_standard_output(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code = main(["explore", "--mode", "exhaustive", *TINY, "--graph", "-", "--out", str(tmp_path)])
    assert code == 0
    captured = capsysbinary.readouterr()
    graph = nx.read_graphml(io.BytesIO(captured.out))
    assert graph.number_of_nodes() > 100
    assert b"acp-model explore: mode exhaustive" in captured.err  # the report moved aside
    assert not (Path.cwd() / "-").exists() and not (tmp_path / "-").exists()
    code, _, err = _cli(["explore", "--graph", "-", "--json", "--out", str(tmp_path)])
    assert code == 2 and "standard output" in err


def test_the_report_says_how_many_examples_were_asked_and_ran(tmp_path: Path) -> None:
    code, out, _ = _cli(["explore", "--mode", "random", *RANDOM, "--json", "--out", str(tmp_path)])
    assert code == 0
    rnd = json.loads(out)["random"]
    assert rnd["examples_asked"] == 10
    by = rnd["hypothesis"]["examples_by_outcome"]
    assert sum(by.values()) == rnd["examples"]  # every example that ran is accounted for
    assert by["completed"] == 10  # hypothesis stops when the examples asked have completed
    assert rnd["examples_explained"].startswith(f"10 examples asked per round, {rnd['examples']} ran")
    if rnd["examples"] != 10:
        assert "counts only the examples that run to their end" in rnd["examples_explained"]
    code, out, _ = _cli(["explore", "--mode", "random", *RANDOM, "--out", str(tmp_path)])
    assert f"  examples: {rnd['examples_explained']}" in out


def test_the_explanation_covers_every_difference() -> None:
    text = explore_run.explain_examples(
        {"examples_by_outcome": {"completed": 320, "failed": 2, "size_limit": 61}, "rounds": 2}, 300
    )
    assert text.startswith("300 examples asked per round, 383 ran in 2 round(s) (320 completed, 2 broke")
    for reason in ("run to their end", "once more to report it", "asks for the examples again"):
        assert reason in text
    same = explore_run.explain_examples({"examples_by_outcome": {"completed": 5}, "rounds": 1}, 5)
    assert same == "5 examples asked per round, 5 ran in 1 round(s) (5 completed)"


def test_a_mutant_of_other_faults_is_accepted_by_name(tmp_path: Path) -> None:
    """``update-after-cancelled-idle`` is a mutant, not a fault: it switches its fault on (it was
    refused as an unknown fault)."""
    code, out, err = _cli(["explore", "--mode", "exhaustive", *TINY, "--fault", "update-after-cancelled-idle",
                           "--json", "--out", str(tmp_path)])  # fmt: skip
    assert code in (0, 1), err
    assert json.loads(out)["faults"] == ["update-after-idle"]


def test_the_closes_bound_lets_the_client_close_again(tmp_path: Path) -> None:
    """``--closes 2``: the custom slice explores a second session/close while closing (the
    session table's row fires); with one close it cannot."""
    missed = []
    for closes in ("1", "2"):
        argv = ["explore", "--mode", "exhaustive", "--features", "close", "--prompts", "1"]
        code, out, _ = _cli([*argv, "--closes", closes, "--json", "--quiet", "--out", str(tmp_path / closes)])
        assert code == 0
        machines = json.loads(out)["coverage"]["exhaustive"]["machines"]
        session = next(m for m in machines if m["name"] == "session")
        missed.append("closing --close--> closing" in session["transitions_missed"])
    assert missed == [True, False]


def test_a_random_run_of_walks_only_or_hypothesis_only(tmp_path: Path) -> None:
    """Issue 35, defect 5: ``--walks 0`` said ``stops: `` and nothing; ``--examples 0`` was refused.
    Each now runs the other half alone and says so; both 0 leave nothing to run (exit 2)."""
    argv = ["explore", "--mode", "random", *TINY, "--steps", "15", "--out", str(tmp_path)]
    code, out, _ = _cli([*argv, "--walks", "0", "--examples", "5"])
    assert code == 0 and "random walks: none (--walks 0)\nhypothesis: " in out and "stops:" not in out
    code, out, _ = _cli([*argv, "--walks", "7", "--examples", "0"])
    assert code == 0 and "stops: quiescent 7\nhypothesis: none (--examples 0)\n\nfindings: none" in out
    code, out, _ = _cli([*argv, "--walks", "7", "--examples", "0", "--json"])
    rnd = json.loads(out)["random"]
    assert (rnd["walks"], rnd["examples"], rnd["examples_asked"], rnd["hypothesis"]["rounds"]) == (7, 0, 0, 0)
    assert rnd["examples_explained"] == "no examples asked (--examples 0): the random walks only"
    code, out, err = _cli([*argv, "--walks", "0", "--examples", "0"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "nothing to run" in err
    code, _, err = _cli([*argv, "--examples", "-1"])
    assert code == 2 and "--examples must be >= 0" in err


def test_the_report_says_how_large_the_state_graph_is(tmp_path: Path) -> None:
    """Issue 35, defect 5: ``--graph`` wrote a file of megabytes without a word."""
    graph = tmp_path / "g.graphml"
    argv = ["explore", "--mode", "exhaustive", *TINY, "--graph", str(graph), "--out", str(tmp_path / "o")]
    code, out, _ = _cli([*argv, "--json"])
    assert code == 0
    ex = json.loads(out)["exhaustive"]
    assert ex["graph"] == str(graph) and ex["graph_bytes"] == graph.stat().st_size > 1000
    code, out, _ = _cli(argv)
    size = f"{graph.stat().st_size / 1000:.1f} kB"
    assert f"  state graph: {graph} (GraphML, {size}, {ex['states']:,} states)\n" in out


def test_rules_the_default_bounds_never_exercise_are_info_not_warnings(tmp_path: Path) -> None:
    """Issue 35: a clean run at the default bounds ended with warnings about the rules no correct
    run within them triggers; they are information. With bounds of the user's, still warnings."""
    argv = ["explore", "--mode", "random", "--walks", "5", "--examples", "2", "--steps", "10"]
    code, out, _ = _cli([*argv, "--json", "--out", str(tmp_path)])
    report = json.loads(out)
    assert code == 0 and report["warnings"] == []
    assert [i.split(":")[0] for i in report["info"]] == [
        "rules not exercised by the default bounds of the random mode"
    ]
    code, out, _ = _cli([*argv, "--out", str(tmp_path)])
    assert (
        "\ninfo: rules not exercised by the default bounds of the random mode: " in out
        and "warning:" not in out
    )
    code, out, _ = _cli([*argv, *TINY, "--json", "--out", str(tmp_path)])
    report = json.loads(out)
    assert report["info"] == [] and report["warnings"][0].startswith(
        "rules never exercised by the random mode: "
    )


def test_the_counterexample_diagram_marks_the_breaking_message(tmp_path: Path) -> None:
    """Issue 35: the spec report's witnesses mark the breach with a note; explore's .mmd did not."""
    argv = ["explore", "--mode", "exhaustive", *TINY, "--quiet", "--out", str(tmp_path)]
    code, _, _ = _cli([*argv, "--fault", "cancel-as-end-turn"])
    assert code == 1
    lines = (tmp_path / "exhaustive-TRANS-04.mmd").read_text().splitlines()
    at = next(
        i for i, line in enumerate(lines) if line.startswith("    Note right of A: TRANS-04 broken here#58; ")
    )
    sent = [line for line in lines[:at] if "->>" in line or "-)" in line or "-->>" in line]
    assert (
        sent[-1] == "    A-)C: state_update idle stopReason=end_turn"
    )  # the note follows the breaking message
    code, _, _ = _cli([*argv, "--fault", "never-answer-inserted", "--out", str(tmp_path / "e")])
    assert code == 1
    found = sorted((tmp_path / "e").glob("exhaustive-*.mmd"))
    assert found
    last = found[0].read_text().splitlines()[-1]
    assert last.startswith("    Note right of A: ") and "still owed at quiescence#58; " in last


def test_a_search_stopped_by_its_cap_says_how_to_go_further(tmp_path: Path) -> None:
    """Issue 35: `--prompts 2 --tool-calls 2` met the state cap and the report only said
    "incomplete"; it now names the cap option, --reduce por and the cluster."""
    argv = ["explore", "--mode", "exhaustive", *TINY, "--max-states", "50", "--json", "--out", str(tmp_path)]
    code, out, _ = _cli(argv)
    info = json.loads(out)["info"]
    assert code == 0 and len(info) == 1
    for way in ("--max-states N (now 50 states per slice;", "600 bytes a state", "--reduce por", "--cluster"):
        assert way in info[0]
    code, out, _ = _cli([*argv, "--reduce", "por"])
    assert "--reduce por" not in json.loads(out)["info"][0]
    code, out, _ = _cli(["explore", "--mode", "exhaustive", *TINY, "--json", "--out", str(tmp_path)])
    assert json.loads(out)["info"] == []  # complete: nothing to say
