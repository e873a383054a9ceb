"""The simulated Agent chooses from the machine tables: a row a variant adds is a move it takes,
and a seeded bug stated as a deviation breaks the rule of the table cell it fires."""

from __future__ import annotations

import pytest

from model.registry import BY_NAME
from properties.variants import from_data
from simulator import deviations, wire
from simulator.agent import Agent
from simulator.config import DEFAULT
from simulator.explore_bfs import SLICES, explore
from simulator.mutants import MUTANTS
from simulator.world import World

MUTANT = {m.name: m for m in MUTANTS}


def added(machine: str, trigger: str, source: str, dest: str) -> object:
    row = {"machine": machine, "trigger": trigger, "source": source, "dest": dest}
    return from_data({"title": "one row more", "add_row": [row]}, "v.toml", "v")


def agent_with(variant: object | None = None, faults: frozenset[str] = frozenset()) -> Agent:
    return Agent(DEFAULT.with_(variant=variant), faults)  # type: ignore[arg-type]


def test_a_row_added_to_the_compaction_table_is_a_move_the_agent_takes() -> None:
    plain = agent_with()
    plain.compactions["cmp_1"] = "completed"
    assert ("agent", "compact_fail", "cmp_1") not in plain.enabled()
    agent = agent_with(added("compaction", "fail", "completed", "failed"))
    agent.compactions["cmp_1"] = "completed"
    assert ("agent", "compact_fail", "cmp_1") in agent.enabled()
    agent.do("compact_fail", "cmp_1")
    assert agent.compactions["cmp_1"] == "failed"


def test_a_row_added_to_the_tool_call_table_is_a_move_the_agent_takes() -> None:
    move = ("agent", "tool_status", ("tc_1", "paused"))
    for variant, expected in ((None, False), (added("tool_call", "pause", "completed", "paused"), True)):
        agent = agent_with(variant)
        agent.real = agent.reported = "running"
        agent.tools["tc_1"] = ("completed", False, None)
        assert (move in agent.enabled()) is expected


def test_exploring_a_variant_fires_its_added_row() -> None:
    """The exhaustive search of the compaction slice under a variant with one row more reaches
    more states, and the run's moves include the new one."""
    cfg = next(s.cfg for s in SLICES if s.name == "compaction")
    variant = added("compaction", "fail", "completed", "failed")
    row = ("compaction", "completed", "fail", "failed")
    base = explore(cfg, monitors=False)
    more = explore(cfg.with_(variant=variant), monitors=False)  # type: ignore[arg-type]
    assert base.complete and more.complete
    assert base.rows[row] == 0 and more.rows[row] > 0
    assert more.states > base.states


@pytest.mark.parametrize("d", deviations.DEVIATIONS, ids=lambda d: d.name)
def test_a_deviation_breaks_the_rule_its_mutant_names(d: deviations.Deviation) -> None:
    assert MUTANT[d.name].side == d.side
    if isinstance(d, deviations.Rewrite | deviations.Offer):
        assert d.rule == MUTANT[d.name].intended_rule
        return
    spec = BY_NAME[d.machine]
    if isinstance(d, deviations.Forbidden):
        assert (d.source, d.trigger) not in spec.cells, "a deviation fires a cell the table forbids"
        rule = spec.rule_of(d.source, d.trigger)
    else:
        assert d.triggers <= set(spec.triggers)
        owed = {s for s in spec.states if any(t in d.triggers for t, _ in spec.moves(s))}
        rule = d.rule or {spec.eventually[s] for s in owed}.pop()
    assert rule == MUTANT[d.name].intended_rule


def test_a_forbidden_cell_deviation_is_marked_with_the_cells_rule() -> None:
    agent = agent_with(faults=frozenset({"reuse-compaction-id"}))
    agent.compactions["cmp_1"] = "completed"
    assert ("agent", "compact_progress", "cmp_1") in agent.enabled()
    out = agent.do("compact_progress", "cmp_1")
    assert agent.marks == ("COMPACT-03",)
    assert out[0]["params"]["update"]["status"] == "in_progress"


def test_a_withheld_move_is_never_offered() -> None:
    world = World(faults=frozenset({"compaction-never-ends"}), record=False, views=False)
    agent = world.agent
    agent.compactions["cmp_1"] = "in_progress"
    names = {e[1] for e in agent.enabled()}
    assert not names & {"compact_end", "compact_fail", "compact_cancel"}
    assert agent.omitted() == ("COMPACT-05",)


def test_a_row_added_to_the_background_table_is_a_move_the_agent_takes() -> None:
    """A variant that lets a listed item leave the list unfinished: the Agent offers the removal."""
    move = ("agent", "bg_unlist", ("terminal", "term_1"))
    for variant, expected in ((None, False), (added("background_item", "unlist", "listed", "done"), True)):
        agent = agent_with(variant)
        agent.items[("terminal", "term_1")] = "listed"
        agent.listed = (("terminal", "term_1"),)
        assert (move in agent.enabled()) is expected


def test_a_row_added_to_the_foreground_table_is_a_move_the_agent_takes() -> None:
    """Progress while blocked (requires_action --output--> requires_action): the Agent then says
    things while it waits for the user, and the checker, running the same table, accepts it."""
    variant = added("foreground", "output", "requires_action", "requires_action")
    for v, expected in ((None, False), (variant, True)):
        agent = agent_with(v)
        agent.real = agent.reported = "requires_action"
        assert (("agent", "say", None) in agent.enabled()) is expected
    base = next(s.cfg for s in SLICES if s.name == "requests")
    result = explore(base.with_(variant=variant))  # type: ignore[arg-type]
    assert result.complete and result.counterexamples == []
    assert result.states > explore(base, monitors=False).states


def test_a_rewrite_changes_only_the_messages_it_matches() -> None:
    agent = agent_with(faults=frozenset({"compaction-no-status"}))
    started = agent.do("compact_start", None)[0]["params"]["update"]
    assert "status" not in started and agent.marks == ("COMPACT-02",)
    ended = agent.do("compact_end", "cmp_1")[0]["params"]["update"]
    assert ended["status"] == "completed"


def test_the_resume_handshake_follows_the_session_table() -> None:
    """A variant that lets the Agent answer a resume before any snapshot: the Agent offers that
    answer as a conforming move (no breach marked); under the spec only the seeded bug offers it,
    marked with the cell's rule."""
    early = ("agent", "resume_early", None)
    variant = added("session", "resumed", "resuming", "open")
    for v, faults, offered, marks in (
        (None, frozenset(), False, ()),
        (variant, frozenset(), True, ()),
        (None, frozenset({"response-before-snapshot"}), True, ("SYNC-02",)),
    ):
        agent = agent_with(v, faults)
        agent.receive(wire.resume(7, "sess_1", False))
        assert (early in agent.enabled()) is offered
        if offered:
            agent.do("resume_early", None)
            assert agent.session == "open" and agent.marks == marks
