"""The command-line problems of the usability review ux49, each pinned: ``--quiet`` on
``decidability`` and ``drive``, a subcommand's own usage for its unknown options, one-line errors
naming what is wrong with a file (``trace``, ``record``, ``rules --spec``), one behaviour for an
empty transcript (``view``, ``check``, ``replay``), a value that starts with '-' (``agent
--pace``), and what an ``unparsed`` record line was."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from properties.catalogue import RULES

RULE = RULES[0].id
"""Any rule (named through the catalogue: these tests are about the command line, not a rule)."""


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: the usage, then one error line
        code = exc.code  # type: ignore[assignment]
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def _error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of a command that must refuse ``argv`` with exit 2."""
    code, _, err = _run(argv, capsys)
    assert code == 2, err
    lines = [line for line in err.splitlines() if line and not line.startswith(("usage:", " "))]
    assert len(lines) == 1, err
    return lines[0]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# -- 1. decidability: --quiet, and progress only on a terminal -----------------------------------


@pytest.mark.parametrize(
    ("terminal", "quiet", "shown"), [(False, False, False), (True, False, True), (True, True, False)]
)
def test_decidability_progress_only_on_a_terminal_and_never_with_quiet(
    terminal: bool,
    quiet: bool,
    shown: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from simulator.analysis import decidability as dec

    def decide_all(*args: Any, **kwargs: Any) -> tuple[list[dec.Verdict], bool]:
        args[3](f"decidability 1/1: {RULE} yes")  # the progress callback
        return [], True

    monkeypatch.setattr(dec, "decide_all", decide_all)
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    code = main(["decidability", "--rule", RULE, "--jobs", "1", *(["--quiet"] if quiet else [])])
    assert code == 0
    assert (f"acp-model decidability: decidability 1/1: {RULE} yes" in err.getvalue()) == shown


# -- 2. drive: a real --quiet; --quiet SEC still the old name of --silence ------------------------


@pytest.mark.parametrize(
    ("terminal", "quiet", "shown"), [(False, False, False), (True, False, True), (True, True, False)]
)
def test_drive_progress_only_on_a_terminal_and_never_with_quiet(
    terminal: bool,
    quiet: bool,
    shown: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As every long command: progress lines on a terminal only (a log or a pipe gets the report
    alone), none with --quiet."""
    from cli import cmd_drive

    def campaign(plan: Any, pool: Any) -> tuple[list[Any], dict[str, Any]]:
        if plan.say is not None:
            plan.say("run 1/1 (seed 0): no findings")
        return [], {}

    monkeypatch.setattr(cmd_drive, "campaign", campaign)
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    argv = ["drive", "--runs", "1", "--out", str(tmp_path), *(["--quiet"] if quiet else []), "--", "true"]
    assert main(argv) == 0
    assert "findings: none" in capsys.readouterr().out
    assert ("acp-model drive: run 1/1" in err.getvalue()) == shown


def test_drive_quiet_without_a_value_is_no_progress_with_one_the_old_silence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from cli.main import build_parser

    parser = build_parser()
    args = parser.parse_args(["drive", "--quiet", "--runs", "1", "--", "x"])
    assert (args.quiet, args.silence, args.runs) == (True, 0.05, 1)
    args = parser.parse_args(["drive", "--quiet", "0.3", "--", "x"])
    assert (args.quiet, args.silence) == (False, 0.3)
    assert "--quiet SEC is deprecated" in capsys.readouterr().err


# -- 3. an unknown option: the subcommand's help ---------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "bad"),
    [
        (["check", "--bogus", "x.ndjson"], "--bogus"),
        (["explore", "--bogus"], "--bogus"),
        (["readings", "nope"], "nope"),
    ],
)
def test_an_unknown_option_names_the_subcommands_help(
    argv: list[str], bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The subcommand's, not the top level's; one line (review51 A5: no usage block before it)."""
    code, _, err = _run(argv, capsys)
    assert code == 2
    assert err == (
        f"acp-model {argv[0]}: error: unrecognized arguments: {bad} "
        f"(acp-model {argv[0]} --help lists the options)\n"
    )


# -- 4. trace and record: what is wrong with the named file ----------------------------------------


def test_trace_out_under_a_file_says_it_is_not_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / "x.md"
    line = _error_line(["trace", "--out", str(target)], capsys)
    assert line == f"acp-model trace: {target}: cannot write ({tmp_path / 'afile'} is not a folder)"


def test_trace_between_on_a_missing_page_says_it_rewrites_an_existing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "new.md"
    line = _error_line(["trace", "--between", "--out", str(page)], capsys)
    assert line.startswith(
        f"acp-model trace: {page}: does not exist: --between rewrites the table in an existing page"
    )
    assert not page.exists()
    line = _error_line(["trace", "--between", "--out", str(tmp_path)], capsys)
    assert line.startswith(f"acp-model trace: {tmp_path}: is a folder: --between rewrites")


def test_record_out_under_a_file_says_it_is_not_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / "x.ndjson"
    line = _error_line(["record", "--out", str(target), "--", "true"], capsys)
    assert line == f"acp-model record: {target}: cannot write ({tmp_path / 'afile'} is not a folder)"


# -- 5. rules --spec: a path given that cannot be read --------------------------------------------


def test_rules_spec_given_but_missing_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.txt"
    line = _error_line(["rules", "--spec", str(missing)], capsys)
    assert line == f"acp-model rules: --spec {missing}: No such file or directory"
    assert _error_line(["rules", "--spec", str(tmp_path)], capsys).startswith(
        f"acp-model rules: --spec {tmp_path}: "
    )


def test_rules_default_spec_missing_still_degrades(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACP_MODEL_SHARED", str(tmp_path / "none"))
    code, out, err = _run(["rules"], capsys)
    assert code == 0 and RULE in out
    assert err.startswith("acp-model rules: no spec line numbers: ")


# -- 6. an empty transcript: a recording of nothing, exit 0 in view, check and replay --------------


@pytest.mark.parametrize("data", [b"", b"\n\n"])
def test_an_empty_transcript_is_exit_0_in_view_check_and_replay(
    data: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.ndjson"
    empty.write_bytes(data)
    for command in ("view", "check", "replay"):
        code, out, err = _run([command, str(empty)], capsys)
        assert code == 0, (command, err)
    code, out, err = _run(["view", str(empty)], capsys)
    assert out.startswith("no sessions\n") and "nothing to view" in err
    code, out, _ = _run(["view", "--json", str(empty)], capsys)
    assert json.loads(out) == {}


# -- 7. a value that starts with '-' -------------------------------------------------------------


def test_a_value_starting_with_a_dash_says_how_to_give_it(capsys: pytest.CaptureFixture[str]) -> None:
    line = _error_line(["agent", "--pace", "-1,5"], capsys)
    assert line == (
        "acp-model agent: error: argument --pace: expected one argument "
        "(a value that starts with '-' is given as --pace=VALUE)"
    )
    line = _error_line(["agent", "--pace=-1,5"], capsys)
    assert "not milliseconds MIN,MAX with 0 <= MIN <= MAX: '-1,5'" in line


# -- 9. a line record kept as unparsed says what it was -------------------------------------------


def test_check_says_what_an_unparsed_record_line_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rec.ndjson"
    path.write_text('{"from":"client","unparsed":"garbage\\r\\n"}\n')
    code, out, _ = _run(["check", "--json", str(path)], capsys)
    assert code == 1
    (finding,) = json.loads(out)["files"][0]["findings"]
    assert finding["rule"] == "input.not-jsonrpc"
    assert finding["explanation"] == (
        "not a JSON-RPC message: 'garbage' (a line that is not JSON, recorded as unparsed)"
    )
