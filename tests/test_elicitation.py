"""Elicitation (issue 32, item 1): the machine table, its rules checked from the wire, each rule
caught by its seeded bug, the messages valid against the schema, the simulated peers, the explore
slice, the client view and the served agent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model import between as bw
from model import elicitation as em
from model.clientview import ClientView
from model.core import ClientViolation, ProtocolViolation
from model.registry import BY_NAME as MACHINES
from properties.catalogue import RULES_BY_ID
from properties.engine import MonitorSet
from properties.schema_check import SchemaChecker
from simulator.analysis.mutants import BY_NAME as MUTANTS
from simulator.analysis.mutants import judge
from simulator.explore.bfs import SLICE_BY_NAME
from simulator.explore.common import new_monitors
from simulator.peers import wire
from simulator.peers.agent import AGENT_FAULTS
from simulator.peers.agent_work import TIED
from simulator.peers.config import DEFAULT
from simulator.peers.scenarios import BY_NAME as SCENARIOS
from simulator.peers.schedulers import random_walk
from simulator.peers.stdio_agent import StdioAgent
from simulator.peers.world import World
from tests.check_support import schema_path
from tests.explored import default_slice

S = "sess_1"
FORM, URL = {"url": False}, {"url": True}

# -- the machine ------------------------------------------------------------------------------


def test_the_machine_is_registered_with_ten_states_and_twenty_two_rows() -> None:
    assert MACHINES["elicitation"] is em.SPEC
    assert len(em.SPEC.states) == 10 and len(em.SPEC.rows) == 22
    assert em.SPEC.initial == em.PENDING
    assert em.SPEC.eventually == {em.ABANDONED: "CANCEL-19"}


def test_form_accept_ends_it_and_url_accept_awaits_the_completion() -> None:
    spec = em.SPEC
    assert spec.fire(em.PENDING, "accept", FORM) == em.ACCEPTED
    assert spec.fire(em.PENDING, "accept", URL) == em.AWAITING
    assert spec.fire(em.AWAITING, "complete") == em.COMPLETED
    assert em.AWAITING in em.BLOCKING and em.PENDING in em.BLOCKING
    assert em.ACCEPTED not in em.BLOCKING


@pytest.mark.parametrize("answer", ["decline", "cancel"])
def test_decline_and_cancel_end_it_in_either_mode(answer: str) -> None:
    for ctx in (FORM, URL):
        assert em.SPEC.fire(em.PENDING, answer, ctx) in (em.DECLINED, em.CANCELLED)


def test_a_completion_may_cross_the_answer_but_a_second_one_breaks_ex_01_by_the_agent() -> None:
    """review47 case 194: the text orders the completion and the Client's answer nowhere."""
    assert em.SPEC.fire(em.PENDING, "complete", URL) == em.EARLY
    assert em.SPEC.fire(em.EARLY, "accept", URL) == em.COMPLETED
    assert em.SPEC.fire(em.DECLINED, "complete", URL) == em.DECLINED
    with pytest.raises(ProtocolViolation) as err:
        em.SPEC.fire(em.COMPLETED, "complete", URL)
    assert (err.value.rule, err.value.actor) == ("EX-01", "agent")
    with pytest.raises(ProtocolViolation):  # a form has no completion, also before its answer
        em.SPEC.fire(em.PENDING, "complete", FORM)
    with pytest.raises(ProtocolViolation):  # a form is never completed outside
        em.SPEC.fire(em.ACCEPTED, "complete", FORM)


def test_cancelled_work_abandons_it_and_late_answers_are_ignored() -> None:
    spec = em.SPEC
    assert spec.fire(em.PENDING, "abandon") == em.ABANDONED
    assert spec.fire(em.AWAITING, "abandon") == em.LATE
    assert spec.fire(em.ABANDONED, "withdraw") == em.WITHDRAWN
    for state in (em.ABANDONED, em.WITHDRAWN):
        assert spec.fire(state, "accept", URL) == em.LATE
        assert spec.fire(state, "decline") == em.LATE
        assert spec.fire(state, "cancel") == em.CANCELLED
    assert spec.fire(em.LATE, "complete") == em.LATE  # an external completion after the end


def test_a_second_answer_is_the_clients_breach() -> None:
    """One response per request (INTRO-02); WAIT-02 is the Agent's SHOULD about late answers."""
    with pytest.raises(ClientViolation) as err:
        em.SPEC.fire(em.DECLINED, "accept", FORM)
    assert err.value.rule == "INTRO-02"


