"""Checker gaps left open last round (REJ-02: a refused prompt's hook work).

*Whose work is it?* Foreground work reported starting while a prompt waited that was then
answered with an error is that prompt's hook work ("A failed foreground hook can therefore
require both a prompt error response and an idle update", Prompts that are never inserted), and
a user message no response accounts for, reported in it, is "for that submission" (REJ-02).
When another prompt waited at that start too and was inserted, the work is that prompt's as well
(running "may precede insertion, the prompt response, and user-message updates, for example
while a foreground hook runs", Insertion and ordering): once no prompt waits, a user message in
it is as in any work a prompt started, the Agent's own under the default of
unaccounted-user-message (``model.between`` refused_work), not REJ-02. The checker's record
used to take the refusal alone (the flag that also decides the work is no work of the Agent's
own), so the accepted prompt's work was judged as the refused one's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from model import between as bw
from properties.engine import MonitorSet
from simulator.peers.config import DEFAULT
from simulator.peers.schedulers import scripted
from tests.check_support import rule_lines
from tests.wire_dsl import (
    Line,
    answer,
    created,
    fail,
    initialize,
    initialized,
    new_session,
    prompt,
    state,
    user,
)

_SETUP = [initialize("i"), initialized("i"), new_session("n"), created("n")]
_TWO_WAIT = [*_SETUP, prompt(1), prompt(2), state("running")]  # hook work starts, both waiting
_END = state("idle", stop="end_turn")


def _found(lines: Sequence[Line], **options: Any) -> list[tuple[str, int]]:
    return sorted(rule_lines(lines, **options))


def test_refused_work_is_no_inserted_prompts_work() -> None:
    assert bw.SPEC.refused_work(waited_refused=True, waited_inserted=False)
    assert not bw.SPEC.refused_work(waited_refused=True, waited_inserted=True)
    assert not bw.SPEC.refused_work(waited_refused=False, waited_inserted=False)


def test_an_own_message_in_the_accepted_prompts_work_is_no_refused_submissions() -> None:
    """Two prompts wait as work starts; 1 is refused, 2 inserted and answered: a user message
    after both answers, under an ID no response returned, is in prompt 2's work (no REJ-02); so
    too when the inserted one is answered before the other is refused."""
    lines = [*_TWO_WAIT, fail(1, -32603), answer(2, "u2"), user("u2"), user("own"), _END]
    assert _found(lines) == []
    swapped = [*_TWO_WAIT, answer(1, "u1"), user("u1"), fail(2, -32603), user("own"), _END]
    assert _found(swapped) == []
    # the accepted prompt's own message, before its response and after the refusal: no breach
    early = [*_TWO_WAIT, fail(1, -32603), user("u2"), answer(2, "u2"), _END]
    assert _found(early) == []


def test_a_refused_prompts_hook_work_is_still_judged() -> None:
    """Work whose waiting prompts were all refused (or withdrawn) is their hook work: a user
    message in it is for a refused submission (REJ-02), as before."""
    alone = [*_SETUP, prompt(1), state("running"), fail(1, -32603), user("x"), _END]
    assert _found(alone) == [(bw.REJECTED_NOT_REPORTED.rule, 8)]
    both = [*_TWO_WAIT, fail(1, -32603), fail(2, -32800), user("x"), _END]
    assert _found(both) == [(bw.REJECTED_NOT_REPORTED.rule, 10)]
    # a prompt received after the start is no prompt waiting at it: the work stays prompt 1's
    later = [*_SETUP, prompt(1), state("running"), prompt(2), fail(1, -32603), answer(2, "u2")]
    later += [user("u2"), user("x"), _END]
    assert _found(later) == [(bw.REJECTED_NOT_REPORTED.rule, 11)]
    # under prompt-only every unclaimed message counts, after a refusal as REJ-02
    lines = [*_TWO_WAIT, fail(1, -32603), answer(2, "u2"), user("u2"), user("own"), _END]
    assert _found(lines, readings={"unaccounted-user-message": "prompt-only"}) == [
        (bw.REJECTED_NOT_REPORTED.rule, 11)
    ]


D = "deliver"
OWN_TEXT = DEFAULT.with_(features=DEFAULT.features | {"goal", "own_text"}, readings={})


def test_the_simulated_agent_follows_the_same_declaration() -> None:
    """Feature own_text (the decidability twins'): the simulated Agent may report its own user
    message in work a prompt started once no prompt waits, but not in a refused prompt's hook
    work (``Freedoms._after_answer``, through ``Rules.refused_work``): with a prompt that waited
    at the start inserted, it may; with the only one refused, it may not. The checker accepts
    what it sends."""
    two = [("client", "prompt", None), D, ("client", "prompt", None), D, ("agent", "start", None), D]
    two += [("agent", "reject", 1), D, ("agent", "insert", 2), ("agent", "user_message", 2)]
    two += [("agent", "answer", 2), D]
    assert ("agent", "synthetic_user", None) in scripted(two, OWN_TEXT).world.enabled()
    run = scripted(
        [*two, ("agent", "synthetic_user", None), D, ("agent", "end", "end_turn"), D],
        OWN_TEXT,
        frozenset(),
        MonitorSet(),
    )
    assert not [f for f in run.findings if f.kind == "rule"]
    hook = [("client", "prompt", None), D, ("agent", "start", None), D, ("agent", "reject", 1), D]
    assert ("agent", "synthetic_user", None) not in scripted(hook, OWN_TEXT).world.enabled()
