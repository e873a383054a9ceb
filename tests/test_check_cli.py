"""Tests of ``acp-model check`` and ``acp-model replay`` (cli/cmd_check.py, cli/cmd_replay.py).

Most tests replace the monitors with small ones of known behaviour (tests/check_support.py),
so what is tested here is the command: inputs, exit codes, grouping, output formats. Tests with
the real monitors or the official schema skip with a reason when those are absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli import check_inputs
from properties import check_report
from properties.checking import DEFAULT_MAX_FINDINGS
from properties.engine import MonitorSet
from properties.shared import ENV
from tests.check_support import (
    BASIC_TURN,
    CountingMonitor,
    SecondPromptMonitor,
    WarningMonitor,
    basic_turn,
    line,
    notification,
    real_monitors_available,
    run_cli,
    schema_path,
    should_rule,
    update,
)

FILE_KEYS = {"path", "messages", "sessions", "findings"}
FINDING_KEYS = {"rule", "level", "line", "session", "explanation", "kind", "severity"}


@pytest.fixture(autouse=True)
def known_monitors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        check_inputs, "new_monitor_set", lambda: MonitorSet([CountingMonitor, SecondPromptMonitor])
    )


def write(tmp_path: Path, name: str, lines: list[bytes]) -> str:
    path = tmp_path / name
    path.write_bytes(b"".join(lines))
    return str(path)


def two_prompts(tmp_path: Path) -> str:
    return write(tmp_path, "two.ndjson", basic_turn("s1", 1, 1) + basic_turn("s2", 2, 2))


# -- exit codes and the basic turn -----------------------------------------------------------------


def test_basic_turn_passes_and_says_schema_was_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)  # set, it makes the shared schema the default
    code, out, err = run_cli(["check", str(BASIC_TURN)])
    assert (code, err) == (0, "")
    assert f"{BASIC_TURN}:" in out and "no findings" in out
    assert "6 messages on 6 lines; 1 session" in out
    assert "schema validation skipped" in out
    assert "rules exercised: 2" in out and "TEST-COUNT×6" in out


def test_breach_fails_with_file_line_session_and_shortened_message(tmp_path: Path) -> None:
    path = two_prompts(tmp_path)
    code, out, _ = run_cli(["check", path])
    assert code == 1
    assert "TEST-ONE-PROMPT (MUST, 1 finding): (not in the rule catalogue)" in out
    assert f"{path}:7 session s2 [error] a second prompt" in out
    shown = next(text for text in out.splitlines() if text.strip().startswith('{"jsonrpc"'))
    assert len(shown.strip()) <= check_report.MESSAGE_WIDTH and shown.strip().endswith("…")


def test_open_obligations_are_listed_apart_and_do_not_fail() -> None:
    code, out, _ = run_cli(["check", str(BASIC_TURN)])
    assert code == 0
    head, _, tail = out.partition("open at end of input")
    assert "prompts were sent" not in head
    assert "end session sess_basic TEST-ONE-PROMPT (MUST): prompts were sent (open at end of input)" in tail


def test_input_findings_fail_even_without_breaches(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.ndjson", [*basic_turn(), b"not json\n"])
    code, out, _ = run_cli(["check", path])
    assert code == 1
    assert f"{path}:7 [error] not valid JSON" in out


def test_crlf_alone_is_information_and_passes(tmp_path: Path) -> None:
    path = write(tmp_path, "crlf.ndjson", [x.replace(b"\n", b"\r\n") for x in basic_turn()])
    code, out, _ = run_cli(["check", path, "--json"])
    assert code == 0
    findings = json.loads(out)["files"][0]["findings"]
    assert [(f["rule"], f["severity"]) for f in findings if f["kind"] == "input"] == [("input.crlf", "info")]


def test_fail_on_should_counts_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_inputs, "new_monitor_set", lambda: MonitorSet([WarningMonitor]))
    assert run_cli(["check", str(BASIC_TURN)])[0] == 0
    code, out, _ = run_cli(["check", str(BASIC_TURN), "--fail-on", "should"])
    assert code == 1
    from properties.catalogue import RULES_BY_ID

    assert RULES_BY_ID[should_rule()].paraphrase in out
    assert "1 warning" in out


def test_each_file_gets_fresh_monitors(tmp_path: Path) -> None:
    one = write(tmp_path, "one.ndjson", basic_turn())
    code, out, _ = run_cli(["check", one, one, str(BASIC_TURN)])
    assert code == 0, out  # three single-prompt files: no file sees a second prompt
    assert "total: 3 files, 18 messages, 0 errors, 0 warnings" in out


def test_stdin(tmp_path: Path) -> None:
    code, out, _ = run_cli(["check", "-"], stdin=b"".join(basic_turn("s1", 1, 1) + basic_turn("s2", 2, 2)))
    assert code == 1 and "<stdin>:7 session s2" in out


# -- unusable inputs: exit 2, one line naming the file, nothing read --------------------------------


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["check", "{missing}"], "{missing}: no such file"),
        (["check", "{dir}"], "{dir}: is a directory"),
        (["check", "{good}", "{missing}"], "{missing}: no such file"),
        (["check", "-", "-"], "-: standard input given more than once"),
        (["check", "{good}", "--schema", "{missing}"], "{missing}: cannot read schema"),
        (["check", "{good}", "--schema", "{good}"], "{good}: schema is not valid JSON"),
        (["replay", "{missing}"], "{missing}: no such file"),
    ],
)
def test_unusable_input_is_one_line_and_exit_2(tmp_path: Path, argv: list[str], needle: str) -> None:
    names = {"missing": str(tmp_path / "missing.ndjson"), "dir": str(tmp_path), "good": str(BASIC_TURN)}
    code, out, err = run_cli([a.format(**names) for a in argv], stdin=b"")
    assert code == 2
    assert out == ""  # nothing checked before the bad input was found
    assert err.count("\n") == 1 and needle.format(**names) in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["check", "view", "replay"])
def test_closed_stdin_is_a_usage_error(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python started with standard input closed has ``sys.stdin`` None: ``-`` is unusable input,
    not a traceback (in this process; a real one: the test below)."""
    monkeypatch.setattr(sys, "stdin", None)
    code, out, err = run_cli([command, "-"])
    assert (code, out) == (2, ""), err
    assert err == f"acp-model {command}: -: standard input is closed\n"


