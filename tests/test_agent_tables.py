"""The simulated Agent chooses from the machine tables: a row a variant adds is a move it takes,
and a seeded bug stated as a deviation breaks the rule of the table cell it fires."""

from __future__ import annotations

import pytest

from model.registry import BY_NAME
from properties.bugs import rule_of
from properties.catalogue import RULES_BY_ID
from properties.readings import BY_NAME as READINGS
from properties.variants import from_data
from simulator.analysis.mutants import MUTANTS
from simulator.explore.bfs import SLICES, explore
from simulator.peers import deviations, wire
from simulator.peers.agent import Agent
from simulator.peers.config import DEFAULT
from simulator.peers.world import World

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
        agent.tools["tc_1"] = ("completed", False, None, None)
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
def test_a_deviation_is_the_mutant_of_the_rule_it_breaks(d: deviations.Deviation) -> None:
    """The mutant takes its rule from the deviation; a forbidden cell is one the table refuses
    (with the default readings), and withheld moves are moves of the table."""
    assert MUTANT[d.name].side == d.side
    assert MUTANT[d.name].intended_rule == rule_of(d, BY_NAME) in RULES_BY_ID
    if isinstance(d, deviations.Forbidden):
        assert BY_NAME[d.machine].successor(d.source, d.trigger, {**d.when, **d.ctx}) is None
    elif isinstance(d, deviations.Withhold):
        assert d.triggers <= set(BY_NAME[d.machine].triggers)


def test_a_withheld_move_owed_under_two_rules_must_name_its_rule() -> None:
    both = deviations.Withhold("x", "prompt", frozenset({"answer", "reject"}))
    with pytest.raises(ValueError, match="name the rule"):
        rule_of(both, BY_NAME)


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


def test_a_forbidden_cell_a_reading_allows_breaks_nothing() -> None:
    """withdraw-wrong-code refuses a prompt withdrawn by $/cancel_request: REJ-03 (the guard
    own_reason) under rejected-after-cancel-request=cancelled-only, a conforming refusal for a
    reason of the Agent's own under own-reason."""
    for reading, marks in (("cancelled-only", ("REJ-03",)), ("own-reason", ())):
        cfg = DEFAULT.with_(readings=(("rejected-after-cancel-request", reading),))
        agent = Agent(cfg, frozenset({"withdraw-wrong-code"}))
        agent.prompts[1] = ("cancel_requested", None, False, False, "", False)
        assert ("agent", "reject", 1) in agent.enabled()
        assert agent.do("reject", 1)[0]["error"]["code"] != -32800
        assert agent.prompts[1][0] == "rejected" and agent.marks == marks


def test_a_silenced_report_is_not_sent_and_the_agent_believes_it_was() -> None:
    """no-running-on-start: the start goes out without its running, yet the Agent's record says
    running was reported, so its later output is its own conforming move (the checker sees it
    after idle: FG-02)."""
    agent = agent_with(faults=frozenset({"no-running-on-start"}))
    assert agent.do("start", None) == [] and agent.marks == ("FG-02",)
    assert agent.reported == "running"
    assert agent.do("say", None)[0]["params"]["update"]["sessionUpdate"] == "agent_message"
    conforming = agent_with()
    assert [m["params"]["update"]["state"] for m in conforming.do("start", None)] == ["running"]
    assert conforming.marks == ()


def test_a_repeated_message_goes_out_twice() -> None:
    agent = agent_with(faults=frozenset({"answer-twice"}))
    agent.prompts[1] = ("inserted", "msg_u_1", True, True, "", False)
    out = agent.do("answer", 1)
    assert out[0] == out[1] == {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "msg_u_1"}}
    assert out[0] is not out[1] and agent.marks == ("INTRO-02",)


def test_a_rewrite_that_a_feature_allows_marks_no_breach() -> None:
    """custom-running-state sends ``_busy`` for running: a breach (STATE-04) unless the Client
    advertised custom states (feature ``future``)."""
    for features, marks in ((frozenset(), ("STATE-04",)), (frozenset({"future"}), ())):
        agent = Agent(DEFAULT.with_(features=features), frozenset({"custom-running-state"}))
        assert agent.do("start", None)[0]["params"]["update"]["state"] == "_busy"
        assert agent.marks == marks


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


def test_a_misread_acts_on_another_alternative_of_a_reading_that_concerns_its_rule() -> None:
    misreads = [d for d in deviations.DEVIATIONS if isinstance(d, deviations.Misread)]
    assert misreads
    for d in misreads:
        reading = READINGS[d.reading]
        assert d.alternative in {a.name for a in reading.alternatives} - {reading.default}
        assert d.rule in reading.rules


