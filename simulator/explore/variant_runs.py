"""What a variant gives the simulated peers, and what it cannot: the explorers' side of variants.

Theory of operation
-------------------
A variant (``properties.variants``) drops rules and changes table rows. For the simulated peers:

- a dropped rule with a seeded bug that breaks it (``simulator.peers.config.breaking``): the variant's
  peers may also behave like that bug. An exploration under the variant is the union of the
  spec's behaviours and the behaviours with the faults of every dropped rule's bug switched on
  together (``behaviours``): the exhaustive search explores each slice once per behaviour set;
  the random mode splits its walks and hypothesis examples between them (the first half, rounded
  up, with the spec's behaviours; the same seed for both halves). The findings of dropped rules
  are set aside by the monitors and the relaxed tables, so what remains is what the new
  behaviours do to the other rules.
- a dropped rule without a seeded bug: no behaviour of the simulated peers is forbidden by this
  rule alone, so the peers gain nothing (``notes`` says so; the checker still sets its findings
  aside).
- a row of an Agent trigger: the simulated agent chooses its moves from the variant's tables
  (``Agent._can``): it offers an added row as a move and no longer offers one that needs a
  removed row (what is still decided outside a table, e.g. a reaction to a received message,
  is pruned: ``World.enabled``, ``simulator.explore.state.Peer.choices``; a reaction cannot be
  pruned, so one that needs a removed row stops the run with a model finding).
- a row of a Client trigger of the session or permission machine: the simulated Client chooses
  those moves from its tables (``simulator.peers.client``): it offers an added row as a move and
  no longer offers a removed one.
- rows of the entity machine: nothing executes that table yet.

Must not know: files, the CLI, how the explorers search.
"""

from __future__ import annotations

from model.between import BY_NAME as BETWEEN
from model.between import DECLARATIONS, rules_stated
from model.registry import BY_NAME
from properties.engine import MonitorSet
from properties.variants import Variant
from simulator.peers.config import breaking

AGENT_MACHINES = (
    "foreground",
    "prompt",
    "tool_call",
    "permission",
    "elicitation",
    "compaction",
    "background_item",
    "session",
)
"""Machines whose Agent rows the simulated agent chooses its moves from (``Agent._can``)."""
CLIENT_MACHINES = ("session", "permission", "elicitation")
"""Machines whose Client rows the simulated client chooses its moves from (``simulator.peers.client``)."""
CHECKER_MACHINES = tuple(sorted({t.name for m in MonitorSet().monitors for t in type(m).TABLES}))
"""Machines whose tables the checker's monitors fire (``Monitor.TABLES``)."""


def added_faults(variant: Variant | None) -> frozenset[str]:
    """The faults of the seeded bugs that break the variant's dropped rules (switched on
    together for the variant's extra behaviours)."""
    bugs = [breaking(rule) for rule in variant.drop] if variant is not None else []
    return frozenset[str]().union(*(bug.faults for bug in bugs if bug is not None))


def behaviours(variant: Variant | None, faults: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """(label, faults) of every behaviour set an exploration under ``variant`` covers: the
    spec's ("spec"), then, when a dropped rule has a seeded bug, those bugs on ("dropped")."""
    out = [("spec", faults)]
    extra = added_faults(variant)
    if extra - faults:
        out.append(("dropped", faults | extra))
    return out


def notes(variant: Variant | None) -> list[str]:
    """One line per dropped rule and per row change: what it gives the simulated peers and the
    checker (never silent about what it cannot)."""
    if variant is None:
        return []
    out: list[str] = []
    for rule in variant.drop:
        mutant = breaking(rule)
        if mutant is None:
            out.append(
                f"{rule}: no behaviour of the simulated peers is forbidden by this rule alone "
                "(no seeded bug breaks it): the peers gain nothing; the checker sets its findings aside"
            )
        else:
            faults = ", ".join(sorted(mutant.faults))
            out.append(
                f"{rule}: the simulated {mutant.side} may also behave like seeded bug {mutant.name}, "
                f"which {mutant.does} (faults: {faults}); the checker sets its findings aside"
            )
    cells: dict[str, list[str]] = {}
    for rule, machine, state, trigger, effect in variant.relaxed_cells():
        cells.setdefault(rule, []).append(f"{machine} {state}/{trigger}: {effect}")
    for rule in variant.drop:
        if rule in cells:
            out.append(f"{rule} in the tables: " + "; ".join(cells[rule]))
        else:
            out.append(f"{rule} in the tables: no forbidden cell or guard names it")
        for name in STATED.get(rule, ()):
            out.append(f"{rule} between machines: {name} ({_TRIGGER[name]}) no longer binds the checker")
    for kind, changes in (("removed", variant.remove_rows), ("added", variant.add_rows)):
        for change in changes:
            out.append(f"row {kind} ({change.text()}): {_reach(change.machine, kind, change.trigger)}")
    for name, params in variant.between:
        switched = ", ".join(f"{k} = {v!r}" for k, v in params)
        out.append(
            f"rule between machines {name} ({BETWEEN[name].rule}) switched ({switched}): the checker "
            "and the simulated agent both run the switched declaration (model.between)"
        )
    return out


STATED = rules_stated()
_TRIGGER = {f"model.between.{d.name.upper()}": d.when for d in DECLARATIONS}


def _reach(machine: str, kind: str, trigger: str) -> str:
    parts = []
    if machine in CLIENT_MACHINES and BY_NAME[machine].actor_of.get(trigger) == "client":
        parts.append(
            "the simulated client no longer offers that move"
            if kind == "removed"
            else "the simulated client offers it as a move (within its bounds)"
        )
    if machine in CHECKER_MACHINES:
        parts.append("the checker's monitors fire the changed table")
    if machine in AGENT_MACHINES and BY_NAME[machine].actor_of.get(trigger) == "agent":
        parts.append(
            "the simulated agent no longer offers a move that needs it"
            if kind == "removed"
            else "the simulated agent may take it (its moves are the table's rows, within its own choices)"
        )
    if not parts:
        return (
            f"reaches neither the checker nor the simulated peers (nothing executes the {machine} table yet)"
        )
    if machine not in CHECKER_MACHINES:
        parts.append(f"the checker does not fire the {machine} table (its rules are hand-written monitors)")
    return "; ".join(parts)