@pytest.mark.skipif(os.name != "posix", reason="closing a child's standard input needs POSIX")
def test_closed_stdin_is_a_usage_error_in_a_real_process() -> None:
    """Started with standard input closed (``<&-``), ``-`` is unusable input, not a traceback."""
    command = "check"
    done = subprocess.run(
        [sys.executable, "-m", "cli", command, "-"],
        cwd=Path(__file__).resolve().parent.parent,
        preexec_fn=lambda: os.close(0),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "-: standard input is closed" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root can read any file")
def test_unreadable_file(tmp_path: Path) -> None:
    path = Path(write(tmp_path, "secret.ndjson", basic_turn()))
    path.chmod(0)
    code, out, err = run_cli(["check", str(path)])
    assert (code, out) == (2, "") and f"{path}: permission denied" in err


@pytest.mark.parametrize("value", ["0", "-5", "abc"])
def test_bad_max_line_bytes_is_a_usage_error(value: str) -> None:
    code, out, err = run_cli(["check", str(BASIC_TURN), "--max-line-bytes", value])
    assert code == 2 and out == "" and "--max-line-bytes" in err


def test_max_line_bytes_applies(tmp_path: Path) -> None:
    code, out, _ = run_cli(["check", str(BASIC_TURN), "--max-line-bytes", "200", "--json"])
    report = json.loads(out)["files"][0]
    too_long = [f["line"] for f in report["findings"] if f["rule"] == "input.too-long"]
    expected = [i for i, raw in enumerate(BASIC_TURN.read_bytes().splitlines(), 1) if len(raw) > 200]
    assert code == 1 and too_long == expected and expected


# -- JSON output -------------------------------------------------------------------------------------


def test_json_report_keys_and_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)  # set, it makes the shared schema the default
    path = two_prompts(tmp_path)
    code, out, _ = run_cli(["check", path, str(BASIC_TURN), "--json"])
    doc = json.loads(out)
    assert code == 1 and set(doc) == {"files", "summary", "readings"}
    first, second = doc["files"]
    assert set(first) >= FILE_KEYS
    assert (first["path"], first["messages"], first["sessions"]) == (path, 12, 2)
    assert all(set(f) >= FINDING_KEYS for f in first["findings"])
    breach = [f for f in first["findings"] if f["kind"] == "rule"]
    assert breach == [
        {"rule": "TEST-ONE-PROMPT", "level": "MUST", "kind": "rule", "severity": "error", "line": 7,
         "session": "s2", "explanation": "a second prompt", "readings": []}
    ]  # fmt: skip
    assert [f["kind"] for f in second["findings"]] == ["open"]
    assert doc["summary"]["files"] == 2 and doc["summary"]["messages"] == 18
    assert doc["summary"]["findings"] == {"error": 1, "warning": 0, "info": 2}
    assert doc["summary"]["exit_code"] == 1 and doc["summary"]["schema"] == "skipped"
    assert first["exercised"] == {"TEST-COUNT": 12, "TEST-ONE-PROMPT": 2}


