"""``acp-model simulate``: one seeded random run or one named scenario, written as a transcript.

Owns: the options, their validation and where the transcript goes (a file, written atomically,
or standard output for ``--out -``; the one-line summary then goes to standard error so the
transcript stays clean).

A seeded run takes ``--steps`` events with the client starting work (prompts, cancellations,
closes, resumes) until they are spent: its budgets come from ``simulator.peers.config.long_session``
unless a bound option sets them. Then the run settles: the agent finishes what it started and
the client only answers.

Must not know: how the simulator chooses events.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli.bounds import add_bound_options, bounds_from, faults_from
from cli.main import UsageError
from cli.options import (
    add_fault_option,
    add_quiet_option,
    add_reading_option,
    add_variant_options,
    at_least,
    variant_and_readings,
    variant_lines,
)
from cli.outputs import STDOUT, check_file, show, write
from cli.progress import shown
from properties.readings import describe, resolve


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "simulate",
        help="run the simulated agent and client; write the wire transcript (NDJSON)",
        description="Run the simulated agent and client once and write what went over the wire as "
        "a transcript (NDJSON, one {from, message} object per line, readable by `acp-model check` "
        "and `acp-model view`). A seeded run takes --steps events (client and agent choices and "
        "deliveries) in which the client keeps starting work, then settles; --scenario runs a "
        "named scenario instead. The same seed and options give a byte-identical transcript.",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed, >= 0 (default %(default)s)")
    p.add_argument(
        "--steps",
        type=int,
        default=60,
        help="events of the seeded run before it settles (default %(default)s)",
    )
    p.add_argument(
        "--scenario",
        metavar="NAME",
        help="run a named scenario instead of a seeded run (see `acp-model scenarios`; default: none)",
    )
    add_fault_option(
        p,
        "run a seeded-bug agent or client, a fault or a mutant; repeatable "
        "(see `acp-model mutants`; default: none)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE.ndjson",
        help="where to write the transcript; - for standard output (required)",
    )
    add_quiet_option(p)
    bounds = p.add_argument_group(
        "bounds (a seeded run; a scenario brings its own, only --transport applies to it)"
    )
    add_bound_options(bounds, _default)
    add_reading_option(p)
    add_variant_options(p, "simulate")
    return p


def _default(field: str) -> str:
    from simulator.peers.config import CLIENT_BUDGETS, DEFAULT, STEPS_PER_AGENT_ITEM

    if field in CLIENT_BUDGETS:
        return "one per step, so --steps is the limit"
    if field == "features":
        return "all"
    if field in ("capacity", "transport"):
        return str(getattr(DEFAULT, field))
    return f"one per {STEPS_PER_AGENT_ITEM} steps, at least {getattr(DEFAULT, field)}"


def run(args: argparse.Namespace) -> int:
    from simulator.explore.variant_runs import added_faults
    from simulator.peers.config import DEFAULT, long_session
    from simulator.peers.scenarios import BY_NAME
    from simulator.peers.schedulers import random_walk, scripted
    from simulator.peers.wire import to_ndjson

    variant, readings = variant_and_readings(args)
    at_least(("--steps", args.steps, 0), ("--seed", args.seed, 0))
    # under a variant the run takes the behaviours its dropped rules allowed (their seeded bugs)
    faults = faults_from(args.fault) | added_faults(variant)
    bounds = bounds_from(args)
    check_file(args.out, "--out")
    if args.scenario is not None:
        scenario = BY_NAME.get(args.scenario)
        if scenario is None:
            raise UsageError(f"unknown scenario {args.scenario!r} (see `acp-model scenarios`)")
        shape = sorted(k for k in bounds if k != "transport")
        if shape:
            raise UsageError(
                f"--{shape[0].replace('_', '-')} does not apply to --scenario (a scenario brings its bounds)"
            )
        cfg = scenario.cfg.with_(**bounds, readings=readings, variant=variant)
        result = scripted(scenario.script, cfg, faults)
    else:
        cfg = long_session(args.steps, DEFAULT).with_(**bounds, readings=readings, variant=variant)
        with shown(args.quiet) as progress:
            result = random_walk(args.seed, args.steps, cfg, faults, answers_only=True, progress=progress)
    data = to_ndjson(result.world.transcript)
    added = ", ".join(sorted(added_faults(variant))) or "none"
    summary = "".join(
        f"{line}\n"
        for line in [
            f"wrote {len(result.world.transcript)} messages to "
            f"{'standard output' if args.out == STDOUT else args.out} "
            f"({result.world.steps} events, stop: {result.stop}; {describe(resolve(readings))})",
            *variant_lines(variant, f"  seeded bugs switched on for the dropped rules: {added}"),
        ]
    )
    if args.out == STDOUT:
        sys.stdout.buffer.write(data.encode("utf-8"))
        sys.stdout.flush()
        sys.stderr.write(summary)
        return 0
    write(args.out, data)
    show(summary)
    return 0
