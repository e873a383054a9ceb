"""Tests of the monitors (``properties/monitors``) and of the engine's dispatch and cloning.

Every rule a monitor reports has a hand-written violating transcript (flagged with that rule at
the line where the breach becomes certain, and with nothing else) and a conforming neighbour
(accepted). Every MAY permission a monitor tolerates has a transcript exercising it that gives no
finding. Transcripts are inline lists built with ``tests/wire_dsl.py``; longer ones live in
``tests/data/mon_*.ndjson``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from properties.catalogue import RESTATED, RULES_BY_ID
from properties.engine import Monitor, MonitorSet
from properties.findings import Finding
from properties.monitor import Record, on
from properties.monitors import ALL_MONITORS
from simulator.peers import wire
from tests.wire_dsl import (
    Line,
    answer,
    ask,
    cancel,
    cancel_request,
    close,
    compaction,
    compaction_chunk,
    created,
    fail,
    initialize,
    initialized,
    item,
    new_session,
    notice,
    ok,
    permission_answer,
    prompt,
    resume,
    say,
    session_message,
    state,
    subagent,
    terminal,
    text,
    tool,
    tool_chunk,
    update,
    usage,
    user,
)

DATA = Path(__file__).resolve().parent / "data"


def run(
    lines: Sequence[Line],
    quiescent: bool = True,
    from_start: bool = False,
    readings: dict[str, str] | None = None,
) -> MonitorSet:
    ms = MonitorSet(from_start=from_start, readings=readings)
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent)
    return ms


def found(ms: MonitorSet, kind: str = "rule") -> list[tuple[str, int | None]]:
    return sorted(((f.rule, f.line) for f in ms.findings if f.kind == kind), key=repr)


def read(name: str) -> list[Line]:
    out: list[Line] = []
    for raw in (DATA / name).read_text(encoding="utf-8").splitlines():
        obj = json.loads(raw)
        out.append((obj["from"], obj["message"]))
    return out


# A normal turn in session s1: prompt 1, running, its user message, output, answer, idle.
def turn(rid: int = 1, mid: str = "u1", out: str = "a1", sid: str = "s1") -> list[Line]:
    return [
        prompt(rid, sid),
        state("running", sid),
        user(mid, sid),
        say(out, sid),
        answer(rid, mid),
        state("idle", sid, stop="end_turn"),
    ]


@dataclass
class Case:
    name: str
    lines: list[Line]
    expect: list[tuple[str, int | None]] = field(default_factory=list)
    quiescent: bool = True
    from_start: bool = False
    readings: dict[str, str] = field(default_factory=dict)
    """Readings in force (``properties.readings``) other than the defaults."""


def elicit(rid: str, mode: str) -> Line:
    return ("agent", wire.elicitation_create(rid, "s1", mode, f"{rid}_url"))


def elicit_answer(rid: str, action: str) -> Line:
    return ("client", wire.elicitation_answer(rid, action))


def elicit_complete(rid: str) -> Line:
    return ("agent", wire.elicitation_complete(f"{rid}_url"))


def cancelled_elicitation() -> list[Line]:
    """A turn blocked on an elicitation, cancelled: the idle comes without its answer."""
    return [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        elicit("e1", "form"),
        state("requires_action"),
        cancel(),
        state("idle", stop="cancelled"),
    ]


def withdrawn_elicitation() -> list[Line]:
    """``cancelled_elicitation`` with the Agent's $/cancel_request of e1 just before its idle."""
    lines = cancelled_elicitation()
    return [*lines[:-1], cancel_request("e1", by="agent"), lines[-1]]


# -- violating transcripts (each flags exactly the expected findings) ----------------------------
_IMAGE_TURN = [
    new_session("n"),
    created("n"),
    prompt(1, content=[{"type": "image", "mimeType": "image/png", "data": "AA=="}]),
    state("running"),
    user("u1"),
    answer(1, "u1"),
    state("idle", stop="end_turn"),
]
"""A turn whose prompt carries image content, after the initialize lines a case chooses."""

