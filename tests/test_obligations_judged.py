"""Issue 31 item 3, "obligations are judged", checked statement by statement on small hand-made
transcripts (``tests/test_obligations.py`` has the first cases; these add the edges: other
statuses, closing as cancellation, several sessions, the levels and lines of the findings, the
live recorders).

What is owed before an idle is a MUST finding at the first line after which no continuation could
conform (the idle, for a tool call left unfinished by a confirmed cancellation; the late update
itself, for an update of ended work sent after its idle). What is owed eventually is information
at the end of an input that may go on, and a MUST finding at the last line of one declared
complete (``check --complete``; ``record`` and ``drive`` when the session was closed or the
Agent exited).

Must not know: the monitors' internals.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from properties.catalogue import RULES
from properties.checking import FileReport, check_stream
from properties.engine import MonitorSet
from tests.wire_dsl import (
    answer,
    ask,
    cancel,
    close,
    compaction,
    created,
    fail,
    initialize,
    initialized,
    item,
    new_session,
    ok,
    prompt,
    say,
    state,
    tool,
    user,
)

Line = tuple[str, dict[str, Any]]
ROOT = Path(__file__).resolve().parent.parent
LEVEL = {rule.id: rule.level for rule in RULES}


def _bytes(lines: list[Line]) -> bytes:
    return b"".join(orjson.dumps({"from": s, "message": m}) + b"\n" for s, m in lines)


def check(lines: list[Line], complete: bool = False, **readings: str) -> FileReport:
    ms = MonitorSet(readings={k.replace("_", "-"): v for k, v in readings.items()})
    return check_stream(io.BytesIO(_bytes(lines)), "t.ndjson", monitors=ms, complete=complete)


def musts(report: FileReport) -> list[tuple[str, int | None]]:
    """The MUST findings (errors of MUST / MUST NOT rules), as (rule, line)."""
    out = []
    for f in report.findings:
        if f.severity == "error":
            assert LEVEL[f.rule].startswith("MUST"), f
            out.append((f.rule, f.line))
    return out


def infos(report: FileReport) -> list[str]:
    assert all(f.severity == "info" for f in report.open)
    return sorted(f.rule for f in report.open)


TURN = [prompt(1), state("running"), user("u1"), answer(1, "u1"), say("a1")]
"""A turn under way: prompt 1 inserted as u1, running, output."""


# -- a cancelled idle that leaves a foreground tool call unfinished -----------------------------
@pytest.mark.parametrize("status", ["pending", "in_progress", "paused"])
@pytest.mark.parametrize("complete", [False, True])
def test_a_cancelled_idle_with_a_foreground_tool_call_unfinished_is_a_must_at_the_idle(
    status: str, complete: bool
) -> None:
    """Cancellation: the Agent gives the unfinished tool calls of the cancelled work their final
    status, and sends the idle confirming it after the pending updates. t1 is no background work
    (the idle's list leaves it out), so the idle (line 8) is where no continuation can conform:
    a MUST finding there, complete or not, and no information left at the end."""
    lines = [*TURN, tool("t1", status), cancel(), state("idle", stop="cancelled", bg=[])]
    report = check(lines, complete=complete)
    assert musts(report) == [("CANCEL-17", 8)]
    assert infos(report) == []
    # a final status sent later does not repair it: the finding stays at the idle
    late = check([*lines, tool("t1", "cancelled")], complete=complete)
    assert ("CANCEL-17", 8) in musts(late)


def test_a_foreground_tool_call_known_from_a_list_reported_after_it() -> None:
    """A list reported during the work (after t1's first report) without t1 says t1 is not
    background work: the idle without a list of its own (BG-07 aside: once a list was reported
    every state_update carries one) is judged by that latest list."""
    lines = [*TURN, tool("t1", "in_progress"), state("running", bg=[]), cancel()]
    report = check([*lines, state("idle", stop="cancelled", bg=[])])
    assert musts(report) == [("CANCEL-17", 9)]


def test_closing_the_session_cancels_and_owes_the_same_final_statuses() -> None:
    """Closing a session cancels its foreground work: the idle confirming it owes t1's final
    status just as after session/cancel."""
    lines = [*TURN, tool("t1", "in_progress"), close(9), state("idle", stop="cancelled", bg=[]), ok(9)]
    assert musts(check(lines)) == [("CANCEL-17", 8)]
    settled = [*TURN, tool("t1", "in_progress"), close(9), tool("t1", "cancelled")]
    assert musts(check([*settled, state("idle", stop="cancelled", bg=[]), ok(9)], complete=True)) == []


def test_the_cancel_of_one_session_owes_nothing_in_another() -> None:
    """session/cancel names one session: work of another session that ends on its own with a
    tool call still running owes nothing at its idle (its tool call may go on as background)."""
    other = [
        prompt(5, sid="s2"),
        state("running", sid="s2"),
        user("u5", sid="s2"),
        answer(5, "u5"),
        tool("t2", "in_progress", "s2"),
    ]
    lines = [*TURN, *other, cancel("s1"), state("idle", "s2", stop="end_turn", bg=[])]
    lines += [state("idle", stop="cancelled", bg=[])]
    assert musts(check(lines)) == []
    swapped = [*TURN, *other, cancel("s2"), state("idle", stop="end_turn", bg=[])]
    swapped += [state("idle", "s2", stop="cancelled", bg=[])]
    assert musts(check(swapped)) == [("CANCEL-17", 13)]


def test_a_cancel_received_while_idle_covers_no_later_work() -> None:
    """A session/prompt received after session/cancel is not cancelled by it: the work it starts
    ends with end_turn, and its tool call may still run (listed, or with no list reported)."""
    lines = [cancel(), *TURN, tool("t1", "in_progress"), state("idle", stop="end_turn")]
    assert musts(check([*lines, tool("t1", "completed")], complete=True)) == []


# -- what else is owed before the idle -----------------------------------------------------------
def test_output_of_ended_work_after_its_idle_is_a_must_at_that_update() -> None:
    """4. Report completion: the Agent MUST send any pending updates for the foreground work that
    ended before its idle. After the idle (line 6) a continuation without more output conforms,
    so the breach is certain at the late update (line 7): DONE-03; CANCEL-14 when that idle
    confirmed a cancellation."""
    done = [*TURN, state("idle", stop="end_turn")]
    assert musts(check(done, complete=True)) == []
    assert musts(check([*done, say("a1")])) == [("DONE-03", 7)]
    cancelled = [*TURN, cancel(), state("idle", stop="cancelled")]
    assert musts(check([*cancelled, say("a1")])) == [("CANCEL-14", 8)]


def test_a_tool_status_of_ended_work_after_its_idle_under_foreground_owed() -> None:
    """Under tool-updates-after-idle=foreground-owed a status change of a tool call of the ended
    work, neither listed nor embedding a listed terminal, is an update owed before the idle."""
    lines = [*TURN, tool("t1", "in_progress"), state("idle", stop="end_turn"), tool("t1", "completed")]
    assert musts(check(lines, tool_updates_after_idle="foreground-owed")) == [("DONE-03", 8)]
    assert musts(check(lines)) == []  # the default: work going on after the idle is background
    listed = [*lines[:-2], state("idle", stop="end_turn", bg=[item("tool_call", "t1")]), lines[-1]]
    assert musts(check(listed, tool_updates_after_idle="foreground-owed")) == []


@pytest.mark.parametrize("status", ["completed", "failed", "paused"])
def test_a_tool_status_after_an_idle_whose_list_left_it_out_is_done_03(status: str) -> None:
    """review50 N5. The default tool-updates-after-idle=background lets a call carry on past the
    idle as background work, but not one the idle's own concrete list leaves out: "[] means no
    background work is running" (Background work), so its later status is an update the ended
    work owed before its idle (4. Report completion). A later list that names it, or the reading
    unlisted-activity (housekeeping the Agent does not list), lets it carry on."""
    done = [*TURN, tool("t1", "in_progress"), state("idle", stop="end_turn", bg=[])]
    assert musts(check([*done, tool("t1", status)])) == [("DONE-03", 8)]
    assert musts(check([*done, tool("t1", status)], tool_updates_after_idle="unlisted-activity")) == []
    relisted = [*done, state("idle", stop="end_turn", bg=[item("tool_call", "t1")]), tool("t1", status)]
    assert musts(check(relisted)) == []
    # listed by the idle itself, or a call that idle finished: nothing owed
    listed = [*TURN, tool("t1", "in_progress"), state("idle", stop="end_turn", bg=[item("tool_call", "t1")])]
    assert musts(check([*listed, tool("t1", status)])) == []


def test_the_32800_of_a_covered_prompt_may_follow_the_idle() -> None:
    """Cancellation: the covered prompts are answered with -32800; 2. Prompt accepted: a prompt
    response has no fixed order relative to the session updates, even the idle that ends the
    work. So the answer is owed eventually, not before the idle: an answer after the idle
    conforms; none at all breaks CANCEL-02 (the cancellation's debt, not a rejection's) at the
    last line of a complete transcript."""
    covered = [*TURN, prompt(2), cancel(), state("idle", stop="cancelled", bg=[])]
    assert musts(check([*covered, fail(2, -32800)], complete=True)) == []
    assert infos(check(covered)) == ["CANCEL-02"]
    assert musts(check(covered, complete=True)) == [("CANCEL-02", 8)]


# -- what is owed eventually: --complete ---------------------------------------------------------
EVENTUALLY = {
    "unanswered prompt": ([prompt(1), state("running"), say("a1"), state("idle", stop="end_turn")], "REJ-01"),
    "start without idle": ([*TURN], "FG-05"),
    "requires_action without idle": ([*TURN[:4], ask("p1", "t1"), state("requires_action")], "FG-05"),
    "compaction without end": ([*TURN, state("idle", stop="end_turn"), compaction("c1")], "COMPACT-05"),
    "inserted message never reported": (
        [prompt(1), state("running"), answer(1, "u1"), say("a1"), state("idle", stop="end_turn")],
        "ACC-05",
    ),
    "local command without state update": (
        [prompt(1), user("u1"), answer(1, "u1"), state("idle", stop="end_turn")],
        "BOUND-02",
    ),
}


@pytest.mark.parametrize("name", list(EVENTUALLY))
def test_what_is_owed_eventually_is_information_unless_the_transcript_is_complete(name: str) -> None:
    """Without --complete the input may be cut short: an open obligation is information (exit 0).
    With it nothing can follow: a MUST finding at the last line, naming where it was owed from."""
    lines, rule = EVENTUALLY[name]
    report = check(lines)
    assert musts(report) == [] and infos(report) == [rule]
    done = check(lines, complete=True)
    assert musts(done) == [(rule, len(lines))]
    assert done.open == []
    assert "complete transcript" in done.findings[0].explanation


def test_a_local_command_through_the_cli(tmp_path: Path) -> None:
    """Work boundaries and local commands (issue 31, missed on hand-made cases): a prompt accepted
    from idle and answered end_turn with no state update in between, the transcript then ending:
    exit 0 with an information, exit 1 with a MUST at the last line under --complete."""
    from tests.check_support import run_cli

    path = tmp_path / "local.ndjson"
    lines, _ = EVENTUALLY["local command without state update"]
    path.write_bytes(_bytes(lines))
    code, out, _ = run_cli(["check", "--json", str(path)])
    assert code == 0
    body = orjson.loads(out)["files"][0]
    assert [(f["rule"], f["kind"], f["severity"]) for f in body["findings"]] == [("BOUND-02", "open", "info")]
    code, out, _ = run_cli(["check", "--complete", "--json", str(path)])
    assert code == 1
    found = orjson.loads(out)["files"][0]["findings"]
    assert [(f["rule"], f["level"], f["line"]) for f in found] == [("BOUND-02", "MUST", 4)]


# -- complete conforming runs --------------------------------------------------------------------
@pytest.mark.parametrize("transport", ["fifo", "unordered"])
def test_complete_conforming_walks_give_no_must_finding(transport: str) -> None:
    """Seeded walks of the conforming simulator (both transports), drained to quiescence: their
    transcripts are complete, and --complete finds no MUST in them (warnings are suspicions of
    SHOULDs the conforming Agent may leave, such as an idle without a stop reason)."""
    from simulator.peers.config import DEFAULT
    from simulator.peers.schedulers import random_walk

    cfg = DEFAULT.with_(transport=transport)
    for seed in range(100, 110):
        run = random_walk(seed, 60, cfg, frozenset(), None)
        assert run.world.quiescent()
        report = check_stream(io.BytesIO(_bytes(run.world.transcript)), f"seed {seed}", complete=True)
        assert musts(report) == [], seed


def test_a_cancel_under_a_custom_state_explains_the_cancelled_idle() -> None:
    """Stop reasons: cancelled means the Client chose to stop the work. A session/cancel received
    while a custom state replaced running (seed 25 of the conforming walks) is that choice; the
    work's idle saying cancelled is no suspect. Without the cancel, or with one received while
    idle before the work began, it stays a suspect of FG-06 (a warning)."""
    setup = [new_session("n"), created("n")]
    custom = [initialize(0, meta={"customStates": True}), initialized(0), *setup, *TURN, state("_reviewing")]
    end = [state("running"), state("idle", stop="cancelled")]
    assert check([*custom, cancel(), *end], complete=True).findings == []
    for lines in ([*custom, *end], [cancel(), *custom, *end]):
        found = check(lines, complete=True).findings
        assert [(f.rule, f.severity, f.line) for f in found] == [("FG-06", "warning", len(lines))]


# -- record and drive judge their recordings complete --------------------------------------------
posix = pytest.mark.skipif(os.name != "posix", reason="needs POSIX pipes")


def _agent(tmp_path: Path, on_close: str = "pass", after_prompt: str = "pass") -> list[str]:
    """A small agent: answers initialize, session/new and session/prompt (reporting the turn and
    starting a compaction it never ends, then doing ``after_prompt``), and session/close, then
    does ``on_close``. What it writes for one message it writes with one ``write`` (as
    ``acp-model agent`` writes each move), which a pipe delivers whole: a driver reads the turn
    as one batch, never stopping between its lines to send something that would cross the rest
    of the turn (a close crossing the idle would be recorded before it: TRANS-04)."""
    path = tmp_path / "agent.py"
    path.write_text(
        "import json, os, sys\n"
        "out = []\n"
        "def send(m):\n"
        "    out.append(json.dumps(m) + '\\n')\n"
        "def flush():\n"
        "    os.write(1, ''.join(out).encode()); out.clear()\n"
        "def update(u):\n"
        "    params = {'sessionId': 's1', 'update': u}\n"
        "    send({'jsonrpc': '2.0', 'method': 'session/update', 'params': params})\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        "        send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': 2}}); flush()\n"
        "    elif m.get('method') == 'session/new':\n"
        "        send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'sessionId': 's1'}}); flush()\n"
        "    elif m.get('method') == 'session/prompt':\n"
        "        update({'sessionUpdate': 'state_update', 'state': 'running'})\n"
        "        update({'sessionUpdate': 'user_message', 'messageId': 'u1', 'content': []})\n"
        "        send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'messageId': 'u1'}})\n"
        "        update({'sessionUpdate': 'compaction_update', 'compactionId': 'c1',\n"
        "                'status': 'in_progress'})\n"
        "        update({'sessionUpdate': 'state_update', 'state': 'idle', 'stopReason': 'end_turn'})\n"
        "        flush()\n"
        f"        {after_prompt}\n"
        "    elif m.get('method') == 'session/close':\n"
        "        send({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}); flush()\n"
        + "".join(f"        {part}\n" for part in on_close.splitlines())
    )
    return [sys.executable, str(path)]


def _wire(rid: Any, method: str, params: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + b"\n"


@posix
@pytest.mark.parametrize("closes", [True, False])
def test_record_judges_a_closed_session_complete(tmp_path: Path, closes: bool) -> None:
    """``record --check``: the Client leaves (its input ends) after closing the session. What a
    closed session still owes (its compaction's end: Session compaction) can no longer come: a
    MUST finding at the last line. Without the close the session may go on: information."""
    out = tmp_path / "t.ndjson"
    cli = [sys.executable, "-m", "cli", "record", "--check", "--out", str(out), "--"]
    requests = _wire(1, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]})
    if closes:
        requests += _wire(2, "session/close", {"sessionId": "s1"})
    done = subprocess.run(
        [*cli, *_agent(tmp_path, "pass")], input=requests, capture_output=True, cwd=ROOT, timeout=60
    )
    err = done.stderr.decode()
    assert "Traceback" not in err
    lines = out.read_bytes().count(b"\n")
    breach = f"t.ndjson:{lines} " in err and "COMPACT-05" in err and "complete transcript" in err
    assert breach is closes, err


GARBAGE = "sys.stdout.write('garbage\\n'); sys.stdout.flush()"
"""A line that is no JSON-RPC message: the run ends at that input finding, before any timeout
could judge the agent quiescent."""


@posix
@pytest.mark.parametrize(
    ("agent", "script", "stop"),
    [
        ({"on_close": GARBAGE}, [["prompt"], ["wait"], ["close"], ["wait"]], "finding"),
        ({"after_prompt": "sys.exit(0)"}, [["prompt"], ["wait"], ["wait"]], "agent exited"),
    ],
    ids=["session-closed", "agent-exited"],
)
def test_drive_judges_its_recording_complete(
    tmp_path: Path, agent: dict[str, str], script: list[list[Any]], stop: str
) -> None:
    """``drive``: a run that ends judges the sessions it closed as complete, and all of them when
    the Agent exited (cleanly, while connected): the compaction never ended is a MUST finding at
    the last line, not information."""
    from simulator.harness.child import ProcessPeer
    from simulator.harness.drive import Settings, run_once

    # the driver's "wait" takes the agent's next batch, its whole turn (written at once), so the
    # close comes after the idle (a close during the turn cancels the work, and the end_turn idle
    # would break TRANS-04); the silence after which the driver acts without a line leaves an
    # agent slowed by load a second (two choice points) to answer the prompt before the close
    settings = Settings(steps=len(script), timeout=5.0, silence=0.5)
    result = run_once(ProcessPeer(_agent(tmp_path, **agent)), settings, script=script)
    assert result.stop == stop, result.findings
    found = [f for f in result.findings if f.rule == "COMPACT-05"]
    assert [f.severity for f in found] == ["error"], result.findings
    assert "COMPACT-05" not in [f.rule for f in result.open]
