"""Bad input never gets a traceback: an unusable option value or file is one line on standard
error naming it, exit 2 (the fuzz of every subcommand that found these is
/work/helpers/review46/cli_fuzz.py; each test here failed before its fix)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.main import main


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of a command that must refuse ``argv`` with exit 2."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's errors: one line too (review51 A5)
        code = exc.code  # type: ignore[assignment]
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("pace", ["nan", "inf", "0,inf", "nan,1"])
def test_agent_pace_must_be_finite(pace: str, capsys: pytest.CaptureFixture[str]) -> None:
    # a pace of inf waits forever before each move; nan compares false with everything
    assert "--pace" in _usage_error(["agent", "--pace", pace], capsys)


def test_a_deeply_nested_variant_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    variant = tmp_path / "nested.toml"
    variant.write_text('title = "t"\nx = ' + "[" * 5000 + "]" * 5000 + "\n")
    line = _usage_error(["check", "--variant", str(variant), str(variant)], capsys)
    assert line == f"acp-model check: {variant}: arrays or tables nested too deeply"


def test_trace_out_empty_is_a_usage_error_not_the_default_page(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli import cmd_trace

    written: list[str] = []
    monkeypatch.setattr(cmd_trace, "write_atomic", lambda path, data: written.append(str(path)))
    assert "--out" in _usage_error(["trace", "--out", ""], capsys)
    assert written == []  # an empty --out once rewrote the project's docs/traceability.md


def test_trace_between_on_a_page_that_is_not_text_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.md"
    page.write_bytes(bytes(range(256)))
    line = _usage_error(["trace", "--between", "--out", str(page)], capsys)
    assert line == f"acp-model trace: {page}: cannot rewrite (not UTF-8 text)"


@pytest.mark.parametrize("where", ["file", "under-a-file", "stdout"])
def test_drive_out_is_checked_before_any_run(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a failing run is written into --out at the end: an unusable folder was a traceback then
    from cli import cmd_drive

    monkeypatch.setattr(cmd_drive, "campaign", lambda *a: pytest.fail("a run started"))
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    out = {"file": str(a_file), "under-a-file": str(a_file / "sub"), "stdout": "-"}[where]
    line = _usage_error(["drive", "--out", out, "--", "true"], capsys)
    assert out in line


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["diagrams", "--out", ""], "--out"),  # it drew the gallery into the current folder
        (["mutants", "--walks", "0", "--out", ""], "--out"),  # it was taken for no --out
        (["decidability", "--out", ""], "--out"),
        (["spec-report", "--out", ""], "--out"),
        (["explore", "--out", ""], "--out"),
        (["explore", "--mode", "exhaustive", "--graph", ""], "--graph"),
        (["simulate", "--out", ""], "--out"),
        (["check", "--html", "", "x.ndjson"], "--html"),
    ],
)
def test_an_empty_output_path_names_its_option(
    argv: list[str], option: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli import outputs

    # nothing may be written: the probe of a writable folder is the first step of a write
    monkeypatch.setattr(outputs.tempfile, "mkstemp", lambda **kw: pytest.fail("probed a folder"))
    assert _usage_error(argv, capsys).startswith(f"acp-model {argv[0]}: {option}: an empty path")


HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    "argv",
    [
        ["mutants", "--walks", "0", "--jobs", HUGE],
        ["explore", "--workers", HUGE],
        ["decidability", "--jobs", HUGE],
        ["drive", "--jobs", HUGE, "--", "true"],
    ],
)
def test_a_huge_jobs_count_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # past a C int, the local pool's queue raised OverflowError
    assert f"--jobs {HUGE}: must be <= 1024" in _usage_error(argv, capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["explore", "--mode", "exhaustive"],
        ["decidability"],
        ["spec-report", "--out", "OUT"],  # it ran the whole report (no budget: nan > 0 is false)
    ],
)
def test_time_budget_nan_is_a_usage_error(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert "--time-budget nan: must be > 0 seconds" in _usage_error([*argv, "--time-budget", "nan"], capsys)


@pytest.mark.parametrize("broken", ["unknown-type", "reference-loop", "unknown-type-inside"])
def test_a_schema_that_cannot_be_compiled_is_a_usage_error(
    broken: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from tests.check_support import BASIC_TURN, schema_path

    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    defs = schema["$defs"]
    name = next(k for k, v in sorted(defs.items()) if isinstance(v, dict) and "x-method" in v)
    marks = {k: v for k, v in defs[name].items() if k.startswith("x-")}
    transcript = tmp_path / "t.ndjson"
    transcript.write_text("")
    if broken == "unknown-type":
        defs[name] = {**marks, "type": "nonsense"}
    elif broken == "reference-loop":
        defs[name], defs["L"] = {**marks, "$ref": "#/$defs/L"}, {"$ref": "#/$defs/L"}
    else:  # past what the load-time probe reaches: found when a prompt is validated
        name = "PromptRequest"
        defs[name] = {**defs[name], "properties": {**defs[name]["properties"], "sessionId": {"type": "x"}}}
        transcript.write_bytes(BASIC_TURN.read_bytes())
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    line = _usage_error(["check", "--schema", str(path), str(transcript)], capsys)
    assert line.startswith(f"acp-model check: {path}: schema cannot be used (definition ")


@pytest.mark.parametrize("option", ["--timeout", "--startup", "--silence"])
@pytest.mark.parametrize("value", ["inf", "1e308", "86401"])
def test_drive_waits_are_at_most_a_day(option: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    # inf and 1e308 reached the clock: OverflowError (timestamp out of range for platform time_t)
    assert option in _usage_error(["drive", option, value, "--", "true"], capsys)


# -- nothing is lost: an interrupted write leaves no file behind ----------------------------------
def test_an_interrupt_during_the_writable_check_leaves_no_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from cli import outputs

    real_close = os.close

    def interrupted(fd: int) -> None:
        real_close(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(outputs.os, "close", interrupted)
    with pytest.raises(KeyboardInterrupt):
        outputs.check_folder(str(tmp_path / "out"), "--out")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []  # the probe file was left when Ctrl-C came here


@pytest.mark.parametrize("argv", [["check", "--json"], ["replay"], ["check", "--html", "PAGE"]])
def test_a_file_name_that_is_not_utf8_is_shown_escaped(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from tests.check_support import BASIC_TURN

    name = os.fsdecode(b"bad\xffname.ndjson")  # as Python has it in sys.argv: a lone surrogate
    (tmp_path / name).write_bytes(BASIC_TURN.read_bytes())
    page = tmp_path / "page.html"
    argv = [str(page) if a == "PAGE" else a for a in argv]
    # the report (and the page) could not be encoded: UnicodeEncodeError on a strict stdout
    assert main([*argv, str(tmp_path / name)]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")
    shown = page.read_text(encoding="utf-8") if page.exists() else out.replace("\\\\", "\\")
    assert "bad\\xffname.ndjson" in shown  # (JSON doubles the backslash)


def test_a_replay_script_nested_too_deeply_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "deep.json"
    script.write_text("[" * 100_000 + "]" * 100_000)
    line = _usage_error(["drive", "--replay", str(script), "--", "true"], capsys)
    assert line.startswith(f"acp-model drive: {script}: not JSON (maximum recursion depth exceeded")


def test_the_agent_reads_a_huge_line_in_time_linear_in_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `acp-model agent` copied and split its whole pending input at every 64 KiB read: a 50 MB
    # line took 108 s (quadratic), one pass now. CPU seconds, not wall (a loaded machine is slow
    # for both): the old loop took about 5 s of CPU for this line, the new one 0.1 s
    import os
    import time

    from simulator.harness import serve
    from simulator.peers.stdio_agent import StdioAgent

    monkeypatch.delenv(serve.LOCKSTEP, raising=False)
    line = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2,"x":"'
    source = tmp_path / "in.ndjson"
    source.write_bytes(line + b"a" * 30_000_000 + b'"}}\n')
    sink = tmp_path / "out.ndjson"
    fd_in, fd_out = os.open(source, os.O_RDONLY), os.open(sink, os.O_WRONLY | os.O_CREAT)
    started = time.process_time()
    try:
        assert serve.serve(StdioAgent(0, pace=(0.0, 0.0)), fd_in, fd_out) == 0
    finally:
        os.close(fd_in)
        os.close(fd_out)
    assert time.process_time() - started < 1.5, time.process_time() - started
    assert b'"id":1,"result"' in sink.read_bytes()


def test_an_interrupt_at_any_step_of_an_atomic_write_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a Ctrl-C between mkstemp making the file and write_atomic's try (mkstemp returning, the
    # umask and chmod) left the temporary file behind: here it comes as the file is made
    import os

    from properties import outputs

    real = os.open

    def made_then_interrupted(*args: object) -> int:
        real(*args)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(outputs.os, "open", made_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        outputs.write_atomic(tmp_path / "report.json", "{}")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


_BLOCKED_WRITE = """
import os, sys, time
from cli.main import main
def replace(src, dst):  # the temporary file is written: block before it is renamed
    print(src, flush=True)
    time.sleep(60)
