"""Tests of the client-view comparison (``properties/viewcheck.py``).

Each named client fault runs a small transcript through the reference ``ClientView`` and the
faulty one; ``compare_views`` must name the rule the fault is meant to break first (and, for these
minimal transcripts, nothing unrelated).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import pytest

from model.clientview import ClientView
from model.clientview_rules import ASPECTS, RULE_OF
from properties import seeded
from properties.catalogue import RULES_BY_ID
from properties.clientview import CLIENT_FAULTS, FaultyView
from properties.viewcheck import compare_views
from tests.wire_dsl import (
    Line,
    answer,
    compaction_chunk,
    created,
    new_session,
    prompt,
    resume,
    say,
    state,
    terminal,
    tool,
    tool_chunk,
    update,
    user,
)

CLIENT_FAULT_RULES = {name: seeded.BY_NAME[name].rule for name in CLIENT_FAULTS}
"""Each client fault -> the rule it is meant to break."""
VIEW_RULES = frozenset(a.rule for a in ASPECTS)
"""Every rule ``compare_views`` can name."""

OUT = update(
    "session_message", "s2", messageId="m", content=[{"type": "text", "text": "go"}], recipientSessionId="s1"
)
"""An outgoing session message in s2 for s1."""

FAULT_TRANSCRIPTS: dict[str, list[Line]] = {
    "omitted-background-is-empty": [state("idle", bg=[]), state("running")],
    "move-on-update": [say("a1"), say("a2"), say("a1")],
    "drop-unseen-chunk": [say("a1")],
    "key-by-id-only": [say("m", thought=True), say("m")],
    "unknown-state-is-idle": [state("running"), state("unknown")],
    "repeat-idle-counts": [state("running"), state("idle", stop="end_turn"), state("idle", stop="end_turn")],
    "response-overwrites-state": [new_session(1), state("running"), created(1)],
    "synthesize-incoming": [state("idle"), OUT],
    "link-by-equal-id": [
        OUT,
        update(
            "session_message", messageId="m", content=[{"type": "text", "text": "go"}], senderSessionId="s2"
        ),
    ],
    "silent-terminal-exited": [terminal("t1"), state("idle")],
    "unreported-background-abandons": [tool("t1", "in_progress"), state("idle")],
    "idle-waits-for-answer": [prompt(1), state("running"), state("idle", stop="end_turn")],
    "running-means-inserted": [prompt(1), state("running")],
    "replay-infers-activity": [state("idle"), resume(1), user("u1")],
    "local-echo": [prompt(1)],
    "associate-by-order": [prompt(1), user("u9")],
    "message-chunk-replaces": [say("a1"), say("a1")],
    "tool-chunk-replaces": [tool_chunk("t1"), tool_chunk("t1")],
    "summary-chunk-replaces": [compaction_chunk("c1"), compaction_chunk("c1")],
    "idle-needs-known-stop-reason": [state("running"), state("idle")],
    "unknown-keeps-activity": [state("running"), state("unknown")],
}
ALSO: dict[str, set[str]] = {
    "unknown-state-is-idle": {"TRANS-02"},  # a state taken as idle also counts a completion
    "idle-waits-for-answer": {"STOP-02"},  # the idle held back is not yet the end of the work
    "associate-by-order": {"INS-01"},  # a prompt tied to a message is taken as inserted
}
"""Rules a fault breaks besides its own on its transcript (every other fault shows only its rule)."""


def views(lines: Sequence[Line], fault: str) -> tuple[ClientView, ClientView]:
    reference, faulty = ClientView(), FaultyView({fault})
    for sender, msg in lines:
        reference.apply(sender, msg)
        faulty.apply(sender, msg)
    return reference, faulty


def test_every_client_fault_has_an_intended_rule_and_a_transcript() -> None:
    assert set(CLIENT_FAULT_RULES) == set(CLIENT_FAULTS) == set(FAULT_TRANSCRIPTS)
    for rule in CLIENT_FAULT_RULES.values():
        assert RULES_BY_ID[rule].check == "client-view"
        assert rule in VIEW_RULES


def test_view_rules_are_client_view_rules() -> None:
    for rule in VIEW_RULES:
        assert RULES_BY_ID[rule].check == "client-view", rule
        assert RULES_BY_ID[rule].side == "client", rule


@pytest.mark.parametrize("fault", sorted(FAULT_TRANSCRIPTS))
def test_fault_breaks_its_intended_rule(fault: str) -> None:
    reference, faulty = views(FAULT_TRANSCRIPTS[fault], fault)
    found = compare_views(reference.to_json(), faulty.to_json())
    intended = CLIENT_FAULT_RULES[fault]
    assert {rule for rule, _ in found} == {intended} | ALSO.get(fault, set()), found
    assert all(why.startswith("s1: ") or fault == "link-by-equal-id" for _, why in found)  # both views


@pytest.mark.parametrize("fault", sorted(FAULT_TRANSCRIPTS))
def test_reference_agrees_with_itself(fault: str) -> None:
    reference, _ = views(FAULT_TRANSCRIPTS[fault], fault)
    assert compare_views(reference.to_json(), copy.deepcopy(reference.to_json())) == []


def test_unrecognized_state_taken_as_idle() -> None:
    reference, faulty = views([state("_thinking")], "unknown-state-is-idle")
    assert [r for r, _ in compare_views(reference.to_json(), faulty.to_json())] == ["STATE-05"]


def test_mutant_table_agrees_with_the_fault_rules() -> None:
    mutants = pytest.importorskip("simulator.analysis.mutants")
    for mutant in mutants.MUTANTS:
        if mutant.name in CLIENT_FAULT_RULES:
            assert mutant.intended_rule == CLIENT_FAULT_RULES[mutant.name], mutant.name


def test_each_kind_of_difference_maps_to_its_rule() -> None:
    base = ClientView()
    for sender, msg in [
        prompt(1),
        state("running", bg=[]),
        user("u1"),
        say("a1"),
        answer(1, "u1"),
        update("tool_call_update", toolCallId="t1", status="pending"),
        update("compaction_update", compactionId="c1", status="in_progress"),
        state("idle", stop="end_turn", bg=[]),
    ]:
        base.apply(sender, msg)
    ref = base.to_json()

    def changed(edit: str) -> list[str]:
        act = copy.deepcopy(ref)
        s = act["s1"]
        if edit == "message":
            s["entities"]["agent_message"]["a1"]["content"] = []
        elif edit == "tool":
            s["entities"]["tool_call"]["t1"]["status"] = "completed"
        elif edit == "compaction":
            s["entities"]["compaction"]["c1"]["status"] = "completed"
        elif edit == "extra":
            s["timeline"].append(["plan", "p9"])
            s["entities"]["plan"]["p9"] = {"plan": None, "removed": False}
        elif edit == "fewer completions":
            s["session"]["completions"] = 0
        elif edit == "stop reason":
            s["session"]["last_stop_reason"] = None
        elif edit == "prompts":
            s["session"]["prompts"] = {}
        elif edit == "usage":
            s["session"]["usage"]["used"] = 5
        elif edit == "state":
            s["session"]["state"] = "running"
        return [rule for rule, _ in compare_views(ref, act)]

    assert changed("message") == ["MSGID-02"]
    assert changed("tool") == ["TOOL-06"]
    assert changed("compaction") == ["COMPACT-04"]
    assert changed("extra") == ["ACC-08"]
    assert changed("fewer completions") == ["STOP-02"]
    assert changed("stop reason") == ["STOP-02"]
    assert changed("prompts") == ["ACC-10"]
    assert changed("usage") == ["TRANS-02"]
    assert changed("state") == ["SYNC-03"]  # running shown while the reported state is idle


def test_a_session_only_the_view_holds_shows_its_entities() -> None:
    """A session the faulty view made up (an incoming entry synthesized for a session the Agent
    never reported): its entities are what the view added, not a missing session."""
    reference, faulty = views([OUT], "synthesize-incoming")
    found = compare_views(reference.to_json(), faulty.to_json())
    assert [rule for rule, _ in found] == ["SDM-03"]
    assert found[0][1].startswith("s1: ")


def test_session_missing_from_the_view() -> None:
    reference, _ = views([say("a1")], "drop-unseen-chunk")
    assert [r for r, _ in compare_views(reference.to_json(), {})] == ["ENT-03"]


def test_the_comparison_reads_every_rule_from_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """``compare_views`` executes the model's table of aspects: the rules it names are the
    table's (every client-view rule of the catalogue, each stated there), and a table that said
    otherwise would make it name otherwise."""
    client_view_rules = {r.id for r in RULES_BY_ID.values() if r.check == "client-view"}
    assert {a.rule for a in ASPECTS} == set(VIEW_RULES) == client_view_rules
    reference, faulty = views(FAULT_TRANSCRIPTS["repeat-idle-counts"], "repeat-idle-counts")
    assert [r for r, _ in compare_views(reference.to_json(), faulty.to_json())] == ["TRANS-02"]
    monkeypatch.setitem(RULE_OF, "completions:more", "RULE-OF-A-VARIANT")
    assert [r for r, _ in compare_views(reference.to_json(), faulty.to_json())] == ["RULE-OF-A-VARIANT"]


def test_a_dropped_rule_s_differences_are_set_aside() -> None:
    """A variant's dropped rule (``dropped``): its differences are not reported, the others are."""
    reference, faulty = views(FAULT_TRANSCRIPTS["repeat-idle-counts"], "repeat-idle-counts")
    assert [r for r, _ in compare_views(reference.to_json(), faulty.to_json(), {"STATE-05"})] == ["TRANS-02"]
    assert compare_views(reference.to_json(), faulty.to_json(), {"TRANS-02"}) == []
