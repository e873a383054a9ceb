"""Hand-written expectations for the normative client view (model/clientview.py) and the faulty
views on top of it (properties/clientview.py).

Every expected value here is worked out from the spec sections cited in each test, not taken
from the code under test. Section names: Session updates, Entity IDs, Message IDs,
Session-directed messages, Session compaction, Session usage updates, 5. Tool invocation,
Session states, Initial state and synchronization, State transitions, Background work,
2. Prompt accepted.
"""

from __future__ import annotations

import base64
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.main import main
from model.clientview import ClientView
from properties import clientview_text
from properties.clientview import CLIENT_FAULTS, FaultyView, client_view
from properties.shared import shared_dir
from properties.transcript import read_transcript

S = "sess_1"


# -- message builders ----------------------------------------------------------------------------
def upd(variant: str, sid: str = S, **fields: Any) -> dict[str, Any]:
    update = {"sessionUpdate": variant, **fields}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def state(s: str, sid: str = S, **fields: Any) -> dict[str, Any]:
    return upd("state_update", sid, state=s, **fields)


def request(rid: Any, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def result(rid: Any, **res: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": res}


def error(rid: Any, code: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": "nope"}}


def run(*msgs: dict[str, Any], faults: frozenset[str] = frozenset()) -> ClientView:
    view = client_view(faults)
    for m in msgs:
        sender = "client" if m.get("method") in CLIENT_METHODS and "id" in m else "agent"
        view.apply(sender, m)
    return view


CLIENT_METHODS = {"session/new", "session/prompt", "session/resume", "session/fork", "session/close"}


def sess(view: ClientView, sid: str = S) -> dict[str, Any]:
    out: dict[str, Any] = view.to_json()[sid]
    return out


def entity(view: ClientView, etype: str, eid: str, sid: str = S) -> dict[str, Any]:
    out: dict[str, Any] = sess(view, sid)["entities"][etype][eid]
    return out


def timeline(view: ClientView, sid: str = S) -> list[tuple[str, str]]:
    return [(t, i) for t, i in sess(view, sid)["timeline"]]


# -- Message IDs ---------------------------------------------------------------------------------
def test_spec_example_replace_then_chunks() -> None:
    v = ClientView()
    v.apply("agent", upd("agent_message", messageId="m", content=[text("A")]))
    v.apply("agent", upd("agent_message_chunk", messageId="m", content=text("B")))
    assert entity(v, "agent_message", "m")["content"] == [text("A"), text("B")]
    v.apply("agent", upd("agent_message", messageId="m", content=[text("C")]))
    assert entity(v, "agent_message", "m")["content"] == [text("C")]
    v.apply("agent", upd("agent_message_chunk", messageId="m", content=text("D")))
    v.apply("agent", upd("agent_message_chunk", messageId="m", content=text("E")))
    assert entity(v, "agent_message", "m")["content"] == [text("C"), text("D"), text("E")]
    assert timeline(v) == [("agent_message", "m")]


@pytest.mark.parametrize("variant", ["user_message", "agent_message", "agent_thought", "session_message"])
def test_message_content_patch_rules(variant: str) -> None:
    v = ClientView()
    v.apply("agent", upd(variant, messageId="m"))
    assert entity(v, variant, "m")["content"] == []
    assert entity(v, variant, "m")["_meta"] == {}
    v.apply("agent", upd(variant, messageId="m", content=[text("x"), text("y")]))
    v.apply("agent", upd(variant, messageId="m", _meta={"k": 1}))  # content omitted: unchanged
    assert entity(v, variant, "m")["content"] == [text("x"), text("y")]
    v.apply("agent", upd(variant, messageId="m", content=None))
    assert entity(v, variant, "m")["content"] == []
    v.apply("agent", upd(variant + "_chunk", messageId="m", content=text("z")))
    assert entity(v, variant, "m")["content"] == [text("z")]
    v.apply("agent", upd(variant, messageId="m", content=[]))
    assert entity(v, variant, "m")["content"] == []
    assert timeline(v) == [(variant, "m")]


def test_chunk_for_unseen_id_creates_then_appends_and_fixes_position() -> None:
    v = run(
        upd("agent_message_chunk", messageId="m1", content=text("a")),
        upd("tool_call_update", toolCallId="t1", title="Read"),
        upd("agent_message_chunk", messageId="m1", content=text("b")),
        upd("agent_message", messageId="m1", _meta={"done": True}),
    )
    assert entity(v, "agent_message", "m1") == {"content": [text("a"), text("b")], "_meta": {"done": True}}
    assert timeline(v) == [("agent_message", "m1"), ("tool_call", "t1")]


def test_positions_never_move_even_after_idle() -> None:
    v = run(
        state("running"),
        upd("user_message", messageId="u1", content=[text("hi")]),
        upd("agent_thought_chunk", messageId="th", content=text("hmm")),
        upd("agent_message_chunk", messageId="a1", content=text("hello")),
        state("idle", stopReason="end_turn"),
        upd("agent_thought", messageId="th", content=[text("rethought")]),
        upd("user_message", messageId="u1", _meta={"x": 1}),
        upd("agent_message_chunk", messageId="a2", content=text("later")),
    )
    assert timeline(v) == [
        ("user_message", "u1"),
        ("agent_thought", "th"),
        ("agent_message", "a1"),
        ("agent_message", "a2"),
    ]
    assert entity(v, "agent_thought", "th")["content"] == [text("rethought")]


def test_entities_are_keyed_by_type_and_id() -> None:
    v = run(
        upd("agent_message", messageId="m", content=[text("answer")]),
        upd("agent_thought", messageId="m", content=[text("reasoning")]),
        upd("agent_thought_chunk", messageId="m", content=text("more")),
        upd("tool_call_update", toolCallId="m", status="in_progress"),
    )
    assert entity(v, "agent_message", "m")["content"] == [text("answer")]
    assert entity(v, "agent_thought", "m")["content"] == [text("reasoning"), text("more")]
    assert entity(v, "tool_call", "m")["status"] == "in_progress"
    assert timeline(v) == [("agent_message", "m"), ("agent_thought", "m"), ("tool_call", "m")]


# -- metadata patches ----------------------------------------------------------------------------
def test_meta_patches_by_top_level_key() -> None:
    v = ClientView()
    v.apply("agent", upd("agent_message", messageId="m", _meta={"a": 1, "b": {"x": 1}, "c": 3}))
    v.apply(
        "agent", upd("agent_message", messageId="m", content=[text("t")], _meta={"a": None, "b": {"y": 2}})
    )
    # a removed, b replaced whole (no nested merge), c untouched; content replaced in the same update
    assert entity(v, "agent_message", "m") == {"content": [text("t")], "_meta": {"b": {"y": 2}, "c": 3}}
    v.apply("agent", upd("agent_message_chunk", messageId="m", content=text("u"), _meta={"chunk": 1}))
    assert entity(v, "agent_message", "m")["_meta"] == {"b": {"y": 2}, "c": 3}  # chunk _meta is scoped
    v.apply("agent", upd("agent_message", messageId="m"))
    assert entity(v, "agent_message", "m")["_meta"] == {"b": {"y": 2}, "c": 3}  # omitted: unchanged
    v.apply("agent", upd("agent_message", messageId="m", _meta=None))
    assert entity(v, "agent_message", "m")["_meta"] == {}  # null clears (schema: Metadata Patches)


# -- Session-directed messages -------------------------------------------------------------------
def test_session_message_participants_follow_patch_rules() -> None:
    v = ClientView()
    v.apply("agent", upd("session_message_chunk", messageId="sm", content=text("task")))
    assert entity(v, "session_message", "sm") == {
        "content": [text("task")],
        "_meta": {},
        "senderSessionId": None,
        "recipientSessionId": None,
        "senderMessageId": None,
        "recipientMessageId": None,
    }
    v.apply("agent", upd("session_message", messageId="sm", senderSessionId="parent", senderMessageId="o1"))
    v.apply("agent", upd("session_message", messageId="sm", recipientSessionId="child"))
    e = entity(v, "session_message", "sm")
    assert (e["senderSessionId"], e["recipientSessionId"], e["senderMessageId"]) == ("parent", "child", "o1")
    assert e["content"] == [text("task")]
    v.apply("agent", upd("session_message", messageId="sm", senderSessionId=None))
    assert entity(v, "session_message", "sm")["senderSessionId"] is None
    assert entity(v, "session_message", "sm")["senderMessageId"] == "o1"


# -- 5. Tool invocation --------------------------------------------------------------------------
def test_tool_call_defaults_patches_and_chunks() -> None:
    v = ClientView()
    v.apply("agent", upd("tool_call_update", toolCallId="t"))
    e = entity(v, "tool_call", "t")
    assert (e["status"], e["title"], e["kind"], e["content"], e["_meta"]) == (
        "pending",
        None,
        "other",
        [],
        {},
    )
    v.apply(
        "agent", upd("tool_call_update", toolCallId="t", title="Run", kind="execute", status="in_progress")
    )
    v.apply(
        "agent",
        upd("tool_call_content_chunk", toolCallId="t", content={"type": "content", "content": text("1")}),
    )
    v.apply(
        "agent",
        upd("tool_call_content_chunk", toolCallId="t", content={"type": "content", "content": text("2")}),
    )
    e = entity(v, "tool_call", "t")
    assert (e["status"], e["title"], e["kind"]) == ("in_progress", "Run", "execute")
    assert [c["content"]["text"] for c in e["content"]] == ["1", "2"]
    final = [{"type": "content", "content": text("all")}]
    v.apply("agent", upd("tool_call_update", toolCallId="t", status="completed", content=final))
    assert entity(v, "tool_call", "t")["content"] == final
    v.apply(
        "agent", upd("tool_call_update", toolCallId="t", status=None, kind=None, title=None, content=None)
    )
    e = entity(v, "tool_call", "t")
    assert (e["status"], e["title"], e["kind"], e["content"]) == ("pending", None, "other", [])


def test_tool_call_chunk_for_unseen_tool_call_creates_it_pending() -> None:
    v = run(
        upd("tool_call_content_chunk", toolCallId="t9", content={"type": "content", "content": text("x")})
    )
    assert entity(v, "tool_call", "t9")["status"] == "pending"
    assert len(entity(v, "tool_call", "t9")["content"]) == 1


# -- Session compaction --------------------------------------------------------------------------
def test_compaction_summary_and_error_patches() -> None:
    v = ClientView()
    v.apply("agent", upd("compaction_summary_chunk", compactionId="c", content=text("s1")))
    assert entity(v, "compaction", "c") == {
        "status": "in_progress",
        "summary": [text("s1")],
        "error": None,
        "_meta": {},
    }
    v.apply("agent", upd("compaction_summary_chunk", compactionId="c", content=text("s2")))
    v.apply("agent", upd("compaction_update", compactionId="c", status="in_progress"))  # summary omitted
    assert entity(v, "compaction", "c")["summary"] == [text("s1"), text("s2")]
    v.apply("agent", upd("compaction_update", compactionId="c", status="in_progress", summary=[text("R")]))
    v.apply("agent", upd("compaction_summary_chunk", compactionId="c", content=text("+")))
    assert entity(v, "compaction", "c")["summary"] == [text("R"), text("+")]
    v.apply("agent", upd("compaction_update", compactionId="c", status="failed", error="boom", summary=[]))
    assert entity(v, "compaction", "c") == {"status": "failed", "summary": [], "error": "boom", "_meta": {}}
    v.apply("agent", upd("compaction_update", compactionId="c", status="failed", error=None))
    assert entity(v, "compaction", "c")["error"] is None


def test_single_completed_compaction_and_custom_status() -> None:
    v = run(
        upd("compaction_update", compactionId="c1", status="completed"),
        upd("compaction_update", compactionId="c2", status="_vendor", summary=None),
    )
    assert entity(v, "compaction", "c1")["status"] == "completed"
    assert entity(v, "compaction", "c2")["status"] == "_vendor"
    assert entity(v, "compaction", "c2")["summary"] == []


# -- Session usage updates -----------------------------------------------------------------------
def test_usage_cost_patch() -> None:
    v = ClientView()
    v.apply("agent", state("idle"))
    assert sess(v)["session"]["usage"] == {"used": None, "size": None, "cost": None}
    v.apply("agent", upd("usage_update", used=10, size=100))
    assert sess(v)["session"]["usage"] == {"used": 10, "size": 100, "cost": None}
    usd = {"amount": 0.5, "currency": "USD"}
    v.apply("agent", upd("usage_update", used=20, size=100, cost=usd))
    v.apply("agent", upd("usage_update", used=30, size=100))  # omitted: unchanged
    assert sess(v)["session"]["usage"] == {"used": 30, "size": 100, "cost": usd}
    credits = {"amount": 3, "currency": "credits"}
    v.apply("agent", upd("usage_update", used=30, size=100, cost=credits))
    assert sess(v)["session"]["usage"]["cost"] == credits
    v.apply("agent", upd("usage_update", used=31, size=100, cost=None))
    assert sess(v)["session"]["usage"] == {"used": 31, "size": 100, "cost": None}


# -- Session states, State transitions, Stop reasons ---------------------------------------------
def test_new_session_defaults_to_idle_and_completions_count_work_endings() -> None:
    v = run(request(1, "session/new", cwd="/w"), result(1, sessionId=S))
    assert sess(v)["session"]["state"] == "idle"
    assert sess(v)["session"]["completions"] == 0
    for m in (
        state("idle"),  # optional initial idle: not a completion
        state("running"),
        state("running"),  # repeat: not a transition
        state("idle", stopReason="end_turn"),
        state("idle", stopReason="end_turn"),  # repeat: not a completion
        state("requires_action"),
        state("idle", stopReason="cancelled"),
        state("running"),
        state("idle", stopReason="_vendor"),  # unknown stop reason still ends the work
        state("running"),
        state("idle", stopReason=None),
    ):
        v.apply("agent", m)
    assert sess(v)["session"]["completions"] == 4
    assert sess(v)["session"]["state"] == "idle"


def test_last_stop_reason() -> None:
    v = run(state("running"), state("idle", stopReason="refusal"))
    assert sess(v)["session"]["last_stop_reason"] == "refusal"
    v.apply("agent", state("idle"))  # repeat without a reason keeps the context
    assert sess(v)["session"]["last_stop_reason"] == "refusal"
    v.apply("agent", state("running"))
    v.apply("agent", state("idle", stopReason=7))  # ends work with a malformed reason
    assert sess(v)["session"]["last_stop_reason"] is None
    assert sess(v)["session"]["completions"] == 2


def test_unknown_and_unrecognized_states() -> None:
    v = run(state("running"), state("unknown"))
    assert sess(v)["session"]["state"] == "unknown"
    v.apply("agent", state("idle"))  # restores a known state without implying that work ended
    assert sess(v)["session"]["completions"] == 0
    v.apply("agent", state("_compacting"))
    assert sess(v)["session"]["state"] == "unrecognized"
    v.apply("agent", state("paused_future"))
    assert sess(v)["session"]["state"] == "unrecognized"
    v.apply("agent", upd("state_update"))  # no state at all: not recognized either
    assert sess(v)["session"]["state"] == "unrecognized"
    v.apply("agent", state("running"))
    assert sess(v)["session"]["state"] == "running"


def test_session_new_response_does_not_overwrite_reported_state() -> None:
    v = run(request(1, "session/new", cwd="/w"), state("running", background=[]), result(1, sessionId=S))
    assert sess(v)["session"]["state"] == "running"
    assert sess(v)["session"]["background"] == []


def test_resume_snapshots_are_not_completions() -> None:
    v = run(state("running"), request(5, "session/resume", sessionId=S, cwd="/w"), state("idle"), result(5))
    assert sess(v)["session"]["completions"] == 0
    assert sess(v)["session"]["state"] == "idle"
    v.apply("agent", state("running"))
    v.apply("agent", state("idle"))
    assert sess(v)["session"]["completions"] == 1


def test_resume_of_unseen_session_is_unknown_until_snapshot() -> None:
    v = run(request(5, "session/resume", sessionId="s9", cwd="/w"))
    assert sess(v, "s9")["session"]["state"] == "unknown"
    v.apply("agent", state("running", sid="s9"))
    v.apply("agent", result(5))
    assert sess(v, "s9")["session"]["state"] == "running"


# -- Background work -----------------------------------------------------------------------------
def test_background_snapshots() -> None:
    term = {"type": "terminal", "terminalId": "term1"}
    v = run(state("running"))
    assert sess(v)["session"]["background"] is None  # omitted: unknown
    v.apply("agent", state("running", background=[term]))
    assert sess(v)["session"]["background"] == [term]
    v.apply("agent", state("running", background=[term]))  # repeated snapshot: idempotent
    assert sess(v)["session"]["background"] == [term]
    v.apply("agent", state("idle", background=[]))
    assert sess(v)["session"]["background"] == []
    v.apply("agent", state("idle", background=None))
    assert sess(v)["session"]["background"] is None
    v.apply("agent", state("idle", background=[{"type": "_vendor_job", "x": 1}]))  # unknown type counts
    assert sess(v)["session"]["background"] == [{"type": "_vendor_job", "x": 1}]
    for malformed in ("nope", [{"type": "terminal"}], [{"terminalId": "t"}], [1], {"type": "terminal"}):
        v.apply("agent", state("idle", background=[]))
        v.apply("agent", state("idle", background=malformed))
        assert sess(v)["session"]["background"] is None, malformed
    assert sess(v)["session"]["completions"] == 1


def test_repeated_snapshot_leaves_view_unchanged() -> None:
    snap = state("idle", stopReason="end_turn", background=[{"type": "tool_call", "toolCallId": "w"}])
    v = run(state("running"), snap)
    before = (json.dumps(v.to_json(), sort_keys=True), v.snapshot())
    v.apply("agent", snap)
    assert (json.dumps(v.to_json(), sort_keys=True), v.snapshot()) == before


# -- 2. Prompt accepted --------------------------------------------------------------------------
def test_prompt_response_first_then_user_message() -> None:
    v = run(request(7, "session/prompt", sessionId=S, prompt=[text("hi")]))
    assert sess(v)["session"]["prompts"] == {"7": None}
    v.apply("agent", result(7, messageId="u1"))
    assert sess(v)["session"]["prompts"] == {"7": "u1"}
    assert sess(v)["entities"]["user_message"] == {}  # the response is not an update
    v.apply("agent", upd("user_message", messageId="u1", content=[text("hi")]))
    assert timeline(v) == [("user_message", "u1")]


def test_user_message_first_then_response_reconciles() -> None:
    v = run(
        request("p-1", "session/prompt", sessionId=S, prompt=[text("hi")]),
        request("p-2", "session/prompt", sessionId=S, prompt=[text("hi")]),
        upd("user_message", messageId="u2", content=[text("hi")]),
        upd("user_message", messageId="u1", content=[text("hi")]),
    )
    # identical content, no response yet: the client must not guess which prompt is which
    assert sess(v)["session"]["prompts"] == {'"p-1"': None, '"p-2"': None}
    v.apply("agent", result("p-1", messageId="u1"))
    v.apply("agent", result("p-2", messageId="u2"))
    assert sess(v)["session"]["prompts"] == {'"p-1"': "u1", '"p-2"': "u2"}
    assert timeline(v) == [("user_message", "u2"), ("user_message", "u1")]


def test_rejected_prompt_is_recorded_without_a_message() -> None:
    v = run(request(3, "session/prompt", sessionId=S, prompt=[text("x")]), error(3, -32800))
    assert sess(v)["session"]["prompts"] == {"3": None}
    assert sess(v)["session"]["rejected_prompts"] == {"3": -32800}
    assert sess(v)["timeline"] == []


def test_agent_request_ids_do_not_collide_with_client_ids() -> None:
    v = run(request(1, "session/prompt", sessionId=S, prompt=[text("x")]))
    v.apply("agent", {"jsonrpc": "2.0", "id": 1, "method": "session/request_permission", "params": {}})
    v.apply("client", result(1, outcome={"outcome": "cancelled"}))  # client answering the agent
    assert sess(v)["session"]["prompts"] == {"1": None}
    v.apply("agent", result(1, messageId="u1"))
    assert sess(v)["session"]["prompts"] == {"1": "u1"}


# -- Session updates: unknown, custom, notices, other entities -----------------------------------
def test_unknown_and_custom_variants_are_preserved_raw() -> None:
    v = run(
        upd("_vendor_thing", payload={"a": 1}),
        upd("future_variant", x=[1, 2]),
        upd("available_commands_update", availableCommands=[]),
        upd("notice", severity="info", title="Heads up"),
        upd("agent_message"),  # known variant without its required messageId
    )
    out = sess(v)
    assert out["preserved"] == [
        {"sessionUpdate": "_vendor_thing", "payload": {"a": 1}},
        {"sessionUpdate": "future_variant", "x": [1, 2]},
    ]
    assert out["session"]["notices"] == 1
    assert out["session"]["malformed_updates"] == 1
    assert out["timeline"] == []
    assert out["session"]["state"] == "idle"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_terminal_output_snapshot_and_chunks() -> None:
    v = run(
        upd("terminal_output_chunk", terminalId="T", data=b64(b"ab")),
        upd("terminal_update", terminalId="T", command="make"),
        upd("terminal_output_chunk", terminalId="T", data=b64(b"cd")),
    )
    e = entity(v, "terminal", "T")
    assert (e["command"], base64.b64decode(e["output"]), e["exitStatus"]) == ("make", b"abcd", None)
    v.apply(
        "agent",
        upd("terminal_update", terminalId="T", output={"data": b64(b"X")}, exitStatus={"exitCode": 0}),
    )
    e = entity(v, "terminal", "T")
    assert (base64.b64decode(e["output"]), e["exitStatus"]) == (b"X", {"exitCode": 0})


def test_plans_update_and_remove_in_place() -> None:
    items = {"type": "items", "planId": "p", "entries": []}
    v = run(
        upd("plan_update", plan=items),
        upd("agent_message", messageId="m", content=[]),
        upd(
            "plan_update",
            plan={**items, "entries": [{"content": "x", "priority": "high", "status": "pending"}]},
        ),
        upd("plan_removed", planId="p"),
        upd("plan_removed", planId="never-seen"),
    )
    assert timeline(v) == [("plan", "p"), ("agent_message", "m")]
    assert entity(v, "plan", "p")["removed"] is True
    assert len(entity(v, "plan", "p")["plan"]["entries"]) == 1


def test_view_is_deterministic_and_snapshot_tracks_changes() -> None:
    msgs = [state("running"), upd("agent_message_chunk", messageId="m", content=text("a")), state("idle")]
    a, b = run(*msgs), run(*msgs)
    assert a.to_json() == b.to_json()
    assert a.snapshot() == b.snapshot()
    assert hash(a.snapshot()) == hash(b.snapshot())
    b.apply("agent", upd("agent_message_chunk", messageId="m", content=text("b")))
    assert a.snapshot() != b.snapshot()


def test_unknown_fault_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown client faults"):
        FaultyView({"no-such-bug"})


# -- deliberate faults ---------------------------------------------------------------------------
FAULT_CASES: dict[str, tuple[list[dict[str, Any]], Any]] = {
    # each: a small transcript, and a function of (reference, faulty) views that must hold
    "omitted-background-is-empty": (
        [state("running", background=[{"type": "terminal", "terminalId": "x"}]), state("idle")],
        lambda r, f: r["session"]["background"] is None and f["session"]["background"] == [],
    ),
    "move-on-update": (
        [
            upd("agent_message", messageId="a", content=[text("1")]),
            upd("agent_message", messageId="b", content=[text("2")]),
            upd("agent_message_chunk", messageId="a", content=text("3")),
        ],
        lambda r, f: (
            r["timeline"] == [["agent_message", "a"], ["agent_message", "b"]]
            and f["timeline"] == [["agent_message", "b"], ["agent_message", "a"]]
        ),
    ),
    "drop-unseen-chunk": (
        [upd("agent_message_chunk", messageId="a", content=text("1"))],
        lambda r, f: r["timeline"] == [["agent_message", "a"]] and f["timeline"] == [],
    ),
    "key-by-id-only": (
        [
            upd("agent_message", messageId="m", content=[text("answer")]),
            upd("agent_thought", messageId="m", content=[text("thought")]),
        ],
        lambda r, f: (
            r["entities"]["agent_message"]["m"]["content"] == [text("answer")]
            and "m" not in f["entities"]["agent_message"]
            and f["entities"]["agent_thought"]["m"]["content"] == [text("thought")]
        ),
    ),
    "unknown-state-is-idle": (
        [state("running"), state("_custom")],
        lambda r, f: (
            (r["session"]["state"], r["session"]["completions"]) == ("unrecognized", 0)
            and (f["session"]["state"], f["session"]["completions"]) == ("idle", 1)
        ),
    ),
    "repeat-idle-counts": (
        [state("running"), state("idle"), state("idle")],
        lambda r, f: r["session"]["completions"] == 1 and f["session"]["completions"] == 2,
    ),
    "response-overwrites-state": (
        [request(1, "session/new", cwd="/w"), state("running"), result(1, sessionId=S)],
        lambda r, f: r["session"]["state"] == "running" and f["session"]["state"] == "idle",
    ),
    "synthesize-incoming": (
        [
            state("idle"),
            upd("session_message", "s2", messageId="m", content=[text("go")], recipientSessionId=S),
        ],
        lambda r, f: (
            r["timeline"] == []
            and f["timeline"] == [["session_message", "m"]]
            and f["entities"]["session_message"]["m"]["senderSessionId"] == "s2"
        ),
    ),
    "link-by-equal-id": (
        [
            upd("session_message", "s2", messageId="m", content=[text("go")], recipientSessionId=S),
            upd("session_message", messageId="m", content=[text("go")], senderSessionId="s2"),
        ],
        lambda r, f: (
            r["entities"]["session_message"]["m"]["senderMessageId"] is None
            and f["entities"]["session_message"]["m"]["senderMessageId"] == "m"
        ),
    ),
    "silent-terminal-exited": (
        [upd("terminal_update", terminalId="t1", command="make"), state("idle")],
        lambda r, f: r["session"]["exited"] == [] and f["session"]["exited"] == ["t1"],
    ),
    "unreported-background-abandons": (
        [upd("tool_call_update", toolCallId="t1", status="in_progress"), state("idle")],
        lambda r, f: r["session"]["abandoned"] == [] and f["session"]["abandoned"] == [["tool_call", "t1"]],
    ),
    "idle-waits-for-answer": (
        [request(1, "session/prompt", sessionId=S, prompt=[text("hi")]), state("running"), state("idle")],
        lambda r, f: (
            (r["session"]["state"], r["session"]["deferred"]) == ("idle", 0)
            and (f["session"]["state"], f["session"]["deferred"]) == ("running", 1)
        ),
    ),
    "running-means-inserted": (
        [request(1, "session/prompt", sessionId=S, prompt=[text("hi")]), state("running")],
        lambda r, f: r["session"]["inserted"] == [] and f["session"]["inserted"] == ["1"],
    ),
    "replay-infers-activity": (
        [state("idle"), request(1, "session/resume", sessionId=S), upd("user_message", messageId="u1")],
        lambda r, f: r["session"]["state"] == "idle" and f["session"]["state"] == "running",
    ),
    "local-echo": (
        [request(1, "session/prompt", sessionId=S, prompt=[text("hi")])],
        lambda r, f: r["timeline"] == [] and f["timeline"] == [["user_message", "local-1"]],
    ),
    "associate-by-order": (
        [request(1, "session/prompt", sessionId=S, prompt=[text("hi")]), upd("user_message", messageId="u9")],
        lambda r, f: r["session"]["prompts"] == {"1": None} and f["session"]["prompts"] == {"1": "u9"},
    ),
    "message-chunk-replaces": (
        [upd("agent_message_chunk", messageId="a", content=text("1"))] * 2,
        lambda r, f: (
            len(r["entities"]["agent_message"]["a"]["content"]) == 2
            and len(f["entities"]["agent_message"]["a"]["content"]) == 1
        ),
    ),
    "tool-chunk-replaces": (
        [upd("tool_call_content_chunk", toolCallId="t", content={"type": "content", "content": text("1")})]
        * 2,
        lambda r, f: (
            len(r["entities"]["tool_call"]["t"]["content"]) == 2
            and len(f["entities"]["tool_call"]["t"]["content"]) == 1
        ),
    ),
    "summary-chunk-replaces": (
        [upd("compaction_summary_chunk", compactionId="c", content=text("1"))] * 2,
        lambda r, f: (
            len(r["entities"]["compaction"]["c"]["summary"]) == 2
            and len(f["entities"]["compaction"]["c"]["summary"]) == 1
        ),
    ),
    "unknown-keeps-activity": (
        [state("running"), state("unknown")],
        lambda r, f: r["session"]["state"] == "unknown" and f["session"]["state"] == "running",
    ),
    "idle-needs-known-stop-reason": (
        [state("running"), state("idle", stopReason="_paused")],
        lambda r, f: (
            (r["session"]["state"], r["session"]["completions"]) == ("idle", 1)
            and (f["session"]["state"], f["session"]["completions"]) == ("running", 0)
        ),
    ),
}


def test_every_fault_has_a_case() -> None:
    assert set(FAULT_CASES) == set(CLIENT_FAULTS)


@pytest.mark.parametrize("fault", CLIENT_FAULTS)
def test_fault_changes_the_view_as_intended(fault: str) -> None:
    msgs, check = FAULT_CASES[fault]
    ref = sess(run(*msgs))
    bad = sess(run(*msgs, faults=frozenset({fault})))
    assert ref != bad
    assert check(ref, bad)
    # the hashable snapshot (used by the explorer) sees the difference too
    assert run(*msgs, faults=frozenset({fault})).snapshot() != run(*msgs).snapshot()


# -- hypothesis: random well-formed updates keep the invariants ----------------------------------
IDS = st.sampled_from(["a", "b", "c"])
BLOCK = st.builds(text, st.sampled_from(["x", "y", "z"]))
META = st.one_of(
    st.none(), st.dictionaries(st.sampled_from(["k", "l"]), st.one_of(st.none(), st.integers(0, 3)))
)


def _opt(**fields: Any) -> Any:
    """Each field present or omitted."""
    return st.fixed_dictionaries({}, optional=fields)


MSG_UPSERT = st.builds(
    lambda variant, mid, rest: upd(variant, messageId=mid, **rest),
    st.sampled_from(["user_message", "agent_message", "agent_thought", "session_message"]),
    IDS,
    _opt(content=st.one_of(st.none(), st.lists(BLOCK, max_size=2)), _meta=META),
)
MSG_CHUNK = st.builds(
    lambda variant, mid, block: upd(variant, messageId=mid, content=block),
    st.sampled_from(
        ["user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "session_message_chunk"]
    ),
    IDS,
    BLOCK,
)
TOOL = st.builds(
    lambda tid, rest: upd("tool_call_update", toolCallId=tid, **rest),
    IDS,
    _opt(
        status=st.sampled_from([None, "pending", "in_progress", "completed", "failed"]),
        title=st.one_of(st.none(), st.just("T")),
        content=st.one_of(st.none(), st.lists(st.builds(lambda b: {"type": "content", "content": b}, BLOCK))),
    ),
)
TOOL_CHUNK = st.builds(
    lambda tid, b: upd("tool_call_content_chunk", toolCallId=tid, content={"type": "content", "content": b}),
    IDS,
    BLOCK,
)
COMPACTION = st.builds(
    lambda cid, status, rest: upd("compaction_update", compactionId=cid, status=status, **rest),
    IDS,
    st.sampled_from(["in_progress", "completed", "failed"]),
    _opt(summary=st.one_of(st.none(), st.lists(BLOCK, max_size=2)), error=st.one_of(st.none(), st.just("e"))),
)
COMPACTION_CHUNK = st.builds(
    lambda cid, b: upd("compaction_summary_chunk", compactionId=cid, content=b), IDS, BLOCK
)
STATE = st.builds(
    lambda s, rest: state(s, **rest),
    st.sampled_from(["idle", "running", "requires_action", "unknown", "_x"]),
    _opt(
        background=st.one_of(
            st.none(), st.lists(st.builds(lambda i: {"type": "tool_call", "toolCallId": i}, IDS))
        )
    ),
)
UPDATE = st.one_of(MSG_UPSERT, MSG_CHUNK, TOOL, TOOL_CHUNK, COMPACTION, COMPACTION_CHUNK, STATE)


@settings(max_examples=200, deadline=None)
@given(st.lists(UPDATE, max_size=30))
def test_random_updates_keep_invariants(msgs: list[dict[str, Any]]) -> None:
    view = ClientView()
    previous: list[list[str]] = []
    for m in msgs:
        view.apply("agent", m)
        out = view.to_json()[S]
        tl = out["timeline"]
        assert len({tuple(e) for e in tl}) == len(tl), "timeline has duplicates"
        for etype, eid in tl:
            assert eid in out["entities"][etype]
        assert sum(len(v) for v in out["entities"].values()) == len(tl)
        assert tl[: len(previous)] == previous, "an entity moved"
        assert len(tl) - len(previous) <= 1
        previous = tl
        assert out["session"]["state"] in {"idle", "running", "requires_action", "unknown", "unrecognized"}
        json.dumps(out)  # stays plain JSON
        hash(view.snapshot())
    fresh = ClientView()
    for m in msgs:
        fresh.apply("agent", m)
    assert fresh.snapshot() == view.snapshot(), "a cached snapshot went stale"
    assert fresh.to_json() == view.to_json()


# -- acp-model view ------------------------------------------------------------------------------
DATA = Path(__file__).resolve().parent / "data"
SHARED = shared_dir()  # $ACP_MODEL_SHARED, else ../shared


def _run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["view", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_json_matches_hand_written_view(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run_cli(capsys, str(DATA / "view_two_sessions.ndjson"), "--json")
    assert (code, err) == (0, "")
    expected = json.loads((DATA / "view_two_sessions.expected.json").read_text("utf-8"))
    assert json.loads(out) == expected
    assert list(json.loads(out)) == sorted(expected)  # keys are sorted
    _, out2, _ = _run_cli(capsys, str(DATA / "view_two_sessions.ndjson"), "--json")
    assert out2 == out  # byte-identical on a second run


def test_cli_text_form(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run_cli(capsys, str(DATA / "view_two_sessions.ndjson"))
    assert code == 0
    lines = [line.split() for line in out.splitlines()]
    assert ["session", "sA"] in lines and ["session", "sB"] in lines
    assert ["state:", "idle", "completions:", "1"] in lines
    assert ["state:", "unrecognized", "completions:", "0"] in lines
    assert ["background:", "terminal", "T1"] in lines
    order = [parts[1:3] for parts in lines if parts and parts[0].isdigit()]
    assert order == [
        ["user_message", "u1"],
        ["agent_thought", "m1"],
        ["agent_message", "m1"],
        ["tool_call", "t1"],
        ["terminal", "T1"],
        ["compaction", "c1"],
    ]
    assert '"Done. Bye."' in out
    assert "npm run dev: 12 output bytes" in out


def test_cli_lists_skipped_lines_with_their_numbers_and_counts_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(DATA / "view_bad_lines.ndjson")
    code, out, err = _run_cli(capsys, path, "--json")
    assert code == 0
    assert err.splitlines() == [
        f"acp-model view: {path}:2: skipped (input.invalid-json: not valid JSON "
        "(invalid literal, expected 'true': line 1 column 1 (char 0)): 'this is not json')",
        f'acp-model view: {path}:4: skipped (input.bad-from: "from" is \'server\', not "client" or "agent")',
        f"acp-model view: {path}:5: skipped (input.not-object: line is a JSON list, not an object)",
        f"acp-model view: {path}: skipped 3 unusable line(s)",
    ]
    s1 = json.loads(out)["s1"]["session"]
    assert (s1["state"], s1["completions"], s1["last_stop_reason"]) == ("idle", 1, "error")
    assert s1["prompts"] == {'"p1"': None}
    assert s1["rejected_prompts"] == {'"p1"': -32602}


def test_cli_crlf_and_bom_lines_are_used_not_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = (DATA / "view_two_sessions.ndjson").read_bytes().splitlines()
    path = tmp_path / "crlf.ndjson"
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\r\n")
    code, out, err = _run_cli(capsys, str(path), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == json.loads((DATA / "view_two_sessions.expected.json").read_text("utf-8"))


def test_cli_reads_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data = (DATA / "view_two_sessions.ndjson").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = _run_cli(capsys, "-", "--json")
    assert code == 0
    assert json.loads(out) == json.loads((DATA / "view_two_sessions.expected.json").read_text("utf-8"))


@pytest.mark.parametrize(("target", "problem"), [("missing.ndjson", "no such file"), (".", "is a directory")])
def test_cli_unusable_file_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str, problem: str
) -> None:
    path = str(tmp_path / target)
    code, out, err = _run_cli(capsys, path)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and path in err and problem in err


@pytest.mark.needs_shared
def test_fixture_messages_validate_against_the_schema() -> None:
    schema_path = SHARED / "acp-schema" / "v2" / "schema.unstable.json"
    if not schema_path.exists():
        pytest.skip(
            f"needs the official schema at {schema_path} "
            "(../shared is absent: set ACP_MODEL_SHARED to the shared folder)"
        )
    import jsonschema

    validator = jsonschema.Draft202012Validator(json.loads(schema_path.read_text("utf-8")))
    checked = 0
    for name in ("view_two_sessions.ndjson", "view_bad_lines.ndjson"):
        with open(DATA / name, "rb") as fh:
            for item in read_transcript(fh):
                if isinstance(item, tuple):
                    errors = list(validator.iter_errors(item[2]))
                    assert not errors, (name, item[2], errors[0].message)
                    checked += 1
    assert checked == 30


# -- robustness: arbitrary (ill-typed) payloads never raise ---------------------------------------
JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), st.text(max_size=3)
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["type", "text", "data", "x"]), inner)
    ),
    max_leaves=6,
)
FIELD_NAMES = [
    "messageId", "toolCallId", "terminalId", "compactionId", "planId", "sessionId", "content", "summary",
    "status", "title", "kind", "_meta", "state", "background", "stopReason", "used", "size", "cost",
    "output", "data", "exitStatus", "plan", "error", "senderSessionId",
]  # fmt: skip
VARIANTS = st.sampled_from(
    [
        "user_message", "agent_message", "agent_thought", "session_message", "user_message_chunk",
        "agent_message_chunk", "session_message_chunk", "tool_call_update", "tool_call_content_chunk",
        "terminal_update", "terminal_output_chunk", "compaction_update", "compaction_summary_chunk",
        "plan_update", "plan_removed", "usage_update", "notice", "subagent_update", "state_update", "_x",
    ]
)  # fmt: skip
GARBAGE_UPDATE = st.builds(
    lambda variant, fields: upd(variant, **fields),
    VARIANTS,
    st.dictionaries(st.sampled_from(FIELD_NAMES), st.one_of(JSON, st.sampled_from(["a", "b"])), max_size=5),
)
GARBAGE_RPC = st.builds(
    lambda rid, method, params, res: {"id": rid, "method": method, "params": params, "result": res},
    st.one_of(JSON_LEAF, st.lists(st.integers())),
    st.sampled_from(["session/new", "session/prompt", "session/resume", "session/fork"]),
    JSON,
    JSON,
)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["client", "agent"]), st.one_of(GARBAGE_UPDATE, GARBAGE_RPC, JSON)))
)
def test_ill_typed_messages_never_raise(msgs: list[tuple[str, Any]]) -> None:
    view = ClientView()
    for sender, m in msgs:
        view.apply(sender, m)
        if isinstance(m, dict) and "result" in m:  # also as a bare response
            view.apply("agent", {"id": m["id"], "result": m["result"]})
    json.dumps(view.to_json())
    hash(view.snapshot())
    clientview_text.render_text(view.to_json())


