"""The freedoms' proof: the catalogue's map from each MAY rule to the peer moves that take it
(``properties.catalogue.FREEDOMS``), the exhaustive search's event counts it is read from
(``coverage.exhaustive.events``, ``simulator.explore.state.State.events``) and explore's warning
when a freedom the run could take was never taken."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from properties.catalogue import FREEDOMS, RULES, Freedom
from properties.monitors import ALL_MONITORS
from properties.seeded import SEEDED
from simulator.explore import bfs
from simulator.explore import run as explore_run
from simulator.explore.coverage import CONTEXTS, context_takers, freedom_coverage
from simulator.explore.hypothesis_runs import event_names
from simulator.peers.agent import Agent
from simulator.peers.config import FEATURES, SMALL, Config

TINY = bfs.QUIET.with_(tool_calls=1, permissions=1, features=frozenset({"cancel", "permission"}))
"""A slice of about 1,400 states where the Agent runs a tool call after a session/cancel and
ends cancelled with a permission request unanswered (contexts ``cancelling``, ``unanswered``)."""


def _split(taker: str) -> tuple[str, str]:
    name, _, context = taker.partition("[")
    return name, context.rstrip("]")


def problems(freedoms: dict[str, Freedom]) -> list[str]:
    """What is wrong with a map of freedoms: a move no peer has (renamed or removed), a context
    or a need nothing defines, an entry with both or neither of takers and a reason."""
    events = {f"{actor}.{name}" for actor, name in event_names()}
    budgets = {f.name for f in dataclasses.fields(Config) if f.type in ("int", int)}
    known = set(FEATURES) | budgets | {bug.rule for bug in SEEDED}
    out = []
    for rule, freedom in freedoms.items():
        if bool(freedom.takers) == bool(freedom.why) or "\n" in freedom.why:
            out.append(f"{rule}: moves or one line why none, not both")
        for taker in freedom.takers:
            name, context = _split(taker)
            if name not in events:
                out.append(f"{rule}: no peer move {name}")
            if context and context not in CONTEXTS:
                out.append(f"{rule}: no context {context}")
        out += [
            f"{rule}: no feature, budget or rule a seeded bug breaks {alt}"
            for n in freedom.needs
            for alt in n.split("|")
            if alt not in known
        ]
    return out


def test_every_permission_maps_to_peer_moves_or_says_why_none() -> None:
    may = {r.id for r in RULES if r.level == "MAY"}
    tolerated = {rule for cls in ALL_MONITORS for rule in cls.TOLERATES}
    levels = {r.id: r.level for r in RULES}
    assert may <= set(FREEDOMS) and tolerated <= may
    # beyond the MAY rules: rules of another level whose sentence grants a freedom too
    assert {rule for rule in FREEDOMS if levels[rule] != "MAY"} == {
        "ACC-11",
        "ACC-13",
        "BG-03",
        "ENT-01",
        "COMPACT-07",
        "MSGID-02",
        "NOTICE-02",
    }
    assert problems(FREEDOMS) == []


def test_a_renamed_move_context_or_need_fails_the_map() -> None:
    renamed = {
        "NOTICE-01": Freedom(("agent.notify",), needs=("notices",)),
        "CANCEL-13": Freedom(("agent.say[cancel]",), needs=("cancels", "cancel_feature")),
        "BG-15": Freedom(("client.cancel",), why="both"),
    }
    assert problems(renamed) == [
        "NOTICE-01: no peer move agent.notify",
        "CANCEL-13: no context cancel",
        "CANCEL-13: no feature, budget or rule a seeded bug breaks cancel_feature",
        "BG-15: moves or one line why none, not both",
    ]


def test_the_event_tally_equals_a_direct_count_of_the_edges() -> None:
    """``State.events`` (per-move counts) against counting every edge of the search, by name and
    in each context (the acting peer at the edge's source state)."""
    parts, s = bfs.search_states(TINY, frozenset(), None, keep_edges=True)
    tally = parts.events(context_takers())
    direct: Counter[str] = Counter()
    for src, ev in zip(s.src, s.edge_event, strict=True):
        actor = "agent" if ev[0] in ("agent", "net") and ev[1] != "to_client" else "client"
        peers = {"agent": parts.agent, "client": parts.client}
        rep = peers[actor].reps[s.states[src][0 if actor == "agent" else 1]]
        name = f"{ev[0]}.{ev[1]}"
        direct[name] += 1
        for context, holds in context_takers().get(name, ()):
            if holds(rep, ev):
                direct[f"{name}[{context}]"] += 1
    assert tally == direct
    assert sum(n for k, n in tally.items() if "[" not in k) == s.transitions
    assert tally["agent.tool_run[cancelling]"] and tally["agent.end[unanswered]"]


def _exhaustive(monkeypatch: pytest.MonkeyPatch, drop: str | None) -> dict[str, Any]:
    """Explore's report on ``TINY`` with a notice allowed, the Agent never offering ``drop``."""
    if drop is not None:
        enabled = Agent.enabled
        monkeypatch.setattr(Agent, "enabled", lambda self: [e for e in enabled(self) if e[1] != drop])
    bounds = {f.name: getattr(TINY, f.name) for f in dataclasses.fields(TINY) if f.name != "readings"}
    bounds |= {"notices": 1, "features": TINY.features | {"notice"}}
    return explore_run.compute(explore_run.Options(mode="exhaustive", bounds=bounds)).report


def test_a_freedom_whose_move_is_disabled_is_warned(monkeypatch: pytest.MonkeyPatch) -> None:
    report = _exhaustive(monkeypatch, None)
    fr = report["coverage"]["exhaustive"]["freedoms"]
    assert fr["taken"]["NOTICE-01"] and fr["never_taken"] == []
    assert not [w for w in report["warnings"] if w.startswith("freedoms")]
    assert fr["by_move"]["CANCEL-13"]["agent.tool_run[cancelling]"]
    assert fr["taken"]["BG-15"] is None and "COMPACT-01" in fr["beyond_bounds"]
    events = report["coverage"]["exhaustive"]["events"]
    assert sum(events.values()) == report["exhaustive"]["transitions"]
    report = _exhaustive(monkeypatch, "notice")
    assert report["coverage"]["exhaustive"]["freedoms"]["never_taken"] == ["NOTICE-01"]
    assert report["warnings"][-1] == "freedoms never taken by the exhaustive mode: NOTICE-01"


def test_a_freedom_dropped_by_the_variant_or_beyond_the_bounds_is_not_warned() -> None:
    from properties.variants import from_drops

    counts: Counter[str] = Counter()
    runs = [(SMALL.with_(notices=1, features=SMALL.features | {"notice"}), frozenset[str]())]
    assert "NOTICE-01" in freedom_coverage(counts, runs)["never_taken"]
    assert "NOTICE-01" not in freedom_coverage(counts, runs, from_drops(["NOTICE-01"]))["never_taken"]
    assert "NOTICE-01" in freedom_coverage(counts, [(SMALL, frozenset())])["beyond_bounds"]
    # the random modes count no move in a context: such a freedom is not counted there
    fr = freedom_coverage(counts, runs, contexts=False)
    assert fr["taken"]["CANCEL-13"] is None and "CANCEL-13" in fr["not_counted"]


def test_the_counts_are_the_same_for_any_number_of_workers() -> None:
    from simulator.explore.report import strip_timing
    from simulator.workers import Workers

    opts = explore_run.Options(
        mode="exhaustive", slices=("cancels", "bg_requests", "embedded", "receipt_order")
    )
    alone = explore_run.compute(opts).report["coverage"]
    with Workers(2) as pool:
        shared = explore_run.compute(dataclasses.replace(opts, pool=pool)).report["coverage"]
    assert strip_timing(alone) == strip_timing(shared)
    assert (
        alone["exhaustive"]["events"]["client.cancel"] and alone["exhaustive"]["freedoms"]["taken"]["TOOL-01"]
    )


def test_a_freedom_a_seeded_bug_of_the_other_peer_opens_needs_it() -> None:
    """USER-02 (an empty prompt rejected) is open only where the Client sends an empty prompt: a
    seeded bug meant to break USER-01 (``Freedom.needs`` names that rule)."""
    from properties.seeded import SEEDED

    empty = next(bug.name for bug in SEEDED if bug.rule == "USER-01")
    cfg = bfs.QUIET.with_(outputs=1, features=frozenset({"fail", "cancel"}))
    res = bfs.explore(cfg, frozenset({empty}), monitors=False)
    assert freedom_coverage(res.events, [(cfg, frozenset({empty}))])["taken"]["USER-02"] > 0
    assert "USER-02" in freedom_coverage(Counter(), [(cfg, frozenset())])["beyond_bounds"]
    assert "USER-02" in freedom_coverage(Counter(), [(cfg, frozenset({empty}))])["never_taken"]


def test_the_text_report_has_one_freedoms_line_per_mode() -> None:
    from simulator.explore.report import freedoms_text

    runs = [(SMALL.with_(notices=1, features=SMALL.features | {"notice"}), frozenset[str]())]
    fr = freedom_coverage(Counter({"client.cancel": 3, "agent.end": 2}), runs, contexts=False)
    assert freedoms_text("random", fr) == (
        "freedoms taken (random): 2/14, never taken: ACTIVE-01, OUT-03, NOTICE-01, TOOL-01, TOOL-05, "
        "EX-02, CANCEL-08, beyond the bounds: 5, not counted: 14"
    )
