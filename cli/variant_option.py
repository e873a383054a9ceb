"""The ``--variant FILE`` and ``--drop RULE-ID`` options, shared by check, simulate, explore,
agent and spec-report.

Owns: adding the options to a parser (their help says what the command does with a variant:
its ``role``), loading the variant they describe (a ``--variant`` file,
more rules dropped with ``--drop``, or ``--drop`` alone) and merging its readings under the
``--reading`` choices (a ``--reading`` wins). Every problem is a one-line usage error naming
the file or option and the entry, exit 2.

Must not know: what a variant changes (``properties.variants`` and ``simulator.explore.variant_runs`` do).
"""

from __future__ import annotations

import argparse

from cli.main import UsageError
from cli.readings_option import chosen_readings
from properties.variants import Variant, VariantError, from_drops, load

_VARIANT_HELP = {
    "judge": "judge under a variant of the spec",
    "simulate": "simulate and judge under a variant of the spec (the simulated peers take what it allows)",
    "agent": "play the Agent of a variant of the spec (it takes the moves the variant allows)",
    "report": "report on a variant of the spec, opening with its differences from the spec as written",
}
_DROP_HELP = {
    "judge": "a rule that no longer binds: its findings are set aside (counted in the report)",
    "simulate": "a rule that no longer binds: its findings are set aside and the simulated peers "
    "may break it",
    "agent": "a rule the Agent no longer keeps: it may break it",
    "report": "a rule that no longer binds: the report is the variant's (its findings set aside, the "
    "simulated peers may break it)",
}


def add_variant_options(p: argparse.ArgumentParser, role: str) -> None:
    """``--variant`` and ``--drop``, their help saying what this command does with them: ``role``
    judge (check), simulate (simulate, explore), agent (plays its Agent) or report (spec-report)."""
    p.add_argument(
        "--variant",
        metavar="FILE",
        help=f"{_VARIANT_HELP[role]}: a TOML file dropping rules, fixing readings or changing table "
        "rows (see variants/ and docs/variants.md; default: the spec as written)",
    )
    p.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="RULE-ID",
        help=f"{_DROP_HELP[role]}; repeatable, added to --variant's (default: none)",
    )


def chosen_variant(args: argparse.Namespace) -> Variant | None:
    """The variant of ``--variant`` and ``--drop`` (None: neither given)."""
    path = getattr(args, "variant", None)
    drops = list(getattr(args, "drop", None) or [])
    try:
        if path is not None:
            variant = load(path)
            return variant.with_drops(from_drops(drops).drop) if drops else variant
        return from_drops(drops) if drops else None
    except VariantError as exc:
        raise UsageError(str(exc)) from None


def variant_and_readings(args: argparse.Namespace) -> tuple[Variant | None, dict[str, str]]:
    """The variant and the readings in force: the variant's readings under ``--reading``."""
    readings = chosen_readings(args)
    variant = chosen_variant(args)
    if variant is not None:
        readings = {**variant.reading_choices(), **readings}
    return variant, readings
