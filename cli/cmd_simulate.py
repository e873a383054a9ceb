"""``acp-model simulate``: one seeded random run or one named scenario, written as a transcript."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli.main import UsageError
from cli.util import write_atomic


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "simulate", help="run the simulated agent and client; write the wire transcript (NDJSON)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--steps", type=int, default=60, help="client and agent choices before draining (default 60)"
    )
    p.add_argument(
        "--scenario", metavar="NAME", help="run a named scenario instead (see `acp-model scenarios`)"
    )
    p.add_argument("--transport", choices=("fifo", "unordered"), default=None)
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help="run a seeded-bug agent or client (see `acp-model mutants`)",
    )
    p.add_argument("--out", required=True, metavar="FILE.ndjson", help="where to write the transcript")
    return p


def run(args: argparse.Namespace) -> int:
    from simulator.config import DEFAULT
    from simulator.scenarios import BY_NAME
    from simulator.schedulers import random_walk, scripted
    from simulator.wire import to_ndjson
    from simulator.world import ALL_FAULTS

    if args.steps < 0:
        raise UsageError("--steps must be >= 0")
    faults = frozenset(args.fault)
    unknown = sorted(faults - ALL_FAULTS)
    if unknown:
        raise UsageError(f"unknown fault {unknown[0]!r} (see `acp-model mutants`)")
    if args.scenario is not None:
        scenario = BY_NAME.get(args.scenario)
        if scenario is None:
            raise UsageError(f"unknown scenario {args.scenario!r} (see `acp-model scenarios`)")
        cfg = scenario.cfg if args.transport is None else scenario.cfg.with_(transport=args.transport)
        result = scripted(scenario.script, cfg, faults)
    else:
        cfg = DEFAULT if args.transport is None else DEFAULT.with_(transport=args.transport)
        result = random_walk(args.seed, args.steps, cfg, faults)
    try:
        write_atomic(args.out, to_ndjson(result.world.transcript))
    except OSError as exc:
        raise UsageError(f"{args.out}: cannot write ({exc.strerror or exc})") from None
    sys.stdout.write(
        f"wrote {len(result.world.transcript)} messages to {args.out} "
        f"({result.world.steps} events, stop: {result.stop})\n"
    )
    return 0