os.replace = replace
raise SystemExit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("argv", [["check", "--html", "PAGE"], ["replay", "--html", "PAGE"]])
def test_a_sigterm_during_an_atomic_write_removes_its_temporary_file(argv: list[str], tmp_path: Path) -> None:
    # a SIGTERM ended the process at once (its default), leaving the hidden .NAME.XXXX file of
    # the write in progress: it is raised as Ctrl-C is, the file removed, exit 143 (128 + 15)
    import signal
    import subprocess
    import sys

    from tests.check_support import BASIC_TURN, REPO

    out = tmp_path / "out"
    out.mkdir()
    args = [str(out / "page.html") if a == "PAGE" else a for a in argv]
    proc = subprocess.Popen(
        [sys.executable, "-c", _BLOCKED_WRITE, *args, str(BASIC_TURN)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    temporary = Path(proc.stdout.readline().strip())
    assert temporary.parent == out and temporary.name.startswith(".page.html.") and temporary.exists()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err == f"acp-model {argv[0]}: terminated\n"
    assert list(out.iterdir()) == []


def test_main_gives_sigterm_back_its_default_when_it_returns() -> None:
    import signal

    from tests.check_support import BASIC_TURN

    assert main(["check", "--json", str(BASIC_TURN)]) == 0
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--bogus", "x.ndjson"],
        ["drive", "--runs", "0", "--", "true"],
        ["explore", "--seed", "x"],
        [],
    ],
)
def test_an_argparse_error_is_one_line_naming_the_help(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """No usage block before the message (README: unusable options give a one-line message)."""
    line = _usage_error(argv, capsys)
    assert line.startswith("acp-model") and "error:" in line and "--help lists the options" in line
