"""CANCEL-19: the elicitations of cancelled work are withdrawn with ``$/cancel_request``, judged at
the idle confirming the cancellation as CANCEL-07 is for permission requests (``model.between``
CANCELLED_ELICITATIONS_WITHDRAWN, under the same reading ``permission-withdrawal-deadline``).

Spec, Cancellation: "For elicitation requests, see Elicitation Cancellation" beside "It SHOULD
cancel each of them with $/cancel_request so the Client can dismiss the prompt"; Lifecycle
examples: "The same rules apply to permissions and both elicitation modes". Under the default
``by-idle`` an elicitation of the cancelled work still pending at the idle confirming the
cancellation, neither withdrawn nor answered before it, is a SHOULD breach at that idle, whatever
comes after. Under ``eventually`` only one never withdrawn and never answered is, at the end. A
URL elicitation the Client accepted (awaiting its external completion) is answered: nothing to
withdraw.

Each test contrasts a conforming transcript with the same one where the withdrawal (or answer)
comes only after the idle: that one is a finding under ``by-idle`` (none before this change).
"""

from __future__ import annotations

import pytest

from model import between as bw
from model import elicitation as em
from properties.engine import MonitorSet
from simulator.peers import wire
from simulator.peers.scenarios import BY_NAME as SCENARIOS
from simulator.peers.scenarios import script
from simulator.peers.schedulers import scripted
from tests.wire_dsl import (
    Line,
    S,
    answer,
    cancel,
    cancel_request,
    prompt,
    state,
    tool,
    unwithdrawn_at_cancelled_idle,
    user,
)

READING = "permission-withdrawal-deadline"


def elicit(mode: str = "form", tid: str | None = None) -> Line:
    return ("agent", wire.elicitation_create("e1", S, mode, "el_1", tid))


def reply(action: str) -> Line:
    return ("client", wire.elicitation_answer("e1", action))


BLOCKED = [
    *(prompt(1), state("running"), user("u1"), answer(1, "u1")),
    *(elicit(), state("requires_action"), cancel()),
]
"""An elicitation e1 of the foreground work pending at the cancel (line 7)."""
IDLE = state("idle", stop="cancelled")
IDLE_LINE = len(BLOCKED) + 1
WITHDRAW = cancel_request("e1", by="agent")
DISMISSED = reply("cancel")  # the Client's answer after the withdrawal


def found(lines: list[Line], alt: str | None = None) -> list[tuple[str, int | None, str]]:
    ms = MonitorSet(readings=None if alt is None else {READING: alt})
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    return [(f.rule, f.line, f.severity) for f in ms.findings if f.kind in ("rule", "open", "suspect")]


def test_the_declaration_names_the_rule_the_table_owes() -> None:
    assert em.SPEC.eventually == {em.ABANDONED: bw.CANCELLED_ELICITATIONS_WITHDRAWN.rule}
    assert bw.CANCELLED_ELICITATIONS_WITHDRAWN.rule == "CANCEL-19"


def test_pending_at_the_idle_is_a_warning_at_the_idle_under_by_idle() -> None:
    lines = [*BLOCKED, IDLE, reply("accept")]  # the Client answers after the idle (late: EX-02)
    assert found(lines) == [("CANCEL-19", IDLE_LINE, "warning")]
    assert found(lines, "by-idle") == [("CANCEL-19", IDLE_LINE, "warning")]
    assert found(lines, "eventually") == []  # answered at last: nothing owed at the end


@pytest.mark.parametrize("mode", ["form", "url"])
def test_the_finding_names_the_reading_in_either_mode(mode: str) -> None:
    ms = MonitorSet()
    lines = [*BLOCKED[:4], elicit(mode), *BLOCKED[5:], IDLE]
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    [finding] = [f for f in ms.findings if f.kind == "rule"]  # at the idle, before the end
    assert (finding.rule, finding.line, finding.readings) == ("CANCEL-19", IDLE_LINE, (READING,))
    assert "'e1'" in finding.explanation and "$/cancel_request" in finding.explanation


ALTS = ("by-idle", "eventually")


def test_withdrawn_before_the_idle_is_no_finding() -> None:
    for alt in ALTS:
        assert found([*BLOCKED, WITHDRAW, IDLE, DISMISSED], alt) == []
        late = found([*BLOCKED, IDLE, WITHDRAW, DISMISSED], alt)
        assert late == ([("CANCEL-19", IDLE_LINE, "warning")] if alt == "by-idle" else []), alt


@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
def test_answered_by_the_client_before_the_idle_is_no_finding(action: str) -> None:
    for alt in ALTS:
        assert found([*BLOCKED, reply(action), IDLE], alt) == []
        late = found([*BLOCKED, IDLE, reply(action)], alt)
        assert late == ([("CANCEL-19", IDLE_LINE, "warning")] if alt == "by-idle" else []), alt


def test_a_late_withdrawal_conforms_under_eventually_only() -> None:
    lines = [*BLOCKED, IDLE, WITHDRAW]
    assert found(lines, "eventually") == []
    assert found(lines, "by-idle") == [("CANCEL-19", IDLE_LINE, "warning")]
    never = found([*BLOCKED, IDLE], "eventually")  # never withdrawn, never answered: at the end
    assert never == [("CANCEL-19", IDLE_LINE, "warning")]