VIOLATIONS: list[Case] = [
    # elicitation (model.elicitation, properties.monitors.tools)
    Case(
        "EX-01 a URL elicitation completed a second time",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            elicit("e1", "url"),
            elicit_complete("e1"),  # (before the accept: the two may cross on the wire)
            elicit_answer("e1", "accept"),
            elicit_complete("e1"),
        ],
        [("EX-01", 8)],
        quiescent=False,
    ),
    Case(
        "CANCEL-19 an elicitation of cancelled work never withdrawn",
        cancelled_elicitation(),
        [("CANCEL-19", 8)],
    ),
    Case(
        "TOOL-07 an elicitation in a mode the Client did not advertise",
        [
            ("client", wire.initialize("i", elicitation=("form",))),
            ("agent", wire.initialized("i")),
            new_session("n"),
            created("n"),
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            elicit("e1", "url"),
        ],
        [("TOOL-07", 9)],
        quiescent=False,
    ),
    Case(
        "ACTIVE-02 a later prompt inserted ahead of one never inserted (reading receipt-order)",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            prompt(2),
            prompt(3),
            user("u3"),
            answer(3, "u3"),
            cancel(),
            fail(2, -32800),
            state("idle", stop="cancelled"),
        ],
        [("ACTIVE-02", 10)],
        readings={"prompt-ahead-of-held": "receipt-order"},
    ),
    # prompts: insertion and answers
    Case(
        "ACC-03 error after the user message",
        [
            prompt(1),
            state("running"),
            user("u1"),
            fail(1, -32603),
            state("idle", stop="error", error={"code": -32603, "message": "x"}),
        ],
        [("ACC-03", 4)],
    ),
    Case(
        "ACC-03 two messages, one prompt left",
        [
            prompt(1),
            prompt(2),
            state("running"),
            user("x"),
            user("y"),
            fail(1, -32603),
            answer(2, "x"),
            state("idle", stop="end_turn"),
        ],
        [("ACC-03", 6)],
    ),
    Case(
        "REJ-02 user message for a rejected prompt",
        [prompt(1), fail(1, -32602), user("u1")],
        [("REJ-02", 3)],
        readings={"unaccounted-user-message": "prompt-only"},
    ),
    Case(
        "ACC-06 response names another ID",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u2"),
            user("u2"),
            state("idle", stop="end_turn"),
        ],
        [("ACC-06", 4)],
    ),
    Case(
        "ACC-06 user message no response accounts for",
        [*turn(), user("u9")],
        [("ACC-06", 7)],
        readings={"unaccounted-user-message": "prompt-only"},
    ),
    Case(
        "ACC-06 user message while a prompt waits, that its answer does not claim",
        [
            *turn(),
            prompt(2),
            state("running"),
            user("u9"),
            user("u2"),
            answer(2, "u2"),
            state("idle", stop="end_turn"),
        ],
        [("ACC-06", 11)],  # (u9, named at the answer that returns u2: till then it may be prompt 2's)
    ),
    Case(
        "ACC-07 user message before its prompt",
        [*turn(), user("u9"), prompt(2), answer(2, "u9"), state("running"), state("idle", stop="end_turn")],
        [("ACC-06", 7), ("ACC-07", 9)],
        readings={"unaccounted-user-message": "prompt-only"},
    ),
    Case(
        "ACC-09 one messageId for two prompts",
        [*turn(), prompt(2), state("running"), answer(2, "u1"), state("idle", stop="end_turn")],
        [("ACC-09", 9)],
    ),
    Case(
        "ACC-04 success without messageId",
        [prompt(1), state("running"), ok(1), state("idle", stop="end_turn")],
        [("ACC-04", 3)],
    ),
    Case(
        "ACC-05 returned ID never reported",
        [prompt(1), state("running"), answer(1, "u1"), state("idle", stop="end_turn")],
        [("ACC-05", 3)],
    ),
    Case("REJ-01 prompt never answered", [prompt(1)], [("REJ-01", 1)]),
    Case(
        "ACC-01 inserted prompt never answered",
        [prompt(1), state("running"), user("u1"), state("idle", stop="end_turn")],
        [("ACC-01", 1)],
    ),
    Case(
        "CANCEL-02 covered prompt answered with another error",
        [prompt(1), cancel(), fail(1, -32603)],
        [("CANCEL-02", 3)],
    ),
    Case(
        "ACC-13 prompt pending at close answered with another error",
        [prompt(1), close(9), fail(1, -32603), ok(9)],
        [("ACC-13", 3)],
    ),
    Case(
        "ACC-13 prompt pending at close never answered (if closing prevents insertion, the request "
        "receives -32800: the close rule, not REJ-01's rejection)",
        [prompt(1), close(9), ok(9)],
        [("ACC-13", 1)],
    ),
    Case(
        "REJ-03 withdrawn prompt answered with another error",
        [prompt(1), cancel_request(1), fail(1, -32602)],
        [("REJ-03", 3)],
    ),
    Case(
        "CANCEL-16 prompt after a cancel answered -32800",
        [cancel(), prompt(1), fail(1, -32800)],
        [("CANCEL-16", 3)],
    ),
    Case(
        "USER-04 unadvertised content accepted",
        [
            initialize(0),
            initialized(0),
            *_IMAGE_TURN,
        ],
        [("USER-03", 5), ("USER-04", 8)],
    ),
    *(
        Case(
            f"USER-04 image content accepted where the capability is {value!r}, not an object (the "
            "schema's x-deserialize-default-on-error: the default, null, does not advertise)",
            [
                initialize(0),
                initialized(0, {"image": value, "audio": {}}),
                *_IMAGE_TURN,
            ],
            [("USER-03", 5), ("USER-04", 8)],
        )
        for value in (False, True, "yes", [])
    ),
    Case(
        "SDM-05 user message in a session without prompts",
        [user("task", sid="child")],
        [("SDM-05", 1)],
        readings={"unaccounted-user-message": "prompt-only"},
    ),
    Case(
        "MSGID-01 user message without messageId",
        [update("user_message", content=[text()])],
        [("MSGID-01", 1)],
    ),
    Case(
        "ACC-11 replay under a new ID",
        [new_session(0), created(0), *turn(), resume(2), user("u1-r"), state("idle"), ok(2)],
        [("ACC-11", 10)],
    ),
    Case(
        "ACC-11 with from_start",
        [*turn(), resume(2), user("u1-r"), state("idle"), ok(2)],
        [("ACC-11", 8)],
        from_start=True,
    ),
    # client
    Case(
        "INTRO-01 prompt before initialize is answered",
        [initialize(0), prompt(1), initialized(0), fail(1, -32602)],
        [("INTRO-01", 2)],
    ),
    Case(
        "INTRO-01 prompt before session/resume is answered",
        [resume(7, replay=False), prompt(1), state("idle"), ok(7), fail(1, -32602)],
        [("INTRO-01", 2)],
    ),
    Case(
        "INTRO-01 prompt for a session created later",
        [new_session(0), prompt(1), created(0), fail(1, -32602)],
        [("INTRO-01", 3)],
    ),
    Case("USER-01 empty prompt", [prompt(1, content=[]), fail(1, -32602)], [("USER-01", 1)]),
    Case(
        "USER-03 content the Agent does not accept",
        [
            initialize(0),
            initialized(0, {"image": {}}),
            new_session("n"),
            created("n"),
            prompt(1, content=[{"type": "audio", "mimeType": "audio/wav", "data": "AA=="}]),
            fail(1, -32602),
        ],
        [("USER-03", 5)],
    ),
    # foreground
    Case(
        "FG-02 output while idle, a prompt waiting (left unanswered: REJ-01)",
        [*turn(), prompt(2), say("a2", chunk=False)],
        [("FG-02", 8), ("REJ-01", 7)],
    ),
    Case(
        "FG-01 output of the Agent's own work while idle", [*turn(), say("a2", chunk=False)], [("FG-01", 7)]
    ),
    Case(
        "FG-02 output while idle of a prompt held through the last idle and accepted after it",
        [
            prompt(1),
            state("running"),
            user("u1"),
            prompt(2),
            say("a1"),
            answer(1, "u1"),
            state("idle", stop="end_turn"),
            answer(2, "u2"),
            user("u2"),
            say("a2"),
        ],
        [("FG-02", 10)],
    ),
    Case(
        "STATE-04 custom state instead of running",
        [
            initialize(0, None),
            initialized(0),
            new_session("n"),
            created("n"),
            prompt(1),
            state("_working"),
            user("u1"),
            say("a1"),
            answer(1, "u1"),
            state("idle", stop="end_turn"),
        ],
        [("STATE-04", 8)],
    ),
    Case(
        "INTRO-02 a second response",
        [*turn()[:-1], answer(1, "u1"), state("idle", stop="end_turn")],
        [("INTRO-02", 6)],
    ),
    Case(
        "STATE-04 custom state instead of running after requires_action",
        [
            initialize(0, None),
            initialized(0),
            new_session("n"),
            created("n"),
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            state("requires_action"),
            state("_working"),
            say("a1"),
            state("idle", stop="end_turn"),
        ],
        [("STATE-04", 11)],
    ),
    Case(
        "FG-04 output while requires_action",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            ask("p1", "t1"),
            state("requires_action"),
            say("a1"),
            state("idle", stop="end_turn"),
        ],
        [("FG-04", 7)],
    ),
    Case(
        "CANCEL-10 late accept runs the cancelled tool call",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            (
                "agent",
                {
                    "jsonrpc": "2.0",
                    "id": "e1",
                    "method": "elicitation/create",
                    "params": {"sessionId": "s1", "mode": "form", "message": "?", "toolCallId": "t1"},
                },
            ),
            state("requires_action"),
            cancel(),
            state("idle", stop="cancelled"),
            ("client", {"jsonrpc": "2.0", "id": "e1", "result": {"action": "accept"}}),
            tool("t1", "in_progress"),
        ],
        [("CANCEL-10", 11)],
    ),
    Case(
        "TRANS-05 requires_action with no request asked",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            state("requires_action"),
            state("running"),
            state("idle", stop="end_turn"),
        ],
        [("TRANS-05", 6)],
    ),
    Case(  # URL mode is an elicitation's: a permission request is resolved by its answer
        "TRANS-05 requires_action after an answered permission request that names a URL mode",
        [
            *turn()[:5],
            (
                "agent",
                {
                    "jsonrpc": "2.0",
                    "id": "p1",
                    "method": "session/request_permission",
                    "params": {"sessionId": "s1", "mode": "url", "elicitationId": "e1", "options": []},
                },
            ),
            ("client", {"jsonrpc": "2.0", "id": "p1", "result": {"action": "accept"}}),
            state("idle", stop="end_turn"),
            state("running"),
            state("requires_action"),
            state("running"),
            state("idle", stop="end_turn"),
        ],
        [("TRANS-05", 11)],
    ),
    Case(  # first seen in the resume window: its later updates there are live
        "TOOL-04 by a tool call first seen in a resume window",
        [
            *turn(),
            resume(7),
            tool("t1", "pending"),
            ask("p1", "t1"),
            permission_answer("p1", "allow"),
            tool("t1", "completed"),
            state("idle"),
            ok(7),
        ],
        [("TOOL-04", 11)],
    ),
    Case(  # a content chunk named it before the window, but no status did: first reported in it
        "TOOL-04 by a tool call a chunk named before the resume window",
        read("mon_resume_window_chunk.ndjson"),
        [("FG-05", 5), ("TOOL-04", 9)],
    ),
    Case("FG-05 never idle", [prompt(1), state("running"), user("u1"), answer(1, "u1")], [("FG-05", 2)]),
    Case(
        "CANCEL-11 never idle after cancel",
        [prompt(1), state("running"), user("u1"), answer(1, "u1"), cancel()],
        [("CANCEL-11", 2)],
    ),
    Case(
        "CANCEL-11 close without the idle",
        [prompt(1), state("running"), user("u1"), answer(1, "u1"), close(5), ok(5)],
        [("CANCEL-11", 6)],
    ),
    Case(
        "TRANS-04 cancellation confirmed with end_turn",
        [*turn()[:-1], cancel(), state("idle", stop="end_turn")],
        [("TRANS-04", 7)],
    ),
    Case(
        "CANCEL-12 cancellation reported as error",
        [*turn()[:-1], cancel(), state("idle", stop="error", error={"code": -32603, "message": "aborted"})],
        [("CANCEL-12", 7)],
    ),
    Case(
        "STOP-03 custom stop reason without underscore",
        [*turn()[:-1], state("idle", stop="paused")],
        [("STOP-03", 6)],
    ),
    Case(
        "FAIL-03 error that is no error object",
        [*turn()[:-1], state("idle", stop="error", error="boom")],
        [("FAIL-03", 6)],
    ),
    Case("DONE-03 output of ended work after idle", [*turn(), say("a1")], [("DONE-03", 7)]),
    Case(
        "CANCEL-14 output after the cancellation idle",
        [*turn()[:-1], cancel(), state("idle", stop="cancelled"), say("a1")],
        [("CANCEL-14", 8)],
    ),
    Case(
        "BOUND-02 accepted prompt with no active state",
        [prompt(1), user("u1"), answer(1, "u1")],
        [("BOUND-02", 3)],
    ),
    Case(
        "MSGID-01 agent message without messageId",
        [prompt(1), state("running"), update("agent_message_chunk", content=text())],
        [("FG-05", 2), ("MSGID-01", 3), ("REJ-01", 1)],
    ),
    # tools
    Case(
        "BG-05 completed tool call reopened",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            tool("t1", "completed"),
            tool("t1", "in_progress"),
            state("idle", stop="end_turn"),
        ],
        [("BG-05", 7)],
    ),
    Case(
        "FG-04 tool runs while requires_action",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            ask("p1", "t1"),
            state("requires_action"),
            permission_answer("p1", "allow"),
            tool("t1", "in_progress"),
            tool("t1", "completed"),
            state("idle", stop="end_turn"),
        ],
        [("FG-04", 9)],
    ),
    Case(
        "TOOL-04 granted tool completes without in_progress",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            ask("p1", "t1"),
            state("requires_action"),
            permission_answer("p1", "allow"),
            state("running"),
            tool("t1", "completed"),
            state("idle", stop="end_turn"),
        ],
        [("TOOL-04", 10)],
    ),
    Case(
        "FAIL-04 unfinished tool call at the error idle",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "in_progress"),
            state("idle", stop="error", error={"code": 1, "message": "x"}),
        ],
        [("FAIL-04", 6)],
    ),
    Case(
        "CANCEL-17 unfinished tool call at the idle confirming a cancellation",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "in_progress"),
            cancel(),
            state("idle", stop="cancelled"),
        ],
        [("CANCEL-17", 7)],
    ),
    Case(
        "CANCEL-07 permission request never withdrawn",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            ask("p1", "t1"),
            state("requires_action"),
            cancel(),
            tool("t1", "cancelled"),
            state("idle", stop="cancelled"),
        ],
        [("CANCEL-07", 10)],
    ),
    # background
    Case("BG-07 background dropped after a list", [state("idle", bg=[]), state("idle")], [("BG-07", 2)]),
    Case(
        "BG-10 listed before announced",
        [state("idle", bg=[item("terminal", "T")]), terminal("T")],
        [("BG-10", 1)],
        from_start=True,
    ),
    Case(
        "BG-10 listed before announced in a session created in view",
        [new_session(0), created(0), state("idle", bg=[item("terminal", "T")]), terminal("T")],
        [("BG-10", 3)],
    ),
    Case(
        "BG-11 removed before exit",
        [terminal("T"), state("idle", bg=[item("terminal", "T")]), state("idle", bg=[])],
        [("BG-11", 3)],
    ),
    Case(
        "BG-13 tool call listed with its terminal",
        [
            terminal("T"),
            tool("t1", "in_progress", content=[{"type": "terminal", "terminalId": "T"}]),
            state("idle", bg=[item("terminal", "T"), item("tool_call", "t1")]),
            terminal("T", 0),
            tool("t1", "completed"),
            state("idle", bg=[]),
        ],
        [("BG-13", 3)],
    ),
    Case(
        "BG-17 listed twice",
        [
            terminal("T"),
            state("idle", bg=[item("terminal", "T"), item("terminal", "T")]),
            terminal("T", 0),
            state("idle", bg=[]),
        ],
        [("BG-17", 2)],
    ),
    Case(
        "BG-17 finished work newly listed",
        [terminal("T"), terminal("T", 1), state("idle", bg=[item("terminal", "T")]), state("idle", bg=[])],
        [("BG-17", 3)],
    ),
    Case(
        "BG-17 finished work still listed by a later snapshot (review47 cases 11, 12, 164)",
        [
            terminal("T"),
            tool("t1", "in_progress"),
            state("idle", bg=[item("terminal", "T"), item("tool_call", "t1")]),
            terminal("T", 0),
            tool("t1", "completed"),
            state("running", bg=[item("terminal", "T"), item("tool_call", "t1")]),
            state("running", bg=[item("terminal", "T"), item("tool_call", "t1")]),
            state("idle", bg=[]),
        ],
        [("BG-17", 6), ("BG-17", 6)],  # once per item: its state no longer follows the wire
    ),
    Case(
        "BG-09 finished item never dropped",
        [terminal("T"), state("idle", bg=[item("terminal", "T")]), terminal("T", 0)],
        [("BG-09", 3)],
    ),
    # entities
    Case(
        "ENT-01 exited terminal live again",
        [terminal("T"), terminal("T", 0), terminal("T", None), terminal("T", 0)],
        [("ENT-01", 3)],
    ),
    Case(
        "COMPACT-02 compaction_update without status",
        [compaction("c1", None), compaction("c1", "completed")],
        [("COMPACT-02", 1)],
    ),
    Case(
        "COMPACT-02 chunk without content",
        [compaction_chunk("c1", content=None), compaction("c1", "completed")],
        [("COMPACT-02", 1)],
    ),
    Case(
        "COMPACT-03 finished compaction restarted",
        [
            compaction("c1"),
            compaction("c1", "completed"),
            compaction("c1", "in_progress"),
            compaction("c1", "completed"),
        ],
        [("COMPACT-03", 3)],
    ),
    Case("COMPACT-05 compaction never ends", [compaction("c1"), compaction_chunk("c1")], [("COMPACT-05", 1)]),
    Case("COMPACT-05 first seen by a chunk", [compaction_chunk("c2")], [("COMPACT-05", 1)]),
    # fields
    Case("NOTICE-02 empty title", [notice(title="")], [("NOTICE-02", 1)]),
    Case("NOTICE-02 null severity", [notice(severity=None)], [("NOTICE-02", 1)]),
    Case("USAGE-02 no size", [usage(used=10)], [("USAGE-02", 1)]),
    Case(
        "USAGE-02 cost without currency", [usage(used=10, size=100, cost={"amount": 1.5})], [("USAGE-02", 1)]
    ),
    Case(
        "SDM-01 session_message without messageId",
        [update("session_message", content=[text()])],
        [("SDM-01", 1)],
    ),
    # resume and subagents
    Case(
        "SYNC-02 resume answered before the snapshot",
        [resume(7, replay=False), ok(7), state("idle")],
        [("SYNC-02", 2)],
    ),
    Case(
        "CANCEL-06 a late approval of cancelled work runs its tool call",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            ask("p1", "t1"),
            state("requires_action"),
            cancel(),
            state("idle", stop="cancelled"),
            permission_answer("p1", "allow"),
            tool("t1", "in_progress"),
            tool("t1", "cancelled"),
        ],
        [("CANCEL-06", 11)],
    ),
    Case(
        "SYNC-02 snapshot sent before the requested replay",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            state("idle", stop="end_turn"),
            resume(7),
            state("idle", stop="end_turn"),
            user("u1"),
            ok(7),
        ],
        [("SYNC-02", 9)],
    ),
    Case(
        "STATE-01 parent never mirrors its child",
        [
            subagent("c"),
            state("running", sid="c"),
            session_message("m1", sid="c"),
            state("idle", sid="c", stop="end_turn"),
        ],
        [("STATE-01", 4)],
    ),
]


