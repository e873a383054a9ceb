"""The stop reason of an ending idle (``properties.monitors.lifecycle``): an idle ending work with
``cancelled`` that no choice of the Client explains is a suspect of FG-06 ("Stop reasons":
cancelled means the user or Client chose to stop the work)."""

from __future__ import annotations

from properties.engine import MonitorSet
from tests.wire_dsl import (
    Line,
    answer,
    ask,
    cancel,
    close,
    fail,
    ok,
    permission_answer,
    prompt,
    say,
    state,
    tool,
    user,
)

TURN = [prompt(1), state("running"), user("u1"), answer(1, "u1")]


def suspects(lines: list[Line]) -> list[tuple[str, int | None, str]]:
    ms = MonitorSet()
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    assert [f for f in ms.findings if f.kind == "rule"] == []
    return [(f.rule, f.line, f.severity) for f in ms.findings if f.kind == "suspect"]


def test_cancelled_without_a_choice_of_the_client_is_a_suspect() -> None:
    assert suspects([*TURN, state("idle", stop="cancelled")]) == [("FG-06", 5, "warning")]


def test_a_cancel_or_a_permission_answer_explains_cancelled() -> None:
    assert suspects([*TURN, cancel(), state("idle", stop="cancelled")]) == []
    asked = [*TURN, tool("t1", "pending"), ask("p1", "t1"), state("requires_action")]
    assert suspects([*asked, permission_answer("p1", "reject"), tool("t1", "cancelled"),
                     state("idle", stop="cancelled")]) == []  # fmt: skip


def test_an_answer_in_earlier_work_explains_nothing_now() -> None:
    asked = [*TURN, tool("t1", "pending"), ask("p1", "t1"), state("requires_action")]
    earlier = [*asked, permission_answer("p1", "allow"), state("running"), tool("t1", "in_progress"),
               tool("t1", "completed"), state("idle", stop="end_turn")]  # fmt: skip
    again = [prompt(2), state("running"), user("u2"), answer(2, "u2"), state("idle", stop="cancelled")]
    assert suspects([*earlier, *again]) == [("FG-06", len(earlier) + 5, "warning")]


def test_a_cancel_reaching_a_waiting_prompt_explains_cancelled() -> None:
    """review51 F2. Cancellation: "session/cancel covers foreground work and prompts received
    before it that the Agent has not yet inserted"; a cancel received while idle, with a prompt
    waiting, may reach the work that prompt starts (the Agent may have inserted it before it read
    the cancel: "Once a message is inserted, its prompt request still succeeds"). The cancelled
    idle ending that work is the matching stop reason, no suspect. A session/close likewise, and a
    cancel after the prompt was accepted but before its work was reported."""
    assert suspects([prompt(1), cancel(), *TURN[1:], say("a1"), state("idle", stop="cancelled")]) == []
    closed = [prompt(1), close(9), *TURN[1:], state("idle", stop="cancelled"), ok(9)]
    assert suspects(closed) == []
    # accepted (inserted: "Acceptance means insertion") before the cancel, running not yet reported
    accepted = [
        prompt(1),
        answer(1, "u1"),
        cancel(),
        state("running"),
        user("u1"),
        state("idle", stop="cancelled"),
    ]
    assert suspects(accepted) == []


def test_a_cancel_reaching_no_waiting_prompt_explains_nothing() -> None:
    """The real case stays a suspect of FG-06: a cancel received while idle with no prompt waiting
    (it covers nothing: "A session/prompt received after session/cancel is not cancelled by it"),
    or while the waiting prompt was then refused (its -32800 answer: the cancel covered it, not
    the later work of another prompt)."""
    lines = [cancel(), *TURN, state("idle", stop="cancelled")]
    assert suspects(lines) == [("FG-06", len(lines), "warning")]
    second = [prompt(2), state("running"), user("u2"), answer(2, "u2"), state("idle", stop="cancelled")]
    lines = [prompt(1), cancel(), fail(1, -32800), *second]
    assert suspects(lines) == [("FG-06", len(lines), "warning")]
    # a prompt whose work was reported (answered only after its idle) starts no later work
    late = [
        prompt(1),
        state("running"),
        user("u1"),
        state("idle", stop="end_turn"),
        cancel(),
        answer(1, "u1"),
    ]
    lines = [*late, *second]
    assert suspects(lines) == [("FG-06", len(lines), "warning")]
    # the stop reaches the one work that starts next, not later work: spent there
    lines = [prompt(1), cancel(), *TURN[1:], state("idle", stop="cancelled"), *second]
    assert suspects(lines) == [("FG-06", len(lines), "warning")]
