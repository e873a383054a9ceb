"""The rules between machines (``model/between.py``): each declaration is run by the checker and
the simulated Agent, each is caught by a seeded bug, and a variant that switches one of their
parameters changes what ``check`` and ``explore`` find."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from model import between as bw
from model import permission
from model import prompt as prompt_table
from properties.engine import MonitorSet
from properties.trace import implemented_by
from properties.variants import VariantError, from_data, load
from simulator.analysis.mutants import breaking, judge
from simulator.explore.bfs import SLICES, explore
from simulator.peers.agent import Agent
from simulator.peers.config import DEFAULT
from tests.check_support import rule_lines as _rules
from tests.explored import default_slice
from tests.wire_dsl import (
    Line,
    S,
    answer,
    ask,
    cancel,
    created,
    fail,
    initialize,
    initialized,
    item,
    new_session,
    permission_answer,
    prompt,
    say,
    state,
    tool,
    user,
)

REPO = Path(__file__).resolve().parents[1]


def _request(rid: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


CANCEL_STOPS_BACKGROUND = load(str(REPO / "variants" / "cancel-stops-background.toml"))
NO_STEERING = load(str(REPO / "variants" / "no-steering.toml"))


# -- the declarations ---------------------------------------------------------------------------


def test_every_declaration_names_a_catalogued_rule_and_its_machines() -> None:
    from model.registry import BY_NAME as MACHINES
    from properties.catalogue import RULES_BY_ID

    assert len(bw.BY_NAME) == len(bw.DECLARATIONS)
    for d in bw.DECLARATIONS:
        assert d.rule in RULES_BY_ID, d.name
        assert set(d.machines) <= set(MACHINES), d.name
        assert d.when and d.then and d.section
        assert f"model.between.{d.name.upper()}" in implemented_by(d.rule)
    # the tables that state part of a declaration name the same rule
    assert permission.SPEC.forbidden["abandon"] == bw.CANCELLED_PERMISSIONS.rule
    assert prompt_table.SPEC.guard_rules["oldest_held"] == bw.HELD_IN_ORDER.rule


@pytest.mark.parametrize(
    "d", [d for d in bw.DECLARATIONS if breaking(d.rule) is not None], ids=lambda d: d.name
)
def test_each_declaration_with_a_seeded_bug_is_caught_by_it(d: bw.Between) -> None:
    mutant = breaking(d.rule)
    assert mutant is not None
    verdict = judge(mutant, walks=25)
    assert d.rule in verdict.caught_by, (mutant.name, verdict.caught_by)


def test_a_cancelled_idle_with_error_breaks_cancel_not_error_and_end_turn_cancel_confirmed() -> None:
    """The seeded bugs of ``cancel_not_error`` and ``cancel_confirmed`` as transcripts: the
    declaration picks the rule from the stop reason."""
    turn = [prompt(1), state("running"), user("u1"), answer(1, "u1"), cancel()]
    assert _rules([*turn, state("idle", stop="error", error={"code": -1, "message": "x"})]) == [
        (bw.CANCEL_NOT_ERROR.rule, 6)
    ]
    assert _rules([*turn, state("idle", stop="end_turn")]) == [(bw.CANCEL_CONFIRMED.rule, 6)]
    assert _rules([*turn, state("idle", stop="cancelled")]) == []


def test_a_prompt_inserted_ahead_of_a_held_one_breaks_held_in_order() -> None:
    """The seeded bug of ``held_in_order`` as a transcript (visible under the reading
    prompt-ahead-of-held=receipt-order): prompt 2 succeeds while prompt 1 waits, and prompt 1 is
    then withdrawn (so it was never inserted)."""
    lines = [prompt(1), state("running"), prompt(2), user("u2"), answer(2, "u2"), cancel()]
    lines.append(fail(1, -32800))
    order = {"prompt-ahead-of-held": "receipt-order"}
    assert _rules(lines, readings=order) == [(bw.HELD_IN_ORDER.rule, 7)]
    assert _rules(lines) == []


def test_the_rules_in_force_switch_and_refuse_unknown_parameters() -> None:
    rules = bw.SPEC.switched({"steering": {"steer": False}})
    assert not rules.steer and bw.SPEC.steer
    assert {k: v for k, v in rules.values.items() if v != bw.SPEC.values[k]} == {"steering": {"steer": False}}
    assert not rules.may_insert_now(received_in_active_work=True, work_still_active=True)
    assert rules.may_insert_now(received_in_active_work=True, work_still_active=False)
    assert bw.SPEC.may_insert_now(received_in_active_work=True, work_still_active=True)
    assert bw.SPEC.late_update(True) is bw.CANCEL_UPDATES_BEFORE_IDLE
    assert bw.SPEC.late_update(False) is bw.UPDATES_BEFORE_IDLE
    assert bw.SPEC.unadvertised(["text", "image"], bw.SPEC.allowed_types(())) == ("image",)
    assert bw.SPEC.unadvertised(["image"], bw.SPEC.allowed_types(("image",))) == ()
    for bad, why in (
        ({"nope": {}}, "unknown declaration 'nope'"),
        ({"steering": {"x": True}}, "steering: unknown parameter 'x'"),
        ({"steering": {"steer": "no"}}, "steering.steer: a bool is required"),
    ):
        with pytest.raises(ValueError, match=why):
            bw.SPEC.switched(bad)
        with pytest.raises(VariantError, match=f"v.toml: between: {why}"):
            from_data({"title": "t", "between": bad}, "v.toml", "v")


def test_the_rule_ids_of_the_declarations_are_not_written_in_monitors_or_the_agent() -> None:
    """The checker, the simulated Agent and the composed graph name these rules only through
    ``model.between``."""
    ids = {d.rule for d in bw.DECLARATIONS}
    paths = [
        *(REPO / "properties" / "monitors").glob("*.py"),
        *(REPO / "simulator" / "peers").glob("agent*.py"),
        REPO / "diagrams" / "composed.py",
    ]
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                found += [(path.name, rule) for rule in ids if rule in node.value]
    assert found == []


# -- variants: cancel-stops-background ---------------------------------------------------------

_BG_TURN: list[Line] = [
    prompt(1),
    state("running", bg=[]),
    user("u1"),
    answer(1, "u1"),
    tool("bg1", "in_progress"),
    state("running", bg=[item("tool_call", "bg1")]),
    cancel(),
    state("idle", stop="cancelled", bg=[item("tool_call", "bg1")]),
]


def test_cancel_stops_background_makes_listed_work_owe_its_final_status_before_the_idle() -> None:
    """The spec: listed work keeps running after a cancel. The variant: the cancel covers it, so
    the listed tool call still in progress at the cancelled idle is the cancelled work's."""
    assert _rules(_BG_TURN) == []
    assert _rules(_BG_TURN, variant=CANCEL_STOPS_BACKGROUND) == [(bw.CANCELLED_TOOLS_FINAL.rule, 8)]
    stopped = [*_BG_TURN[:7], tool("bg1", "cancelled"), state("idle", stop="cancelled", bg=[])]
    assert _rules(stopped, variant=CANCEL_STOPS_BACKGROUND) == []