# -- conforming neighbours (no finding at quiescence) -----------------------------------------------
CONFORMING: list[Case] = [
    Case(
        "a late approval of cancelled work is ignored",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            ask("p1", "t1"),
            state("requires_action"),
            cancel(),
            tool("t1", "cancelled"),
            cancel_request("p1", by="agent"),  # (withdrawn by the idle: CANCEL-07, by-idle)
            state("idle", stop="cancelled"),
            permission_answer("p1", "allow"),
        ],
    ),
    Case("basic turn", turn()),
    Case(
        "response before the user message",
        [
            prompt(1),
            state("running"),
            answer(1, "u1"),
            user("u1", chunk=True),
            user("u1", chunk=True),
            say("a1"),
            state("idle", stop="end_turn"),
        ],
    ),
    Case(
        "idle before the response",
        [prompt(1), state("running"), user("u1"), state("idle", stop="end_turn"), answer(1, "u1")],
    ),
    Case(
        "two held prompts answered in order",
        [
            prompt(1),
            state("running"),
            prompt(2),
            user("u1"),
            user("u2"),
            answer(2, "u2"),
            answer(1, "u1"),
            state("idle", stop="end_turn"),
        ],
    ),
    Case(
        "rejected prompt, the other inserted",
        [
            prompt(1),
            prompt(2),
            fail(1, -32602),
            state("running"),
            user("u2"),
            answer(2, "u2"),
            state("idle", stop="end_turn"),
        ],
    ),
    Case(
        "cancel answers the held prompt -32800",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            prompt(2),
            cancel(),
            fail(2, -32800),
            state("idle", stop="cancelled"),
        ],
    ),
    Case(
        "inserted before the cancel still succeeds",
        [prompt(1), state("running"), cancel(), user("u1"), answer(1, "u1"), state("idle", stop="cancelled")],
    ),
    Case(
        "prompt after a cancel covered by a second cancel", [cancel(), prompt(1), cancel(), fail(1, -32800)]
    ),
    Case("withdrawn prompt", [prompt(1), cancel_request(1), fail(1, -32800)]),
    Case("close answers pending prompts", [prompt(1), close(9), fail(1, -32800), ok(9)]),
    Case(
        "advertised image content",
        [
            initialize(0),
            initialized(0, {"image": {}}),
            new_session("n"),
            created("n"),
            prompt(1, content=[{"type": "image", "mimeType": "image/png", "data": "AA=="}]),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            state("idle", stop="end_turn"),
        ],
    ),
    Case(
        "replay keeps IDs",
        [
            new_session(0),
            created(0),
            *turn(),
            resume(2),
            user("u1"),
            say("a1"),
            state("idle", stop="end_turn"),
            ok(2),
        ],
    ),
    Case(
        "unseen replay IDs when the session began before the transcript",
        [*turn(), resume(2), user("u0"), state("idle"), ok(2)],
    ),
    Case(
        "requires_action then running",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            ask("p1", "t1"),
            state("requires_action"),
            permission_answer("p1", "allow"),
            state("running"),
            tool("t1", "in_progress"),
            tool("t1", "completed"),
            say("a1"),
            state("idle", stop="end_turn"),
        ],
    ),
    Case(
        "error idle after finishing tool calls",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "in_progress"),
            tool("t1", "failed"),
            state("idle", stop="error", error={"code": -32603, "message": "model down"}),
        ],
    ),
    Case(
        "background tool survives the error idle",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("bg", "in_progress"),
            state("idle", stop="error", error={"code": 1, "message": "x"}),
            state("idle", bg=[item("tool_call", "bg")]),
            tool("bg", "completed"),
            state("idle", bg=[]),
        ],
    ),
    Case(
        "cancellation withdraws the permission request",
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            ask("p1", "t1"),
            state("requires_action"),
            cancel(),
            tool("t1", "cancelled"),
            cancel_request("p1", by="agent"),
            state("idle", stop="cancelled"),
        ],
    ),
    Case(
        "background lifecycle",
        [
            terminal("T"),
            state("idle", bg=[item("terminal", "T")]),
            terminal("T", 0),
            state("idle", bg=[]),
            state("running", bg=[]),
            state("idle", stop="end_turn", bg=[]),
        ],
    ),
    Case(
        "terminal referenced by an unlisted tool call",
        [
            terminal("T"),
            tool("t1", "in_progress", content=[{"type": "terminal", "terminalId": "T"}]),
            state("idle", bg=[item("terminal", "T")]),
            terminal("T", 0),
            tool("t1", "completed"),
            state("idle", bg=[]),
        ],
    ),
    Case(
        "compaction with progress and summary",
        [
            compaction("c1"),
            compaction_chunk("c1"),
            compaction("c1", "completed"),
            compaction("c1", "completed"),
        ],
    ),
    Case(
        "resume re-sends a finished compaction's history",
        [
            compaction("c1"),
            compaction("c1", "completed"),
            resume(7),
            compaction("c1", "in_progress"),
            compaction("c1", "completed"),
            state("idle"),
            ok(7),
        ],
    ),
    Case(
        "resume replays a finished tool call",
        [
            *turn(),
            tool("t1", "completed"),
            resume(7),
            tool("t1", "pending"),
            tool("t1", "completed"),
            state("idle"),
            ok(7),
        ],
    ),
    Case(  # t1 was first seen in the first window: the second one replays it
        "a later resume replays a tool call an earlier resume window showed first",
        [
            *turn(),
            resume(7),
            tool("t1", "pending"),
            state("idle"),
            ok(7),
            resume(8),
            ask("p1", "t1"),
            permission_answer("p1", "allow"),
            tool("t1", "completed"),
            state("idle"),
            ok(8),
        ],
    ),
    Case(
        "notice, usage and session messages",
        [
            notice(),
            usage(used=1, size=2, cost={"amount": 0.1, "currency": "USD"}),
            usage(used=1, size=2, cost=None),
            session_message("m1"),
        ],
    ),
    Case(
        "resume with the snapshot",
        [resume(7, replay=False), state("running"), ok(7), state("idle", stop="end_turn")],
    ),
    Case(
        "parent mirrors its child",
        [
            subagent("c"),
            state("running", sid="c"),
            subagent("c", state={"state": "running"}),
            state("idle", sid="c", stop="end_turn"),
            subagent("c", state={"state": "idle"}),
        ],
    ),
    Case(
        "two sessions interleaved",
        [a for pair in zip(turn(1, "u1", "a1", "s1"), turn(2, "u2", "a2", "s2"), strict=True) for a in pair],
    ),
    Case(
        "same ID for a thought and a message",
        [
            prompt(1),
            state("running"),
            user("m"),
            say("m", thought=True),
            say("m"),
            answer(1, "m"),
            state("idle", stop="end_turn"),
        ],
    ),
    Case("custom stop reason with underscore", [*turn()[:-1], state("idle", stop="_paused")]),
    Case(
        "running background work kept listed by later snapshots",
        [
            terminal("T"),
            state("idle", bg=[item("terminal", "T")]),
            state("idle", bg=[item("terminal", "T")]),
            terminal("T", 0),
            state("idle", bg=[]),
        ],
    ),
    Case(
        "a repeated idle with another stop reason is a snapshot, not a completion",
        [*turn(), state("idle", stop="max_tokens"), state("idle", stop="_later")],
    ),
    Case(
        "unknown methods and custom updates",
        [
            ("client", {"jsonrpc": "2.0", "method": "_x/ping", "params": {}}),
            update("_custom_thing", foo=1),
            *turn(),
        ],
    ),
]


