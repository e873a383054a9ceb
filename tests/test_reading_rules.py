"""A reading names every rule whose wire-decidability verdict it moves (``Reading.rules``).

``decide_all`` computes a rule's verdict again only under the alternatives of the readings that
name it (``simulator.analysis.decidability.affected``), so a reading that moved the verdict of a
rule it does not name would drop that difference from the spec report unseen. These tests take
every rule with a seeded bug, under every other alternative of every reading, at a reduced
sample (named scenarios only: the same script under both alternatives, so the runs differ only
where the reading gives the peers another freedom or the checker another judgement), and check
that the rules whose verdict differs are among the rules the reading names, or restate an
obligation it names (``standing_for``: OUT-02, TOOL-03 and WAIT-01 are judged by FG-04's bug, so
a reading that names FG-04 moves them too).

A difference counts when both verdicts rest on breaches (yes, partly or no on both sides): the
checker, or what the peers put on the wire, tells the breaches apart differently under the
alternative. ``unknown`` on one side means that sample held no breach at all, which at a reduced
sample is the sample's size speaking: in a single scenario BG-08's bug breaks it under the
default and not under ``state-updates-before-first-list=every``, in all 29 CANCEL-19's bug breaks
it only under ``repeated-idle-new-stop-reason=completion``, and at the report's bound neither
verdict moves.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from properties.readings import BY_NAME, READINGS
from simulator.analysis import decidability as dec
from simulator.peers.scenarios import SCENARIOS

SCENARIOS_ONLY = dec.Bound(walks=0, twin_nodes=0, exhaustive_states=0)
"""The named scenarios alone: no random walk, no exhaustive search, no witness search."""
ENDS_WITH_TOOLS_OPEN = ("cancellation_with_held_prompt", "failure")
"""The scenarios whose foreground work ends (cancelled, failed) while a tool call of it is
unfinished: where the exemptions of CANCEL-17 and FAIL-04 (listed background work) decide."""
FAST = (*ENDS_WITH_TOOLS_OPEN, "elicitation_form")
"""With a scenario where work waits on the user (requires_action) and its output resumes: FG-04's
obligation, which OUT-02, TOOL-03 and WAIT-01 restate."""


def differences(monkeypatch: pytest.MonkeyPatch, scenarios: tuple[str, ...]) -> set[tuple[str, str, str]]:
    """(rule, reading, alternative) of every verdict that differs, both sides resting on breaches,
    at ``SCENARIOS_ONLY`` restricted to ``scenarios`` (every rule, every other alternative)."""
    monkeypatch.setattr(dec, "SCENARIOS", tuple(s for s in SCENARIOS if s.name in scenarios))
    base = [dec.decide(r.id, SCENARIOS_ONLY) for r in dec.rules_with_check()]
    out = set()
    for name, alt in dec.alternatives(("all",)):
        for v in base:
            if v.mutant is None or v.decidable == "unknown":
                continue
            w = dec.decide(v.rule, SCENARIOS_ONLY, {name: alt}, same_as=v.decidable)
            if w.decidable not in (v.decidable, "unknown"):
                out.add((v.rule, name, alt))
    return out


def unnamed(found: set[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The differences of rules ``decide_all`` does not compute again under that reading."""
    return sorted(d for d in found if not dec.affected(d[1], d[0]))


def test_verdicts_a_reading_moves_are_of_rules_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the scenarios where cancelled and failed work leave a tool call unfinished, and one
    where work waits on the user, every verdict an alternative moves is of a rule its reading
    names (or that restates one it names: OUT-02 judged with FG-04's bug); among them, CANCEL-17's and
    FAIL-04's under state-updates-before-first-list=every (the idle then carries a background
    list, so an unfinished tool call it leaves out is no longer possibly background work announced
    before its first list: the breach is seen), and the cancellation's own readings."""
    found = differences(monkeypatch, FAST)
    assert unnamed(found) == []
    assert {
        ("OUT-02", "output-while-requires-action", "pending-output"),
        ("CANCEL-17", "state-updates-before-first-list", "every"),
        ("FAIL-04", "state-updates-before-first-list", "every"),
        ("CANCEL-17", "unlisted-tool-at-cancelled-idle", "every-unlisted"),
        ("TRANS-04", "cancel-takes-effect", "when-acted"),
    } <= found


def test_by_reading_computes_only_the_rules_a_reading_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """``decide_all`` computes a verdict again only under the alternatives of readings that name
    the rule: CANCEL-17's difference under state-updates-before-first-list=every is listed, and is
    not computed at all once the reading's data leaves CANCEL-17 out; ACC-01 is named by no
    reading and never computed again."""
    monkeypatch.setattr(dec, "SCENARIOS", tuple(s for s in SCENARIOS if s.name in ENDS_WITH_TOOLS_OPEN))
    alts = [("state-updates-before-first-list", "every")]
    calls: list[tuple[str, object]] = []
    real = dec.decide

    def counted(rule: str, *a: object) -> dec.Verdict:
        calls.append((rule, a[1]))
        return real(rule, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(dec, "decide", counted)
    verdicts, complete = dec.decide_all(["CANCEL-17", "ACC-01"], SCENARIOS_ONLY, by_reading=alts)
    assert complete and [(r.reading, r.alternative) for r in verdicts[0].by_reading or []] == alts
    assert verdicts[1].by_reading == []
    assert [rule for rule, readings in calls if readings] == ["CANCEL-17"]
    reading = BY_NAME[alts[0][0]]
    monkeypatch.setitem(BY_NAME, reading.name, replace(reading, rules=("BG-07", "FAIL-04")))
    calls.clear()
    verdicts, _ = dec.decide_all(["CANCEL-17", "ACC-01"], SCENARIOS_ONLY, by_reading=alts)
    assert verdicts[0].by_reading == [] and [rule for rule, readings in calls if readings] == []


@pytest.mark.deep
def test_verdicts_a_reading_moves_in_every_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same over all named scenarios (about a minute)."""
    found = differences(monkeypatch, tuple(s.name for s in SCENARIOS))
    assert unnamed(found) == []
    assert len({d[1] for d in found}) >= 6 and len(READINGS) > 6
