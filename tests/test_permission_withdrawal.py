"""CANCEL-07: the permission requests of cancelled work are withdrawn with ``$/cancel_request``
(review51 A3; ``model.between`` CANCELLED_PERMISSIONS_WITHDRAWN, the reading
``permission-withdrawal-deadline``).

Spec, Cancellation: "When the Agent stops the cancelled foreground work, it MUST stop waiting for
that work's pending session/request_permission requests and treat them as not approved. It SHOULD
cancel each of them with $/cancel_request so the Client can dismiss the prompt." Under the
default ``by-idle`` a request of the cancelled work still open at the idle confirming the
cancellation, neither withdrawn nor answered before it, is a SHOULD breach at that idle, whatever
comes after (the review's transcript: the Client answers it itself after the idle). Under
``eventually`` only a request never withdrawn and never answered is, at the end.

Each test contrasts a conforming transcript with the same one where the withdrawal (or answer)
comes only after the idle: that one is a finding under ``by-idle`` (none before this change).
"""

from __future__ import annotations

import pytest

from properties.engine import MonitorSet
from simulator.peers.scenarios import SCENARIOS
from simulator.peers.schedulers import scripted
from tests.wire_dsl import (
    Line,
    answer,
    ask,
    cancel,
    cancel_request,
    permission_answer,
    prompt,
    state,
    tool,
    unwithdrawn_at_cancelled_idle,
    user,
)

READING = "permission-withdrawal-deadline"

ASKED = [
    prompt(1),
    state("running"),
    user("u1"),
    answer(1, "u1"),
    tool("t1", "pending"),
    ask("p1", "t1"),
    state("requires_action"),
    cancel(),
    tool("t1", "cancelled"),
]
"""A request p1 of the foreground work pending at the cancel (line 8); its tool call cancelled."""
IDLE = state("idle", stop="cancelled")
IDLE_LINE = len(ASKED) + 1
WITHDRAW = cancel_request("p1", by="agent")
ANSWERED = permission_answer("p1", None)  # the Client's cancelled outcome (CANCEL-08)


def found(lines: list[Line], alt: str | None = None) -> list[tuple[str, int | None, str]]:
    ms = MonitorSet(readings=None if alt is None else {READING: alt})
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    return [(f.rule, f.line, f.severity) for f in ms.findings if f.kind in ("rule", "open", "suspect")]


def test_the_review_shape_is_a_warning_at_the_idle_under_by_idle() -> None:
    """review51 A3 (perm-never-s1-cp): no $/cancel_request, the Client answers after the idle."""
    lines = [*ASKED, IDLE, permission_answer("p1", "allow")]
    assert found(lines) == [("CANCEL-07", IDLE_LINE, "warning")]
    assert found(lines, "by-idle") == [("CANCEL-07", IDLE_LINE, "warning")]
    assert found(lines, "eventually") == []  # answered at last: nothing owed at the end


