"""Seeded bugs: faulty agents and clients, each written to break one rule, and the runner that
proves the checker catches every one of them.

Theory of operation
-------------------
A mutant is a seeded bug of the registry (``properties.seeded``: a fault of the simulated
Agent, of what the Client sends or of the Client's view), with the catalogue rule it is meant to
break, run under its own bounds (``config``). The runner executes every named scenario plus a
fixed budget of seeded random walks with the fault switched on and all monitors attached; agent
and client-send faults are judged on the wire (monitor findings), client-view faults by
comparing the faulty view with the reference view after every step. A mutant is caught when
some run reports its intended rule; the shortest such transcript is kept (and can be written
out as a corpus for ``acp-model check``).
The same runs without any fault must produce no finding at all.

Must not know: how monitors decide; how transcripts are written to disk.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from functools import partial
from typing import Any

from properties.catalogue import RESTATED
from properties.engine import MonitorSet
from properties.seeded import SEEDED, Seeded
from simulator.peers import config
from simulator.peers.config import DEFAULT, MUTANT_STEPS, MUTANT_WALKS, Config, seeded_config
from simulator.peers.scenarios import SCENARIOS, Scenario
from simulator.peers.schedulers import Run, random_walk, scripted
from simulator.peers.world import Line


class Mutant(Seeded):
    """A seeded bug of the registry as ``acp-model mutants`` runs it: its entry (name, side,
    off_wire as ``Seeded`` has them) with the names the runner and its JSON use for the others
    (``intended_rule``: ``Seeded.rule``, ``description``: ``does``, ``switched_on``: ``faults``),
    and the bounds its ``walks`` state (``config.seeded_config``: the focused default with their
    changes)."""

    __slots__ = ()

    def __init__(self, seeded: Seeded) -> None:
        for f in fields(Seeded):
            object.__setattr__(self, f.name, getattr(seeded, f.name))

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickled by name (a worker's verdict names its bug: some entries hold functions that
        cannot be pickled)."""
        return by_name, (self.name,)

    @property
    def intended_rule(self) -> str:
        return self.rule

    @property
    def description(self) -> str:
        return self.does

    @property
    def cfg(self) -> Config:
        return seeded_config(self)

    @property
    def switched_on(self) -> frozenset[str]:
        return frozenset(self.faults)


MUTANTS: tuple[Mutant, ...] = tuple(map(Mutant, SEEDED))
"""Every seeded bug of the registry (``properties.seeded``), in its order."""
BY_NAME: dict[str, Mutant] = {m.name: m for m in MUTANTS}


def by_name(name: str) -> Mutant:
    return BY_NAME[name]


def breaking(rule: str) -> Mutant | None:
    """The mutant of the seeded bug whose faulty peer breaks ``rule``
    (``simulator.peers.config.breaking``), or None when no seeded bug breaks it."""
    s = config.breaking(rule)
    return None if s is None else BY_NAME[s.name]


def standing_for(rule: str) -> tuple[Mutant | None, frozenset[str]]:
    """The seeded bug the decidability search runs for ``rule``, and the rule IDs whose breaches
    and findings count as the rule's: its own bug and ID; for a rule without a bug of its own
    that the spec restates in several sections (``catalogue.RESTATED``: one obligation, judged
    once under one of its IDs), the bug of another statement of it, and every ID of the group."""
    own = breaking(rule)
    if own is not None:
        return own, frozenset({rule})
    for group in RESTATED.values():
        if rule in group:
            mate = next((m for r in group if (m := breaking(r)) is not None), None)
            return mate, frozenset(group)
    return None, frozenset({rule})