@pytest.mark.deep
@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["client", "agent"]), st.one_of(GARBAGE_UPDATE, GARBAGE_RPC, JSON)))
)
def test_ill_typed_messages_never_raise_many_examples(msgs: list[tuple[str, Any]]) -> None:
    """test_ill_typed_messages_never_raise with 1500 examples (the default suite runs 50)."""
    test_ill_typed_messages_never_raise.hypothesis.inner_test(msgs)  # type: ignore[attr-defined]


def test_cli_on_input_without_a_usable_message_is_unusable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    garbage = tmp_path / "garbage.ndjson"
    garbage.write_bytes(b"not json\n[1]\n\n")
    code, out, err = _run_cli(capsys, str(garbage))
    assert code == 2 and out == ""
    assert err.splitlines()[:2] == [
        f"acp-model view: {garbage}:1: skipped (input.invalid-json: not valid JSON "
        "(invalid literal, expected 'null': line 1 column 1 (char 0)): 'not json')",
        f"acp-model view: {garbage}:2: skipped (input.not-object: line is a JSON list, not an object)",
    ]
    assert err.splitlines()[-1] == (
        f"acp-model view: {garbage}: nothing to view: no line holds a usable JSON-RPC message "
        "(2 line(s) skipped)"
    )
    empty = tmp_path / "empty.ndjson"
    empty.write_bytes(b"")
    code, out, err = _run_cli(capsys, str(empty))  # a recording of nothing, as check takes it
    assert (code, out.splitlines()[0]) == (0, "no sessions") and "nothing to view" in err


