"""Coverage of an exploration: which machine states and rows were reached, which rules checked.

Theory of operation
-------------------
Per machine of ``model.registry.MACHINES`` the report says which states and which table rows
(source, trigger, dest) a run reached, and how that was measured:

- ``exact``: foreground, prompt, tool_call, permission, elicitation, compaction, background_item and
  session rows are the ones the simulated Agent fired (``recording()`` wraps ``MachineSpec.fire`` while an
  explorer runs and lists each row fired, for the explorer to count; the Agent advances these
  machines through ``fire``). A row reached only by a direct assignment (a seeded-bug branch,
  a tool call or compaction created in its initial state) is not counted; initial states always
  count as reached.
- ``triggers``: entity rows depend on per-entity state that the explorers do not keep (the
  exhaustive search merges states without it), so for the entity machine only the triggers seen
  on the wire are reported (``observe``: every session/update the Agent sends, classified as
  upsert with content, upsert without content, clearing upsert or chunk), not rows.

Under a variant (``properties.variants``) the machines are the variant's tables (added rows
count, removed rows do not), and each machine lists the forbidden cells of dropped rules that
were fired (``relaxed_cells_fired``: the state stayed).

Rules: ``MonitorSet.exercised`` counts how often each rule's check was triggered; every rule a
default monitor reports and that was never exercised is listed as a warning.

Must not know: which explorer ran, files or printing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from model.core import MachineSpec
from model.registry import MACHINES
from properties.variants import Variant, tables_of

Row = tuple[str, str, str, str]
"""(machine, source, trigger, dest)."""

EXACT = (
    "foreground",
    "prompt",
    "tool_call",
    "permission",
    "elicitation",
    "compaction",
    "background_item",
    "session",
)

_CHUNKS = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call_content_chunk",
        "compaction_summary_chunk",
        "terminal_output_chunk",
    }
)
_UPSERTS = {
    "user_message": "content",
    "agent_message": "content",
    "agent_thought": "content",
    "session_message": "content",
    "tool_call_update": "content",
    "compaction_update": "summary",
    "plan_update": "plan",
    "terminal_update": "",
}


@contextmanager
def rows_fired(sink: Callable[[Row], Any]) -> Iterator[None]:
    """Hand every row fired through ``MachineSpec.fire`` to ``sink`` while the block runs."""
    original = MachineSpec.fire

    def fire(self: MachineSpec, state: str, trigger: str, ctx: Mapping[str, Any] = {}) -> str:
        dest = original(self, state, trigger, ctx)
        sink((self.name, state, trigger, dest))
        return dest

    MachineSpec.fire = fire  # type: ignore[method-assign]
    try:
        yield
    finally:
        MachineSpec.fire = original  # type: ignore[method-assign]


@contextmanager
def recording() -> Iterator[list[Row]]:
    """Every row fired through ``MachineSpec.fire`` while the block runs, once per firing, in
    order (a ``Counter`` updated with the list counts them)."""
    fired: list[Row] = []
    with rows_fired(fired.append):
        yield fired


def entity_trigger(msg: Mapping[str, Any]) -> str | None:
    """The entity trigger a wire message means, or None when it is not an entity update."""
    if msg.get("method") != "session/update":
        return None
    upd = msg.get("params", {}).get("update", {})
    variant = upd.get("sessionUpdate")
    if variant in _CHUNKS:
        return "chunk"
    field = _UPSERTS.get(variant)
    if field is None:
        return None
    if not field or field not in upd:
        return "upsert_keep"
    return "upsert_content" if upd[field] else "upsert_clear"


class Observer:
    """Counts entity triggers of the messages an Agent step put on the wire."""

    def __init__(self) -> None:
        self.entity: Counter[str] = Counter()

    def observe(self, sent: list[Any], start: int) -> None:
        for msg in sent[start:]:
            trig = entity_trigger(msg)
            if trig is not None:
                self.entity[trig] += 1


def machine_coverage(
    rows: Counter[Row], events: Counter[str], entity: Counter[str], variant: Variant | None = None
) -> list[dict[str, Any]]:
    """Per machine: states and rows reached (see the module docstring for the methods), under
    ``variant`` (None: the spec as written)."""
    out: list[dict[str, Any]] = []
    tables = tables_of(variant)  # a variant's added and removed rows count as its table has them
    for spec in (tables.get(m.name, m) for m in MACHINES):
        all_rows = [(r.source, r.trigger, r.dest) for r in spec.rows]
        if spec.name in EXACT:
            method = "exact"
            hit = {(s, t, d): n for (m, s, t, d), n in rows.items() if m == spec.name}
        else:
            method = "triggers"
            hit = {}
        reached_states = {spec.initial} | {s for s, _, _ in hit} | {d for _, _, d in hit}
        entry: dict[str, Any] = {
            "name": spec.name,
            "method": method,
            "states_reached": sum(1 for s in spec.states if s in reached_states),
            "states_total": len(spec.states),
            "states_missed": [s for s in spec.states if s not in reached_states],
        }
        if method == "triggers":
            entry["states_reached"] = None
            entry["states_missed"] = []
            entry["triggers"] = {t: entity[t] for t in spec.triggers}
            entry["triggers_missed"] = [t for t in spec.triggers if not entity[t]]
        else:
            seen = [r for r in dict.fromkeys(all_rows) if r in hit]
            entry["transitions_reached"] = len(seen)
            entry["transitions_total"] = len(dict.fromkeys(all_rows))
            entry["transitions_missed"] = [
                f"{s} --{t}--> {d}" for s, t, d in dict.fromkeys(all_rows) if (s, t, d) not in hit
            ]
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
