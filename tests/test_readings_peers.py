"""The simulated peers follow the readings: where a reading's alternatives give the Agent
different freedoms (``affects == "both"`` in ``properties.readings``), the Agent takes the
freedom of the alternative in force, and taking it breaks none of that alternative's rules.

For each such reading, a short script leads the simulated session to the point where the
freedom matters; there the freedom's event is enabled under the alternatives that give it and
under no other. The event is then taken, the run settled, and the monitors (judging under the
same alternative, as every simulated run does) find nothing. A monitor set under another
alternative, fed the same transcript, finds a breach of one of the reading's rules wherever the
spec text makes one: the peers explore that reading's protocol, not the default's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from properties.engine import MonitorSet
from properties.readings import BY_NAME, READINGS
from simulator.explore.common import new_monitors
from simulator.peers.config import SMALL, Config
from simulator.peers.schedulers import scripted
from simulator.peers.world import World

P = ("client", "prompt", None)
D = "deliver"
START = [P, D, ("agent", "insert", 1), ("agent", "user_message", 1), ("agent", "start", None), D]
"""A prompt received, inserted, its user message reported and foreground work running."""


@dataclass(frozen=True)
class Case:
    script: list[Any]
    event: tuple[str, str, Any]
    gives: tuple[str, ...]
    """The alternatives under which ``event`` is enabled after ``script``."""
    features: frozenset[str] = frozenset()
    faults: frozenset[str] = frozenset()
    then: tuple[Any, ...] = ()
    """Events after the freedom, before settling (to reach a verdict)."""
    breaks: str | None = None
    """A rule of the reading a monitor set under another alternative reports on the transcript."""
    tool_calls: int = 1
    """Tool calls the Agent may report (a background one counts)."""
    outputs: int = 1
    """Model outputs per interval (``Config.outputs``)."""


ASKED = [
    *START, ("agent", "tool_ask", None), *[("net", "to_client", 0)] * 3, ("client", "cancel", None),
    ("client", "allow", "perm_1"), ("net", "to_agent", 0), ("net", "to_agent", 0), ("agent", "resume", None),
]  # fmt: skip
"""A permission request of running work, the Client's cancel, then its approval, both received
by the Agent before it ended the work (the approval raced the cancel)."""
CANCELLED = ("agent", "end", "cancelled")

CASES = {
    "future-stop-reason": Case(
        [*START, ("agent", "answer", 1)],
        ("agent", "end", "handed_off"),
        ("may-be-future",),
        frozenset({"custom_stop"}),
        breaks="STOP-03",
    ),
    "output-while-requires-action": Case(
        [*START, ("agent", "say", None), ("agent", "tool_ask", None)],
        ("agent", "pending_say", None),
        ("late-chunk", "pending-output"),
        frozenset({"permission", "chunks"}),
        breaks="FG-04",
        outputs=2,
    ),
    "approval-racing-cancel": Case(
        ASKED,
        ("agent", "tool_run", "tc_1"),
        ("may-be-used", "not-approved"),
        frozenset({"permission", "cancel"}),
    ),
    "permission-withdrawal-deadline": Case(
        [*START, ("agent", "tool_ask", None), D, ("client", "cancel", None), D, CANCELLED],
        ("agent", "perm_withdraw", "perm_1"),
        ("eventually",),
        frozenset({"permission", "cancel"}),
        then=(("agent", "answer", 1),),
        breaks="CANCEL-07",  # by-idle: withdrawn only after the confirming idle
    ),
    "rejected-after-cancel-request": Case(
        [*START, P, D, ("client", "cancel_request", 2), D],
        ("agent", "reject", 2),
        ("own-reason",),
        frozenset({"cancel"}),
        then=(("agent", "end", "end_turn"),),
        breaks="REJ-03",
    ),
    "prompt-ahead-of-held": Case(
        [P, D, ("agent", "hold", 1), P, D],
        ("agent", "insert", 2),
        ("held-only",),
        frozenset({"hold", "cancel"}),
        then=(
            ("agent", "user_message", 2),
            ("agent", "answer", 2),
            D,
            ("client", "cancel", None),
            D,
            ("agent", "withdraw", 1),
        ),
        breaks="ACTIVE-02",
    ),
    "cancel-takes-effect": Case(
        [*START, ("client", "cancel", None), D],
        ("agent", "end", "end_turn"),
        ("when-acted",),
        frozenset({"cancel"}),
        breaks="TRANS-04",
    ),
    "patch-after-idle": Case(
        [*START, ("agent", "say", None), ("agent", "answer", 1), ("agent", "end", "end_turn")],
        ("agent", "late_output", None),
        ("patch-in-place",),
        frozenset({"chunks"}),
        breaks="DONE-03",
    ),
    "unaccounted-user-message": Case(
        START,
        ("agent", "synthetic_user", None),
        ("other-sources",),
        then=(("agent", "answer", 1), ("agent", "end", "end_turn")),
        breaks="ACC-06",
    ),
    "waited-on-background": Case(
        [*START, ("agent", "bg_start", "tool_call"), ("agent", "bg_list", ("tool_call", "tc_bg_1"))],
        ("agent", "bg_adopt", ("tool_call", "tc_bg_1")),
        ("becomes-foreground",),
        frozenset({"bg_tool"}),
        then=(("agent", "tool_done", "tc_bg_1"), ("agent", "answer", 1), ("agent", "end", "end_turn")),
        breaks="BG-11",
    ),
    "unlisted-tool-while-blocked": Case(
        [*START, ("agent", "bg_start", "tool_call")],
        ("agent", "tool_status", ("tc_bg_1", "paused")),
        ("may-be-background",),
        frozenset({"bg_tool", "bg_pause", "permission"}),
        then=(("agent", "tool_ask", None), ("agent", "tool_status", ("tc_bg_1", "in_progress"))),
        breaks="FG-04",  # the watcher, announced and not listed, runs while the work is blocked
        tool_calls=2,
    ),
    "cancelled-invalid-prompt": Case(
        [P, D, ("client", "cancel", None), D],
        ("agent", "withdraw_invalid", 1),
        ("either", "invalid"),
        frozenset({"cancel"}),
        frozenset({"image-without-capability"}),
        breaks="CANCEL-02",
    ),
    "tool-updates-after-idle": Case(
        [*START, ("agent", "tool", None), ("agent", "tool_run", "tc_1"), ("agent", "answer", 1)],
        ("agent", "end", "end_turn"),
        ("background", "unlisted-activity"),
        then=(("agent", "carried_done", "tc_1"),),
        breaks="DONE-03",
    ),
    "tool-with-listed-terminal": Case(
        START,
        ("agent", "bg_start", "terminal+tool"),
        ("may-have-other-work",),
        frozenset({"terminal"}),
        then=(("agent", "bg_list", ("terminal", "term_1")),),
        breaks="BG-13",
    ),
    "final-status-change": Case(
        [*START, ("agent", "tool", None), ("agent", "tool_run", "tc_1"), ("agent", "tool_done", "tc_1")],
        ("agent", "tool_correct", "tc_1"),
        ("reopen-only",),
        frozenset({"correct"}),
        then=(("agent", "answer", 1), ("agent", "end", "end_turn")),
        breaks="BG-05",
    ),
    "busy-refusal": Case(
        [*START, P, D],
        ("agent", "reject_hook", 2),
        ("may-have-other-reason",),
        frozenset({"hook_refusal"}),
        then=(("agent", "answer", 1), ("agent", "end", "end_turn")),
        breaks="ACTIVE-03",
    ),
    "repeated-idle-new-stop-reason": Case(
        [*START, ("agent", "answer", 1), ("agent", "end", "end_turn")],
        ("agent", "restate_idle", None),
        ("snapshot",),
        frozenset({"limits"}),
        breaks="FG-01",  # no prompt waits: work the Agent started itself
    ),
    "user-message-content": Case(
        [P, D, ("agent", "insert", 1)],
        ("agent", "user_message", (1, "interim")),
        ("upsert",),
        frozenset({"interim"}),
        then=(("agent", "user_message", 1), ("agent", "start", None), ("agent", "answer", 1)),
        breaks="ACC-05",
    ),
}


def _cfg(case: Case, name: str, alt: str) -> Config:
    return SMALL.with_(
        features=case.features,
        prompts=2,
        capacity=8,
        cancel_requests=1,
        tool_calls=case.tool_calls,
        outputs=case.outputs,
        readings={name: alt},
    )


def test_every_reading_that_concerns_the_peers_has_a_case() -> None:
    shaped = {"state-updates-before-first-list"}  # a message's shape, not an event: below
    assert {r.name for r in READINGS if r.affects != "checker"} == set(CASES) | shaped


def test_state_updates_carry_a_list_from_the_first_under_every() -> None:
    name = "state-updates-before-first-list"
    script = [*START, ("agent", "bg_start", "terminal"), ("agent", "bg_list", ("terminal", "term_1"))]
    states: dict[str, list[Any]] = {}
    for alt in BY_NAME[name].alternative_names():
        cfg = SMALL.with_(features=frozenset({"terminal"}), capacity=8, readings={name: alt})
        run = scripted(script, cfg, frozenset(), new_monitors(True, cfg))
        assert not [f.rule for f in run.findings if f.kind == "rule"], alt
        states[alt] = [
            m["params"]["update"].get("background", "absent")
            for _, m in run.world.transcript
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "state_update"
        ]
        if alt == "after-first-list":  # judged under every, the first state_update lacks a list
            judged = MonitorSet(readings={name: "every"}, from_start=True)
            for n, (sender, msg) in enumerate(run.world.transcript, 1):
                judged.feed(sender, msg, n)
            assert "BG-07" in {f.rule for f in judged.findings}
    assert states["every"][0] == [] and states["after-first-list"][0] == "absent"
    assert states["every"][-1] == states["after-first-list"][-1] != "absent"


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_freedom_is_enabled_exactly_under_its_alternatives(name: str) -> None:
    case = CASES[name]
    for alt in BY_NAME[name].alternative_names():
        run = scripted(case.script, _cfg(case, name, alt), case.faults, settle=False)
        enabled = case.event in run.world.enabled()
        assert enabled == (alt in case.gives), (name, alt, run.world.enabled())


@pytest.mark.parametrize("name", sorted(CASES))
def test_taking_the_freedom_breaks_no_rule_of_its_alternative(name: str) -> None:
    case = CASES[name]
    alt = case.gives[0]
    cfg = _cfg(case, name, alt)
    world = World(cfg, case.faults, new_monitors(True, cfg))
    run = scripted([*case.script, case.event, *case.then], cfg, case.faults, world.monitors)
    client_side = {"USER-03"}  # the faulty client's own breach (cancelled-invalid-prompt's case)
    found = sorted({f.rule for f in run.findings if f.kind == "rule"} - client_side)
    assert found == [], (name, alt, found)
    if case.breaks is None:
        return
    others = [a for a in BY_NAME[name].alternative_names() if a not in case.gives]
    judged = MonitorSet(readings={name: others[0]}, from_start=True)
    for n, (sender, msg) in enumerate(run.world.transcript, 1):
        judged.feed(sender, msg, n)
    judged.finish(quiescent=True)
    assert case.breaks in {f.rule for f in judged.findings if f.kind == "rule"}, (name, others[0])
    assert case.breaks in BY_NAME[name].rules


def test_a_world_refuses_monitors_of_other_readings() -> None:
    cfg = SMALL.with_(readings={"cancel-takes-effect": "when-acted"})
    with pytest.raises(ValueError, match="other readings"):
        World(cfg, frozenset(), MonitorSet())
    assert World(cfg, frozenset(), new_monitors(True, cfg)).monitors is not None


def test_config_keeps_only_the_readings_that_differ_from_the_defaults() -> None:
    a = SMALL.with_(readings={"cancel-takes-effect": "when-acted", "patch-after-idle": "ended-work"})
    b = SMALL.with_(readings=(("cancel-takes-effect", "when-acted"),))
    assert a == b and hash(a) == hash(b)
    assert a.readings == (("cancel-takes-effect", "when-acted"),)
    assert a.to_json()["readings"] == {"cancel-takes-effect": "when-acted"}
    assert "readings" not in SMALL.to_json()
    assert a.reading_map()["patch-after-idle"] == "ended-work"


def test_simulate_hands_the_reading_to_its_agent(tmp_path: Path) -> None:
    """``acp-model simulate --reading``: the walk's Agent takes the alternative's freedom (seed 4
    is a walk where it reports a user message of its own under other-sources)."""
    from cli.main import main

    texts = {}
    for alt in ("prompt-only", "other-sources"):
        out = tmp_path / f"{alt}.ndjson"
        reading = ["--reading", f"unaccounted-user-message={alt}"]
        assert main(["simulate", "--seed", "4", "--steps", "60", "--out", str(out), *reading]) == 0
        texts[alt == "other-sources"] = out.read_text(encoding="utf-8")
    assert '"msg_x_' in texts[True] and '"msg_x_' not in texts[False]


def test_an_agent_initiated_user_message_only_while_no_prompt_waits() -> None:
    """``unaccounted-user-message=agent-initiated`` (the default): in follow-up work the Agent
    started itself (reported with the removal of a finished background tool call), once every
    prompt is answered, it may report a user message of its own; prompt-only never lets it,
    and judged under prompt-only that message breaks ACC-06."""
    bg = ("tool_call", "tc_bg_1")
    script = [
        *START, ("agent", "bg_start", "tool_call"), ("agent", "bg_list", bg), ("agent", "answer", 1),
        ("agent", "end", "end_turn"), ("agent", "bg_finish", bg), ("agent", "bg_unlist_followup", bg),
    ]  # fmt: skip
    event = ("agent", "synthetic_user", None)
    gives = {"agent-initiated", "other-sources"}
    name = "unaccounted-user-message"
    features = frozenset({"bg_tool", "followup"})
    for alt in BY_NAME[name].alternative_names():
        cfg = SMALL.with_(features=features, prompts=2, capacity=8, readings={name: alt})
        run = scripted(script, cfg, frozenset(), settle=False)
        assert (event in run.world.enabled()) == (alt in gives), alt
    cfg = SMALL.with_(features=features, prompts=2, capacity=8, readings={name: "agent-initiated"})
    world = World(cfg, frozenset(), new_monitors(True, cfg))
    run = scripted([*script, event, ("agent", "end", "end_turn")], cfg, frozenset(), world.monitors)
    assert [f.rule for f in run.findings if f.kind == "rule"] == []
    judged = MonitorSet(readings={name: "prompt-only"}, from_start=True)
    for n, (sender, msg) in enumerate(run.world.transcript, 1):
        judged.feed(sender, msg, n)
    judged.finish(quiescent=True)
    assert "ACC-06" in {f.rule for f in judged.findings if f.kind == "rule"}


def test_an_approval_that_raced_the_cancel_runs_the_tool_only_under_may_be_used() -> None:
    """``approval-racing-cancel``: the approval reached the Agent after the cancel, before the
    work ended. Under may-be-used the Agent runs the tool (in_progress), under not-approved it
    takes the approval as a refusal (the tool fails); judged under not-approved, the first
    transcript breaks CANCEL-06."""
    name = "approval-racing-cancel"
    statuses = {}
    transcripts = {}
    for alt in BY_NAME[name].alternative_names():
        cfg = SMALL.with_(
            features=frozenset({"permission", "cancel"}), prompts=2, capacity=8, readings={name: alt}
        )
        world = World(cfg, frozenset(), new_monitors(True, cfg))
        run = scripted([*ASKED, ("agent", "tool_run", "tc_1")], cfg, frozenset(), world.monitors)
        assert [f.rule for f in run.findings if f.kind == "rule"] == [], alt
        transcripts[alt] = run.world.transcript
        statuses[alt] = [
            m["params"]["update"].get("status")
            for _, m in run.world.transcript
            if m.get("method") == "session/update" and m["params"]["update"].get("toolCallId") == "tc_1"
        ]
    assert "in_progress" in statuses["may-be-used"] and "in_progress" not in statuses["not-approved"]
    assert "failed" in statuses["not-approved"]
    judged = MonitorSet(readings={name: "not-approved"}, from_start=True)
    for n, (sender, msg) in enumerate(transcripts["may-be-used"], 1):
        judged.feed(sender, msg, n)
    judged.finish(quiescent=True)
    assert "CANCEL-06" in {f.rule for f in judged.findings if f.kind == "rule"}


def test_a_tool_call_carries_on_past_an_idle_with_a_list_only_as_unlisted_activity() -> None:
    """review50 N5: where the Agent reports background lists, its idle's list would leave a
    carried tool call out, which says it is not running as background work: under the default
    the work then owes the call's final status before it may end (``model.between``
    ``carries_on``); only under unlisted-activity may the call carry on, and then the checker
    under that alternative finds nothing, under the default a DONE-03."""
    name = "tool-updates-after-idle"
    script = [
        *START,
        ("agent", "bg_start", "terminal"),
        ("agent", "bg_list", ("terminal", "term_1")),
        ("agent", "tool", None),
        ("agent", "tool_run", "tc_1"),
        ("agent", "answer", 1),
    ]
    event = ("agent", "end", "end_turn")
    enabled = {}
    for alt in BY_NAME[name].alternative_names():
        cfg = SMALL.with_(features=frozenset({"terminal"}), capacity=8, tool_calls=1, readings={name: alt})
        run = scripted(script, cfg, frozenset(), settle=False)
        enabled[alt] = event in run.world.enabled()
    assert enabled == {"background": False, "foreground-owed": False, "unlisted-activity": True}
    cfg = SMALL.with_(
        features=frozenset({"terminal"}), capacity=8, tool_calls=1, readings={name: "unlisted-activity"}
    )
    taken = [*script, event, ("agent", "carried_done", "tc_1")]
    run = scripted(taken, cfg, frozenset(), new_monitors(True, cfg))
    assert not [f.rule for f in run.findings if f.kind == "rule"]
    judged = MonitorSet(from_start=True)
    for n, (sender, msg) in enumerate(run.world.transcript, 1):
        judged.feed(sender, msg, n)
    assert "DONE-03" in {f.rule for f in judged.findings}