def test_the_new_rules_are_catalogued_with_their_sections() -> None:
    sections = {
        rid: RULES_BY_ID[rid].section for rid in ("EX-01", "EX-02", "CANCEL-19", "CANCEL-20", "TOOL-07")
    }
    assert sections == {
        "EX-01": "Lifecycle examples",
        "EX-02": "Lifecycle examples",
        "CANCEL-19": "Cancellation",
        "CANCEL-20": "Cancellation",
        "TOOL-07": "5. Tool invocation and status reporting",
    }


# -- the monitor on hand-written transcripts --------------------------------------------------


def _findings(lines: list[tuple[str, dict[str, Any]]], quiescent: bool = True) -> list[tuple[str, str]]:
    ms = MonitorSet()
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=quiescent)
    return [(f.rule, f.kind) for f in ms.findings if f.kind in ("rule", "open")]


def _turn(modes: tuple[str, ...] = em.MODES) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("client", wire.initialize("init", elicitation=modes)),
        ("agent", wire.initialized("init")),
        ("client", wire.new_session("new")),
        ("agent", wire.session_created("new", S)),
        ("client", wire.prompt(1, S, [wire.text("hi")])),
        ("agent", wire.state_update(S, "running")),
        ("agent", wire.message("user_message", S, "msg_u_1", [wire.text("hi")])),
        ("agent", wire.result(1, {"messageId": "msg_u_1"})),
    ]


def test_a_url_elicitation_accepted_then_completed_is_clean() -> None:
    lines = [
        *_turn(),
        ("agent", wire.elicitation_create("e1", S, "url", "el_1")),
        ("agent", wire.state_update(S, "requires_action")),
        ("client", wire.elicitation_answer("e1", "accept")),
        ("agent", wire.elicitation_complete("el_1")),
        ("agent", wire.state_update(S, "running")),
        ("agent", wire.state_update(S, "idle", stop_reason="end_turn")),
    ]
    assert _findings(lines) == []


def test_a_completion_before_the_accept_is_no_breach_and_a_second_one_is_found() -> None:
    lines = [
        *_turn(),
        ("agent", wire.elicitation_create("e1", S, "url", "el_1")),
        ("agent", wire.elicitation_complete("el_1")),
        ("client", wire.elicitation_answer("e1", "accept")),
    ]
    assert ("EX-01", "rule") not in _findings(lines)
    assert ("EX-01", "rule") in _findings([*lines, ("agent", wire.elicitation_complete("el_1"))])


def test_an_unadvertised_mode_is_found_and_unknown_capabilities_are_not_judged() -> None:
    lines = [*_turn(("form",)), ("agent", wire.elicitation_create("e1", S, "url", "el_1"))]
    assert ("TOOL-07", "rule") in _findings(lines, quiescent=False)
    without_initialize = [("agent", wire.elicitation_create("e1", S, "url", "el_1"))]
    assert ("TOOL-07", "rule") not in _findings(without_initialize, quiescent=False)


def test_an_elicitation_of_cancelled_work_is_owed_its_withdrawal() -> None:
    lines = [
        *_turn(),
        ("agent", wire.elicitation_create("e1", S, "form", "el_1")),
        ("agent", wire.state_update(S, "requires_action")),
        ("client", wire.cancel(S)),
        ("agent", wire.state_update(S, "idle", stop_reason="cancelled")),
    ]
    assert ("CANCEL-19", "rule") in _findings(lines)
    withdrawn = [
        *lines[:-1],
        ("agent", wire.cancel_request("e1")),
        lines[-1],
        ("client", wire.elicitation_answer("e1", "cancel")),
    ]
    assert _findings(withdrawn) == []
    # after the idle: too late under permission-withdrawal-deadline=by-idle (the default; under
    # eventually, tests/test_elicitation_withdrawal.py, it conforms), however it is settled
    withdrawn_late = [
        *lines,
        ("agent", wire.cancel_request("e1")),
        ("client", wire.elicitation_answer("e1", "cancel")),
    ]
    assert _findings(withdrawn_late) == [("CANCEL-19", "rule")]
    answered_late = [*lines, ("client", wire.elicitation_answer("e1", "accept"))]  # EX-02: late
    assert _findings(answered_late) == [("CANCEL-19", "rule")]


# -- the messages against the schema ------------------------------------------------------------


