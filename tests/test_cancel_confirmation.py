"""Which idle confirms a cancellation (``model.between`` ``cancel_confirmed``, ``confirming_idle``):
the first idle after a cancel received while work was reported active, also when unknown or an
unrecognized state was reported in between (issue 31: decidability's witnesses of TRANS-04 and
CANCEL-12 were such transcripts, accepted by check)."""

from __future__ import annotations

from typing import Any

import pytest

from model import between as bw
from tests.check_support import rule_lines as _rules
from tests.wire_dsl import (
    Line,
    answer,
    cancel,
    close,
    created,
    initialize,
    initialized,
    item,
    new_session,
    ok,
    prompt,
    resume,
    state,
    tool,
    user,
)

TURN: list[Line] = [prompt(1), state("running"), user("u1"), answer(1, "u1")]


def test_the_declaration_names_the_first_live_idle_after_the_cancel() -> None:
    assert bw.SPEC.confirming_idle(cancel_pending=True, resume_snapshot=False)
    assert not bw.SPEC.confirming_idle(cancel_pending=True, resume_snapshot=True)
    assert not bw.SPEC.confirming_idle(cancel_pending=False, resume_snapshot=False)


@pytest.mark.parametrize(
    ("stop", "extra", "rule"),
    [
        ("end_turn", {}, bw.CANCEL_CONFIRMED.rule),
        ("error", {"error": {"code": -32603, "message": "x"}}, bw.CANCEL_NOT_ERROR.rule),
        ("cancelled", {}, None),
    ],
)
def test_an_idle_after_unknown_still_confirms_the_cancellation(
    stop: str, extra: dict[str, Any], rule: str | None
) -> None:
    """Unknown "is neither a work outcome nor a closure or cancellation" (Session states): the
    work the cancel covered still owes its confirming idle, and the idle after unknown is the
    last one that could be it (a repeated idle is no completion)."""
    lines = [*TURN, cancel(), state("unknown"), state("idle", stop=stop, **extra)]
    assert _rules(lines) == ([] if rule is None else [(rule, 7)])


def test_an_idle_after_an_unrecognized_state_confirms_it_too() -> None:
    setup = [new_session("n"), created("n")]
    custom = [initialize(0, meta={"customStates": True}), initialized(0), *setup, *TURN]
    lines = [*custom, cancel(), state("_reviewing"), state("idle", stop="end_turn")]
    assert _rules(lines) == [(bw.CANCEL_CONFIRMED.rule, len(lines))]


def test_the_idle_after_a_resume_and_unknown_confirms_it() -> None:
    """The shape of decidability's witness (seed 116): cancel while running, a resume answered
    with running, unknown, then an idle with end_turn."""
    lines = [
        *TURN,
        cancel(),
        resume(3, replay=False),
        state("running"),
        ok(3),
        state("unknown"),
        state("idle", stop="end_turn"),
    ]
    assert _rules(lines) == [(bw.CANCEL_CONFIRMED.rule, len(lines))]


def test_what_does_not_confirm_a_cancellation() -> None:
    # a resume snapshot reports the state, it ends nothing: it is no confirming idle (no
    # cancel_confirmed), but an idle one shows the cancelled work over without that idle, which
    # no later idle can be (cancelled_work_ends, Rules.snapshot_leaves_cancel)
    snapshot = [*TURN, cancel(), resume(3, replay=False), state("idle", stop="end_turn"), ok(3)]
    assert _rules(snapshot) == [(bw.CANCELLED_WORK_ENDS.rule, 7)]
    running = [*TURN, cancel(), resume(3, replay=False), state("running"), ok(3)]
    assert _rules([*running, state("idle", stop="cancelled")]) == []
    # a cancel received while unknown was reported: no active work is known to be covered
    lost = [*TURN, state("unknown"), cancel(), state("idle", stop="end_turn")]
    assert _rules(lost) == []
    # when-acted: the work may have ended on its own before the Agent acted on the cancel
    after_unknown = [*TURN, cancel(), state("unknown"), state("idle", stop="end_turn")]
    assert _rules(after_unknown, readings={"cancel-takes-effect": "when-acted"}) == []


def test_a_close_during_the_work_then_unknown_is_confirmed_by_the_next_idle() -> None:
    lines = [*TURN, close(2), state("unknown"), state("idle", stop="end_turn"), ok(2)]
    assert (bw.CANCEL_CONFIRMED.rule, 7) in _rules(lines)


# -- unlisted-tool-at-cancelled-idle: the default stays owed-before-idle ---------------------------

_WATCHER: list[Line] = [
    prompt(1),
    state("running"),
    tool("tc_bg_1", "in_progress"),
    cancel(),
    state("idle", stop="cancelled"),
]
"""A conforming Agent's turn (explore's walk 1924 under every-unlisted): a background watcher
announced during the work, "before the first list that names it" (Background work), and the
cancelled work's idle sent before that list."""


