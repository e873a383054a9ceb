"""The README's examples run as shown.

The checker example: its commands, run in an empty folder, print exactly the output the README
shows (the transcript is made by the first command, so nothing needs to be shipped beside the
README). Every other ```text block that starts with ``$ acp-model ...`` is an excerpt: run in an
empty folder (with ``variants/`` beside it), each command's output holds the block's lines in
order, a line ``...`` standing for lines left out and timing figures (seconds, rates) masked.
Each such block is claimed by one test below, so a new excerpt without a test fails; those that
explore the full default bounds are deep (each runs for 30 s to 4 min on 2 cores). The
counterexample excerpt is also checked fast: rebuilt from the steps it lists, without the search
that found it.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from properties.shared import shared_dir

REPO = Path(__file__).resolve().parents[1]
SHARED = shared_dir()  # $ACP_MODEL_SHARED, else ../shared


def _example() -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of the README's implementer session."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### An implementer: check a recorded transcript", 1)[1]
    block = re.search(r"```text\n(.*?)```", section, re.S)
    assert block is not None, "the README's checker example is missing"
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


@pytest.mark.needs_shared
def test_the_readme_checker_example_prints_what_the_readme_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (SHARED / "acp-schema").is_dir():
        pytest.skip(
            f"the example validates against the schema in {SHARED} "
            "(../shared is absent: set ACP_MODEL_SHARED to the shared folder)"
        )
    monkeypatch.chdir(tmp_path)
    steps = _example()
    assert [c.split()[:2] for c, _ in steps] == [
        ["acp-model", "simulate"],
        ["acp-model", "check"],
        ["echo", "$?"],
    ]
    code = 0
    for command, expected in steps:
        if command == "echo $?":
            assert [str(code)] == expected
            continue
        argv = [a.replace("../shared", str(SHARED)) for a in shlex.split(command)[1:]]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(argv)
        assert out.getvalue().splitlines() == expected, command


def test_the_docs_name_the_command_acp_model() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "diagrams" / "README.md"]
    stale = [str(p.relative_to(REPO)) for p in pages if "python -m cli" in p.read_text(encoding="utf-8")]
    assert stale == []


# -- the other excerpts ---------------------------------------------------------------------------

ELIDED = "..."
_TIMING = re.compile(r"\d[\d,.]* (?:[a-z ]+/s|s)\b")


def _masked(line: str) -> str:
    """``line`` with its timing figures (``4.3 s``, ``66,248 states/s``) replaced by ``<t>``."""
    return _TIMING.sub("<t>", line).rstrip()


def excerpts() -> list[list[tuple[str, list[str]]]]:
    """Every ```text block of the README whose first line is ``$ acp-model ...``: its (command,
    expected lines) steps."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = []
    for block in re.findall(r"```text\n(.*?)```", readme, re.S):
        lines = block.splitlines()
        if not lines or not lines[0].startswith("$ acp-model "):
            continue
        steps: list[tuple[str, list[str]]] = []
        for line in lines:
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
        blocks.append(steps)
    return blocks


def shows(output: str, expected: list[str]) -> list[str]:
    """The expected lines ``output`` does not show in order (``...`` lets lines be skipped;
    without it, lines must follow each other); empty when the excerpt is honest."""
    got = [_masked(line) for line in output.splitlines()]
    at = 0
    skip = True  # before the first line, anything may come (a block may start mid-output)
    for line in expected:
        if line.strip() == ELIDED:
            skip = True
            continue
        want = _masked(line)
        if skip:
            try:
                at = got.index(want, at) + 1
            except ValueError:
                return [line]
        elif at < len(got) and got[at] == want:
            at += 1
        else:
            return [line]
        skip = False
    return []


def _run_excerpt(steps: list[tuple[str, list[str]]]) -> None:
    for command, expected in steps:
        argv = [a.replace("../shared", str(SHARED)) for a in shlex.split(command)[1:]]
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(argv)
        assert shows(out.getvalue(), expected) == [], (command, out.getvalue())


def _claimed(first: str) -> list[list[tuple[str, list[str]]]]:
    return [b for b in excerpts() if b[0][0].startswith(first)]


CLAIMS = {
    "acp-model simulate --scenario": "test_the_readme_checker_example_prints_what_the_readme_shows",
    "acp-model explore --fault": "test_the_counterexample_excerpts_are_current",
    "acp-model replay": "test_the_counterexample_excerpts_replay_as_shown",
    "acp-model explore --variant": "test_the_variant_comparison_excerpt_is_current",
    "acp-model explore": "test_the_default_exploration_excerpt_is_current",
}
"""The first command of each excerpt (a prefix, longest first) -> the test that runs it."""


def test_every_readme_excerpt_is_run_by_a_test() -> None:
    firsts = [b[0][0] for b in excerpts()]
    assert len(firsts) >= 4
    unclaimed = [c for c in firsts if not any(c.startswith(prefix) for prefix in CLAIMS)]
    assert unclaimed == [], "a README excerpt no test runs: add it to CLAIMS"
    assert all(name in globals() for name in CLAIMS.values())


def test_the_excerpt_comparison_catches_a_stale_line() -> None:
    output = "head\nexhaustive: 282,399 states, 4.3 s, 66,248 states/s\nmiddle\nfindings: none\n"
    assert shows(output, ["exhaustive: 282,399 states, 9.9 s, 1 states/s", "...", "findings: none"]) == []
    assert shows(output, ["exhaustive: 282,398 states, 4.3 s, 66,248 states/s"]) != []
    assert shows(output, ["exhaustive: 282,399 states, 4.3 s, 66,248 states/s", "findings: none"]) != []
    assert shows(output, ["findings: none", "...", "head"]) != []  # order kept


def _in_empty_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(REPO / "variants", tmp_path / "variants")
    monkeypatch.chdir(tmp_path)


def _event(label: str) -> tuple[str, str, Any]:
    """The event a step label names (``agent.end('cancelled') [sent: ...]``)."""
    found = re.fullmatch(r"(\w+)\.(\w+)(?:\((.*)\))?(?: \[.*\])?", label)
    assert found is not None, label
    actor, name, arg = found.groups()
    return actor, name, None if arg is None else ast.literal_eval(arg)


def test_the_counterexample_excerpts_replay_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast half of the deep test below: the counterexample the README shows, rebuilt from
    its steps (without the search that finds it), has the explanation, step labels and files the
    excerpt shows, and ``acp-model replay`` of it prints the replay excerpt."""
    from diagrams.sequence import transcript_to_mermaid
    from simulator.explore.common import make_counterexample
    from simulator.explore.report import write_counterexample
    from simulator.explore.run import Options, random_config
    from simulator.peers.steps import step_labels

    _in_empty_folder(tmp_path, monkeypatch)
    ((command, shown),) = _claimed("acp-model explore --fault")[0]
    faults = frozenset(a for a in shlex.split(command)[3:4])
    head = next(i for i, line in enumerate(shown) if re.match(r"  [A-Z]+-\d\d \[", line))
    rule = shown[head].split()[0]
    explanation, steps, files = (line.strip() for line in shown[head + 1 : head + 4])
    assert steps.startswith("steps: ") and files.startswith("files: ")
    labels = steps.removeprefix("steps: ").split("; ")
    events = [_event(label) for label in labels]
    paths = files.removeprefix("files: ").split(", ")
    mode = Path(paths[0]).name.split("-")[0]
    cfg = random_config(Options(faults=faults))  # the random modes' bounds for this bug
    cex = make_counterexample(
        rule, events, cfg, faults, mode=mode, found_by="README", original_length=len(events)
    )
    assert cex.explanation == explanation
    assert step_labels(events, cfg, faults) == labels
    written = write_counterexample(cex, Path(paths[0]).parent, transcript_to_mermaid)
    assert [written["transcript"], written["diagram"], written["program"]] == paths
    _run_excerpt(_claimed("acp-model replay")[0])


@pytest.mark.deep
def test_the_counterexample_excerpts_are_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seeded-bug exploration and the replay of its counterexample (one block each, the
    second reading the files of the first); the steps say what the bug sent."""
    _in_empty_folder(tmp_path, monkeypatch)
    found, replayed = _claimed("acp-model explore --fault"), _claimed("acp-model replay")
    assert len(found) == 1 and len(replayed) == 1
    _run_excerpt(found[0])
    _run_excerpt(replayed[0])


@pytest.mark.deep
def test_the_default_exploration_excerpt_is_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _in_empty_folder(tmp_path, monkeypatch)
    (block,) = [b for b in excerpts() if b[0][0] == "acp-model explore"]
    _run_excerpt(block)


@pytest.mark.deep
def test_the_variant_comparison_excerpt_is_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _in_empty_folder(tmp_path, monkeypatch)
    (block,) = _claimed("acp-model explore --variant")
    _run_excerpt(block)


# -- Test your agent: the seeded-bug drive and the replay of the file it writes -------------------


def _drive_commands() -> tuple[list[str], list[str]]:
    """The README's seeded-bug ``drive`` command and the ``drive --replay`` after it (argv)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Test your agent", 1)[1]
    lines = [line for block in re.findall(r"```sh\n(.*?)```", section, re.S) for line in block.splitlines()]
    seeded_lines = [line.split("#")[0] for line in lines if "--fault" in line and "--replay" not in line]
    (seeded,) = [shlex.split(line) for line in seeded_lines]
    (replay,) = [shlex.split(line) for line in lines if "--replay" in line]
    return seeded, replay


def _drive_report() -> list[str]:
    """The report the README shows for the seeded-bug drive."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("The seeded-bug example prints", 1)[1]
    block = re.search(r"```text\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1).splitlines()


def test_the_readme_drive_example_writes_the_file_its_replay_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seeded-bug drive, with ``acp-model agent`` in process (it moves in the driver's turns
    as a process does, so the same runs fail: the process form is tests/test_drive.py's deep
    test), writes the script the README replays next, and that replay fails with the rule."""
    from simulator.harness import campaign
    from tests.test_drive import _simulated_agent

    monkeypatch.setattr(campaign, "ProcessPeer", _simulated_agent)
    monkeypatch.chdir(tmp_path)
    seeded, replay = _drive_commands()
    assert seeded[:2] == replay[:2] == ["acp-model", "drive"]
    script = Path(replay[replay.index("--replay") + 1])
    report = io.StringIO()
    with contextlib.redirect_stdout(report), contextlib.redirect_stderr(io.StringIO()):
        assert main(seeded[1:]) == 1
    assert script.is_file(), sorted(p.name for p in script.parent.iterdir())
    assert shows(report.getvalue(), _drive_report()) == [], report.getvalue()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["drive", "--json", *replay[2:]]) == 1
    rule = script.name.split("-", 1)[1].split(".")[0]
    assert rule in json.loads(out.getvalue())["failing_rules"]
