"""The registry of seeded bugs (``properties.seeded``): one declaration per bug, read by every
part that knows seeded bugs, and no list of their names anywhere else."""

from __future__ import annotations

import re
from pathlib import Path

from properties import seeded
from properties.bugs import Again, Misview
from properties.catalogue import RULES_BY_ID
from properties.clientview import CLIENT_FAULTS
from simulator.analysis.mutants import BY_NAME as MUTANTS
from simulator.peers import deviations
from simulator.peers.agent import AGENT_FAULTS
from simulator.peers.client import CLIENT_SIDE_FAULTS

REPO = Path(__file__).resolve().parents[1]


def test_one_entry_per_bug_each_with_a_catalogued_rule_and_a_side() -> None:
    assert len(seeded.BY_NAME) == len(seeded.SEEDED)
    for s in seeded.SEEDED:
        assert s.rule in RULES_BY_ID, s.name
        assert s.side in ("agent", "client"), s.name
        assert s.does and s.does[0].islower(), s.name
        assert set(s.faults) <= set(seeded.BY_NAME), s.name
    assert len({s.rule for s in seeded.SEEDED}) == len(seeded.SEEDED)  # one seeded bug per rule


def test_every_user_reads_the_registry() -> None:
    peers = {s.name for s in seeded.SEEDED if not isinstance(s.bug, Misview | Again)}
    assert set(AGENT_FAULTS) | set(CLIENT_SIDE_FAULTS) == peers
    assert {d.name for d in deviations.DEVIATIONS} == peers
    views = {s.name for s in seeded.SEEDED if isinstance(s.bug, Misview)}
    assert set(CLIENT_FAULTS) == views
    assert set(MUTANTS) == set(seeded.BY_NAME)
    for s in seeded.SEEDED:
        m = MUTANTS[s.name]
        assert (m.side, m.intended_rule, m.description, m.off_wire) == (s.side, s.rule, s.does, s.off_wire)
        assert m.switched_on == frozenset(s.faults)


def test_no_list_of_seeded_bug_names_outside_the_registry() -> None:
    """A seeded bug's name is written once, in ``properties/seeded.py``: no other module of the
    tool holds it as a string (tests may)."""
    from properties.readings import BY_NAME as READINGS

    names = {s.name for s in seeded.SEEDED} - set(READINGS)  # a reading may share a bug's name
    pattern = re.compile(r"[\"']([a-z0-9-]+)[\"']")
    found = []
    for package in ("model", "properties", "simulator", "cli", "diagrams"):
        for path in sorted((REPO / package).rglob("*.py")):
            if path == REPO / "properties" / "seeded.py":
                continue
            for m in pattern.finditer(path.read_text("utf-8")):
                if m.group(1) in names:
                    found.append(f"{path.relative_to(REPO)}: {m.group(1)}")
    assert found == []


UNCHECKED_AGENT_RULES: set[str] = set()
"""MUST rules without a check or a seeded bug yet: none (FG-01 and TRANS-05 were the last)."""


def test_every_checked_must_has_a_seeded_bug_that_stands_for_it() -> None:
    """Every MUST / MUST NOT rule with a check has a seeded bug the decidability search runs for
    it: its own, or for a rule the spec restates, the bug of another statement of it
    (``mutants.standing_for``, whose breaches count under every ID of the group)."""
    from properties.catalogue import RULES
    from simulator.analysis.mutants import standing_for

    missing = [
        r.id
        for r in RULES
        if r.level in ("MUST", "MUST NOT")
        and r.check != "not-checkable"
        and (r.check == "unchecked" or standing_for(r.id)[0] is None)
    ]
    assert missing == sorted(UNCHECKED_AGENT_RULES)
    mutant, same = standing_for("OUT-01")
    assert mutant is not None and mutant.intended_rule == "FG-02" and same == {"FG-02", "OUT-01"}
    mutant, same = standing_for("CANCEL-12")
    assert mutant is not None and mutant.name == "cancel-as-error" and same == {"CANCEL-12"}