def test_an_unlisted_tool_call_no_list_has_ruled_on_is_no_breach_at_the_cancelled_idle() -> None:
    from properties.readings import BY_NAME

    assert BY_NAME["unlisted-tool-at-cancelled-idle"].default == "owed-before-idle"
    assert _rules(_WATCHER) == []
    # the watcher is listed afterwards: it was background work all along
    listed = [*_WATCHER, state("idle", bg=[item("tool_call", "tc_bg_1")])]
    assert _rules(listed) == []
    # under every-unlisted the same conforming turn breaks CANCEL-17 at the idle
    every = {"unlisted-tool-at-cancelled-idle": "every-unlisted"}
    assert _rules(_WATCHER, readings=every) == [(bw.CANCELLED_TOOLS_FINAL.rule, 5)]
    # a concrete list at the idle that leaves it out rules on it under the default
    ruled = [*_WATCHER[:-1], state("idle", stop="cancelled", bg=[])]
    assert _rules(ruled) == [(bw.CANCELLED_TOOLS_FINAL.rule, 5)]


# -- the simulated Agent: a cancel it could not see the work for -----------------------------------

_RUNNING = [
    ("client", "prompt", None),
    "deliver",
    ("agent", "insert", 1),
    ("agent", "user_message", 1),
    ("agent", "start", None),
    ("agent", "answer", 1),
    "deliver",
]


@pytest.mark.parametrize("lost", [True, False])
def test_a_cancel_received_while_unknown_was_reported_may_find_the_work_ended_on_its_own(lost: bool) -> None:
    """Unknown is reported on "actual loss of observability" (Session states): a cancel that
    arrives then may find the work already over, so the Agent may end it with its own stop
    reason, and the checker (no cancel of work reported active) accepts it. A cancel received
    while running was reported covers the work it saw: only cancelled confirms it."""
    from simulator.explore.common import new_monitors
    from simulator.peers.config import SMALL
    from simulator.peers.schedulers import scripted
    from simulator.peers.world import World

    cfg = SMALL.with_(features=frozenset({"unknown", "cancel"}), prompts=1, capacity=8, losses=1)
    before = [("agent", "lose", None), "deliver"] if lost else []
    script = [*_RUNNING, *before, ("client", "cancel", None), "deliver"]
    run = scripted(script, cfg, frozenset(), settle=False)
    own_end = ("agent", "end", "end_turn")
    assert (own_end in run.world.enabled()) is lost
    assert ("agent", "end", "cancelled") in run.world.enabled()
    if lost:
        world = World(cfg, frozenset(), new_monitors(True, cfg))
        done = scripted([*script, own_end], cfg, frozenset(), world.monitors)
        assert [f.rule for f in done.findings if f.kind == "rule"] == []


def test_the_agent_may_withdraw_the_cancelled_works_elicitation_before_its_idle() -> None:
    """Cancellation: the Agent stops waiting for the cancelled work's requests and SHOULD cancel
    each with $/cancel_request ("The same rules apply to permissions and both elicitation
    modes"): before its idle as well as after it. The messages up to the Client's answer are
    then a conforming run's (decidability's shortest accepted CANCEL-11 witness)."""
    from simulator.explore.common import new_monitors
    from simulator.peers.scenarios import ELICITING, script
    from simulator.peers.schedulers import scripted
    from simulator.peers.world import World

    blocked = script("TURN agent.elicit('form') agent.block deliver client.cancel deliver")
    assert ("agent", "elicit_withdraw", "elicit_1") in scripted(
        blocked, ELICITING, settle=False
    ).world.enabled()
    steps = blocked + script(
        "agent.elicit_withdraw('elicit_1') deliver client.elicit_cancel('elicit_1') deliver "
        "agent.end('cancelled') deliver"
    )
    world = World(ELICITING, frozenset(), new_monitors(True, ELICITING))
    run = scripted(steps, ELICITING, frozenset(), world.monitors)
    assert [f.rule for f in run.findings if f.kind == "rule"] == []
    methods = [m.get("method") for _, m in run.world.transcript]
    assert methods.index("$/cancel_request") < len(methods) - 1  # before the idle, the last line


def test_cancel_06_and_trans_05_are_written_once_in_the_model() -> None:
    """The permission table's abandon cell and the foreground table's block cell name these
    rules; the declarations take their rule from those cells."""
    import ast
    from pathlib import Path

    from model import foreground, permission

    assert bw.CANCELLED_PERMISSIONS.rule is permission.SPEC.forbidden["abandon"]
    assert bw.BLOCKED_ON_USER.rule is foreground.SPEC.forbidden["block"]
    model = Path(__file__).resolve().parents[1] / "model"
    for rule in (bw.CANCELLED_PERMISSIONS.rule, bw.BLOCKED_ON_USER.rule):
        found = [
            path.name
            for path in sorted(model.glob("*.py"))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and node.value == rule
        ]
        assert len(found) == 1, (rule, found)
