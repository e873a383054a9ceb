"""``acp-model decidability``: can a transcript prove each rule broken?

Owns: the command line of ``simulator.analysis.decidability`` (which rules, the bound, readings, the
reading alternatives of ``--readings``, ``--jobs``), the witness files written under ``--out``
(``<RULE>.breaking.ndjson``, ``<RULE>.conforming.ndjson``, ``<RULE>.mmd``; under a reading
alternative ``<RULE>@<READING>=<ALTERNATIVE>.*``; atomically), and the text and JSON
renderings. JSON: ``{"bound", "readings", "counts", "rules": [{"rule", "decidable", "fraction",
"bound", "witness": {"breaking", "conforming", ...} | null, ...}]}``; with ``--readings`` each rule
also has ``by_reading``: ``[{"reading", "alternative", "decidable", "fraction", "witness"}]``,
only the alternatives under which the verdict differs, and the top level ``by_reading``: the
alternatives computed. Deterministic for the same options (no timing, any ``--jobs``). Progress
lines go to standard error only when it is a terminal and without ``--quiet`` (as ``spec-report``'s).

Must not know: how the sample is taken or judged.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli.bounds import add_decidability_options, bound_of, reading_names, time_budget
from cli.main import EXIT_OK, UsageError
from cli.options import add_json_option, add_quiet_option, add_reading_option, chosen_readings, pool_of
from cli.outputs import check_folder, show, write
from cli.progress import lines_shown
from properties.catalogue import RULES_BY_ID
from properties.outputs import dumps
from properties.readings import resolve
from simulator.analysis.decidability_text import render_text

if TYPE_CHECKING:
    from simulator.analysis import decidability as dec


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "decidability",
        help="which rules a transcript can prove broken (wire decidability), with witnesses",
        description="For each rule with a seeded bug that breaks it, sample the bug's breaking "
        "behaviours and run the checker on each transcript: decidable yes (all flagged), partly "
        "(the fraction), no (none), unknown (no behaviour of the simulated peers breaks it). For "
        "partly and no, a witness: an accepted breaking transcript and a conforming run with the "
        "same messages.",
    )
    p.add_argument(
        "--rule",
        action="append",
        metavar="ID",
        help="only this rule (repeatable; default: every rule with a check)",
    )
    add_json_option(p, "JSON")
    p.add_argument("--out", metavar="DIR", help="write the witnesses into this folder (default: none)")
    p.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="stop after this long; rules not reached are unknown (default: none)",
    )
    add_quiet_option(p)
    add_reading_option(p)
    p.add_argument(
        "--readings",
        metavar="all|NAME,NAME",
        help="also compute the verdicts of the rules each of these readings names under its other "
        "alternatives (each against --reading's choices) and list, per rule, those under which it "
        "differs (default: none)",
    )
    add_decidability_options(p, "bounds")
    return p


def _rules(args: argparse.Namespace) -> tuple[str, ...]:
    from simulator.analysis import decidability as dec

    if not args.rule:
        return tuple(r.id for r in dec.rules_with_check())
    for rule in args.rule:
        if rule not in RULES_BY_ID:
            raise UsageError(f"--rule {rule}: not in the rule catalogue (acp-model rules lists them)")
    return tuple(dict.fromkeys(args.rule))


def write_witness(v: dec.Verdict, out: Path, stem: str | None = None) -> dict[str, str]:
    """The witness files of ``v`` in ``out`` (named ``stem``, default the rule); their paths by kind."""
    from diagrams.witness import SUFFIX, witness_files

    paths = {}
    for kind, data in witness_files(v).items():
        paths[kind] = str(out / f"{stem or v.rule}{SUFFIX[kind]}")
        write(paths[kind], data)
    return {k: paths[k] for k in ("breaking", "diagram", "conforming") if k in paths}


def run(args: argparse.Namespace) -> int:
    from simulator.analysis import decidability as dec

    rules = _rules(args)
    bound = bound_of(args)
    budget = time_budget(args)
    readings = chosen_readings(args)
    pool = pool_of(args, None)
    alts = None
    if args.readings is not None:
        names = reading_names(args.readings)
        alts = dec.alternatives(names, readings) if names else None
    if args.out is not None:
        check_folder(args.out, "--out")

    shown = lines_shown(args.quiet)

    def progress(text: str) -> None:
        if shown:
            sys.stderr.write(f"acp-model decidability: {text}\n")
            sys.stderr.flush()

    with pool:
        verdicts, complete = dec.decide_all(
            rules, bound, resolve(readings), progress, budget, by_reading=alts, pool=pool
        )
    entries = []
    for v in verdicts:
        paths = write_witness(v, Path(args.out)) if (args.out and v.witness is not None) else None
        reading_paths = {}
        for r in v.by_reading or []:
            if args.out and r.verdict.witness is not None:
                stem = f"{v.rule}@{r.reading}={r.alternative}"
                reading_paths[(r.reading, r.alternative)] = write_witness(r.verdict, Path(args.out), stem)
        entries.append(v.to_json(paths, reading_paths))
    if not args.json:
        show(render_text(verdicts, entries, bound, complete, alts))
        return EXIT_OK
    data = {
        "bound": bound.to_json(),
        "readings": readings,
        "complete": complete,
        "counts": dec.counts(verdicts),
        "rules": entries,
    }
    if alts is not None:
        data["by_reading"] = [{"reading": n, "alternative": a} for n, a in alts]
    show(dumps(data))
    return EXIT_OK