@pytest.mark.needs_shared
def test_every_elicitation_message_validates() -> None:
    checker = SchemaChecker(schema_path())
    msgs = [
        ("client", wire.initialize("init", True, em.MODES)),
        ("agent", wire.elicitation_create("e1", S, "form", "el_1")),
        ("agent", wire.elicitation_create("e2", S, "url", "el_2")),
        *(("client", wire.elicitation_answer("e1", action)) for action in ("accept", "decline", "cancel")),
        ("agent", wire.elicitation_complete("el_2")),
    ]
    assert [checker.check(sender, msg, n) for n, (sender, msg) in enumerate(msgs, 1)] == [None] * len(msgs)


@pytest.mark.needs_shared
@pytest.mark.parametrize("name", ["elicitation_form", "elicitation_url", "elicitation_cancelled"])
def test_the_scenarios_validate_and_are_clean(name: str) -> None:
    run = SCENARIOS[name].run(MonitorSet())
    checker = SchemaChecker(schema_path())
    for n, line in enumerate(run.world.transcript, 1):
        assert checker.check(line[0], line[1], n) is None
    assert [f for f in run.findings if f.kind == "rule"] == []
    assert any(line[1].get("method") == "elicitation/create" for line in run.world.transcript)


# -- the simulated peers ----------------------------------------------------------------------


def test_the_agent_elicits_only_when_the_client_advertised() -> None:
    for seed in range(30):
        run = random_walk(seed, 60, DEFAULT.with_(features=DEFAULT.features - {"elicitation"}))
        assert not any(line[1].get("method") == "elicitation/create" for line in run.world.transcript)
    methods = [
        line[1].get("method")
        for seed in range(60)  # a URL elicitation accepted and completed is rare in a 60-step walk
        for line in random_walk(seed, 60, DEFAULT).world.transcript
    ]
    assert "elicitation/create" in methods and "elicitation/complete" in methods


def test_the_client_view_shows_pending_elicitations() -> None:
    view = ClientView()
    view.apply("agent", wire.elicitation_create("e1", S, "url", "el_1"))
    assert view.to_json()[S]["session"]["elicitations"] == {
        '"e1"': {
            "mode": "url",
            "status": "pending",
            "message": "More input is needed",
            "url": "https://example.com/elicit/el_1",
            "elicitationId": "el_1",
        }
    }
    view.apply("client", wire.elicitation_answer("e1", "accept"))
    assert view.to_json()[S]["session"]["elicitations"]['"e1"']["status"] == "awaiting_completion"
    view.apply("agent", wire.elicitation_complete("el_1"))
    assert view.to_json()[S]["session"]["elicitations"] == {}
    view.apply("agent", wire.elicitation_create("e2", S, "form", "el_2"))
    view.apply("agent", wire.cancel_request("e2"))  # withdrawn: dismissed
    assert view.to_json()[S]["session"]["elicitations"] == {}


def test_the_client_view_moves_an_elicitation_by_the_table_only() -> None:
    """The view fires the elicitation table's rows: a message with no row from the state shown
    changes nothing, and any other response to a pending one ends it as a cancel does."""
    view = ClientView()

    def shown() -> dict[str, Any]:
        return {k: e["status"] for k, e in view.to_json()[S]["session"]["elicitations"].items()}

    for rid, mode in (("u", "url"), ("f", "form"), ("x", "form"), ("y", "form")):
        view.apply("agent", wire.elicitation_create(rid, S, mode, f"el_{rid}"))
    view.apply("agent", wire.elicitation_complete("el_y"))  # complete: no row for a form
    view.apply("client", wire.elicitation_answer("u", "accept"))
    view.apply("client", wire.elicitation_answer("u", "decline"))  # answered once: no row
    view.apply("agent", wire.cancel_request("u"))  # withdraw: no row from awaiting_completion
    view.apply("client", wire.error("f", -32603, "the Client failed"))  # ends it as a cancel would
    view.apply("client", {"jsonrpc": "2.0", "id": "x", "result": {"action": {"not": "an action"}}})
    assert shown() == {'"u"': em.AWAITING, '"y"': em.PENDING}
    assert set(shown().values()) <= em.BLOCKING


