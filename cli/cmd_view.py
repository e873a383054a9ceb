"""``acp-model view FILE [--json]``: what a spec-conforming client shows for a transcript.

Owns: reading a transcript into ``simulator.clientview.ClientView`` and presenting the result,
either as the client view format (``--json``: sorted keys, deterministic) or as a short
human-readable summary per session (state, background, completions, usage, then the timeline
with each entity's type, ID and a content summary). Unusable lines are skipped and counted on
stderr; they do not change the exit code (this command shows, it does not judge).

The transcript is read with ``properties.transcript.read_transcript`` (the shared reader and
its input findings); each finding that loses a line counts as one skipped line.

Must not know: the rule catalogue, monitors, or how the view is computed.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

from cli.main import EXIT_OK, UsageError, stdin_bytes
from properties.transcript import DEFAULT_MAX_LINE_BYTES, read_transcript
from simulator.clientview import ClientView

_SUMMARY = 60
# reader notes that do not lose the line they are about
_LINE_KEPT = frozenset({"input.crlf", "input.bom"})


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
    parser.add_argument("--json", action="store_true", help="print the client view format as JSON")
    return parser


# -- reading -------------------------------------------------------------------------------------
def _items(stream: BinaryIO) -> Iterator[tuple[str, dict[str, Any]] | None]:
    """(sender, message) per usable line, None per line the reader had to skip."""
    for item in read_transcript(stream, DEFAULT_MAX_LINE_BYTES):
        if isinstance(item, tuple):
            _line, sender, message = item
            yield sender, message
        elif item.rule not in _LINE_KEPT:
            yield None


def build_view(stream: BinaryIO) -> tuple[ClientView, int]:
    """Apply a transcript to a fresh reference view; returns it and the number of skipped lines."""
    view = ClientView()
    skipped = 0
    for item in _items(stream):
        if item is None:
            skipped += 1
        else:
            view.apply(item[0], item[1])
    return view, skipped


def _read(path: str) -> tuple[ClientView, int]:
    if path == "-":
        return build_view(stdin_bytes())
    try:
        with open(path, "rb") as fh:
            return build_view(fh)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not a transcript file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None


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


def run(args: argparse.Namespace) -> int:
    view, skipped = _read(args.file)
    data = view.to_json()
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(data))
    if skipped:
        name = "<stdin>" if args.file == "-" else args.file
        sys.stderr.write(f"acp-model view: {name}: skipped {skipped} unusable line(s)\n")
    return EXIT_OK
