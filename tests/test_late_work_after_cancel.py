"""Two false negatives of MUST rules the review of stop 46 found (its cases, copied into
tests/data/review46/), each closed in the tool monitor (``properties.monitors.tools``).

- CANCEL-06 (Cancellation: the Agent stops waiting on the cancelled work's permission requests
  and treats them as not approved; after cancellation it ignores late responses rather than use
  them to resume the cancelled work): the tool call of a permission request of cancelled work
  goes in_progress after that request's allow, whatever final status the call got meanwhile
  (case20: cancelled before the idle; BG-05 is reported beside it for the reopen) or whether the
  Agent withdrew the request with ``$/cancel_request`` (case207 before the idle, case139 too with
  the call left pending; after the idle as well; review50 N4: the allow reaching the Agent after
  its withdrawal, before the idle). An allow that raced the cancel while the request was still
  open keeps the reading ``approval-racing-cancel``.
- DONE-03 / CANCEL-14 (4. Report completion; Cancellation: content or tool call updates come
  before the idle that reports the cancellation): content of a tool call the ended work had
  finished before its idle, sent after that idle (case178: a content chunk after the cancelled
  idle, case182: an update replacing the content, case183: the same after end_turn). The reading
  ``patch-after-idle`` scopes it as it scopes message content (case19, case153): no breach under
  ``patch-in-place``. Background tool calls (listed, or carrying on past the idle) and tool calls
  first seen after the idle are not the ended work's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import orjson
import pytest

from properties.engine import MonitorSet
from tests.wire_dsl import (
    Line,
    answer,
    ask,
    cancel,
    cancel_request,
    item,
    permission_answer,
    prompt,
    state,
    tool,
    tool_chunk,
    user,
)

CASES = Path(__file__).resolve().parent / "data" / "review46"


def _found(
    lines: Sequence[Line], readings: Mapping[str, str] | None = None, quiescent: bool = False
) -> list[tuple[str, int | None]]:
    ms = MonitorSet(readings=readings)
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent)
    return sorted((f.rule, f.line) for f in ms.findings if f.kind in ("rule", "open"))


def _case(name: str) -> list[Line]:
    rows = [orjson.loads(raw) for raw in (CASES / f"{name}.ndjson").read_bytes().splitlines()]
    return [(row["from"], row["message"]) for row in rows]


# -- CANCEL-06 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # cancelled before the idle, then reopened (p1 open at the idle: CANCEL-07 there, by-idle)
        ("case20", [("BG-05", 16), ("CANCEL-06", 16), ("CANCEL-07", 14)]),
        ("case207", [("BG-05", 17), ("CANCEL-06", 17)]),  # ... and withdrawn before the idle
        ("case139", [("CANCEL-06", 16), ("CANCEL-17", 14)]),  # withdrawn, left pending, run late
        # left pending (the shape judged before; p1 open at the idle: CANCEL-07 there, by-idle)
        ("case93", [("CANCEL-06", 15), ("CANCEL-07", 13), ("CANCEL-17", 13)]),
    ],
)
def test_a_late_allow_used_to_run_cancelled_work_is_cancel_06(
    name: str, expected: list[tuple[str, int]]
) -> None:
    assert _found(_case(name)) == expected


_ASKED = [prompt(1), state("running"), user("u1"), answer(1, "u1"), tool("tc1", "pending"), ask("p1", "tc1")]
_BLOCKED = [*_ASKED, state("requires_action"), cancel()]
_RUN = [tool("tc1", "in_progress"), tool("tc1", "completed")]


def test_a_withdrawal_after_the_cancelled_idle_does_not_make_a_late_allow_an_approval() -> None:
    lines = [
        *_BLOCKED,
        tool("tc1", "cancelled"),
        state("idle", stop="cancelled"),
        cancel_request("p1", by="agent"),
        permission_answer("p1", "allow"),
        *_RUN,
    ]
    # (withdrawn only after the idle: CANCEL-07 at the idle under permission-withdrawal-deadline=by-idle)
    assert _found(lines) == [("BG-05", 13), ("CANCEL-06", 13), ("CANCEL-07", 10)]
    eventually = {"permission-withdrawal-deadline": "eventually"}
    assert _found(lines, eventually) == [("BG-05", 13), ("CANCEL-06", 13)]


def test_a_late_deny_or_a_late_allow_not_used_is_no_breach() -> None:
    ended = [
        *_BLOCKED,
        cancel_request("p1", by="agent"),
        tool("tc1", "cancelled"),
        state("idle", stop="cancelled"),
    ]
    assert _found([*ended, permission_answer("p1", "allow")], quiescent=True) == []
    assert _found([*ended, permission_answer("p1", "deny")], quiescent=True) == []


def test_a_withdrawal_before_any_cancel_is_no_cancelled_work() -> None:
    """A request the Agent withdrew while its work goes on, then allowed: not CANCEL-06's (no
    cancel); the tool call runs as work of its own."""
    lines = [
        *_ASKED,
        cancel_request("p1", by="agent"),
        permission_answer("p1", "allow"),
        *_RUN,
        state("idle", stop="end_turn"),
    ]
    assert _found(lines, quiescent=True) == []


@pytest.mark.parametrize(
    ("alt", "expected"),
    [("may-be-used", [("BG-05", 12)]), ("not-approved", [("BG-05", 12), ("CANCEL-06", 12)])],
)
def test_an_allow_racing_the_cancel_keeps_its_reading(alt: str, expected: list[tuple[str, int]]) -> None:
    """The allow comes after the cancel, before the idle, while the request is still open (the
    Agent cancelled the call): used, it is an approval only under may-be-used (the reopen is
    BG-05's either way)."""
    lines = [
        *_BLOCKED,
        tool("tc1", "cancelled"),
        permission_answer("p1", "allow"),
        state("idle", stop="cancelled"),
        *_RUN,
    ]
    assert _found(lines, {"approval-racing-cancel": alt}) == expected


@pytest.mark.parametrize("alt", ["may-be-used", "not-approved"])
@pytest.mark.parametrize("run_before_idle", [False, True])
def test_an_allow_after_the_agents_own_withdrawal_is_late_under_every_reading(
    alt: str, run_before_idle: bool
) -> None:
    """Review50 N4: the Agent withdrew the request with $/cancel_request after the cancel (it
    stopped waiting on it: the permission table's withdrawn), and only then did the allow reach
    it: no race, a late answer; running the tool on it is CANCEL-06 whatever the reading."""
    ended = [cancel_request("p1", by="agent"), permission_answer("p1", "allow")]
    if run_before_idle:
        lines = [*_BLOCKED, *ended, state("running"), *_RUN, state("idle", stop="cancelled")]
        expected = [("CANCEL-06", 12)]
    else:
        lines = [*_BLOCKED, *ended, tool("tc1", "cancelled"), state("idle", stop="cancelled"), *_RUN]
        expected = [("BG-05", 13), ("CANCEL-06", 13)]
    assert _found(lines, {"approval-racing-cancel": alt}) == expected


def test_a_listed_tool_calls_request_is_not_the_cancelled_works() -> None:
    """Background work the cancel does not cover (its tool call listed at the idle)."""
    listed = [item("tool_call", "tc1")]
    lines = [
        prompt(1),
        state("running", bg=[]),
        user("u1"),
        answer(1, "u1"),
        tool("tc1", "pending"),
        ask("p1", "tc1"),
        state("running", bg=listed),
        cancel(),
        cancel_request("p1", by="agent"),
        state("idle", stop="cancelled", bg=listed),
        permission_answer("p1", "allow"),
        tool("tc1", "in_progress"),
    ]
    assert [f for f in _found(lines) if f[0] == "CANCEL-06"] == []


# -- DONE-03 / CANCEL-14 for tool call content ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("case178", [("CANCEL-14", 13)]),
        ("case182", [("CANCEL-14", 13)]),
        ("case183", [("DONE-03", 12)]),
        ("case19", [("CANCEL-14", 12)]),  # message content: judged as before
        ("case153", [("DONE-03", 11)]),
    ],
)
def test_content_of_a_finished_tool_call_after_the_idle_is_scoped_like_message_content(
    name: str, expected: list[tuple[str, int]]
) -> None:
    assert _found(_case(name)) == expected
    assert _found(_case(name), {"patch-after-idle": "patch-in-place"}) == []


