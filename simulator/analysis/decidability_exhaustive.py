"""The exhaustive part of a decidability sample: every breaking behaviour at a small bound.

Theory of operation
-------------------
Beside the scenarios and seeded random walks of ``simulator.analysis.decidability``, the behaviours of
the seeded bug are explored breadth-first by the explorer (``explore_bfs.search_states``, the
same search ``acp-model explore`` runs, without monitors) in every slice of
``explore_bfs.SLICES``, up to ``max_states`` states each (the whole slice where it is smaller:
then every run of the slice is covered; otherwise every run within the depth the search
reached). The breaking behaviours kept are

- every quiescent state (a complete run: nothing more can happen) whose Agent or Client breach
  markers, omitted moves (``Agent.omitted``) or disagreeing client views name the rule, each at
  its shortest path; and
- the first move of each rule the model's tables refuse (the run stops there), when replaying
  it leaves a marker of the rule.

Each path is replayed in a recording ``World`` (so its transcript and hidden steps are exactly
what a random walk of the same events would record) and handed back with a source naming the
slice and the state, in search order: the same bound gives the same runs.

Must not know: how the runs are judged (``simulator.analysis.decidability``), files or printing.
"""

from __future__ import annotations

from collections.abc import Iterator

from properties.variants import Variant
from simulator.explore import bfs as explore_bfs
from simulator.peers.config import Config
from simulator.peers.schedulers import describe
from simulator.peers.world import Event, World


def replay(events: list[Event], cfg: Config, faults: frozenset[str]) -> tuple[World, list[tuple[int, str]]]:
    """The recording world after ``events`` (stopped at a move the model refuses; judged for
    omissions when it ends quiescent), and the (position, description) of the events that
    recorded no line: its hidden steps."""
    world = World(cfg, faults, None, record=True)
    silent: list[tuple[int, str]] = []
    for ev in events:
        before = len(world.transcript)
        world.step(ev)
        if len(world.transcript) == before and ev[:2] != ("net", "to_client"):
            silent.append((before, describe(ev)))
        if world.broken is not None:
            break
    if world.broken is None and world.quiescent():
        world.finish()
    return world, silent


def runs(
    rule: str | frozenset[str],
    faults: frozenset[str],
    max_states: int,
    readings: dict[str, str] | None = None,
    variant: Variant | None = None,
) -> Iterator[tuple[str, Config, list[Event], World]]:
    """(source, configuration, events, world) of every breaking behaviour found (see the module
    docstring), slice by slice."""
    if max_states <= 0:
        return
    same = frozenset({rule}) if isinstance(rule, str) else rule  # the IDs that count as the rule
    for sl in explore_bfs.SLICES:
        cfg = sl.cfg.under(readings, variant)
        parts, s = explore_bfs.search_states(cfg, faults, max_states)
        paths: list[list[Event]] = []
        for q in s.quiet:
            a, c, _, _, _, v, r = s.states[q]
            agent = parts.agent.reps[a]
            names = set(agent.marks) | set(agent.omitted()) | set(parts.client.reps[c].marks)
            if parts.view_table is not None:
                names |= {b.rule for b in parts.compare(r, v)}
            if same & names:
                paths.append(s.path(q))
        for found in s.found.values():
            if found.breach.source == "model" and found.event is not None:
                paths.append([*s.path(found.state), found.event])
        for events in paths:
            world, _ = replay(events, cfg, faults)
            if any(h.rule in same for h in world.hidden):
                yield f"exhaustive {sl.name}, {len(events)} steps", cfg, events, world
