"""The options several commands share, each declared once, and their checks.

Owns: ``--json``, ``--quiet``, ``--fail-on``, ``--fault``, ``--max-findings`` and ``--html``
(each command words what it does with them), the value type ``positive_int``; ``--reading
NAME=ALTERNATIVE`` and its checked mapping (``chosen_readings``); ``--variant FILE`` and ``--drop
RULE-ID``, the variant they describe merged under the ``--reading`` choices (a ``--reading``
wins: ``variant_and_readings``) and what it gives the simulated peers (``variant_lines``);
``--jobs N`` and ``--cluster local|ADDRESS``, the one way every long command uses more cores
(``pool_of``: N local worker processes, 1: this process; with ``--cluster``, N Ray workers; the
answers are the same for any N). Every bad value is a one-line usage error naming the option or
file and the entry, exit 2 (a cluster that cannot be used raises ``ClusterError``, which
``cli.main`` prints the same way).

Must not know: what a command does with them, what a reading or a variant changes
(``properties.readings``, ``properties.variants`` and ``simulator.explore.variant_runs`` do), what
the jobs compute.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from cli.main import UsageError
from properties.checking import DEFAULT_MAX_FINDINGS, FAIL_SEVERITIES
from properties.readings import ReadingError, parse
from properties.variants import Variant, VariantError, from_drops, load
from simulator.workers import Workers


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def at_least(*checks: tuple[str, int | None, int]) -> None:
    """A UsageError ``FLAG must be >= LOW`` for the first ``(FLAG, value, LOW)`` below its low
    (a value None: the option was not given)."""
    for flag, value, low in checks:
        if value is not None and value < low:
            raise UsageError(f"{flag} must be >= {low}")


def add_json_option(p: argparse.ArgumentParser, what: str = "a JSON report") -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} instead of text (default: text)")


def add_quiet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress on standard error (default: off; progress is shown only on a terminal)",
    )


def add_fail_on_option(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--fail-on", choices=sorted(FAIL_SEVERITIES), default="must", help=help_text)


def add_fault_option(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--fault", action="append", default=[], metavar="NAME", help=help_text)


def add_max_findings(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-findings",
        type=positive_int,
        default=DEFAULT_MAX_FINDINGS,
        metavar="N",
        help="findings kept per file; the rest are counted in the summary and still set the exit "
        "code (default: %(default)s)",
    )


def add_html_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write one self-contained HTML page of the input (one FILE only): the messages as "
        "a sequence diagram, each finding at its line with its spec sentence, the machines' state "
        "and the client view after any line (default: no page)",
    )


# -- readings and variants -----------------------------------------------------------------------
def add_reading_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reading",
        action="append",
        default=[],
        metavar="NAME=ALTERNATIVE",
        help="read an ambiguous spec sentence this way (repeatable; `acp-model readings` lists "
        "them; default: every reading's default)",
    )


def chosen_readings(args: argparse.Namespace) -> dict[str, str]:
    """The ``--reading`` choices, checked (a UsageError names the bad one)."""
    try:
        return parse(getattr(args, "reading", None) or [])
    except ReadingError as exc:
        raise UsageError(str(exc)) from None


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


def variant_and_readings(args: argparse.Namespace) -> tuple[Variant | None, dict[str, str]]:
    """The variant of ``--variant`` and ``--drop`` (None: neither given) and the readings in
    force: the variant's readings under ``--reading``."""
    readings = chosen_readings(args)
    drops = list(args.drop)
    try:
        variant = load(args.variant) if args.variant is not None else None
        if drops:
            variant = variant.with_drops(from_drops(drops).drop) if variant is not None else from_drops(drops)
    except VariantError as exc:
        raise UsageError(str(exc)) from None
    if variant is not None:
        readings = {**dict(variant.readings), **readings}
    return variant, readings


def variant_lines(variant: Variant | None, *more: str) -> list[str]:
    """What a variant is, the lines ``more``, and what it cannot give the simulated peers, one
    line each (none without a variant)."""
    from simulator.explore.variant_runs import notes

    if variant is None:
        return []
    return [*variant.describe(), *more, *(f"  note: {n}" for n in notes(variant))]


# -- worker pools --------------------------------------------------------------------------------
MAX_JOBS = 1024
"""The most ``--jobs`` (a local pool starts every process at once; past a C int its queue cannot
even be made)."""


def add_pool_options(p: Any, what: str, default: str = "1") -> None:
    """``--jobs`` (``what``: the jobs, for its help; ``default``: said in the help) and
    ``--cluster``."""
    p.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help=f"worker processes (with --cluster: Ray workers) for {what}; the answers are the "
        f"same for any number (default {default})",
    )
    p.add_argument(
        "--cluster",
        metavar="local|ADDRESS",
        help="run the jobs on Ray instead of local processes: local starts a private Ray instance "
        "with --jobs workers, HOST:PORT joins a running cluster; the same answers; needs "
        "pip install -e '.[cluster]' (default: local processes, Ray not used)",
    )


def pool_of(args: argparse.Namespace, default: int | None = 1) -> Workers:
    """The pool ``--jobs`` (or explore's older name for it, ``--workers``) and ``--cluster`` ask
    for (``default`` None: every core)."""
    workers: int | None = getattr(args, "workers", None)
    if workers is not None:
        if args.jobs is not None and args.jobs != workers:
            raise UsageError("--workers is the older name of --jobs: give one of them")
        if workers < 1:
            raise UsageError(f"--workers {workers}: must be >= 1")
        args.jobs = workers
    value: int | None = args.jobs
    if value is not None and value < 1:
        raise UsageError(f"--jobs {value}: must be >= 1")
    if value is not None and value > MAX_JOBS:
        raise UsageError(f"--jobs {value}: must be <= {MAX_JOBS}")
    cluster: str | None = args.cluster
    if cluster is not None and not cluster.strip():
        raise UsageError("--cluster: expected local or HOST:PORT")
    size = value if value is not None else (default if default is not None else (os.cpu_count() or 1))
    return Workers(size, cluster)
