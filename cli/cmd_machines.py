"""``acp-model machines [--json]``: every machine of the model with its states and rows."""

from __future__ import annotations

import argparse
from typing import Any

from cli.options import add_json_option
from cli.outputs import show
from properties.outputs import dumps


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "machines",
        help="list every state machine of the model with its transition table",
        description="List every state machine of the model: its states, initial and final states, "
        "and one row per transition (from, trigger, to, which peer moves, the spec section it "
        "comes from and its guard, if any). The same tables drive the simulator, the checker and "
        "the diagrams.",
    )
    add_json_option(p, "a JSON array")
    return p


_HEAD = ("from", "trigger", "to", "by", "section [guard]")


def _rows(rows: Any) -> list[str]:
    """The transition rows as a table: each column as wide as its longest cell (header
    included) and two spaces between columns, so no two cells ever touch."""
    cells = [_HEAD] + [
        (r.source, r.trigger, r.dest, r.actor, r.section + (f" [{r.guard}]" if r.guard else "")) for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(len(_HEAD) - 1)]
    return [
        "    " + "  ".join(f"{cell:<{w}}" for cell, w in zip(c, widths, strict=False)) + "  " + c[-1]
        for c in cells
    ]


def run(args: argparse.Namespace) -> int:
    from model.registry import MACHINES, to_json

    out: list[str] = []
    for m in MACHINES:
        finals = ", ".join(m.final) or "(none)"
        out.append(f"{m.name}: {m.title} (one per {m.per})")
        out.append(f"  states:  {', '.join(m.states)}")
        out.append(f"  initial: {m.initial}    final: {finals}")
        if m.hidden:
            out.append(f"  hidden:  {', '.join(m.hidden)} (no message shows them)")
        if m.eventually:
            owed = ", ".join(f"{state} ({rule})" for state, rule in m.eventually.items())
            out.append(f"  must leave: {owed}")
        out.extend(_rows(m.rows))
        out.append("")
    show(dumps([to_json(m) for m in MACHINES]) if args.json else "\n".join(out))
    return 0