@pytest.mark.parametrize("case", VIOLATIONS, ids=lambda c: c.name)
def test_violation_is_flagged_with_rule_and_line(case: Case) -> None:
    ms = run(case.lines, case.quiescent, case.from_start, case.readings)
    assert found(ms) == sorted(case.expect, key=repr)


@pytest.mark.parametrize("case", CONFORMING, ids=lambda c: c.name)
def test_conforming_transcript_is_accepted(case: Case) -> None:
    ms = run(case.lines, quiescent=True)
    assert found(ms) == []
    assert found(ms, "open") == []


SUSPECTED = {"FG-06", "ACTIVE-03", "FAIL-03"}
"""Rules whose breach a monitor can only suspect (kind ``suspect``): their cases are the tests
test_an_ending_idle_without_stop_reason_is_a_suspicion and its neighbours."""


def test_every_reported_rule_has_a_violating_case() -> None:
    reported = {rule for case in VIOLATIONS for rule, _ in case.expect} | SUSPECTED
    grouped = {rule for ids in RESTATED.values() for rule in ids}
    for cls in ALL_MONITORS:
        for rule in cls.RULES:
            assert rule in RULES_BY_ID, (cls.__name__, rule)
            if rule in grouped:
                group = next(ids for ids in RESTATED.values() if rule in ids)
                assert reported & set(group), (cls.__name__, rule)
            else:
                assert rule in reported, (cls.__name__, rule)