def test_preserved_variants_are_counted(tmp_path: Path) -> None:
    extra = [
        line("agent", update("s1", {"sessionUpdate": "_progress"})),
        line("client", notification("_vendor/ping", {})),
    ]
    path = write(tmp_path, "custom.ndjson", basic_turn("s1") + extra)
    code, out, _ = run_cli(["check", path, "--json"])
    report = json.loads(out)["files"][0]
    assert code == 0 and report["preserved"] == {"method _vendor/ping": 1, "update _progress": 1}
    code, out, _ = run_cli(["check", path])
    assert "unknown/custom variants preserved: 2" in out and "update _progress 1" in out


def test_output_is_deterministic(tmp_path: Path) -> None:
    path = write(tmp_path, "mixed.ndjson", [*basic_turn("s1", 1, 1), b"\n", b"[]\n", *basic_turn("s2", 2, 2)])
    for argv in (["check", path], ["check", path, "--json"], ["replay", path], ["replay", path, "--json"]):
        assert run_cli(argv) == run_cli(argv)


# -- the schema option ---------------------------------------------------------------------------------


@pytest.mark.needs_shared
def test_schema_findings(tmp_path: Path) -> None:
    schema = str(schema_path())
    assert run_cli(["check", str(BASIC_TURN), "--schema", schema])[0] == 0
    lines = basic_turn()
    lines[5] = lines[5].replace(b'"end_turn"', b"5")
    path = write(tmp_path, "schema.ndjson", lines)
    code, out, _ = run_cli(["check", path, "--schema", schema])
    assert code == 1
    assert "schema.session/update (MUST, 1 finding)" in out
    assert f"{path}:6 session sess_basic [error] $.params.update.stopReason: 5 is not of type 'string'" in out
    assert "schema validated" in out
    doc = json.loads(run_cli(["check", path, "--schema", schema, "--json"])[1])
    assert doc["summary"]["schema"] == "validated"


# -- replay ----------------------------------------------------------------------------------------------


def test_replay_lists_messages_and_findings(tmp_path: Path) -> None:
    path = two_prompts(tmp_path)
    code, out, _ = run_cli(["replay", path])
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"{path}: 12 messages"
    assert lines[1].split() == ["1", "client", "session/prompt", "id=1", "session=s1"]
    assert lines[2].split() == [
        "2",
        "agent",
        "session/update",
        "user_message",
        "session=s1",
        "messageId=msg_user_1",
    ]
    assert lines[5].split() == ["5", "agent", "response", "id=1", "messageId=msg_user_1"]
    assert lines[6].split()[-2:] == ["state=idle", "stopReason=end_turn"]
    assert f"{path}:7 session s2 [error] a second prompt" in out