@dataclass
class Verdict:
    mutant: Mutant | None
    runs: int = 0
    caught_by: Counter[str] = field(default_factory=Counter)
    shortest: list[Line] | None = None
    shortest_source: str = ""
    shortest_rules: frozenset[str] = frozenset()
    """Rules the monitors reported on the wire for the shortest run, breaches and obligations
    still open at its end (model refusals and client-view breaches excluded): ``acp-model check``
    on that transcript finds exactly these."""
    findings: int = 0

    @property
    def caught(self) -> bool:
        return self.mutant is not None and self.caught_by[self.mutant.intended_rule] > 0

    def to_json(self) -> dict[str, Any]:
        m = self.mutant
        return {
            "name": m.name if m else "unmodified",
            "side": m.side if m else "both",
            "intended_rule": m.intended_rule if m else None,
            "description": m.description if m else "the reference agent and client",
            "caught": self.caught,
            "caught_by": sorted(self.caught_by),
            "shortest_length": len(self.shortest) if self.shortest is not None else None,
            "shortest_source": self.shortest_source or None,
            "shortest_wire_rules": sorted(self.shortest_rules),
            **({"drivable": not m.off_wire} if m and m.side == "agent" else {}),
            **({"off_wire": m.off_wire} if m and m.off_wire else {}),
            "runs": self.runs,
            "findings": self.findings,
        }


def sample(
    scenarios: Iterable[Scenario],
    faults: frozenset[str],
    cfg: Config,
    walks: int,
    steps: int,
    seed: int = 0,
    monitors: Callable[[], MonitorSet | None] = lambda: None,
    **extra: Any,
) -> Iterator[tuple[str, Config, Callable[[], Run]]]:
    """The runs a seeded bug is judged on, as (source, bounds, the run made when called): each of
    ``scenarios`` under its own bounds, then the seeded random walks ``seed .. seed+walks-1``
    under ``cfg``; ``extra``: changes to every ``Config`` (readings, a variant)."""
    for scenario in scenarios:
        scfg = scenario.cfg.with_(**extra) if extra else scenario.cfg
        yield (
            f"scenario {scenario.name}",
            scfg,
            partial(scripted, scenario.script, scfg, faults, monitors(), strict=False),
        )
    wcfg = cfg.with_(**extra) if extra else cfg
    for n in range(seed, seed + walks):
        yield f"seed {n}", wcfg, partial(random_walk, n, steps, wcfg, faults, monitors())


def shows(name: str, cfg: Config, walks: int = MUTANT_WALKS, steps: int = MUTANT_STEPS) -> bool:
    """Whether seeded bug ``name`` breaks a rule (a breach mark, ``World.hidden``) in one of the
    seeded random walks 0..walks-1 under ``cfg`` (a narrowed Agent's bounds, such as those of
    ``acp-model agent --common-path``); the first walk that shows it ends the search. False is
    no proof that it never can, only that these walks never took it there."""
    faults = by_name(name).switched_on
    return any(make().world.hidden for _, _, make in sample((), faults, cfg, walks, steps))


def judge(mutant: Mutant | None, walks: int = MUTANT_WALKS, steps: int = MUTANT_STEPS) -> Verdict:
    """Run a mutant (or, with None, the unmodified simulator) through every scenario and the seeded
    random walks 0..walks-1."""
    fault = mutant.switched_on if mutant else frozenset()
    cfg = mutant.cfg if mutant else DEFAULT
    verdict = Verdict(mutant)
    for source, _, make in sample(
        SCENARIOS, fault, cfg, walks, steps, monitors=lambda: MonitorSet(from_start=True)
    ):
        run = make()
        verdict.runs += 1
        rules = {f.rule for f in run.findings if f.kind == "rule"} | set(run.world.view_breaches)
        verdict.findings += len(rules)
        verdict.caught_by.update(rules)
        hit = mutant.intended_rule in rules if mutant else bool(rules)
        if hit and (verdict.shortest is None or len(run.world.transcript) < len(verdict.shortest)):
            verdict.shortest = list(run.world.transcript)
            verdict.shortest_source = source
            verdict.shortest_rules = frozenset(
                f.rule
                for f in run.findings
                if f.kind in ("rule", "open") and not f.explanation.startswith("model: ")
            )
    return verdict


def judge_job(job: tuple[str | None, int, int]) -> Verdict:
    """``judge`` as a job of a worker pool (``simulator.workers``): (mutant name or None for the
    unmodified simulator, walks, steps)."""
    name, walks, steps = job
    return judge(BY_NAME[name] if name is not None else None, walks, steps)
