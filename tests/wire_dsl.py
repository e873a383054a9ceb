"""A tiny language for hand-written transcripts in tests: one function per wire message.

Each function returns one transcript line as ``(sender, message)``; a test lists them in proxy
order (agent lines in send order, client lines in the agent's receive order). Session ``s1`` is
the default. Nothing here decides what is right or wrong.
"""

from __future__ import annotations

from typing import Any

S = "s1"
Line = tuple[str, dict[str, Any]]
_MISSING: Any = object()


def _req(rid: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _note(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def text(t: str = "hi") -> dict[str, str]:
    return {"type": "text", "text": t}


# -- client ------------------------------------------------------------------------------------
def prompt(rid: Any, sid: str = S, content: Any = _MISSING) -> Line:
    body = [text("Fix the test")] if content is _MISSING else content
    return ("client", _req(rid, "session/prompt", {"sessionId": sid, "prompt": body}))


def cancel(sid: str = S) -> Line:
    return ("client", _note("session/cancel", {"sessionId": sid}))


def cancel_request(rid: Any, by: str = "client") -> Line:
    return (by, _note("$/cancel_request", {"requestId": rid}))


def close(rid: Any, sid: str = S) -> Line:
    return ("client", _req(rid, "session/close", {"sessionId": sid}))


def resume(rid: Any, sid: str = S, replay: bool = True) -> Line:
    params: dict[str, Any] = {"sessionId": sid, "cwd": "/work"}
    if replay:
        params["replayFrom"] = {"type": "start"}
    return ("client", _req(rid, "session/resume", params))


def initialize(rid: Any, meta: Any = None) -> Line:
    caps: dict[str, Any] = {} if meta is None else {"_meta": meta}
    return (
        "client",
        _req(
            rid,
            "initialize",
            {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": caps},
        ),
    )


def new_session(rid: Any) -> Line:
    return ("client", _req(rid, "session/new", {"cwd": "/work"}))


def permission_answer(rid: Any, option: str | None) -> Line:
    outcome: dict[str, Any] = (
        {"outcome": "cancelled"} if option is None else {"outcome": "selected", "optionId": option}
    )
    return ("client", {"jsonrpc": "2.0", "id": rid, "result": {"outcome": outcome}})


# -- agent: responses --------------------------------------------------------------------------
def ok(rid: Any, **result: Any) -> Line:
    return ("agent", {"jsonrpc": "2.0", "id": rid, "result": result})


def answer(rid: Any, mid: str) -> Line:
    return ok(rid, messageId=mid)


def fail(rid: Any, code: int) -> Line:
    return ("agent", {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": "no"}})


def initialized(rid: Any, prompt_caps: dict[str, Any] | None = None) -> Line:
    session: dict[str, Any] = {} if prompt_caps is None else {"prompt": prompt_caps}
    return ok(rid, protocolVersion=2, info={"name": "a", "version": "1"}, capabilities={"session": session})


def created(rid: Any, sid: str = S) -> Line:
    return ok(rid, sessionId=sid)


# -- agent: requests and notifications ---------------------------------------------------------
def ask(rid: Any, tool_call: str, sid: str = S) -> Line:
    return (
        "agent",
        _req(
            rid,
            "session/request_permission",
            {
                "sessionId": sid,
                "title": "Run?",
                "subject": {"type": "tool_call", "toolCall": {"toolCallId": tool_call}},
                "options": [
                    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
                ],
            },
        ),
    )


def update(variant: str, sid: str = S, /, **fields: Any) -> Line:
    return (
        "agent",
        _note("session/update", {"sessionId": sid, "update": {"sessionUpdate": variant, **fields}}),
    )


def state(name: Any, sid: str = S, stop: Any = _MISSING, bg: Any = _MISSING, **extra: Any) -> Line:
    fields: dict[str, Any] = {"state": name, **extra}
    if stop is not _MISSING:
        fields["stopReason"] = stop
    if bg is not _MISSING:
        fields["background"] = bg
    return update("state_update", sid, **fields)


def user(mid: Any, sid: str = S, chunk: bool = False) -> Line:
    if chunk:
        return update("user_message_chunk", sid, messageId=mid, content=text())
    return update("user_message", sid, messageId=mid, content=[text()])


def say(mid: Any, sid: str = S, chunk: bool = True, thought: bool = False) -> Line:
    kind = ("agent_thought" if thought else "agent_message") + ("_chunk" if chunk else "")
    return update(kind, sid, messageId=mid, content=text() if chunk else [text()])


def tool(tid: str, status: str | None = None, sid: str = S, /, **fields: Any) -> Line:
    if status is not None:
        fields["status"] = status
    return update("tool_call_update", sid, toolCallId=tid, **fields)


def tool_chunk(tid: str, sid: str = S) -> Line:
    return update(
        "tool_call_content_chunk", sid, toolCallId=tid, content={"type": "content", "content": text()}
    )


def terminal(tid: str, exit_code: Any = _MISSING, sid: str = S) -> Line:
    if exit_code is _MISSING:
        return update("terminal_update", sid, terminalId=tid, command="npm run dev")
    status = None if exit_code is None else {"exitCode": exit_code}
    return update("terminal_update", sid, terminalId=tid, exitStatus=status)


def item(kind: str, ident: str) -> dict[str, str]:
    key = {"terminal": "terminalId", "tool_call": "toolCallId", "subagent": "sessionId"}[kind]
    return {"type": kind, key: ident}


def compaction(cid: Any, status: Any = "in_progress", sid: str = S) -> Line:
    return update("compaction_update", sid, compactionId=cid, status=status)


def compaction_chunk(cid: Any, sid: str = S, content: Any = _MISSING) -> Line:
    return update(
        "compaction_summary_chunk",
        sid,
        compactionId=cid,
        content=text("kept") if content is _MISSING else content,
    )


def notice(severity: Any = "info", title: Any = "Model request retried", sid: str = S) -> Line:
    return update("notice", sid, severity=severity, title=title)


def usage(sid: str = S, /, **fields: Any) -> Line:
    return update("usage_update", sid, **fields)


def subagent(child: str, sid: str = S, /, **fields: Any) -> Line:
    return update("subagent_update", sid, sessionId=child, **fields)


def session_message(mid: Any, sid: str = S) -> Line:
    return update("session_message", sid, messageId=mid, content=[text()])


def unwithdrawn_at_cancelled_idle(transcript: list[Line], hidden: list[Any], rule: str) -> int:
    """For a seeded bug that keeps a cancelled work's request open: check that its run marked
    ``rule`` (one hidden step, before the first cancelled idle) and that the Agent never withdrew a
    request with ``$/cancel_request``; returns the line of that idle."""
    idles = [
        n
        for n, (_, m) in enumerate(transcript, 1)
        if m.get("params", {}).get("update", {}).get("stopReason") == "cancelled"
    ]
    assert [h.rule for h in hidden] == [rule]
    assert hidden[0].position < idles[0]
    assert not any(m.get("method") == "$/cancel_request" for s, m in transcript if s == "agent")
    return idles[0]