def test_the_finding_names_the_reading() -> None:
    ms = MonitorSet()
    for n, (sender, msg) in enumerate([*ASKED, IDLE], 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    [finding] = [f for f in ms.findings if f.kind == "rule"]
    assert finding.readings == (READING,)
    assert "'p1'" in finding.explanation and "$/cancel_request" in finding.explanation


@pytest.mark.parametrize("alt", ["by-idle", "eventually"])
def test_withdrawn_before_the_idle_is_no_finding(alt: str) -> None:
    assert found([*ASKED, WITHDRAW, IDLE, ANSWERED], alt) == []
    late = found([*ASKED, IDLE, WITHDRAW, ANSWERED], alt)
    assert late == ([("CANCEL-07", IDLE_LINE, "warning")] if alt == "by-idle" else [])


@pytest.mark.parametrize("alt", ["by-idle", "eventually"])
def test_answered_by_the_client_before_the_idle_is_no_finding(alt: str) -> None:
    assert found([*ASKED, ANSWERED, IDLE], alt) == []
    late = found([*ASKED, IDLE, ANSWERED], alt)
    assert late == ([("CANCEL-07", IDLE_LINE, "warning")] if alt == "by-idle" else [])


def test_a_late_withdrawal_conforms_under_eventually_only() -> None:
    lines = [*ASKED, IDLE, WITHDRAW]
    assert found(lines, "eventually") == []
    assert found(lines, "by-idle") == [("CANCEL-07", IDLE_LINE, "warning")]
    never = found([*ASKED, IDLE], "eventually")  # never withdrawn, never answered: at the end
    assert never == [("CANCEL-07", IDLE_LINE, "warning")]


def test_a_request_about_a_call_no_list_has_ruled_on_is_owed_only_at_the_end() -> None:
    """t1 still pending at the idle and announced since the last list (none): it may be background
    work announced before its first list, which a later list exempts. Not judged at the idle: a
    later list naming it clears it; the Client's later answer discharges it, as under eventually.
    With a concrete list at the idle that leaves it out, it is the cancelled work's."""
    unruled = [*ASKED[:-1], state("idle", stop="cancelled")]
    line = len(unruled)
    listed = [*unruled, state("idle", bg=[{"type": "tool_call", "toolCallId": "t1"}])]
    # (CANCEL-17's suspect is cleared the same way)
    assert [f for f in found(listed) if f[0] == "CANCEL-07"] == []
    assert [f for f in found([*unruled, ANSWERED]) if f[0] == "CANCEL-07"] == []
    ruled = [*ASKED[:-1], state("idle", stop="cancelled", bg=[])]
    assert ("CANCEL-07", line, "warning") in found([*ruled, ANSWERED])


def test_the_simulated_agent_withdraws_before_its_confirming_idle() -> None:
    """By-idle: the conforming Agent's $/cancel_request of perm_1 precedes its cancelled idle; under
    eventually it is a later move (the scenario spells none)."""
    scenario = next(s for s in SCENARIOS if s.name == "cancellation_with_held_prompt")

    def order(alt: str) -> list[str]:
        run = scripted(scenario.script, scenario.cfg.under({READING: alt}))
        assert not run.findings
        return [
            "withdraw"
            if m.get("method") == "$/cancel_request" and s == "agent"
            else "idle"
            if m.get("params", {}).get("update", {}).get("state") == "idle"
            else ""
            for s, m in run.world.transcript
        ]

    by_idle = [x for x in order("by-idle") if x]
    assert by_idle[-2:] == ["withdraw", "idle"]
    assert "withdraw" not in order("eventually")


def test_the_seeded_bug_breaks_it_at_the_idle_and_the_checker_sees_it_there() -> None:
    """permission-not-withdrawn: the Agent's move that ends the cancelled work marks CANCEL-07
    (a hidden step no later than its idle on the wire), and the checker's finding is at that
    idle."""
    scenario = next(s for s in SCENARIOS if s.name == "cancellation_with_held_prompt")
    run = scripted(scenario.script, scenario.cfg, frozenset({"permission-not-withdrawn"}))
    transcript = run.world.transcript
    idle = unwithdrawn_at_cancelled_idle(transcript, run.world.hidden, "CANCEL-07")
    assert found(transcript) == [("CANCEL-07", idle, "warning")]


def test_work_ended_with_its_own_stop_reason_after_a_cancel_withdraws_too() -> None:
    """Under cancel-takes-effect=when-acted the Agent may end the work a cancel reached with its own
    stop reason; the checker takes that idle as the one the cancel's abandoned requests are due by
    (as for CANCEL-06), so the simulated Agent withdraws before it as before a cancelled idle (the
    exhaustive search found this run breaking CANCEL-07 before it did)."""
    from simulator.peers.config import Config
    from simulator.peers.schedulers import replay_events

    features = frozenset(["cancel", "perm_error", "permission", "snapshot", "stop", "user_stop"])
    cfg = Config(
        prompts=1, elicitations=0, background=0, compactions=0, outputs=0, notices=0, usages=0,
        cancel_requests=0, closes=0, resumes=0, losses=0, futures=0, tool_updates=0, capacity=1,
        features=features, readings={"cancel-takes-effect": "when-acted"},
    )  # fmt: skip
    events = [
        ("client", "prompt", None),
        ("net", "to_agent", 0),
        ("client", "cancel", None),
        ("agent", "insert", 1),
        ("agent", "user_message", 1),
        ("net", "to_client", 0),
        ("agent", "start_blocked", None),
        ("net", "to_agent", 0),
        *[("net", "to_client", 0)] * 3,
        ("agent", "stop", "end_turn"),
    ]
    run = replay_events(events, cfg, frozenset(), MonitorSet(readings=cfg.reading_map()))
    assert "CANCEL-07" not in {f.rule for f in run.findings}
    sent = [
        m.get("params", {}).get("update", {}).get("state") or m.get("method")
        for s, m in run.world.transcript
        if s == "agent"
    ]
    assert sent[-2:] == ["$/cancel_request", "idle"]
