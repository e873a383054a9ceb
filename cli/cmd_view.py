"""``acp-model view FILE [--json]``: what a spec-conforming client shows for a transcript.

Owns: reading a transcript into ``properties.clientview.ClientView`` and presenting the result,
either as the client view format (``--json``: sorted keys, deterministic) or as a short
human-readable summary per session (state, background, completions, usage, then the timeline
with each entity's type, ID and a content summary). Unusable lines are skipped and listed on
stderr with their numbers; they do not change the exit code (this command shows, it does not
judge), but an input with no usable message at all is unusable (exit 2).

The view is built by ``properties.clientview.view_transcript`` (the shared reader and the
reference view).

Must not know: the rule catalogue, monitors, or how the view is computed.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Iterator
from typing import Any

from cli.main import EXIT_OK, UsageError, stdin_bytes
from cli.readings_option import add_reading_option, chosen_readings
from properties.clientview import ViewedTranscript, view_transcript
from properties.findings import Finding
from properties.outputs import unreadable
from properties.readings import describe, non_default, resolve

_SUMMARY = 60


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "view",
        help="show the client view a conforming client derives from a transcript",
        description=(
            "Apply every message of a transcript (NDJSON, one {from, message} object per line) "
            "the way the spec requires a client to, and print the resulting view per session. "
            "Use - to read standard input."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="transcript file (NDJSON), or - for stdin")
    parser.add_argument(
        "--json", action="store_true", help="print the client view format as JSON (default: text)"
    )
    add_reading_option(parser)
    return parser


# -- reading -------------------------------------------------------------------------------------
SKIPPED_SHOWN = 20
"""Skipped lines listed on stderr one by one; the rest are counted."""


def _read(path: str, readings: dict[str, str] | None = None) -> ViewedTranscript:
    if path == "-":
        return view_transcript(stdin_bytes(), readings=readings)
    try:
        with open(path, "rb") as fh:
            return view_transcript(fh, readings=readings)
    except OSError as exc:
        raise UsageError(unreadable(path, exc, "is a directory, not a transcript file")) from None


# -- human-readable form -------------------------------------------------------------------------
def _clip(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= _SUMMARY else s[: _SUMMARY - 1] + "…"


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


def _content(blocks: list[Any]) -> str:
    if not blocks:
        return "(empty)"
    return json.dumps(_clip(" ".join(_block(b) for b in blocks)), ensure_ascii=False)


def _summary(etype: str, ent: dict[str, Any]) -> str:
    if etype == "tool_call":
        title = json.dumps(ent["title"], ensure_ascii=False) if ent["title"] is not None else "(no title)"
        return f"[{ent['status']}] {ent['kind']} {title}: {len(ent['content'])} content item(s)"
    if etype == "compaction":
        error = f" error: {_clip(ent['error'])}" if ent["error"] else ""
        return f"[{ent['status']}] summary {_content(ent['summary'])}{error}"
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
    text = _content(ent["content"])
    if etype == "session_message":
        ends = []
        if ent["senderSessionId"]:
            ends.append(f"from {ent['senderSessionId']}")
        if ent["recipientSessionId"]:
            ends.append(f"to {ent['recipientSessionId']}")
        if ends:
            return f"({', '.join(ends)}) {text}"
    return text


def _background(items: list[Any] | None) -> str:
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
        out.append(f"  background: {_background(s['background'])}")
        out.append(f"  usage: {_usage(s['usage'])}")
        if s["prompts"]:
            pairs = ", ".join(f"{k} -> {'(pending)' if v is None else v}" for k, v in s["prompts"].items())
            out.append(f"  prompts: {pairs}")
        if s["elicitations"]:
            waiting = ", ".join(f"{k} ({e['mode']}, {e['status']})" for k, e in s["elicitations"].items())
            out.append(f"  elicitations: {waiting}")
        extras = []
        if s["rejected_prompts"]:
            extras.append(f"rejected prompts: {len(s['rejected_prompts'])}")
        if data["preserved"]:
            extras.append(f"preserved unknown updates: {len(data['preserved'])}")
        if s["notices"]:
            extras.append(f"notices: {s['notices']}")
        if s["malformed_updates"]:
            extras.append(f"malformed updates: {s['malformed_updates']}")
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


def _skipped_lines(name: str, skipped: list[Finding]) -> Iterator[str]:
    for finding in skipped[:SKIPPED_SHOWN]:
        yield f"acp-model view: {name}:{finding.line}: skipped ({finding.rule}: {finding.explanation})\n"
    if len(skipped) > SKIPPED_SHOWN:
        yield f"acp-model view: {name}: ... and {len(skipped) - SKIPPED_SHOWN} more skipped line(s)\n"


def run(args: argparse.Namespace) -> int:
    chosen = chosen_readings(args)
    read = _read(args.file, chosen)
    name = "<stdin>" if args.file == "-" else args.file
    for text in _skipped_lines(name, read.skipped):
        sys.stderr.write(text)
    if not read.messages:
        raise UsageError(
            f"{name}: nothing to view: no line holds a usable JSON-RPC message "
            f"({len(read.skipped)} line(s) skipped)"
        )
    data = read.view.to_json()
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        # the client view format is keyed by session: chosen readings go to standard error
        if non_default(resolve(chosen)):
            sys.stderr.write(f"acp-model view: {describe(resolve(chosen))}\n")
    else:
        sys.stdout.write(render_text(data))
        sys.stdout.write(describe(resolve(chosen)) + "\n")
    if read.skipped:
        sys.stderr.write(f"acp-model view: {name}: skipped {len(read.skipped)} unusable line(s)\n")
    return EXIT_OK