def _cancelled_with_a_listed_terminal(variant: Any) -> list[dict[str, Any]]:
    agent = Agent(DEFAULT.with_(variant=variant))
    agent.receive(_request(1, "session/prompt", {"sessionId": agent.sid, "prompt": [{"type": "text"}]}))
    agent.do("insert", 1)
    agent.do("start", None)
    agent.do("bg_start", "terminal")
    agent.do("bg_list", ("terminal", "term_1"))
    agent.receive({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": agent.sid}})
    return [m["params"]["update"] for m in agent.do("end", bw.SPEC.confirming_reasons()[0])]


def test_under_cancel_stops_background_the_agent_stops_its_listed_work_before_the_idle() -> None:
    kept = _cancelled_with_a_listed_terminal(None)
    assert [u["sessionUpdate"] for u in kept] == ["state_update"]
    assert kept[-1]["background"] == [{"type": "terminal", "terminalId": "term_1"}]
    stopped = _cancelled_with_a_listed_terminal(CANCEL_STOPS_BACKGROUND)
    assert [u["sessionUpdate"] for u in stopped] == ["terminal_update", "state_update"]
    assert "exitStatus" in stopped[0] and stopped[-1]["background"] == []


def test_cancel_stops_background_changes_what_the_simulated_agent_reaches() -> None:
    cfg = SLICES[0].cfg  # core: a terminal, a prompt, session/cancel
    base = default_slice(SLICES[0].name)  # explore(cfg), made once per process
    under = explore(cfg.under(cfg.reading_map(), CANCEL_STOPS_BACKGROUND))
    # the moves differ (under it, a listed terminal exits before the idle confirming the
    # cancel); the number of states reached no longer does, since every snapshot of the Agent
    # removes a finished item (the background table's keep), as that idle does under it
    exits = ("terminal", "live", "exit", "exited")
    assert under.rows[exits] > base.rows[exits]
    assert base.counterexamples == under.counterexamples == []


# -- variants: no-steering ---------------------------------------------------------------------

_STEERED: list[Line] = [
    initialize("init"),
    initialized("init"),
    new_session("new"),
    created("new"),
    prompt(1),
    state("running"),
    user("u1"),
    answer(1, "u1"),
    prompt(2),
    say("a1"),
    user("u2"),
    answer(2, "u2"),
    state("idle", stop="end_turn"),
]


def test_no_steering_forbids_inserting_a_prompt_into_the_work_it_was_received_in() -> None:
    assert _rules(_STEERED) == []
    assert _rules(_STEERED, variant=NO_STEERING) == [(bw.STEERING.rule, 12)]  # the response ties them
    # the response first, the user message later: judged when the message is reported
    swapped = [*_STEERED[:10], answer(2, "u2"), user("u2"), _STEERED[-1]]
    assert _rules(swapped, variant=NO_STEERING) == [(bw.STEERING.rule, 12)]
    waited = [*_STEERED[:10], state("idle", stop="end_turn"), state("running"), user("u2"), answer(2, "u2")]
    assert _rules(waited, variant=NO_STEERING) == []


def test_no_steering_changes_what_the_simulated_agent_reaches_and_it_conforms() -> None:
    cfg = SLICES[1].cfg  # prompts: a second prompt reaches active work
    base = default_slice(SLICES[1].name)  # explore(cfg), made once per process
    under = explore(cfg.under(cfg.reading_map(), NO_STEERING))
    assert base.states != under.states
    assert under.counterexamples == []


def test_check_under_a_switched_declaration_and_its_one_line_errors(tmp_path: Path) -> None:
    from tests.check_support import line, run_cli

    transcript = tmp_path / "t.ndjson"
    transcript.write_bytes(b"".join(line(sender, msg) for sender, msg in _STEERED))
    assert run_cli(["check", str(transcript)])[0] == 0
    code, out, _ = run_cli(
        ["check", "--variant", str(REPO / "variants" / "no-steering.toml"), str(transcript)]
    )
    assert code == 1 and "rule between machines switched: steering (ACTIVE-02): steer=False" in out
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "x"\n[between.steering]\nsteer = "no"\n')
    code, _, err = run_cli(["check", "--variant", str(bad), str(transcript)])
    assert code == 2
    assert err.strip() == f"acp-model check: {bad}: between: steering.steer: a bool is required"


def _elicit(rid: Any, mode: str, eid: str = "e1") -> Line:
    params = {"sessionId": S, "mode": mode, "message": "?", "elicitationId": eid}
    return ("agent", _request(rid, "elicitation/create", params))


def test_requires_action_with_no_request_outstanding_breaks_blocked_on_user() -> None:
    """``blocked_on_user`` as transcripts: a requires_action stretch with no permission request or
    elicitation outstanding, and none asked since the last idle, breaks it when it ends; a request
    before it (answered or not: the answer may not have reached the Agent), or during it (work
    that starts blocked may report requires_action first), justifies it."""
    rule = bw.BLOCKED_ON_USER.rule
    turn = [prompt(1), state("running"), user("u1"), answer(1, "u1")]
    assert _rules([*turn, state("requires_action"), state("running"), state("idle", stop="end_turn")]) == [
        (rule, 6)
    ]
    assert _rules([*turn, state("requires_action"), state("idle", stop="end_turn")]) == [(rule, 6)]
    asked = [*turn, ask("p1", "tc_1")]
    assert _rules([*asked, state("requires_action"), state("running"), state("idle", stop="end_turn")]) == []
    late_ask = [*turn, state("requires_action"), asked[-1], state("running"), state("idle", stop="end_turn")]
    assert _rules(late_ask) == []
    # answered in the same work: the answer may not have reached the Agent when it blocked
    answered = [*asked, permission_answer("p1", "allow"), state("requires_action"), state("running")]
    assert _rules(answered) == []
    ended = [*asked, permission_answer("p1", "allow"), state("idle", stop="end_turn")]
    assert _rules([*ended, state("requires_action"), state("running")]) == [(rule, 9)]
    url = [
        *turn,
        _elicit("e", "url"),
        ("client", {"jsonrpc": "2.0", "id": "e", "result": {"action": "accept"}}),
    ]
    idle = state("idle", stop="end_turn")
    assert _rules([*url, idle, state("requires_action"), state("running")]) == []  # awaits completion
    done = [
        *url,
        ("agent", {"jsonrpc": "2.0", "method": "elicitation/complete", "params": {"elicitationId": "e1"}}),
    ]
    assert _rules([*done, idle, state("requires_action"), state("running")]) == [(rule, 10)]
    # still open at the end: a breach of a complete run only
    ms = MonitorSet()
    for n, (sender, msg) in enumerate([*turn, state("requires_action")], 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    assert (rule, 5) in [(f.rule, f.line) for f in ms.findings if f.kind == "rule"]


def test_a_late_accept_used_to_run_the_cancelled_tool_call_breaks_late_answers_ignored() -> None:
    """``late_answers_ignored`` as transcripts: an elicitation about tool call tc_1 is open at the
    idle confirming a cancellation; the Client accepts it after that idle (late) and tc_1 then
    goes in_progress. Accepted before the cancel, or never run, it breaks nothing here."""
    rule = bw.LATE_ANSWERS_IGNORED.rule
    params = {"sessionId": S, "mode": "form", "message": "?", "toolCallId": "tc_1"}
    ask_e = ("agent", _request("e", "elicitation/create", params))
    accept = ("client", {"jsonrpc": "2.0", "id": "e", "result": {"action": "accept"}})
    turn = [prompt(1), state("running"), user("u1"), answer(1, "u1"), tool("tc_1", "pending"), ask_e]
    turn.append(state("requires_action"))
    ended = [*turn, cancel(), state("idle", stop="cancelled")]
    found = _rules([*ended, accept, tool("tc_1", "in_progress")])
    assert (rule, 11) in found
    assert rule not in {r for r, _ in _rules([*ended, accept])}
    in_time = [*turn, accept, state("running"), tool("tc_1", "in_progress")]
    assert rule not in {r for r, _ in _rules(in_time)}