def test_a_misread_agent_takes_the_alternatives_moves_and_marks_them() -> None:
    """list-tool-and-terminal: the Agent starts a terminal with the tool call that embeds it, as
    tool-with-listed-terminal=may-have-other-work lets it, and listing both breaks BG-13 under
    the run's reading; an Agent that reads it so marks nothing."""
    cfg = DEFAULT.with_(features=frozenset({"terminal"}))
    for agent, marks in (
        (Agent(cfg, frozenset({"list-tool-and-terminal"})), ("BG-13",)),
        (Agent(cfg.with_(readings=(("tool-with-listed-terminal", "may-have-other-work"),))), ()),
    ):
        agent.real = agent.reported = "running"
        assert ("agent", "bg_start", "terminal+tool") in agent.enabled()
        agent.do("bg_start", "terminal+tool")
        agent.do("bg_list", ("terminal", "term_1"))
        assert agent.listed == (("terminal", "term_1"), ("tool_call", "tc_term_1"))
        assert agent.marks == marks


def test_a_reused_id_is_one_the_agent_is_done_with_and_is_marked_only_then() -> None:
    """reuse-message-id: the first inserted prompt gets a new ID (nothing to reuse, no mark), the
    second the first one's (ACC-09); the conforming Agent gives two distinct IDs."""
    for faults, second, marks in (
        (frozenset({"reuse-message-id"}), "msg_u_1", ("ACC-09",)),
        (frozenset(), "msg_u_2", ()),
    ):
        agent = agent_with(faults=faults)
        for rid in (1, 2):
            agent.receive(wire.prompt(rid, "sess_1", [wire.text("hi")]))
            agent.do("insert", rid)
        assert (agent.prompts[1][1], agent.prompts[2][1]) == ("msg_u_1", second)
        assert agent.marks == marks


def test_a_reused_terminal_id_starts_over_and_only_after_its_terminal_exited() -> None:
    """terminal-reused: while the first terminal runs, a second one gets its own ID; once the
    first has exited (finalized), a new one takes its ID and is announced live again
    (``Reuse.reset``: exitStatus null), marked ENT-01."""
    cfg = DEFAULT.with_(features=frozenset({"terminal"}), background=3)
    agent = Agent(cfg, frozenset({"terminal-reused"}))
    agent.do("bg_start", "terminal")
    agent.do("bg_start", "terminal")
    assert set(agent.items) == {("terminal", "term_1"), ("terminal", "term_2")} and agent.marks == ()
    agent.items[("terminal", "term_1")] = "finalized"
    update = agent.do("bg_start", "terminal")[0]["params"]["update"]
    assert update["terminalId"] == "term_1" and update["exitStatus"] is None
    assert agent.marks == ("ENT-01",)


def test_an_update_sent_ahead_reserves_the_id_of_the_next_entity() -> None:
    """user-message-ahead: the first insertion also reports a user message under a new ID that
    no prompt has yet; the next prompt inserted takes that ID; it is sent once."""
    agent = agent_with(faults=frozenset({"user-message-ahead"}))
    agent.receive(wire.prompt(1, "sess_1", [wire.text("hi")]))
    (ahead,) = agent.do("insert", 1)
    mid = ahead["params"]["update"]["messageId"]
    assert mid not in (agent.prompts[1][1], None) and agent.marks == ("ACC-07",)
    agent.receive(wire.prompt(2, "sess_1", [wire.text("hi")]))
    assert agent.do("insert", 2) == [] and agent.prompts[2][1] == mid


def test_a_stretched_cancel_covers_only_prompts_received_while_its_work_ends() -> None:
    """cancel-covers-later-prompts: a prompt received while cancelled work is still ending is
    taken as covered by the cancel (CANCEL-16), and may then be withdrawn; one received once the
    work has ended is not, and the conforming Agent never takes a later prompt as covered."""
    hi = [wire.text("hi")]
    for faults, state, marks in (
        (frozenset({"cancel-covers-later-prompts"}), "covered", ("CANCEL-16",)),
        (frozenset(), "received", ()),
    ):
        agent = agent_with(faults=faults)
        agent.real = agent.reported = "running"
        agent.receive(wire.cancel("sess_1"))
        agent.receive(wire.prompt(1, "sess_1", hi))
        assert agent.prompts[1][0] == state and agent.marks == marks
        assert (("agent", "withdraw", 1) in agent.enabled()) is (state == "covered")
    late = agent_with(faults=frozenset({"cancel-covers-later-prompts"}))
    late.receive(wire.prompt(1, "sess_1", hi))
    assert late.prompts[1][0] == "received" and late.marks == ()


def test_an_unchecked_rule_offers_the_moves_only_it_kept_from_the_agent() -> None:
    """accept-unadvertised-content: the Agent does not apply USER-04, so a prompt with content
    it did not advertise may be inserted (marked USER-04); the conforming Agent only refuses it."""
    for faults, offered, marks in (
        (frozenset({"accept-unadvertised-content"}), True, ("USER-04",)),
        (frozenset(), False, ()),
    ):
        agent = agent_with(faults=faults)
        agent.receive(wire.prompt(1, "sess_1", [wire.image()]))
        assert (("agent", "insert", 1) in agent.enabled()) is offered
        assert ("agent", "reject", 1) in agent.enabled()
        if offered:
            agent.do("insert", 1)
        assert agent.marks == marks
    for d in deviations.DEVIATIONS:
        if isinstance(d, deviations.Unchecked):
            assert d.rule in RULES_BY_ID
