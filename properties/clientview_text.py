"""The text form of the client view (``acp-model view``): per session its state, background,
usage, prompts, elicitations and counts, then the timeline with each entity's type, ID and a
content summary.

Must not know: how the view is computed (``model.clientview``), files.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from properties.outputs import clip

_SUMMARY = 60
"""Characters of content a timeline row shows."""


def _block(block: Any) -> str:
    if not isinstance(block, dict):
        return "[?]"
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind == "content":  # tool-call content wrapping a content block
        return _block(block.get("content"))
    if kind == "terminal":
        return f"[terminal {block.get('terminalId')}]"
    return f"[{kind}]"


def content(blocks: Any, limit: int = _SUMMARY) -> str:
    """Content blocks as one quoted line of their text (other blocks by their type)."""
    if not isinstance(blocks, list) or not blocks:
        return "(empty)"
    return json.dumps(clip(" ".join(_block(b) for b in blocks), limit, one_line=True), ensure_ascii=False)


def _summary(etype: str, ent: dict[str, Any]) -> str:
    if etype == "tool_call":
        title = json.dumps(ent["title"], ensure_ascii=False) if ent["title"] is not None else "(no title)"
        return f"[{ent['status']}] {ent['kind']} {title}: {len(ent['content'])} content item(s)"
    if etype == "compaction":
        error = f" error: {clip(ent['error'], _SUMMARY, one_line=True)}" if ent["error"] else ""
        return f"[{ent['status']}] summary {content(ent['summary'])}{error}"
    if etype == "terminal":
        exited = ent["exitStatus"]
        status = "running" if exited is None else f"exited {exited.get('exitCode', '?')}"
        size = 0 if ent["output"] is None else len(base64.b64decode(ent["output"]))
        return f"[{status}] {ent['command'] or '(command unknown)'}: {size} output bytes"
    if etype == "plan":
        plan = ent["plan"] or {}
        what = f"{len(plan['entries'])} entries" if isinstance(plan.get("entries"), list) else ""
        removed = " (removed)" if ent["removed"] else ""
        return f"{plan.get('type')} plan {what}{removed}".replace("  ", " ")
    text = content(ent["content"])
    if etype == "session_message":
        ends = []
        if ent["senderSessionId"]:
            ends.append(f"from {ent['senderSessionId']}")
        if ent["recipientSessionId"]:
            ends.append(f"to {ent['recipientSessionId']}")
        if ends:
            return f"({', '.join(ends)}) {text}"
    return text


def background(items: list[Any] | None) -> str:
    if items is None:
        return "unknown (not reported)"
    if not items:
        return "none"
    names = []
    for item in items:
        ident = item.get("terminalId") or item.get("toolCallId") or item.get("sessionId") or "?"
        names.append(f"{item.get('type')} {ident}")
    return ", ".join(names)


def _usage(usage: dict[str, Any]) -> str:
    text = "not reported" if usage["used"] is None else f"{usage['used']} of {usage['size']} tokens"
    cost = usage["cost"]
    if cost is not None:
        text += f", cost {cost['amount']} {cost['currency']}"
    return text


def render_text(view_json: dict[str, Any]) -> str:
    if not view_json:
        return "no sessions\n"
    out: list[str] = []
    for sid, data in view_json.items():
        s = data["session"]
        out.append(f"session {sid}")
        out.append(f"  state: {s['state']}   completions: {s['completions']}")
        out.append(f"  background: {background(s['background'])}")
        out.append(f"  usage: {_usage(s['usage'])}")
        if s["prompts"]:
            pairs = ", ".join(f"{k} -> {'(pending)' if v is None else v}" for k, v in s["prompts"].items())
            out.append(f"  prompts: {pairs}")
        if s["elicitations"]:
            waiting = ", ".join(f"{k} ({e['mode']}, {e['status']})" for k, e in s["elicitations"].items())
            out.append(f"  elicitations: {waiting}")
        counts = (
            ("rejected prompts", len(s["rejected_prompts"])),
            ("preserved unknown updates", len(data["preserved"])),
            ("notices", s["notices"]),
            ("malformed updates", s["malformed_updates"]),
        )
        extras = [f"{what}: {n}" for what, n in counts if n]
        if extras:
            out.append("  " + "   ".join(extras))
        timeline = data["timeline"]
        out.append(f"  timeline ({len(timeline)}):")
        width_t = max((len(t) for t, _ in timeline), default=0)
        width_i = max((len(i) for _, i in timeline), default=0)
        for n, (etype, eid) in enumerate(timeline, 1):
            summary = _summary(etype, data["entities"][etype][eid])
            out.append(f"    {n:>3}  {etype:<{width_t}}  {eid:<{width_i}}  {summary}")
        out.append("")
    return "\n".join(out)
