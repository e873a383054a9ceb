"""``acp-model check``: judge recorded transcripts against the rule monitors (and the schema).

Owns: opening the inputs (every path is checked before anything is read), one pass per file
(``properties.checking.check_stream``) with a fresh ``MonitorSet``, the human and JSON
renderings of the per-file reports, and the exit code (0: nothing at the failing level,
1: findings, 2: unusable input or options). ``acp-model replay`` reuses the renderings.

Failing levels: ``--fail-on must`` (default) fails on errors (MUST / MUST NOT breaches, input
findings that lose a line, schema findings); ``--fail-on should`` fails on warnings too.
Obligations still open at the end of the input, and tolerated input (a blank line, a
byte-order mark, CRLF line ends), are information and never fail a check; under ``--complete``
(the user declares each transcript complete) an open obligation is a breach at the last line.
``--client-order forwarded`` judges a proxy's recording (``properties.engine``, "Client order").

Must not know: what any monitor checks, how lines are split and decoded, or the schema's
layout.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.check_inputs import exit_code, judge
from cli.options import (
    add_fail_on_option,
    add_html_option,
    add_json_option,
    add_max_findings,
    add_reading_option,
    add_variant_options,
    positive_int,
    variant_and_readings,
)
from cli.outputs import show
from properties.check_report import check_json, check_text
from properties.engine import CLIENT_ORDERS
from properties.outputs import dumps
from properties.readings import resolve
from properties.shared import ENV, SCHEMA, schema_from_env
from properties.transcript import DEFAULT_MAX_LINE_BYTES


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="check recorded transcripts (NDJSON) against the rule monitors",
        description="Check ACP transcripts: one JSON object per line, "
        '{"from": "client"|"agent", "message": <JSON-RPC 2.0 message>}, in the order a proxy '
        "saw them (a message may be a batch, an array: each element is judged as a message of "
        "its own, at that line). Exit 0: no findings at the failing level; 1: findings; 2: unusable input.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="transcript files, or - for standard input")
    add_json_option(p)
    p.add_argument(
        "--schema",
        metavar="PATH",
        default=schema_from_env(),
        help="also validate every message against this JSON Schema (default: "
        f"${ENV}/{'/'.join(SCHEMA)} when that variable is set, else no schema validation)",
    )
    add_fail_on_option(p, "must: fail on errors; should: fail on warnings too (default: %(default)s)")
    p.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=DEFAULT_MAX_LINE_BYTES,
        metavar="N",
        help="longest accepted line in bytes (default: %(default)s)",
    )
    p.add_argument(
        "--complete",
        action="store_true",
        help="the transcripts are complete (the session ended, nothing more will come): an "
        "obligation still open at the end (an idle for every start, an answer for every prompt, "
        "a report of every inserted message, an end for every compaction) is a breach at the "
        "last line (default: such obligations are information)",
    )
    p.add_argument(
        "--client-order",
        choices=CLIENT_ORDERS,
        default=CLIENT_ORDERS[0],
        help="the order of the Client lines: received (the transcript format: the order the Agent "
        "read them) or forwarded (the order a proxy passed them on, as acp-model record and drive "
        "write them: a Client line may cross an Agent line on the wire, so a finding that needs "
        "the Agent to have read a Client line is suspected until the Agent answers a request of "
        "the Client recorded at or after it) (default: %(default)s)",
    )
    add_max_findings(p)
    add_html_option(p)
    add_reading_option(p)
    add_variant_options(p, "judge")
    return p


def run(args: argparse.Namespace) -> int:
    variant, readings = variant_and_readings(args)
    reports = judge(
        args,
        schema=args.schema,
        max_line_bytes=args.max_line_bytes,
        readings=readings,
        variant=variant,
        complete=args.complete,
        client_order=args.client_order,
    )
    code = exit_code(reports, args.fail_on)
    if args.json:
        show(dumps(check_json(reports, args.fail_on, code, resolve(readings), variant)))
    else:
        show(check_text(reports, args.fail_on, code, variant))
    return code
