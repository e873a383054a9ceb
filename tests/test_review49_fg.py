"""Review 49, the foreground cases: a parent blocked on its subagent's request (P1, c081), a
requires_action stretch with no request in view (P4, b39: the reading
``requires-action-without-request``), and work that ends under a custom state the Client never
advertised (P2, b33 and b46: idle still owed).

Each test fails without the change it guards: ``Rules.blocks_workflow_of`` and ``Facts.parents``
(P1), the reading (P4), ``model.foreground.owed_through_custom`` (P2); and running, then a custom
state, then an idle with a stop reason is no STATE-04 (the monitor judged "a custom state that
followed idle" by ``last_std``, which that idle had already set to idle).
"""

from __future__ import annotations

from model import between as bw
from model import foreground as fgm
from properties.engine import MonitorSet
from tests.wire_dsl import (
    Line,
    answer,
    ask,
    cancel,
    created,
    initialize,
    initialized,
    new_session,
    permission_answer,
    prompt,
    say,
    state,
    subagent,
    tool,
    user,
)

OPENED = [initialize("init"), initialized("init"), new_session("new"), created("new")]
"""A connection whose Client advertised no custom states, session s1 created."""
ADVERTISED = [initialize("init", meta={"customStates": True}), *OPENED[1:]]
"""The same, the Client's initialize carrying ``_meta`` (where custom states could be advertised)."""
STARTED = [prompt(1), state("running"), user("u1"), answer(1, "u1"), say("a1")]


Found = list[tuple[str, int, tuple[str, ...]]]


def _run(lines: list[Line], quiescent: bool = True, **readings: str) -> Found:
    ms = MonitorSet(readings=readings or None)
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=quiescent)
    return [(f.rule, f.line or 0, tuple(f.readings)) for f in ms.findings if f.kind == "rule"]


def _rules(found: Found) -> set[str]:
    return {rule for rule, _, _ in found}


# -- P1: a parent blocked on its subagent's request -------------------------------------------------
def _parent_blocked_on_child(child_asks: bool = True, announced: bool = True) -> list[Line]:
    """c081 in short: the parent's tool call runs subagent s2; s2 asks permission and blocks; the
    parent, waiting on it, reports requires_action; after the answer both run again and end."""
    return [
        *OPENED,
        *STARTED,
        tool("t1", "in_progress", title="Task"),
        *([subagent("s2", title="explorer")] if announced else []),
        state("running", "s2"),
        tool("c1", "pending", "s2"),
        *([ask("p1", "c1", sid="s2")] if child_asks else []),
        state("requires_action", "s2"),
        state("requires_action"),
        *([permission_answer("p1", "allow")] if child_asks else []),
        state("running", "s2"),
        state("running"),
        tool("c1", "in_progress", "s2"),
        tool("c1", "completed", "s2"),
        state("idle", "s2", stop="end_turn"),
        tool("t1", "completed"),
        state("idle", stop="end_turn"),
    ]


def test_a_parent_blocked_on_its_announced_child_s_permission_request_breaks_no_trans_05() -> None:
    """ "requires_action means the foreground workflow as a whole is blocked on user action"
    (Waiting for user action): the parent's work waits on its subagent, which waits on the user;
    the child's request counts for the parent's stretch (``Rules.blocks_workflow_of``)."""
    assert bw.BLOCKED_ON_USER.rule not in _rules(_run(_parent_blocked_on_child()))


def test_a_request_of_a_session_the_parent_never_announced_does_not_count() -> None:
    """Only a child the session announced with subagent_update is its descendant: the same run
    without the announcement leaves the parent's stretch blocked on nothing of its own (and the
    child's own stretch, which has its request, is fine)."""
    found = _run(_parent_blocked_on_child(announced=False))
    assert [(r, s) for r, _, s in found if r == bw.BLOCKED_ON_USER.rule] == [
        (bw.BLOCKED_ON_USER.rule, ("requires-action-without-request",))
    ]


