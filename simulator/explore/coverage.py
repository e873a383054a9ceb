"""Coverage of an exploration: which machine states and rows were reached, which rules checked.

Theory of operation
-------------------
Per machine of ``model.registry.MACHINES`` (every one: a machine added there is reported
without a change here) the report says which states and which table rows (source, trigger,
dest) a run reached, and how often each trigger fired. The method is ``exact`` for every
machine: the rows are the ones the simulated peers fired (``recording()`` wraps
``MachineSpec.fire`` while an explorer runs and lists each row fired, for the explorer to count;
the peers advance every machine through ``fire``, the entity table included: the Agent steps
it with each entity update it sends). A row reached only by a direct assignment (a seeded-bug
branch, an entity created in its initial state) is not counted; initial states always count
as reached.

Under a variant (``properties.variants``) the machines are the variant's tables (added rows
count, removed rows do not), and each machine lists the forbidden cells of dropped rules that
were fired (``relaxed_cells_fired``: the state stayed).

Rules: ``MonitorSet.exercised`` counts how often each rule's check was triggered; every rule a
default monitor reports and that was never exercised is listed as a warning.

Must not know: which explorer ran, files or printing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from model.core import MachineSpec
from model.registry import MACHINES
from properties.variants import Variant, tables_of

Row = tuple[str, str, str, str]
"""(machine, source, trigger, dest)."""


@contextmanager
def recording() -> Iterator[list[Row]]:
    """Every row fired through ``MachineSpec.fire`` while the block runs, once per firing, in
    order (a ``Counter`` updated with the list counts them)."""
    fired: list[Row] = []
    original = MachineSpec.fire

    def fire(self: MachineSpec, state: str, trigger: str, ctx: Mapping[str, Any] = {}) -> str:
        dest = original(self, state, trigger, ctx)
        fired.append((self.name, state, trigger, dest))
        return dest

    MachineSpec.fire = fire  # type: ignore[method-assign]
    try:
        yield fired
    finally:
        MachineSpec.fire = original  # type: ignore[method-assign]


def machine_coverage(rows: Counter[Row], variant: Variant | None = None) -> list[dict[str, Any]]:
    """Per machine: states and rows reached and triggers fired (see the module docstring),
    under ``variant`` (None: the spec as written)."""
    out: list[dict[str, Any]] = []
    tables = tables_of(variant)  # a variant's added and removed rows count as its table has them
    for spec in (tables.get(m.name, m) for m in MACHINES):
        all_rows = list(dict.fromkeys((r.source, r.trigger, r.dest) for r in spec.rows))
        hit = {(s, t, d): n for (m, s, t, d), n in rows.items() if m == spec.name}
        fired: Counter[str] = Counter()
        for (_, t, _), n in hit.items():
            fired[t] += n
        reached_states = {spec.initial} | {s for s, _, _ in hit} | {d for _, _, d in hit}
        entry: dict[str, Any] = {
            "name": spec.name,
            "method": "exact",
            "states_reached": sum(1 for s in spec.states if s in reached_states),
            "states_total": len(spec.states),
            "states_missed": [s for s in spec.states if s not in reached_states],
            "transitions_reached": sum(1 for r in all_rows if r in hit),
            "transitions_total": len(all_rows),
            "transitions_missed": [f"{s} --{t}--> {d}" for s, t, d in all_rows if (s, t, d) not in hit],
            "triggers": {t: fired[t] for t in spec.triggers},
            "triggers_missed": [t for t in spec.triggers if not fired[t]],
        }
        if spec.relaxed:  # a variant's dropped rules: forbidden cells fired, the state stayed
            entry["relaxed_cells_fired"] = sorted(
                f"{s} --{t}--> {d}" for s, t, d in hit if (s, t, d) not in set(all_rows)
            )
        out.append(entry)
    return out


def rule_coverage(exercised: Counter[str], rules: tuple[str, ...]) -> dict[str, Any]:
    return {
        "exercised": {r: exercised[r] for r in rules},
        "never_exercised": [r for r in rules if not exercised[r]],
    }