def test_replay_json_has_the_transcript(tmp_path: Path) -> None:
    lines = [
        *basic_turn(),
        line("agent", {"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "m"}}),
    ]
    path = write(tmp_path, "t.ndjson", lines)
    code, out, _ = run_cli(["replay", path, "--json"])
    doc = json.loads(out)
    transcript = doc["files"][0]["transcript"]
    assert code == 0 and len(transcript) == 7
    assert transcript[0] == {"line": 1, "from": "client", "kind": "request", "method": "session/prompt",
                             "id": 1, "session": "sess_basic"}  # fmt: skip
    assert transcript[5]["update"] == "state_update" and transcript[5]["stopReason"] == "end_turn"
    assert transcript[6] == {"line": 7, "from": "agent", "kind": "response", "id": None,
                             "error": {"code": -1, "message": "m"}}  # fmt: skip


def test_replay_exit_code_counts_input_findings(tmp_path: Path) -> None:
    path = write(tmp_path, "t.ndjson", [*basic_turn(), b"{oops\n"])
    code, out, _ = run_cli(["replay", path])
    assert code == 1 and "input.invalid-json" in out


# -- with the real monitors ----------------------------------------------------------------------------


@pytest.fixture
def real_monitors(monkeypatch: pytest.MonkeyPatch) -> None:
    if not real_monitors_available():
        pytest.skip("properties.monitors.ALL_MONITORS is not available yet")
    monkeypatch.setattr(check_inputs, "new_monitor_set", MonitorSet)


@pytest.mark.usefixtures("real_monitors")
def test_basic_turn_passes_the_real_monitors() -> None:
    code, out, err = run_cli(["check", str(BASIC_TURN), "--json"])
    doc = json.loads(out)
    errors = [f for f in doc["files"][0]["findings"] if f["severity"] == "error"]
    assert (code, errors, err) == (0, [], "")
    assert doc["summary"]["rules_exercised"] > 0


@pytest.mark.usefixtures("real_monitors")
def test_real_monitors_flag_a_response_without_its_user_message(tmp_path: Path) -> None:
    lines = basic_turn()
    del lines[1]  # the user_message update that reports the inserted prompt
    _, out, _ = run_cli(["check", write(tmp_path, "t.ndjson", lines), "--json"])
    findings = json.loads(out)["files"][0]["findings"]
    assert any(f["kind"] in ("rule", "open") for f in findings), findings


# -- tolerated input, nothing to judge, the cap on findings ----------------------------------------


def test_tolerated_input_is_information_and_passes(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + b"".join(basic_turn()) + b"\n\n"
    code, out, _ = run_cli(["check", write(tmp_path, "t.ndjson", [data])])
    assert code == 0
    assert "transcript line tolerated as it is (information)" in out
    assert "could not be used" not in out
    assert "findings: 0 errors, 0 warnings" in out
    assert "input.bom (info, 1 finding)" in out and "input.blank-line (info, 2 findings)" in out


def test_an_empty_input_has_nothing_to_judge(tmp_path: Path) -> None:
    path = write(tmp_path, "empty.ndjson", [])
    code, out, _ = run_cli(["check", path])
    assert code == 0 and "nothing to judge: the input holds no JSON-RPC message" in out
    code, out, _ = run_cli(["check", "--json", path])
    assert code == 0 and json.loads(out)["files"][0]["judged"] is False
    code, out, _ = run_cli(["check", "--json", str(BASIC_TURN)])
    assert json.loads(out)["files"][0]["judged"] is True


def test_max_findings_cuts_the_list_counts_the_rest_and_keeps_the_exit_code(tmp_path: Path) -> None:
    path = write(tmp_path, "junk.ndjson", [b"junk\n" * 30])
    code, out, _ = run_cli(["check", "--max-findings", "5", path])
    assert code == 1
    assert out.count("[error] not valid JSON") == 5
    assert "... 25 more findings not shown (--max-findings 5; error 25)" in out
    assert "findings: 30 errors" in out
    code, out, _ = run_cli(["check", "--json", "--max-findings", "5", path])
    report = json.loads(out)["files"][0]
    assert len(report["findings"]) == 5 and report["cut"] == {"error": 25}
    assert report["counts"]["error"] == 30
    code, out, _ = run_cli(["check", path])  # the default keeps all 30
    assert "more findings not shown" not in out and out.count("[error] not valid JSON") == 30


def test_the_default_cap_bounds_the_output_of_random_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, "noise.ndjson", [bytes(range(11, 256)) * 4 + b"\n" for _ in range(3000)])
    code, out, _ = run_cli(["check", "--json", path])
    report = json.loads(out)["files"][0]
    assert code == 1 and len(report["findings"]) == DEFAULT_MAX_FINDINGS
    assert sum(report["cut"].values()) == 3000 - DEFAULT_MAX_FINDINGS