def test_cli_lists_at_most_twenty_skipped_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "many.ndjson"
    path.write_bytes(b"x\n" * 25 + (DATA / "view_bad_lines.ndjson").read_bytes().splitlines(keepends=True)[0])
    code, _out, err = _run_cli(capsys, str(path))
    lines = err.splitlines()
    assert code == 0 and len(lines) == 22
    assert lines[19].startswith(f"acp-model view: {path}:20: skipped (input.invalid-json")
    assert lines[20] == f"acp-model view: {path}: ... and 5 more skipped line(s)"


def test_cli_memory_does_not_grow_with_the_number_of_unusable_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every skipped line's finding was kept (about 350 bytes each: 425 MB for a million lines,
    where check keeps 59 MB); now only the twenty listed are, the rest counted."""
    import tracemalloc

    path = tmp_path / "junk.ndjson"
    usable = (DATA / "view_bad_lines.ndjson").read_bytes().splitlines(keepends=True)[0]
    path.write_bytes(
        usable + b"".join(b'{"junk": %d, "pad": "%s"\n' % (i, b"y" * 100) for i in range(30_000))
    )
    _run_cli(capsys, str(DATA / "view_bad_lines.ndjson"))  # (the command's modules loaded)
    tracemalloc.start()
    try:
        code, _out, err = _run_cli(capsys, str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0
    assert err.splitlines()[-2:] == [
        f"acp-model view: {path}: ... and 29980 more skipped line(s)",
        f"acp-model view: {path}: skipped 30000 unusable line(s)",
    ]
    assert peak < 5_000_000, peak  # (16.8 MB when every finding was kept)


def test_a_view_is_freed_without_the_cyclic_collector() -> None:
    """A view holds no reference to itself (its handlers are a class-level table): the exhaustive
    search keeps one view per view state, and views that needed a full collection to be freed
    piled up across searches under a client-view fault (a deep test was killed at 17 GB)."""
    import gc
    import weakref

    view = FaultyView({"key-by-id-only"})
    for msg in (
        upd("state_update", state="running"),
        upd("agent_message_chunk", messageId="m1", content=text("hi")),
        upd("tool_call_update", toolCallId="t1", status="pending", title="x"),
        upd("plan_update", planId="p1", entries=[]),
        upd("state_update", state="idle", stopReason="end_turn"),
    ):
        view.apply("agent", msg)
    assert view.to_json()[S]["session"]["state"] == "idle"
    gone = weakref.ref(view)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del view
        assert gone() is None
    finally:
        if enabled:
            gc.enable()


def test_a_deep_copy_branches_without_touching_the_original() -> None:
    """The explorers branch on ``copy.deepcopy`` of a view (the copy shares only its cached
    snapshots, faults and readings): messages applied to the copy leave the original as it was,
    snapshot included, and the copy ends where a view given every message ends."""
    import copy

    first = [
        request(1, "session/prompt", sessionId=S, prompt=[text("hi")]),
        upd("agent_message_chunk", messageId="m1", content=text("a"), _meta={"k": 1}),
        upd("tool_call", toolCallId="t1", title="run", status="in_progress"),
        state("running"),
    ]
    later = [
        upd("agent_message_chunk", messageId="m1", content=text("b")),
        upd("agent_message", messageId="m1", _meta={"k": None, "j": 2}),
        upd("tool_call_update", toolCallId="t1", status="completed"),
        result(1, messageId="u1", stopReason="end_turn"),
        state("idle", stopReason="end_turn"),
    ]
    view = run(*first)
    before_json, before_snap = json.dumps(view.to_json(), sort_keys=True), view.snapshot()
    branch = copy.deepcopy(view)
    for m in later:
        branch.apply("client" if m.get("method") in CLIENT_METHODS and "id" in m else "agent", m)
    assert json.dumps(view.to_json(), sort_keys=True) == before_json
    assert view.snapshot() == before_snap
    assert branch.to_json() == run(*first, *later).to_json()
    assert branch.snapshot() == run(*first, *later).snapshot() != before_snap
