"""The ``--variant FILE`` and ``--drop RULE-ID`` options, shared by check, simulate and explore.

Owns: adding the options to a parser, loading the variant they describe (a ``--variant`` file,
more rules dropped with ``--drop``, or ``--drop`` alone) and merging its readings under the
``--reading`` choices (a ``--reading`` wins). Every problem is a one-line usage error naming
the file or option and the entry, exit 2.

Must not know: what a variant changes (``properties.variants`` and ``simulator.variant_runs`` do).
"""

from __future__ import annotations

import argparse

from cli.main import UsageError
from cli.readings_option import chosen_readings
from properties.variants import Variant, VariantError, from_drops, load


def add_variant_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--variant",
        metavar="FILE",
        help="judge under a variant of the spec: a TOML file dropping rules, fixing readings or "
        "changing table rows (see variants/ and docs/variants.md; default: the spec as written)",
    )
    p.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="RULE-ID",
        help="a rule that no longer binds: its findings are set aside and the simulated peers may "
        "break it; repeatable, added to --variant's (default: none)",
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
