"""Helpers shared by the transcript-reader, schema and ``check``/``replay`` tests.

Owns: the location of ``../shared`` (tests needing it skip with a reason when it is absent),
small monitors with known behaviour (so the checker can be tested without the real monitors),
a line builder for transcripts, a way to run the CLI in-process and capture its output, and
the state after a line of a ``check --html`` recording, rebuilt as the page's script does.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from cli import check_inputs
from cli.main import main
from properties.checking import FileReport, check_stream
from properties.engine import TABLES, Monitor, MonitorSet
from properties.monitor import on
from properties.shared import ENV, default_schema, shared_dir

REPO = Path(__file__).resolve().parents[1]
SHARED = shared_dir()  # $ACP_MODEL_SHARED, else ../shared
SCHEMA = default_schema()
BASIC_TURN = REPO / "tests" / "data" / "basic_turn.ndjson"


def schema_path() -> Path:
    """The official schema, or skip the test (with the reason) when ../shared is absent."""
    if not SCHEMA.is_file():
        pytest.skip(f"schema not found at {SCHEMA} (../shared is absent: set {ENV} to the shared folder)")
    return SCHEMA


def real_monitors_available() -> bool:
    try:
        from properties.monitors import ALL_MONITORS
    except ImportError:
        return False
    return bool(ALL_MONITORS)


def line(sender: str, message: dict[str, Any]) -> bytes:
    return json.dumps({"from": sender, "message": message}, separators=(",", ":")).encode() + b"\n"


def request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def result(rid: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": value}


def error(rid: Any, code: int = -32800, message: str = "cancelled") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def update(session: str, body: dict[str, Any]) -> dict[str, Any]:
    return notification("session/update", {"sessionId": session, "update": body})


def basic_turn(session: str = "sess_basic", rid: Any = 1, n: int = 1) -> list[bytes]:
    """The basic prompt turn of tests/data/basic_turn.ndjson, with chosen ids."""
    user, agent = f"msg_user_{n}", f"msg_agent_{n}"
    hello = {"type": "text", "text": "Hello, agent"}
    reply = {"type": "text", "text": "Hello! How can I help?"}
    s, chunk, idle = session, "agent_message_chunk", {"state": "idle", "stopReason": "end_turn"}
    return [
        line("client", request(rid, "session/prompt", {"sessionId": s, "prompt": [hello]})),
        line("agent", update(s, {"sessionUpdate": "user_message", "messageId": user, "content": [hello]})),
        line("agent", update(s, {"sessionUpdate": "state_update", "state": "running"})),
        line("agent", update(s, {"sessionUpdate": chunk, "messageId": agent, "content": reply})),
        line("agent", result(rid, {"messageId": user})),
        line("agent", update(s, {"sessionUpdate": "state_update", **idle})),
    ]


# -- monitors with known behaviour -------------------------------------------------------------


class CountingMonitor(Monitor):
    """Exercises TEST-COUNT on every message (every table's ``*`` handler); never breaches."""

    RULES = ("TEST-COUNT",)

    def _count(self, sid: Any, payload: Any, line: int, msg: dict[str, Any]) -> None:
        self._ex["TEST-COUNT"] += 1


for _table in TABLES:  # every table's ``*`` handler
    on(_table, "*")(CountingMonitor._count)


class SecondPromptMonitor(Monitor):
    """Breaches TEST-ONE-PROMPT on the second session/prompt it ever sees (so a fresh
    MonitorSet per file is observable), and leaves an obligation open at the end."""

    RULES = ("TEST-ONE-PROMPT",)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.prompts = 0
        self.last_session: str | None = None

    @on("client-request", "session/prompt")
    def _prompt(self, sid: str | None, params: dict[str, Any], line: int, msg: dict[str, Any]) -> None:
        self._ex["TEST-ONE-PROMPT"] += 1
        self.prompts += 1
        self.last_session = sid
        if self.prompts == 2:
            self.breach("TEST-ONE-PROMPT", line, self.last_session, "a second prompt", msg)

    def at_end(self, quiescent: bool) -> None:
        if self.prompts:
            self.eventually("TEST-ONE-PROMPT", quiescent, None, self.last_session, "prompts were sent")


def should_rule() -> str:
    """A catalogued rule at level SHOULD (so warnings can be produced)."""
    from properties.catalogue import RULES

    return next(rule.id for rule in RULES if rule.level == "SHOULD")


class WarningMonitor(Monitor):
    """Breaches a catalogued SHOULD rule on every response."""

    RULES = ()

    @on("agent-response", "*")
    @on("client-response", "*")
    def _answer(self, sid: Any, request: Any, line: int, msg: dict[str, Any]) -> None:
        if "result" in msg:
            self.breach(should_rule(), line, None, "a response was seen", msg)


def use_monitors(monkeypatch: pytest.MonkeyPatch, *monitors: type[Monitor]) -> None:
    """Make ``check``/``replay`` use these monitors instead of all of them."""
    monkeypatch.setattr(check_inputs, "new_monitor_set", lambda: MonitorSet(list(monitors)))


def run_cli(argv: Sequence[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    """Run ``acp-model`` in-process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), _stdin(stdin):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code) if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


class _FakeStdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


@contextmanager
def _stdin(data: bytes | None) -> Iterator[None]:
    if data is None:
        yield
        return
    saved = sys.stdin
    sys.stdin = _FakeStdin(data)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdin = saved


def iter_items(data: bytes, max_line_bytes: int | None = None) -> Iterator[Any]:
    from properties.transcript import read_transcript

    if max_line_bytes is None:
        return read_transcript(io.BytesIO(data))
    return read_transcript(io.BytesIO(data), max_line_bytes)


Line = tuple[str, dict[str, Any]]


def rule_lines(lines: Sequence[Line], **options: Any) -> list[tuple[str, int]]:
    """(rule, line) of every finding above information that a monitor set with ``options`` makes
    of ``lines`` (a transcript cut short: open obligations stay information)."""
    ms = MonitorSet(**options)
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=False)
    return [(f.rule, f.line) for f in ms.findings if f.kind == "rule" and f.level != "info"]


def check_lines(lines: Sequence[Line], complete: bool = False, **readings: str) -> FileReport:
    """``acp-model check`` of ``lines`` (``complete``: judged as a complete transcript), under the
    readings given as keyword arguments (``user_message_deadline="eventually"``)."""
    ms = MonitorSet(readings={k.replace("_", "-"): v for k, v in readings.items()})
    data = b"".join(json.dumps({"from": s, "message": m}).encode() + b"\n" for s, m in lines)
    return check_stream(io.BytesIO(data), "t.ndjson", monitors=ms, complete=complete)


def errors(report: FileReport) -> list[tuple[str, int | None]]:
    """(rule, line) of a report's error findings."""
    return [(f.rule, f.line) for f in report.findings if f.severity == "error"]


def state_after(rec: Any, index: int) -> tuple[dict[str, str], dict[str, str]]:
    """(machine rows, client view rows) after message ``index`` (-1: before any) of a
    ``diagrams.html.record.Recording``, rebuilt from its deltas as the page's script rebuilds them."""
    machines: dict[str, str] = {}
    views: dict[str, str] = {}
    for i in range(index + 1):
        for rows, changes in ((machines, rec.machines[i]), (views, rec.views[i])):
            for key, value in changes:
                if value is None:
                    rows.pop(key, None)
                else:
                    rows[key] = value
    return machines, views