@pytest.mark.parametrize("case", VIOLATIONS + CONFORMING, ids=lambda c: c.name)
def test_restated_groups_are_exercised_together(case: Case) -> None:
    ms = run(case.lines, case.quiescent, case.from_start, case.readings)
    for ids in RESTATED.values():
        judged = [i for i in ids if any(i in c.RULES for c in ALL_MONITORS)]
        if any(ms.exercised[i] for i in judged):
            assert all(ms.exercised[i] for i in judged), (ids, {i: ms.exercised[i] for i in ids})


def test_eventually_rules_are_open_at_end_of_input() -> None:
    ms = run([prompt(1), state("running"), user("u1"), answer(1, "u1")], quiescent=False)
    assert found(ms) == []
    assert found(ms, "open") == [("FG-05", 2)]
    assert all(f.severity == "info" for f in ms.findings)


def test_levels_map_to_severities() -> None:
    ms = run([*turn()[:-1], state("idle")])
    (finding,) = ms.findings
    assert (finding.rule, finding.level, finding.severity) == ("FG-06", "SHOULD", "warning")
    ms = run([*turn()[:-1], state("idle", stop="paused")])
    assert [f.severity for f in ms.findings] == ["error"]


def test_finding_names_session_and_message() -> None:
    lines = [
        a for pair in zip(turn(1, "u1", "a1", "s1"), turn(2, "u2", "a2", "s2"), strict=True) for a in pair
    ]
    lines.append(say("late", sid="s2"))
    ms = run(lines)
    (finding,) = ms.findings
    assert (finding.rule, finding.session, finding.line) == ("FG-01", "s2", 13)  # no prompt waits
    assert finding.message is lines[-1][1]
    assert "late" in finding.explanation


