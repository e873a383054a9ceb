"""``acp-model machines [--json]``: every machine of the model with its states and rows."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli.util import dumps


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "machines", help="list every state machine of the model with its transition table"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def run(args: argparse.Namespace) -> int:
    from model.registry import MACHINES, to_json

    if args.json:
        sys.stdout.write(dumps([to_json(m) for m in MACHINES]))
        return 0
    out: list[str] = []
    for m in MACHINES:
        finals = ", ".join(m.final) or "(none)"
        out.append(f"{m.name}: {m.title} (one per {m.per})")
        out.append(f"  states:  {', '.join(m.states)}")
        out.append(f"  initial: {m.initial}    final: {finals}")
        width = max(len(r.trigger) for r in m.rows)
        for r in m.rows:
            guard = f" [{r.guard}]" if r.guard else ""
            out.append(
                f"    {r.source:>17} --{r.trigger:<{width}}--> {r.dest:<17}"
                f" {r.actor:<6} {r.section}{guard}"
            )
        out.append("")
    sys.stdout.write("\n".join(out))
    return 0
