"""Freedoms the spec gives the peers that the simulated peers take since stop 47 (each a move of
a feature in ``simulator.peers.config.OFF_BY_DEFAULT``, fired by an exhaustive slice of
``acp-model explore``): the user stopping the work through a permission option the Agent offers
(the work ends ``cancelled`` with no session/cancel); an inserted prompt's success response after
the session/close response; background tool calls pending or paused; a message's content cleared;
notices of other severities with their optional fields; (since stop 48) an inserted user message
reported live only, left out of a later replay; a tool call under the current agent message's ID.
Each test shows the move is not offered
without its feature, is offered with it, and that the checker (monitors and, where ../shared is
present, the schema) accepts the run that takes it."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from properties.engine import MonitorSet
from properties.schema_check import SchemaChecker
from simulator.explore import bfs
from simulator.peers.config import DEFAULT
from simulator.peers.schedulers import scripted
from tests.check_support import SCHEMA

D = "deliver"
INSERTED: list[Any] = [
    ("client", "prompt", None),
    D,
    ("agent", "insert", 1),
    ("agent", "start", None),
    ("agent", "user_message", 1),
]
START: list[Any] = [*INSERTED, ("agent", "answer", 1), D]
ASKED = [*START, ("agent", "tool_ask", None), D]


def _with(*features: str) -> Any:
    return DEFAULT.with_(features=DEFAULT.features | set(features))


def _accepted(script: list[Any], cfg: Any) -> Any:
    """The run of ``script``: no rule finding (judged under the run's readings), and every
    message schema-valid (when the schema is present)."""
    run = scripted(script, cfg, frozenset(), MonitorSet(readings=dict(cfg.readings)))
    assert not [f for f in run.findings if f.kind == "rule"], run.findings
    if SCHEMA.is_file():
        checker = SchemaChecker(SCHEMA)
        for n, (sender, msg) in enumerate(run.world.transcript, 1):
            assert checker.check(sender, msg, n) is None, msg
    return run


def _sent(run: Any, sender: str = "agent") -> list[dict[str, Any]]:
    return [m for s, m in run.world.transcript if s == sender]


def _updates(run: Any) -> list[dict[str, Any]]:
    return [m["params"]["update"] for m in _sent(run) if m.get("method") == "session/update"]


def _taken(slice_name: str, feature: str) -> tuple[Counter[str], Counter[str]]:
    """The slice's exhaustive event counts (monitors off), with and without ``feature``."""
    sl = bfs.SLICE_BY_NAME[slice_name]
    assert feature in sl.cfg.features
    without = sl.cfg.with_(features=sl.cfg.features - {feature})
    return (
        bfs.explore(sl.cfg, monitors=False, name=sl.name).events,
        bfs.explore(without, monitors=False, name=sl.name).events,
    )


def test_the_user_may_stop_the_work_through_a_permission_option() -> None:
    """Stop reasons: cancelled when the user chose to stop the work "through an interaction the
    Agent offers, such as a permission option that tells the Agent to stop": the request offers
    a stop option (feature ``user_stop``), the Client may choose it, and the work then ends
    cancelled with no session/cancel: its tool call cancelled before the idle."""
    stop = ("client", "stop", "perm_1")
    plain = scripted(ASKED, DEFAULT)
    assert stop not in plain.world.enabled()
    assert [o["optionId"] for o in _sent(plain)[-2]["params"]["options"]] == ["allow", "deny"]
    cfg = _with("user_stop")
    asked = scripted(ASKED, cfg)
    assert stop in asked.world.enabled()
    assert _sent(asked)[-2]["params"]["options"][-1] == {
        "optionId": "stop",
        "name": "Stop the work",
        "kind": "reject_once",
    }
    assert ("agent", "user_stop", None) not in asked.world.enabled()  # not before the choice
    chosen = [*ASKED, stop, D]
    assert ("agent", "user_stop", None) in scripted(chosen, cfg).world.enabled()
    assert ("agent", "tool_run", "tc_1") not in scripted(chosen, cfg).world.enabled()  # stopped
    run = _accepted([*chosen, ("agent", "user_stop", None), D], cfg)
    assert [u.get("status") or u.get("stopReason") for u in _updates(run)[-2:]] == ["cancelled", "cancelled"]
    assert not [m for m in _sent(run, "client") if m.get("method") == "session/cancel"]
    # the Client's own session/cancel then arrives while idle: no second idle is owed
    late = _accepted([*chosen, ("agent", "user_stop", None), D, ("client", "cancel", None), D], cfg)
    assert not [e for e in late.world.enabled() if e[1] in ("end", "user_stop")]
    assert _updates(late)[-1]["stopReason"] == "cancelled"


def test_the_answers_slice_stops_work_through_the_option() -> None:
    events, without = _taken("answers", "user_stop")
    assert events["agent.user_stop"] > 0 and events["client.stop"] > 0
    assert without["agent.user_stop"] == without["client.stop"] == 0


def test_an_inserted_prompt_may_be_answered_after_the_close_response() -> None:
    """2. Prompt accepted: an inserted message "receives a successful messageId response.
    Prompt responses need not precede the close response" (feature ``answer_after_close``)."""
    script = [*INSERTED, ("agent", "end", "end_turn"), D, ("client", "close", None), D]
    close = ("agent", "close_response", None)
    assert close not in scripted(script, DEFAULT).world.enabled()  # the prompt's answer first
    cfg = _with("answer_after_close")
    assert close in scripted(script, cfg).world.enabled()
    run = _accepted([*script, close, ("agent", "answer", 1), D], cfg)
    responses = [m for m in _sent(run) if "result" in m]
    assert responses[-2]["result"] == {} and responses[-1]["id"] == 1
    assert responses[-1]["result"]["messageId"] == run.world.agent.prompts[1][1]


def test_the_session_slice_answers_a_prompt_after_the_close_response() -> None:
    sl = bfs.SLICE_BY_NAME["session"]
    contexts = {"agent.answer": [("closed", lambda peer, ev: peer.session == "closed")]}
    parts, _ = bfs.search_states(sl.cfg, frozenset(), None)
    assert parts.events(contexts)["agent.answer[closed]"] > 0
    without = sl.cfg.with_(features=sl.cfg.features - {"answer_after_close"})
    parts, _ = bfs.search_states(without, frozenset(), None)
    assert parts.events(contexts)["agent.answer[closed]"] == 0


def test_a_background_tool_call_may_be_pending_or_paused() -> None:
    """Background work: "pending and paused tool calls are still live" (feature ``bg_pause``):
    a listed background tool call pauses, goes back to pending, runs again, and completes while
    the session is idle; one whose permission was granted while it was paused goes in_progress
    before it completes (TOOL-04)."""
    key = ("tool_call", "tc_bg_1")
    listed = [*START, ("agent", "bg_start", "tool_call"), ("agent", "bg_list", key), D]
    pause = ("agent", "tool_status", ("tc_bg_1", "paused"))
    assert pause not in scripted(listed, _with("bg_tool")).world.enabled()
    cfg = _with("bg_tool", "bg_pause")
    assert pause in scripted(listed, cfg).world.enabled()
    moves = [pause, ("agent", "end", "end_turn"), D, ("agent", "tool_status", ("tc_bg_1", "pending"))]
    moves += [("agent", "tool_status", ("tc_bg_1", "in_progress")), ("agent", "bg_finish", key)]
    run = _accepted([*listed, *moves, ("agent", "bg_unlist", key), D], cfg)
    assert [u.get("status") for u in _updates(run) if u.get("toolCallId") == "tc_bg_1"] == [
        "in_progress",
        "paused",
        "pending",
        "in_progress",
        "completed",
    ]
    granted = [*listed, ("agent", "bg_ask", "tc_bg_1"), D, pause, ("client", "allow", "perm_1"), D]
    paused = scripted(granted, _with("bg_tool", "bg_pause", "bg_permission"))
    assert ("agent", "bg_finish", key) not in paused.world.enabled()
    assert ("agent", "tool_status", ("tc_bg_1", "in_progress")) in paused.world.enabled()


def test_a_paused_background_tool_call_foreground_work_adopts_runs_again() -> None:
    """Under waited-on-background=becomes-foreground a listed background tool call foreground
    work starts waiting on becomes foreground work; adopted while paused (feature ``bg_pause``),
    it must be able to run again, or the work could never end (the readings matrix found FG-05
    open at quiescence: the Agent had no move for a paused foreground call)."""
    key = ("tool_call", "tc_bg_1")
    listed = [*START, ("agent", "bg_start", "tool_call"), ("agent", "bg_list", key), D]
    features = (DEFAULT.features - {"pause"}) | {"bg_tool", "bg_pause"}  # no bare status moves
    cfg = DEFAULT.with_(features=features, readings={"waited-on-background": "becomes-foreground"})
    adopted = [*listed, ("agent", "tool_status", ("tc_bg_1", "paused")), D, ("agent", "bg_adopt", key), D]
    run = ("agent", "tool_run", "tc_bg_1")
    assert run in scripted(adopted, cfg).world.enabled()
    done = [*adopted, run, D, ("agent", "tool_done", "tc_bg_1"), D, ("agent", "end", "end_turn"), D]
    _accepted(done, cfg)


def test_the_bg_requests_slice_pauses_background_tool_calls() -> None:
    events, without = _taken("bg_requests", "bg_pause")
    assert events["agent.tool_status"] > 0 and without["agent.tool_status"] == 0


@pytest.mark.parametrize(("how", "content"), [("empty", []), ("null", None)])
def test_a_message_content_may_be_cleared(how: str, content: Any) -> None:
    """Message IDs: "content: [] or content: null clears" a message (feature ``clear``)."""
    said = [*START, ("agent", "say", None)]
    clear = ("agent", "clear", how)
    assert clear not in scripted(said, DEFAULT).world.enabled()
    cfg = _with("clear")
    assert clear not in scripted(START, cfg).world.enabled()  # no message yet
    assert clear in scripted(said, cfg).world.enabled()
    run = _accepted([*said, clear, ("agent", "end", "end_turn"), D], cfg)
    cleared = _updates(run)[-2]
    assert cleared["sessionUpdate"] == "agent_message" and cleared["content"] == content


def test_notices_may_have_other_severities_and_optional_fields() -> None:
    """Session notices: severity is an open enum (``_`` values the implementation's), the
    description optional and nullable (feature ``notice_detail``)."""
    kinds = {("agent", "notice", k) for k in ("info", "custom")}
    assert not kinds & set(scripted(START, DEFAULT).world.enabled())
    cfg = _with("notice_detail")
    assert kinds <= set(scripted(START, cfg).world.enabled())
    shown = []
    for kind in ("info", "custom"):
        run = _accepted([*START, ("agent", "notice", kind), ("agent", "end", "end_turn"), D], cfg)
        shown.append(next(u for u in _updates(run) if u["sessionUpdate"] == "notice"))
    assert [(n["severity"], n.get("description", "-")) for n in shown] == [
        ("info", "Older turns summarized"),
        ("_quota", None),
    ]


def test_the_output_slice_clears_messages_and_sends_detailed_notices() -> None:
    sl = bfs.SLICE_BY_NAME["output"]
    contexts = {"agent.notice": [("detailed", lambda peer, ev: ev[2] is not None)]}
    parts, _ = bfs.search_states(sl.cfg, frozenset(), None)
    events = parts.events(contexts)
    assert events["agent.clear"] > 0 and events["agent.notice[detailed]"] > 0
    without = sl.cfg.with_(features=sl.cfg.features - {"clear", "notice_detail"})
    parts, _ = bfs.search_states(without, frozenset(), None)
    events = parts.events(contexts)
    assert events["agent.clear"] == events["agent.notice[detailed]"] == 0


def test_a_compaction_may_complete_without_its_summary() -> None:
    """Session compaction: "Summary content is also optional", and an update may omit summary to
    retain what was streamed (feature ``compact_once``): a streamed compaction completes with no
    summary field, as a compaction reported by one update may."""
    streamed = [*START, ("agent", "compact_start", None), ("agent", "compact_chunk", "cmp_1")]
    bare = ("agent", "compact_end", ("cmp_1", "bare"))
    assert bare not in scripted(streamed, DEFAULT).world.enabled()
    cfg = _with("compact_once")
    assert bare in scripted(streamed, cfg).world.enabled()
    run = _accepted([*streamed, bare, ("agent", "end", "end_turn"), D], cfg)
    done = [u for u in _updates(run) if u["sessionUpdate"] == "compaction_update"][-1]
    assert done["status"] == "completed" and "summary" not in done
    events, without = _taken("compaction", "compact_once")
    assert events["agent.compact_end"] > without["agent.compact_end"] > 0


LIVE = ("agent", "user_message", (1, "live"))


def _resumed(first: Any) -> list[Any]:
    """A turn whose user message ``first`` reports, then a close and a resume asking for the
    replay."""
    turn = [("agent", "answer", 1), D, ("agent", "say", None), D, ("agent", "end", "end_turn"), D]
    close = [("client", "close", None), D, ("agent", "close_response", None), D]
    return [*INSERTED[:-1], first, *turn, *close, ("client", "resume", True), D, ("agent", "replay", None), D]


def _replayed(run: Any) -> list[str]:
    """The kinds of the session updates the Agent sent between the resume request and its response."""
    out: list[str] = []
    resuming = False
    for _, m in run.world.transcript:
        if m.get("method") == "session/resume":
            resuming = True
        elif resuming and m.get("method") == "session/update":
            out.append(m["params"]["update"]["sessionUpdate"])
        elif resuming and "result" in m:
            break
    return out


def test_a_user_message_reported_live_only_is_left_out_of_the_replay() -> None:
    """2. Prompt accepted: "For a locally handled command that the runtime does not record, it can
    instead insert a live-only ACP user message"; "Every inserted input ... is reported live, but
    Agents are not required to persist it"; "replay may omit live-only or discarded messages"
    (feature ``live_only``): the message is reported live and not retained, so the replay sends
    the turn's output without it, and the checker accepts that."""
    assert LIVE not in scripted(INSERTED[:-1], DEFAULT).world.enabled()
    cfg = _with("live_only")
    assert LIVE in scripted(INSERTED[:-1], cfg).world.enabled()
    assert _replayed(_accepted(_resumed(("agent", "user_message", 1)), cfg)) == [
        "user_message",
        "agent_message",
        "state_update",
    ]
    run = _accepted(_resumed(LIVE), cfg)
    assert _updates(run)[1]["sessionUpdate"] == "user_message"  # reported live
    assert _replayed(run) == ["agent_message", "state_update"]  # and not replayed
    assert LIVE not in run.world.enabled()  # reported once


def test_the_closes_slice_reports_a_user_message_live_only() -> None:
    events, without = _taken("closes", "live_only")
    contexts = {"agent.user_message": [("live", lambda peer, ev: type(ev[2]) is tuple)]}
    parts, _ = bfs.search_states(bfs.SLICE_BY_NAME["closes"].cfg, frozenset(), None)
    assert parts.events(contexts)["agent.user_message[live]"] > 0
    assert events["agent.replay"] > without["agent.replay"] > 0


def test_a_tool_call_may_take_the_id_of_the_current_message() -> None:
    """Entity IDs: "An ID is unique among entities of the same type within a session, not across
    all entity types, so the same string can identify one entity of each type" (feature
    ``shared_ids``): the tool call is created under the agent message's ID, runs and completes,
    and each entity keeps its own updates; the checker accepts it."""
    said = [*START, ("agent", "say", None), D]
    shared = ("agent", "tool", "shared")
    assert shared not in scripted(said, DEFAULT).world.enabled()
    cfg = _with("shared_ids")
    assert shared not in scripted(START, cfg).world.enabled()  # no message yet
    mid = scripted(said, cfg).world.agent.cur_msg
    assert mid is not None and shared in scripted(said, cfg).world.enabled()
    steps = [shared, ("agent", "tool_run", mid), ("agent", "tool_done", mid), D]
    run = _accepted([*said, *steps, ("agent", "say", None), ("agent", "end", "end_turn"), D], cfg)
    kinds = [(u["sessionUpdate"], u.get("messageId") or u.get("toolCallId")) for u in _updates(run)]
    assert ("agent_message", mid) in kinds and ("tool_call_update", mid) in kinds
    two = scripted([*said, shared], cfg.with_(tool_calls=2)).world.enabled()
    assert ("agent", "tool", None) in two and shared not in two  # one tool call under that ID


def test_the_output_slice_shares_an_id_between_a_message_and_a_tool_call() -> None:
    sl = bfs.SLICE_BY_NAME["output"]
    contexts = {"agent.tool": [("shared", lambda peer, ev: ev[2] == "shared")]}
    parts, _ = bfs.search_states(sl.cfg, frozenset(), None)
    assert parts.events(contexts)["agent.tool[shared]"] > 0
    without = sl.cfg.with_(features=sl.cfg.features - {"shared_ids"})
    parts, _ = bfs.search_states(without, frozenset(), None)
    assert parts.events(contexts)["agent.tool[shared]"] == 0