def test_flagged_once_per_stretch() -> None:
    ms = run([*turn(), say("a2"), say("a3"), say("a2")])
    assert found(ms) == [("FG-01", 7)]


# -- permissions (MAY) are tolerated -----------------------------------------------------------------
TOLERATED: dict[str, list[Line]] = {
    "USER-02": [prompt(1, content=[]), fail(1, -32602)],
    "ACTIVE-01": [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        prompt(2),
        ask("p1", "t1"),
        state("requires_action"),
        prompt(3),
        state("running"),
        user("u2"),
        user("u3"),
        answer(2, "u2"),
        answer(3, "u3"),
        state("idle", stop="end_turn"),
    ],
    "CANCEL-01": [cancel(), *turn(), cancel(), cancel()],
    "CANCEL-08": [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        tool("t1", "pending"),
        ask("p1", "t1"),
        state("requires_action"),
        cancel(),
        permission_answer("p1", None),
        tool("t1", "cancelled"),
        state("idle", stop="cancelled"),
    ],
    "DONE-04": [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        tool("t1", "pending"),
        ask("p1", "t1"),
        state("requires_action"),
        tool("t1", "cancelled"),
        state("idle", stop="refusal"),
        permission_answer("p1", "deny"),
    ],
    "TRANS-01": [
        prompt(1),
        state("running"),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        state("idle", stop="end_turn"),
        state("idle", stop="end_turn"),
        state("idle"),
    ],
    "STATE-03": [
        *turn(),
        terminal("T"),
        state("idle", bg=[item("terminal", "T")]),
        tool("w", "in_progress"),
        notice(),
        usage(used=1, size=2),
        compaction("c1", "completed"),
        terminal("T", 0),
        state("idle", bg=[]),
        tool("w", "completed"),
    ],
    "CANCEL-13": [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        tool("t1", "in_progress"),
        cancel(),
        say("a1"),
        tool_chunk("t1"),
        tool("t1", "cancelled"),
        state("idle", stop="cancelled"),
    ],
    "OUT-03": [
        prompt(1),
        state("running"),
        user("u1"),
        say("a1"),
        tool("t1", "in_progress"),
        say("a1"),
        tool("t1", "completed"),
        say("a2", chunk=False),
        answer(1, "u1"),
        state("idle", stop="end_turn"),
    ],
    "TOOL-01": [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        tool("t1", "pending"),
        ask("p1", "t1"),
        state("requires_action"),
        permission_answer("p1", "deny"),
        state("running"),
        tool("t1", "failed"),
        state("idle", stop="end_turn"),
    ],
    "TOOL-05": [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        tool("t1", "in_progress"),
        tool_chunk("t1"),
        tool("t1", "in_progress", title="50%"),
        tool_chunk("t1"),
        tool("t1", "completed"),
        state("idle", stop="end_turn"),
    ],
    "BG-04": [
        *turn(),
        tool("w", "pending", title="Scheduled wakeup"),
        state("idle", bg=[item("tool_call", "w")]),
        tool("w", "in_progress"),
        tool("w", "completed"),
        state("idle", bg=[]),
    ],
    "CANCEL-03": [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        tool("w", "in_progress"),
        cancel(),
        tool("w", "cancelled"),
        state("idle", stop="cancelled"),
    ],
    "COMPACT-01": [compaction("c1", "completed")],
    # (the withdrawal before the cancelled idle, as permission-withdrawal-deadline=by-idle asks)
    "EX-02": [*withdrawn_elicitation(), elicit_answer("e1", "accept")],
    "CANCEL-20": [*withdrawn_elicitation(), elicit_answer("e1", "cancel")],
    "NOTICE-01": [notice(), *turn(), notice("warning", "Rate limited"), notice("_custom", "Hi")],
    "USAGE-01": [
        usage(used=1, size=10),
        *turn(),
        usage(used=5, size=10, cost={"amount": 1, "currency": "credits"}),
    ],
}


def test_every_tolerated_permission_has_a_transcript() -> None:
    tolerated = {rule for cls in ALL_MONITORS for rule in cls.TOLERATES}
    assert tolerated == set(TOLERATED)
    for rule in tolerated:
        assert RULES_BY_ID[rule].level == "MAY", rule
    may_monitor = {r.id for r in RULES_BY_ID.values() if r.level == "MAY" and r.check == "monitor"}
    assert may_monitor <= tolerated


# what the transcript of a permission breaks on the other side (the Client's empty prompt)
OTHER_SIDE: dict[str, list[tuple[str, int | None]]] = {"USER-02": [("USER-01", 1)]}


@pytest.mark.parametrize("rule", sorted(TOLERATED))
def test_permission_gives_no_finding(rule: str) -> None:
    ms = run(TOLERATED[rule])
    assert found(ms) == OTHER_SIDE.get(rule, []) and found(ms, "open") == []
    assert ms.exercised  # the transcript did reach the monitors


# -- hand-written transcript files -------------------------------------------------------------------
def test_conforming_transcript_file() -> None:
    ms = run(read("mon_conforming.ndjson"))
    assert ms.findings == []
    assert len({f"{r}" for r in ms.exercised}) > 40


