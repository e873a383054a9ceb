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

Freedoms: per MAY rule, how often a run took it, the sum of the counts of the peer moves
``properties.catalogue.FREEDOMS`` names for it (``freedom_coverage``). A move may be narrowed to
a context (``CONTEXTS``: of the acting peer's state where it moved, or of the move's argument);
only the exhaustive search counts contexts (``simulator.explore.state.State.events``: from the
memoized moves, whose representative peer is the state the move was taken in), the random modes
count events by name. A freedom of a rule in force (not dropped by the run's variant) that no
move took, in a run one of whose configurations meets its ``needs``, is ``never_taken``; one no
configuration could take is ``beyond_bounds``. The exhaustive mode warns about its never-taken
freedoms (a complete search takes every move its bounds allow: it counts only the slices searched
completely); the random modes sample, so theirs are only listed.

Must not know: which explorer ran, files or printing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields
from typing import Any

from model import elicitation, permission
from model import foreground as fgm
from model.core import MachineSpec
from model.registry import MACHINES
from properties.catalogue import FREEDOMS, Freedom
from properties.seeded import BY_NAME as SEEDED_BY_NAME
from properties.variants import Variant, tables_of
from simulator.peers.config import Config

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


def _pending(peer: Any) -> bool:
    """Whether the Agent awaits the answer to a permission request or an elicitation."""
    return any(st not in permission.SPEC.final for st in peer.perms.values()) or any(
        e[0] not in elicitation.SPEC.final for e in peer.elicits.values()
    )


def _reason(ev: Any) -> Any:
    """An ``end`` move's stop reason (its argument, or the first of ``(reason, "unseen")``)."""
    return ev[2][0] if isinstance(ev[2], tuple) else ev[2]


CONTEXTS: dict[str, tuple[str, Callable[[Any, Any], bool]]] = {
    "cancelling": (
        "after the Agent received session/cancel (or session/close), before the idle ending the work",
        lambda peer, ev: peer.cancelling,
    ),
    "idle": ("while the Agent reports idle", lambda peer, ev: peer.reported == fgm.IDLE),
    "again": ("the snapshot sent a second time", lambda peer, ev: ev[2] == "again"),
    "early": ("a snapshot sent before the requested replay as well", lambda peer, ev: ev[2] == "early"),
    "tool_call": ("a tool call of its own for the work", lambda peer, ev: ev[2] == "tool_call"),
    "empty": (
        "a prompt whose content is empty",
        lambda peer, ev: ev[2] in peer.prompts and peer.prompts[ev[2]][4] == "empty",
    ),
    "closed": (
        "after the session/close response (the session is closed)",
        lambda peer, ev: peer.session == "closed",
    ),
    "background": (
        "a status of a background tool call",
        lambda peer, ev: isinstance(ev[2], tuple) and ev[2][0] in peer.tools and peer.tools[ev[2][0]][1],
    ),
    "bare": (
        "a compaction completed with its summary omitted",
        lambda peer, ev: ev[2] == "bare" or (type(ev[2]) is tuple and ev[2][1:] == ("bare",)),
    ),
    "live_only": (
        "an inserted user message reported live only (not retained for a replay)",
        lambda peer, ev: type(ev[2]) is tuple and ev[2][1:] == ("live",),
    ),
    "shared_id": (
        "an entity under an ID an entity of another type has (a tool call under a message's)",
        lambda peer, ev: ev[2] == "shared",
    ),
    "detailed": (
        "a notice of another severity, with its optional fields",
        lambda peer, ev: ev[2] is not None,
    ),
    "unanswered": (
        "a cancelled idle while a request of the work awaits its answer",
        lambda peer, ev: _reason(ev) == fgm.CANCELLED and _pending(peer),
    ),
}
"""The contexts a freedom's move may be narrowed to (``Freedom.takers``, ``actor.name[context]``):
name -> (what it means, whether it holds of the acting peer and the event)."""


def context_takers() -> dict[str, list[tuple[str, Callable[[Any, Any], bool]]]]:
    """Per event name, the contexts the freedoms count it in (``State.events`` counts them)."""
    out: dict[str, list[tuple[str, Callable[[Any, Any], bool]]]] = {}
    for taker in sorted({t for f in FREEDOMS.values() for t in f.takers if "[" in t}):
        name, context = taker[:-1].split("[")
        out.setdefault(name, []).append((context, CONTEXTS[context][1]))
    return out


def meets(cfg: Config, faults: frozenset[str], needs: tuple[str, ...]) -> bool:
    """Whether a run of ``cfg`` with ``faults`` can take a freedom that ``needs`` these
    (``Freedom.needs``: features, budgets above 0, rules a seeded bug on is meant to break;
    ``a|b``: either)."""
    budgets = {f.name for f in fields(cfg) if f.type in ("int", int)}
    broken = {SEEDED_BY_NAME[f].rule for f in faults if f in SEEDED_BY_NAME}

    def met(name: str) -> bool:
        return name in cfg.features or name in broken or (name in budgets and getattr(cfg, name) > 0)

    return all(any(met(alt) for alt in need.split("|")) for need in needs)


def freedom_coverage(
    counts: Mapping[str, int],
    runs: Iterable[tuple[Config, frozenset[str]]],
    variant: Variant | None = None,
    contexts: bool = True,
) -> dict[str, Any]:
    """Per MAY rule, how often the peers took its freedom (see the module docstring), from the
    event ``counts`` of a mode whose ``runs`` had these configurations and seeded bugs;
    ``contexts``: whether the counts hold ``actor.name[context]`` (the exhaustive search's)."""
    runs = list(runs)
    dropped = set(variant.drop) if variant is not None else set()
    taken: dict[str, int | None] = {}
    by_taker: dict[str, dict[str, int]] = {}
    never: list[str] = []
    beyond: list[str] = []
    uncounted: dict[str, str] = {}
    for rule, freedom in FREEDOMS.items():
        why = _uncounted(freedom, contexts)
        if why:
            taken[rule] = None
            uncounted[rule] = why
            continue
        by_taker[rule] = {t: counts.get(t, 0) for t in freedom.takers}
        taken[rule] = sum(by_taker[rule].values())
        if taken[rule] or rule in dropped:
            continue
        (never if any(meets(cfg, f, freedom.needs) for cfg, f in runs) else beyond).append(rule)
    return {
        "taken": taken,
        "by_move": by_taker,
        "never_taken": never,
        "beyond_bounds": beyond,
        "not_counted": uncounted,
    }


def _uncounted(freedom: Freedom, contexts: bool) -> str:
    """Why a mode gives no count of ``freedom`` ("": it does)."""
    if not freedom.takers:
        return freedom.why
    if not contexts and any("[" in t for t in freedom.takers):
        return "counted by the exhaustive mode only (moves in a context; the random modes count names)"
    return ""
