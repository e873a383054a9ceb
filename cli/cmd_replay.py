"""``acp-model replay``: re-run a saved counterexample transcript through every monitor.

Owns: the numbered message list (one line per message: who sent it, the method or update
variant, and the fields that matter for the prompt lifecycle). Reading, judging, rendering of
findings and exit codes all come from ``cli.check_inputs`` and ``properties.check_report``;
nothing here duplicates them.

Must not know: what the monitors check, or how transcripts are decoded.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.check_inputs import exit_code, judge
from cli.options import (
    add_html_option,
    add_json_option,
    add_max_findings,
    add_reading_option,
    chosen_readings,
)
from cli.outputs import show
from properties import check_report
from properties.checking import MessageHook
from properties.outputs import clip, dumps
from properties.readings import resolve

_UPDATE_FIELDS = ("messageId", "state", "stopReason", "toolCallId", "status", "compactionId", "terminalId")
_PARAM_FIELDS = ("requestId",)
_RESULT_FIELDS = ("messageId", "sessionId", "stopReason")


def _pick(source: Any, names: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(source, dict):
        return {}
    return {name: source[name] for name in names if name in source}


def describe(line: int, sender: str, msg: dict[str, Any]) -> dict[str, Any]:
    """The key facts of one message, as a flat JSON object."""
    entry: dict[str, Any] = {"line": line, "from": sender}
    params = msg.get("params")
    if "method" in msg:
        entry["kind"] = "request" if "id" in msg else "notification"
        entry["method"] = msg["method"]
        if "id" in msg:
            entry["id"] = msg["id"]
        if isinstance(params, dict):
            if isinstance(params.get("sessionId"), str):
                entry["session"] = params["sessionId"]
            update = params.get("update")
            if msg["method"] == "session/update" and isinstance(update, dict):
                entry["update"] = update.get("sessionUpdate")
                entry.update(_pick(update, _UPDATE_FIELDS))
            entry.update(_pick(params, _PARAM_FIELDS))
    else:
        entry["kind"] = "response"
        entry["id"] = msg.get("id")
        if "error" in msg:
            error = msg["error"]
            entry["error"] = _pick(error, ("code", "message"))
        else:
            entry.update(_pick(msg.get("result"), _RESULT_FIELDS))
    return entry


def _value(value: Any) -> str:
    return value if isinstance(value, str) else clip(repr(value), 40)


def describe_text(entry: dict[str, Any]) -> str:
    head = f"{entry['line']:>5}  {entry['from']:<6} "
    if entry["kind"] == "response":
        what = f"response id={_value(entry['id'])}"
        if "error" in entry:
            err = entry["error"]
            what += f" error {err.get('code')!r} {_value(err.get('message', ''))}"
    else:
        what = str(entry["method"])
        if "update" in entry:
            what += f" {_value(entry['update'])}"
        if "id" in entry:
            what += f" id={_value(entry['id'])}"
    skip = {"line", "from", "kind", "method", "id", "update", "error"}
    extra = " ".join(f"{k}={_value(v)}" for k, v in entry.items() if k not in skip)
    return clip(f"{head}{what} {extra}".rstrip(), check_report.MESSAGE_WIDTH + 20)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "replay",
        help="re-run a saved counterexample transcript through all monitors",
        description="Replay a transcript (NDJSON, as written by the simulator or check) through "
        "every monitor: prints the numbered message list and the findings. Exit codes as check.",
    )
    p.add_argument("file", metavar="FILE", help="transcript file (.ndjson), or - for standard input")
    add_json_option(p)
    add_max_findings(p)
    add_html_option(p)
    add_reading_option(p)
    return p


def run(args: argparse.Namespace) -> int:
    readings = chosen_readings(args)
    messages: list[dict[str, Any]] = []

    def hook(_path: str) -> MessageHook:
        return lambda line, sender, msg: messages.append(describe(line, sender, msg))

    reports = judge(args, on_message=hook, readings=readings)
    code = exit_code(reports, "must")
    if args.json:
        data = check_report.check_json(reports, "must", code, resolve(readings), None)
        data["files"][0]["transcript"] = messages
        show(dumps(data))
        return code
    out = [f"{reports[0].path}: {len(messages)} messages"]
    out.extend(describe_text(entry) for entry in messages)
    out.extend(check_report.render_text(reports[0]))
    show("\n".join(out) + "\n")
    return code