def test_violations_transcript_file() -> None:
    ms = run(read("mon_violations.ndjson"))
    # (the terminal s1 lists at line 7 before its terminal_update may have been announced before
    # the capture: s1 is not seen from its creation, review50 N2)
    assert found(ms) == [("ACC-09", 17), ("DONE-03", 14), ("TRANS-04", 13)]
    sessions = {f.rule: f.session for f in ms.findings}
    assert sessions == {"ACC-09": "s2", "DONE-03": "s1", "TRANS-04": "s2"}
    assert found(run(read("mon_violations.ndjson"), from_start=True))[1] == ("BG-10", 7)


# -- engine ------------------------------------------------------------------------------------------
def test_clone_evolves_independently() -> None:
    lines = turn()
    ms = MonitorSet()
    for n, (sender, msg) in enumerate(lines[:3], 1):
        ms.feed(sender, msg, n)
    twin = ms.clone()
    assert twin.state_key() == ms.state_key()
    for n, (sender, msg) in enumerate(lines[3:], 4):
        ms.feed(sender, msg, n)
    assert twin.state_key() != ms.state_key()
    # the twin takes another path: an error after insertion
    assert [f.rule for f in twin.feed(*fail(1, -32603), 4)] == ["ACC-03"]
    assert ms.findings == []
    assert twin.exercised["ACC-03"] == 1 and ms.exercised["ACC-03"] == 0
    ms.finish(True)
    assert ms.findings == []


def test_state_key_ignores_counters_but_not_obligations() -> None:
    a = run(turn(), quiescent=False)
    b = run([*turn(), *turn(2, "u2", "a2")], quiescent=False)
    c = run([*turn(), prompt(2)], quiescent=False)
    assert hash(a.state_key()) == hash(a.clone().state_key())
    assert a.state_key() != c.state_key()
    assert b.state_key() != c.state_key()


def test_clone_shares_no_container_or_record() -> None:
    """The one copying rule (``properties.monitor.copied``): a clone of every monitor holds its
    own copy of each container and per-session record (and of each record's containers), so
    feeding the clone can never change the original."""
    ms = run([*turn(), *turn(2, "u2", "a2")], quiescent=False)
    twin = ms.clone()
    copied = 0
    for mon, other in zip(ms.monitors, twin.monitors, strict=True):
        for name, value in vars(mon).items():
            if name in ("_owner", "_ex", "_gx") or isinstance(value, Monitor):
                continue
            theirs = vars(other)[name]
            if isinstance(value, dict | set | list):
                assert theirs is not value, (type(mon).__name__, name)
                copied += 1
            for key, record in value.items() if isinstance(value, dict) else ():
                if isinstance(record, Record):
                    assert theirs[key] is not record
                    for slot in type(record).__slots__:
                        mine = getattr(record, slot)
                        if isinstance(mine, dict | set | list):
                            assert getattr(theirs[key], slot) is not mine, (type(mon).__name__, slot)
                            copied += 1
    assert copied > 25  # (the run made records in several monitors)


def test_clone_of_a_plain_monitor_copies_its_containers() -> None:
    class Counting(Monitor):
        RULES = ("ACC-01",)

        def __init__(self, owner: MonitorSet) -> None:
            super().__init__(owner)
            self.seen: list[int] = []

        @on("client-request", "*")
        def _asked(self, sid: Any, params: Any, line: int, msg: dict[str, Any]) -> None:
            self.seen.append(line)

        def state_key(self) -> Any:
            return tuple(self.seen)

    ms = MonitorSet([Counting])
    ms.feed(*prompt(1), 1)
    twin = ms.clone()
    twin.feed(*prompt(2), 2)
    assert ms.get(Counting).seen == [1] and twin.get(Counting).seen == [1, 2]
    assert ms.state_key() != twin.state_key()


def test_required_context_is_shared_and_dispatched_last() -> None:
    from properties.monitors.facts import Facts
    from properties.monitors.lifecycle import ForegroundMonitor
    from properties.monitors.prompts import PromptMonitor

    ms = MonitorSet([PromptMonitor, ForegroundMonitor])
    assert isinstance(ms.monitors[-1], Facts) and len(ms.monitors) == 3
    assert ms.get(PromptMonitor).facts is ms.get(ForegroundMonitor).facts
    twin = ms.clone()
    assert twin.get(PromptMonitor).facts is twin.get(Facts) is not ms.get(Facts)


def test_malformed_messages_never_raise() -> None:
    rng = random.Random(7)
    values: list[Any] = [None, 1, "x", [], {}, [1], {"a": 1}, True, 1.5, ["s1"], {"sessionUpdate": []}]
    keys = [
        "method",
        "params",
        "id",
        "result",
        "error",
        "sessionId",
        "update",
        "sessionUpdate",
        "state",
        "messageId",
        "background",
        "toolCallId",
        "status",
        "requestId",
        "prompt",
        "stopReason",
    ]
    methods = [
        "session/update",
        "session/prompt",
        "session/cancel",
        "$/cancel_request",
        "session/close",
        "session/resume",
        "initialize",
        "session/new",
        "session/request_permission",
        None,
    ]
    ms = MonitorSet()
    lines = read("mon_conforming.ndjson")
    for n in range(3000):
        sender, msg = lines[n % len(lines)] if n % 3 == 0 else (rng.choice(["agent", "client"]), {})
        msg = json.loads(json.dumps(msg))
        if not msg or n % 3:
            msg = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 5))}
            method = rng.choice(methods)
            if method is not None:
                msg["method"] = method
            if method == "session/update" and rng.random() < 0.7:
                msg["params"] = {
                    "sessionId": rng.choice(["s1", "s2", 3]),
                    "update": {
                        k: rng.choice([*values, "state_update", "idle", "running", "tool_call_update"])
                        for k in rng.sample(keys, rng.randint(0, 6))
                    },
                }
                msg["params"]["update"]["sessionUpdate"] = rng.choice(
                    [
                        "state_update",
                        "tool_call_update",
                        "agent_message_chunk",
                        "user_message",
                        "terminal_update",
                        "compaction_update",
                        "notice",
                        "usage_update",
                        "subagent_update",
                        5,
                    ]
                )
        ms.feed(sender, msg, n + 1)
    ms.finish(True)
    assert all(isinstance(f, Finding) and f.rule in RULES_BY_ID for f in ms.findings)


def test_background_monitor_judges_from_the_first_background_list() -> None:
    """The first background list of a session is judged (BG-10), and a later state_update
    without one breaks BG-07."""
    ms = MonitorSet(from_start=True)
    ms.feed(*state("running"), 1)
    ms.feed(*state("idle", stop="end_turn"), 2)
    assert ms.feed(*state("idle", bg=[item("terminal", "T")]), 3)[0].rule == "BG-10"
    assert [f.rule for f in ms.feed(*state("idle"), 4)] == ["BG-07"]


