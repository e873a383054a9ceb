"""``acp-model readings [--json]``: the catalogue of readings of ambiguous spec text.

Owns: the text and JSON renderings of ``properties.readings.READINGS`` (JSON: ``{"readings":
[{name, question, sections, spec_lines, alternatives: [{name, meaning}], default, why_default,
rules, affects, peers, peers_same}]}``; ``affects``: checker or both, ``peers``: what the
simulated peers may do under each alternative, ``peers_same``: for a checker reading, why the
simulated peers take no alternative's freedom, when one would exist).

Must not know: how monitors apply a reading.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from cli.main import EXIT_OK
from cli.options import add_json_option
from cli.outputs import show
from properties.outputs import dumps
from properties.readings import READINGS, catalogue_json


def commands_taking(option: str) -> list[str]:
    """The other subcommands whose parsers have ``option``, in name order (derived from the
    parsers themselves, so the help never goes stale)."""
    from cli.main import command_modules

    names: list[str] = []
    for module in command_modules():
        if module.__name__ == __name__:
            continue
        sub = argparse.ArgumentParser(add_help=False).add_subparsers()
        parser = module.add_parser(sub)
        if option in parser._option_string_actions:
            names.append(parser.prog.split()[-1])
    return sorted(names)


class _Formatter(argparse.HelpFormatter):
    """Never breaks a line inside a hyphenated command name (``spec-report``)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return textwrap.fill(
            " ".join(text.split()),
            width,
            initial_indent=indent,
            subsequent_indent=indent,
            break_on_hyphens=False,
        )


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    taking = commands_taking("--reading")
    p: argparse.ArgumentParser = subparsers.add_parser(
        "readings",
        help="list the readings of ambiguous spec text (choose one with --reading NAME=ALTERNATIVE)",
        description="List every place where the spec can be read more than one way: the question, "
        "the spec lines in tension, the alternatives, the default and the rules whose verdicts "
        f"depend on it. These {len(taking)} commands take --reading NAME=ALTERNATIVE: "
        f"{', '.join(taking)}.",
        formatter_class=_Formatter,
    )
    add_json_option(p, "one JSON object")
    return p


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, 100, initial_indent=first, subsequent_indent=rest)


def render_text() -> str:
    out: list[str] = []
    for r in READINGS:
        out.append(f"{r.name}: {r.question}")
        out.append(f"  sections: {'; '.join(r.sections)} (spec lines {', '.join(map(str, r.spec_lines))})")
        out.append(f"  rules: {', '.join(r.rules) if r.rules else 'none (client view only)'}")
        if r.affects == "checker" and r.peers_same:
            same = (
                f"affects: checker (the peers' freedoms are the same under every alternative: {r.peers_same})"
            )
            out.extend(_wrap(same, "  ", "    "))
        elif r.affects == "checker":
            out.append("  affects: checker (the peers' freedoms are the same under every alternative)")
        else:
            out.extend(_wrap(f"affects: {r.affects}; peers: {r.peers}", "  ", "    "))
        for alt in r.alternatives:
            mark = " (default)" if alt.name == r.default else ""
            out.extend(_wrap(f"{alt.name}{mark}: {alt.meaning}", "  - ", "    "))
        out.extend(_wrap(f"why the default: {r.why_default}", "  ", "  "))
        out.append("")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    show(dumps(catalogue_json()) if args.json else render_text())
    return EXIT_OK
