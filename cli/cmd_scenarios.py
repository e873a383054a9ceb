"""``acp-model scenarios [--json]``: the named scenario library."""

from __future__ import annotations

import argparse
from typing import Any

from cli.options import add_json_option
from cli.outputs import show
from properties.outputs import dumps


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "scenarios",
        help="list the named scenarios",
        description="List the named scenarios: scripted runs of the simulated agent and client, one "
        "or more per spec section, with what each shows. `acp-model simulate --scenario NAME` "
        "writes one as a transcript.",
    )
    add_json_option(p, "a JSON array")
    return p


def run(args: argparse.Namespace) -> int:
    from simulator.peers.scenarios import SCENARIOS

    rows = [
        {"name": s.name, "section": s.section, "description": s.description, "steps": len(s.script)}
        for s in SCENARIOS
    ]
    width = max(len(s.name) for s in SCENARIOS)
    text = "".join(f"{s.name:<{width}}  [{s.section}]\n{'':<{width}}  {s.description}\n" for s in SCENARIOS)
    show(dumps(rows) if args.json else text)
    return 0