def test_an_item_listed_where_the_session_history_is_out_of_view_may_have_been_announced() -> None:
    """review50 N2 (r13): "The Agent MUST send a terminal_update for a terminal ... before the
    first snapshot that lists it" ("Background work"); a resume snapshot reports the current state
    ("Initial state and synchronization": "Initial or resume snapshots report the current state
    without implying a transition"). A resumed session, or one the transcript did not see created,
    may have announced (and listed) the terminal before the transcript: no BG-10. In a session
    created in view, resumed later in the same transcript, the same snapshot is judged."""
    listed = [item("terminal", "term1")]
    resumed = [
        initialize(0), initialized(0), resume(1, replay=False), state("idle", bg=listed), ok(1),
        terminal("term1", exit_code=0), state("idle", bg=[]),
    ]  # fmt: skip
    assert found(run(resumed)) == [] and found(run(resumed), "open") == []
    replayed = [initialize(0), initialized(0), resume(1), state("idle", bg=listed), ok(1)]
    assert found(run(replayed)) == []
    mid_capture = [
        state("idle", bg=[]), state("running", bg=listed), state("idle", stop="end_turn", bg=listed),
    ]  # fmt: skip
    assert found(run(mid_capture)) == []
    in_view = [initialize(0), initialized(0), new_session(1), created(1), resume(2, replay=False)]
    assert found(run([*in_view, state("idle", bg=listed), ok(2)])) == [("BG-10", 6)]
    # a child listed unannounced by a resumed parent: its subagent_update may precede the transcript
    child = [resume(1, replay=False), state("idle", bg=[item("subagent", "s2")]), ok(1)]
    assert found(run(child, quiescent=False)) == []


def test_fail_04_is_exercised_only_where_tool_calls_were_reported() -> None:
    """An error idle ending work exercises FAIL-04 in a session that reported tool calls, and
    not in one that reported none (nothing there for the rule to require)."""
    err = {"code": 1, "message": "x"}
    base = [prompt(1), state("running"), user("u1"), answer(1, "u1")]
    without = run([*base, state("idle", stop="error", error=err)])
    with_tool = run([*base, tool("t1", "completed"), state("idle", stop="error", error=err)])
    assert without.exercised["FAIL-04"] == 0 and without.exercised["FAIL-03"] == 1
    assert with_tool.exercised["FAIL-04"] == 1
    assert not [f for f in with_tool.findings if f.kind == "rule"]


def test_a_busy_looking_refusal_is_a_suspicion_not_a_breach() -> None:
    """A well-formed prompt refused with -32600 while the session reports work: the busy-only
    rule (the prompt table's guard) is suspected, a warning; the same refusal while idle, or
    with -32602, is no suspicion."""
    busy = [prompt(1), state("running"), user("u1"), answer(1, "u1"), prompt(2), fail(2, -32600)]
    found = run(busy, quiescent=False).findings
    suspected = [(f.rule, f.line, f.kind, f.severity) for f in found if f.kind != "open"]
    assert suspected == [("ACTIVE-03", 6, "suspect", "warning")]
    idle = [*busy[:4], state("idle", stop="end_turn"), prompt(2), fail(2, -32600)]
    assert [f for f in run(idle).findings if f.kind == "suspect"] == []
    invalid = [*busy[:5], fail(2, -32602)]
    assert [f for f in run(invalid).findings if f.kind == "suspect"] == []


def test_an_ending_idle_without_stop_reason_is_a_suspicion() -> None:
    """The Agent may omit the stop reason when it cannot tell why the work stopped (Stop
    reasons), which the wire does not show: FG-06 is suspected (a warning), not proven."""
    ms = run([*turn()[:-1], state("idle")])
    assert found(ms) == [] and found(ms, "suspect") == [("FG-06", 6)]
    assert [f.severity for f in ms.findings] == ["warning"]
    assert found(run(turn()), "suspect") == []


def test_an_error_idle_without_failure_details_is_a_suspicion() -> None:
    """Failures: the error stop reason's error field is one the Agent SHOULD include, "optional
    and nullable: omission and null both mean the Agent supplied no failure details". Whether it
    had any is not on the wire: FAIL-03 is suspected (a warning), not proven."""
    for idle in (state("idle", stop="error"), state("idle", stop="error", error=None)):
        ms = run([*turn()[:-1], idle])
        assert found(ms) == [] and found(ms, "suspect") == [("FAIL-03", 6)]
    assert (
        found(run([*turn()[:-1], state("idle", stop="error", error={"code": 1, "message": "x"})]), "suspect")
        == []
    )


def test_prompts_left_unanswered_are_reported_in_receipt_order() -> None:
    """Two prompts of one JSON-RPC batch share a line: the one received first is reported first,
    whichever session was seen first (session b here)."""
    ms = MonitorSet()
    ms.feed(*prompt(1, sid="b"), 1)
    ms.feed(*fail(1, -32602), 2)
    ms.feed(*prompt(10, sid="a"), 3)  # the batch [prompt 10 of a, prompt 11 of b]
    ms.feed(*prompt(11, sid="b"), 3)
    ms.finish(True)
    unanswered = [f for f in ms.findings if f.rule == "REJ-01"]
    assert [(f.line, f.session) for f in unanswered] == [(3, "a"), (3, "b")]


@pytest.mark.parametrize("action", [["accept"], {"a": 1}, 1, None])
def test_an_elicitation_answer_with_a_malformed_action_is_taken_as_cancel(action: Any) -> None:
    """The schema's rule for an unknown answer: handle it as cancel (a list raised TypeError)."""
    base = [*turn(), elicit("e1", "form")]
    ms = run([*base, ("client", {"jsonrpc": "2.0", "id": "e1", "result": {"action": action}})])
    as_cancel = run([*base, elicit_answer("e1", "cancel")])
    assert found(ms) == found(as_cancel)


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"type": "terminal"}, [("BG-07", 6)]),  # a known type without its ID: malformed
        ({"type": "terminal", "terminalId": 7}, [("BG-07", 6)]),
        ("t1", [("BG-07", 6)]),  # not an object
        ({"type": "_future_kind", "id": "x"}, []),  # an unknown type does not invalidate the list
    ],
)
def test_a_malformed_background_list_is_no_list_for_the_checker_as_for_the_client(
    item: Any, expected: list[tuple[str, int]]
) -> None:
    """Background work: a malformed list leaves background unknown (the client view's
    ``valid_background``), so after a first list it breaks BG-07 like an omitted one; the items
    of a list with an unknown type still count."""
    lines = [*turn()[:-1], state("idle", stop="end_turn", bg=[item])]
    lines[1] = state("running", bg=[])
    assert found(run(lines)) == expected