def test_the_slice_explores_every_row_with_no_finding() -> None:
    report = default_slice("elicitation")  # the search test_coverage_rows makes too
    assert report.complete and report.counterexamples == []
    fired = {(s, t, d) for (m, s, t, d) in report.rows if m == "elicitation"}
    assert fired == {(r.source, r.trigger, r.dest) for r in em.SPEC.rows}
    assert all(report.exercised[rule] for rule in ("EX-01", "CANCEL-19", "TOOL-07", "CANCEL-10"))


def _steps(*moves: tuple[str, str, Any]) -> World:
    """A run of the elicitation slice: each move (actor, name, arg) taken, deliveries between."""
    cfg = SLICE_BY_NAME["elicitation"].cfg
    world = World(cfg, monitors=new_monitors(cfg=cfg))

    def deliver() -> None:
        while nets := [e for e in world.enabled() if e[0] == "net"]:
            assert world.step(nets[0]) == []

    for move in moves:
        assert move in world.enabled(), (move, world.enabled())
        assert world.step(move) == []
        deliver()
    return world


@pytest.mark.parametrize("mode", ["form", "url"])
def test_a_late_answer_about_a_cancelled_tool_call_is_ignored(mode: str) -> None:
    """CANCEL-10 (``model.between`` LATE_ANSWERS_IGNORED) taken by the conforming peers: the Agent
    elicits about a tool call it starts (a freedom of the schema's ``toolCallId``), the Client
    cancels, the idle gives the call its final status (after the withdrawal, form); then the
    Client accepts (form), or the user finishes outside after an accept (URL): late, and the call
    never runs. The monitor counts the late answer as an exercise of the rule."""
    start = [("client", "prompt", None), ("agent", "insert", 1), ("agent", "answer", 1)]
    start += [("agent", "user_message", 1), ("agent", "start", None), ("agent", "elicit", (mode, TIED))]
    cancel = [("client", "cancel", None), ("agent", "end", "cancelled")]
    if mode == "form":
        moves = [
            *start,
            *cancel,  # (the Agent withdraws elicit_1 before its idle: by-idle)
            ("client", "elicit_accept", "elicit_1"),
        ]
    else:
        moves = [
            *start,
            ("client", "elicit_accept", "elicit_1"),
            *cancel,
            ("agent", "elicit_complete", "elicit_1"),
        ]
    world = _steps(*moves)
    sent = [msg for sender, msg in world.transcript if sender == "agent"]
    ask = next(m for m in sent if m.get("method") == "elicitation/create")
    assert ask["params"]["toolCallId"] == "tc_1"
    updates = [m["params"]["update"] for m in sent if m.get("method") == "session/update"]
    statuses = [u.get("status") for u in updates if u.get("toolCallId") == "tc_1"]
    assert statuses == ["pending", "cancelled"]  # final before the idle, never run after it
    assert world.monitors is not None and world.monitors.exercised[bw.LATE_ANSWERS_IGNORED.rule] == 1
    assert world.finish() == []


# -- the seeded bugs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("complete-twice", "EX-01"),
        ("elicitation-not-withdrawn", "CANCEL-19"),
        ("elicit-unadvertised", "TOOL-07"),
    ],
)
def test_each_rule_is_caught_by_its_seeded_bug(name: str, rule: str) -> None:
    assert name in AGENT_FAULTS
    mutant = MUTANTS[name]
    assert mutant.intended_rule == rule
    verdict = judge(mutant, walks=120)
    assert verdict.caught, verdict.caught_by


# -- the served agent -------------------------------------------------------------------------


def _served(modes: tuple[str, ...]) -> list[dict[str, Any]]:
    agent = StdioAgent(1)
    sent: list[dict[str, Any]] = []

    def line(msg: dict[str, Any]) -> bytes:
        return (json.dumps(msg) + "\n").encode()

    agent.receive(line(wire.initialize("init", elicitation=modes)))
    agent.receive(line(wire.new_session("new")))
    for n in range(1, 40):
        agent.receive(line(wire.prompt(n, S, [wire.text("hi")])))
        for _ in range(30):
            out = agent.move()
            if out is None:
                break
            for msg in out:
                sent.append(msg)
                if msg.get("method") == "elicitation/create":
                    agent.receive(line(wire.elicitation_answer(msg["id"], "decline")))
    return sent


def test_the_served_agent_elicits_only_in_advertised_modes() -> None:
    asked = [m["params"]["mode"] for m in _served(("form",)) if m.get("method") == "elicitation/create"]
    assert asked and set(asked) == {"form"}
    assert not [m for m in _served(()) if m.get("method") == "elicitation/create"]