def test_a_url_elicitation_accepted_before_the_idle_owes_no_withdrawal() -> None:
    """Accepted in URL mode, awaiting the user's external completion: answered, so nothing is
    pending to withdraw; the completion after the idle is late and ignored. (The choice this
    change keeps, stated in model.between CANCELLED_ELICITATIONS_WITHDRAWN: it passes without it
    too; pending, the same elicitation is a finding at the idle.)"""
    lines = [*BLOCKED[:4], elicit("url"), state("requires_action"), reply("accept"), cancel(), IDLE]
    for alt in ALTS:
        assert found(lines, alt) == []
        assert found([*lines, ("agent", wire.elicitation_complete("el_1"))], alt) == []
    pending = [*BLOCKED[:4], elicit("url"), state("requires_action"), cancel(), IDLE]
    assert found(pending) == [("CANCEL-19", len(pending), "warning")]


def test_one_about_a_call_no_list_has_ruled_on_is_owed_only_at_the_end() -> None:
    """t1 still pending at the idle and announced since the last list (none): it may be background
    work announced before its first list, which a later list exempts (as for CANCEL-07). Not
    judged at the idle: a later list naming it clears it, the Client's later answer discharges it.
    With a concrete list at the idle that leaves it out, it is the cancelled work's."""
    start = [*BLOCKED[:4], tool("t1", "pending"), elicit("form", "t1"), state("requires_action"), cancel()]
    unruled = [*start, IDLE]
    line = len(unruled)
    listed = [*unruled, state("idle", bg=[{"type": "tool_call", "toolCallId": "t1"}])]
    assert [f for f in found(listed) if f[0] == "CANCEL-19"] == []
    assert [f for f in found([*unruled, DISMISSED]) if f[0] == "CANCEL-19"] == []
    assert ("CANCEL-19", line, "warning") in found(unruled)  # never settled: at the end
    ruled = [*start, state("idle", stop="cancelled", bg=[])]
    assert ("CANCEL-19", line, "warning") in found([*ruled, DISMISSED])


def test_a_late_accept_of_one_withdrawn_before_the_idle_must_not_run_its_call() -> None:
    """Withdrawn before the cancelled idle (as by-idle asks), then accepted after it: the accept is
    late (CANCEL-10, LATE_ANSWERS_IGNORED), as for one abandoned at the idle."""
    start = [*BLOCKED[:4], tool("t1", "pending"), elicit("form", "t1"), state("requires_action"), cancel()]
    lines = [*start, WITHDRAW, tool("t1", "cancelled"), IDLE, reply("accept"), tool("t1", "in_progress")]
    assert bw.LATE_ANSWERS_IGNORED.rule in {f[0] for f in found(lines)}
    assert "CANCEL-19" not in {f[0] for f in found(lines)}


LATER = script(
    "TURN agent.elicit('form') agent.block deliver client.cancel deliver agent.end('cancelled') "
    "agent.elicit_withdraw('elicit_1') deliver client.elicit_cancel('elicit_1') deliver"
)
"""The scenario elicitation_cancelled with the Agent's withdrawal as a later move (the Client
answers a held elicitation once withdrawn): by-idle leaves that move nothing to withdraw."""


def _order(alt: str) -> tuple[list[str], list[str]]:
    scenario = SCENARIOS["elicitation_cancelled"]
    run = scripted(LATER, scenario.cfg.under({READING: alt}), strict=False)
    sent = [
        "withdraw"
        if m.get("method") == "$/cancel_request" and s == "agent"
        else "idle"
        if m.get("params", {}).get("update", {}).get("state") == "idle"
        else ""
        for s, m in run.world.transcript
    ]
    return [x for x in sent if x], [f.rule for f in run.findings]


def test_the_simulated_agent_withdraws_before_its_confirming_idle() -> None:
    """By-idle: the conforming Agent's $/cancel_request of elicit_1 precedes its cancelled idle;
    under eventually it is a later move, after the idle (the Client then answers cancel)."""
    by_idle, findings = _order("by-idle")
    assert by_idle == ["withdraw", "idle"] and findings == []
    later, findings = _order("eventually")
    assert later == ["idle", "withdraw"] and findings == []


def test_the_seeded_bug_breaks_it_at_the_idle_and_the_checker_sees_it_there() -> None:
    """elicitation-not-withdrawn: the Agent's move that ends the cancelled work marks CANCEL-19 (a
    hidden step no later than its idle on the wire), and the checker's finding is at that idle."""
    scenario = SCENARIOS["elicitation_cancelled"]
    run = scripted(scenario.script, scenario.cfg, frozenset({"elicitation-not-withdrawn"}), strict=False)
    transcript = run.world.transcript
    idle = unwithdrawn_at_cancelled_idle(transcript, run.world.hidden, "CANCEL-19")
    assert found(transcript) == [("CANCEL-19", idle, "warning")]


def test_in_forwarded_order_it_is_a_suspicion_until_the_cancel_is_proven_read() -> None:
    """Client order (``properties.engine``): the idle may have crossed the cancel on the wire,
    so the Agent may not have known the elicitation's work was cancelled when it sent it."""
    lines = [*BLOCKED, IDLE]
    kinds = {}
    for order in ("received", "forwarded"):
        ms = MonitorSet(client_order=order)
        for n, (sender, msg) in enumerate(lines, 1):
            ms.feed(sender, msg, n)
        kinds[order] = [(f.rule, f.line, f.kind) for f in ms.findings if f.rule == "CANCEL-19"]
    assert kinds == {
        "received": [("CANCEL-19", IDLE_LINE, "rule")],
        "forwarded": [("CANCEL-19", IDLE_LINE, "suspect")],
    }