_WORKING = [prompt(1), state("running"), user("u1"), answer(1, "u1"), tool("tc1", "in_progress")]


def test_a_tool_call_that_carries_on_past_the_idle_may_send_content() -> None:
    """tool-updates-after-idle=background: an in_progress call that carries on after end_turn is
    independent work; its content after it finishes is not the ended work's."""
    lines = [*_WORKING, state("idle", stop="end_turn"), tool("tc1", "completed"), tool_chunk("tc1")]
    assert _found(lines, quiescent=True) == []


def test_a_listed_tool_call_or_one_first_seen_after_the_idle_may_send_content() -> None:
    listed = [item("tool_call", "tc1")]
    background = [
        prompt(1),
        state("running", bg=[]),
        user("u1"),
        answer(1, "u1"),
        tool("tc1", "in_progress"),
        state("running", bg=listed),
        tool("tc1", "completed"),
        state("idle", stop="end_turn", bg=[]),
        tool_chunk("tc1"),
    ]
    assert _found(background, quiescent=True) == []
    fresh = [*_WORKING, tool("tc1", "completed"), state("idle", stop="end_turn"), tool("tc2", "completed")]
    assert _found([*fresh, tool_chunk("tc2")], quiescent=True) == []


def test_late_tool_content_is_reported_once_per_tool_call() -> None:
    done = [*_WORKING, tool("tc1", "completed"), state("idle", stop="end_turn")]
    assert _found([*done, tool_chunk("tc1"), tool_chunk("tc1")]) == [("DONE-03", 8)]
    # a status-only update (no content) after the idle is the tool call table's (none here)
    assert _found([*done, tool("tc1", "completed", title="t")]) == []