def test_descendants_count_and_ancestors_or_strangers_do_not() -> None:
    parents = {"child": "parent", "grandchild": "child", "a": "b", "b": "a"}
    counts = bw.SPEC.blocks_workflow_of
    assert counts("parent", "parent", parents)
    assert counts("parent", "child", parents)
    assert counts("parent", "grandchild", parents)
    assert not counts("child", "parent", parents)  # a child does not wait on its parent's request
    assert not counts("parent", "other", parents)
    assert not counts("parent", "a", parents)  # a cycle of announcements ends the walk


# -- P4: requires_action with no request in view --------------------------------------------------
B39 = [*OPENED, *STARTED[:4], state("requires_action"), state("running"), state("idle", stop="end_turn")]


def test_requires_action_without_a_request_is_trans_05_under_the_default_reading_and_names_it() -> None:
    assert _run(B39) == [("TRANS-05", len(OPENED) + 6, ("requires-action-without-request",))]


def test_user_action_unseen_on_the_wire_clears_it() -> None:
    assert _run(B39, **{"requires-action-without-request": "user-action-unseen"}) == []


def test_a_stretch_still_open_at_the_end_names_the_reading_too() -> None:
    found = _run(B39[:-2])
    assert ("TRANS-05", len(OPENED) + 5, ("requires-action-without-request",)) in found
    assert _run(B39[:-2], **{"requires-action-without-request": "user-action-unseen"}) == [
        ("FG-05", len(OPENED) + 5, ())
    ]


# -- P2: work that ends under a custom state the Client did not advertise ------------------------
def _ends_under(custom: str, opened: list[Line] = OPENED, before: list[Line] | None = None) -> list[Line]:
    return [*opened, *STARTED, *(before or []), state(custom)]


def test_work_ended_by_an_unadvertised_custom_state_still_owes_its_idle() -> None:
    """b33 / b46: "Unless the Client has advertised support for a custom or future state, Agents
    MUST still report running, requires_action, and idle where the state transitions require them"
    (Session states): the custom state stands for no idle."""
    for custom in ("done", "_finished"):
        lines = _ends_under(custom)
        assert _run(lines) == [("FG-05", len(lines), ())], custom
    # what stays: only the complete transcript owes the idle; a custom state the Client may have
    # advertised may stand for idle, and one after unknown owes nothing (nothing is known then)
    assert _run(_ends_under("done"), quiescent=False) == []
    assert _run(_ends_under("_finished", ADVERTISED)) == []
    assert _run(_ends_under("_finished", [])) == []  # no initialize in view: it may have advertised
    assert _run(_ends_under("done", before=[state("unknown")])) == []


def test_from_requires_action_too_and_a_cancelled_one_owes_its_cancelled_idle() -> None:
    blocked = _ends_under("done", before=[tool("c1", "pending"), ask("p1", "c1"), state("requires_action")])
    assert ("FG-05", len(blocked), ()) in _run(blocked)
    cancelled = _ends_under("done", before=[cancel()])
    assert _run(cancelled) == [(bw.CANCELLED_WORK_ENDS.rule, len(cancelled), ())]


def test_an_idle_after_the_custom_state_discharges_it() -> None:
    assert _run([*_ends_under("done"), state("idle", stop="end_turn")]) == []


def test_the_model_states_it() -> None:
    assert fgm.owed_through_custom(fgm.SPEC, fgm.RUNNING, False) == "FG-05"
    assert fgm.owed_through_custom(fgm.SPEC, fgm.REQUIRES_ACTION, False) == "FG-05"
    assert fgm.owed_through_custom(fgm.SPEC, fgm.RUNNING, True) is None
    assert fgm.owed_through_custom(fgm.SPEC, fgm.UNKNOWN, False) is None
    assert fgm.owed_through_custom(fgm.SPEC, fgm.IDLE, False) is None


def test_a_state_that_is_no_string_gives_a_finding_not_a_traceback() -> None:
    """A state_update whose ``state`` is a list (bad input) is judged like any unrecognized state:
    the custom-state bookkeeping once looked it up in a set and raised TypeError."""
    ms = MonitorSet()
    update = {"sessionUpdate": "state_update", "state": [1]}
    bad = (
        "agent",
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}},
    )
    for n, (sender, msg) in enumerate([*OPENED, *STARTED, bad, state("idle", stop="end_turn")], 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)  # raised TypeError (unhashable list) before the fix
