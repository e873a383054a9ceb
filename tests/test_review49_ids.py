"""Review 49, problems P3 and P5 (/work/helpers/review49/CASES.md).

P3: a tool call ID that runs again after its call reached a final status (an adapter that numbers
calls per turn) is on the wire either the call reopened (BG-05) or a new call under the ended
one's ID (ENT-01); the wire cannot tell them apart, so the reading ``tool-call-after-final`` says
which (``model.toolcall.after_final``), and the finding names it.

P5: a user message in a subagent's session that never received a session/prompt is the task its
parent gave it, which SDM-05 asks to report as a session_message: not the Agent's own insertion
under the default reading ``unaccounted-user-message=agent-initiated`` (``model.between``
own_user_message, ``delegated``).
"""

from __future__ import annotations

from typing import Any

from properties.engine import MonitorSet
from tests.wire_dsl import (
    Line,
    answer,
    created,
    initialize,
    initialized,
    new_session,
    prompt,
    session_message,
    state,
    subagent,
    tool,
    user,
)

OPENED = [initialize("init"), initialized("init"), new_session("new"), created("new")]

# b48: t1 completes in the first turn, and runs again in the second (line 14 below)
TWO_TURNS = [
    *OPENED,
    prompt(1),
    state("running"),
    user("u1"),
    answer(1, "u1"),
    tool("t1", "in_progress", title="a"),
    tool("t1", "completed"),
    state("idle", stop="end_turn"),
    prompt(2),
    state("running"),
    user("u2"),
    answer(2, "u2"),
    tool("t1", "in_progress", title="b"),
    tool("t1", "completed"),
    state("idle", stop="end_turn"),
]
RERUN_LINE = 16


def findings(lines: list[Line], readings: dict[str, str] | None = None) -> list[tuple[Any, ...]]:
    ms = MonitorSet(readings=readings or {})
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    return [(f.rule, f.line, f.severity, f.readings) for f in ms.findings if f.kind == "rule"]


def test_a_tool_call_run_again_in_a_later_turn_is_a_reopen_by_default_naming_the_reading() -> None:
    assert findings(TWO_TURNS) == [("BG-05", RERUN_LINE, "warning", ("tool-call-after-final",))]


def test_under_new_call_it_is_a_reused_id_an_error() -> None:
    found = findings(TWO_TURNS, {"tool-call-after-final": "new-call"})
    assert found == [("ENT-01", RERUN_LINE, "error", ("tool-call-after-final",))]


def test_a_content_chunk_of_an_ended_call_reuses_nothing_under_new_call() -> None:
    """Only a live status starts a new call: content patches an ended call in place."""
    lines = [*TWO_TURNS[: RERUN_LINE - 1], tool("t1", content=[]), tool("t1", "failed"), *TWO_TURNS[-1:]]
    assert findings(lines, {"tool-call-after-final": "new-call"}) == []


CHILD = "s2"
DELEGATED = [
    *OPENED,
    prompt(1),
    state("running", bg=[]),
    user("u1"),
    answer(1, "u1"),
    subagent(CHILD, title="x"),
]


def test_a_task_given_to_a_subagent_as_a_user_message_is_sdm05_by_default() -> None:
    lines = [*DELEGATED, user("cu1", CHILD), state("running", CHILD), state("idle", CHILD, stop="end_turn")]
    found = [f[:3] for f in findings(lines) if f[0] == "SDM-05"]
    assert found == [("SDM-05", len(DELEGATED) + 1, "warning")]
    # the same as a session-directed message, as the spec asks: nothing to report
    asked = [*DELEGATED, session_message("cm1", CHILD), state("running", CHILD)]
    assert [f for f in findings([*asked, state("idle", CHILD, stop="end_turn")]) if f[0] == "SDM-05"] == []
    # other-sources lets a user message have another source, a delegated task among them
    assert [
        f for f in findings(lines, {"unaccounted-user-message": "other-sources"}) if f[0] == "SDM-05"
    ] == []
    # a session no subagent_update names: a user message there may be the Agent's own
    alone = [*OPENED, user("cu1", CHILD), state("running", CHILD), state("idle", CHILD, stop="end_turn")]
    assert [f for f in findings(alone) if f[0] == "SDM-05"] == []