# -- the seeded bugs that prove them make these shapes ------------------------------------------


def _mutant_runs(name: str, walks: int) -> list[tuple[list[Line], set[tuple[str, int]]]]:
    from properties.seeded import BY_NAME
    from simulator.analysis.mutants import Mutant, sample

    mutant = Mutant(BY_NAME[name])
    out = []
    for _, _, make in sample((), mutant.switched_on, mutant.cfg, walks, 60, monitors=MonitorSet):
        run = make()
        found = {(f.rule, f.line) for f in run.findings if f.kind == "rule" and f.line is not None}
        out.append((list(run.world.transcript), found))
    return out


def test_late_approval_runs_also_reopens_a_call_it_cancelled_before_the_idle() -> None:
    """The seeded bug of CANCEL-06: besides a call left pending (CANCEL-17 too), one given its
    cancelled status before the idle, reopened on the late allow (BG-05 beside it)."""
    shapes = set()
    for _, found in _mutant_runs("late-approval-runs", 25):
        for rule, line in found:
            if rule == "CANCEL-06":
                shapes.add("reopened" if ("BG-05", line) in found else "left pending")
    assert shapes == {"reopened", "left pending"}


def test_update_after_idle_also_sends_content_of_a_finished_tool_call() -> None:
    """The seeded bug of DONE-03 (and of CANCEL-14, its ``Again`` under cancelling walks): content
    of a tool call after the idle, besides message content; each rule sees both."""
    kinds: dict[str, set[str]] = {"DONE-03": set(), "CANCEL-14": set()}
    for name in ("update-after-idle", "update-after-cancelled-idle"):
        for transcript, found in _mutant_runs(name, 25):
            for rule, line in found:
                if rule in kinds:
                    kinds[rule].add(transcript[line - 1][1]["params"]["update"]["sessionUpdate"])
    for rule, seen in kinds.items():
        assert "agent_message_chunk" in seen, rule
        assert seen & {"tool_call_content_chunk", "tool_call_update"}, rule


def test_a_tool_call_update_with_a_non_string_id_after_an_idle_is_no_crash() -> None:
    """A malformed toolCallId (an object) on content sent after an idle is the fields check's
    finding, never a TypeError in the late-content judgement (found by the engine's fuzz test)."""
    from properties.engine import MonitorSet

    ms = MonitorSet()
    upd = {"sessionUpdate": "tool_call_update", "toolCallId": {}, "status": "completed",
           "content": [{"type": "content", "content": {"type": "text", "text": "x"}}]}  # fmt: skip
    first = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Run", "status": "in_progress"}
    for line, update in enumerate((first, {"sessionUpdate": "state_update", "state": "idle"}), 1):
        ms.feed("agent", {"jsonrpc": "2.0", "method": "session/update",
                          "params": {"sessionId": "s", "update": update}}, line)  # fmt: skip
    found = ms.feed("agent", {"jsonrpc": "2.0", "method": "session/update",
                              "params": {"sessionId": "s", "update": upd}}, 3)  # fmt: skip
    assert all(f.rule not in ("DONE-03", "CANCEL-14") for f in found)
