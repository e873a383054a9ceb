"""``acp-model agent``: the simulated Agent as a real ACP v2 Agent over standard input and output.

Owns: the options and the Agent they describe (``build``); the loop between the file
descriptors and the Agent is ``simulator.harness.serve`` (exit 0 at end of input or when the
Client stops reading).

Modes (``--common-path``, ``simulator.peers.agent_modes``): the default takes every freedom of the
model, the seed choosing; the common path narrows the Agent's choices (and says so on standard
error at the start). It acts on the stricter alternatives of two readings, so a ``--reading``
choosing another alternative of either is a usage error.

Readings and variants (``build``): ``--reading`` and ``--variant``/``--drop`` go into the
Agent's ``Config`` (``Config.readings``, ``Config.variant``), as for ``simulate``: the Agent
takes the freedoms of the alternatives in force, fires the variant's tables (a move that needs a
removed row is not made) and, for each dropped rule with a seeded bug that breaks it, behaves
like that bug too (``simulator.explore.variant_runs.added_faults``). What the variant gives the Agent is
said on standard error at the start, as is why a seeded bug that never shows on the wire does
not (``Seeded.off_wire``) and, with ``--common-path``, a seeded bug that never broke a rule in
the seeded runs of the common path's bounds (``simulator.analysis.mutants.shows``).

Must not know: what the Agent may do (the model decides), monitors.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from cli.main import UsageError
from cli.options import (
    add_fault_option,
    add_reading_option,
    add_variant_options,
    variant_and_readings,
    variant_lines,
)
from simulator.harness.serve import serve
from simulator.peers.agent import AGENT_FAULTS
from simulator.peers.agent_modes import COMMON_PATH, EVERY_FREEDOM
from simulator.peers.stdio_agent import PACE, StdioAgent, agent_config


def _pace(text: str) -> tuple[float, float]:
    try:
        parts = [float(p) / 1000 for p in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not milliseconds MIN,MAX: {text!r}") from None
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2 or not all(map(math.isfinite, parts)) or parts[0] < 0 or parts[1] < parts[0]:
        raise argparse.ArgumentTypeError(f"not milliseconds MIN,MAX with 0 <= MIN <= MAX: {text!r}")
    return parts[0], parts[1]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "agent",
        help="run the simulated Agent as an ACP v2 Agent over stdio (for testing clients)",
        description="The model's Agent over standard input/output, newline-delimited JSON-RPC 2.0 "
        "(batches too): it answers initialize, session/new (several sessions, each its own "
        "model: sess_1, sess_3, ...), session/list, session/prompt, session/cancel, "
        "$/cancel_request, session/close, session/resume and permission answers, and chooses "
        "among the model's moves with the seed, under the readings and the variant given. By "
        f"default it takes {EVERY_FREEDOM.takes}. With --common-path it takes "
        f"{COMMON_PATH.takes}. Exit 0 at end of input. For client developers: "
        "docs/testing-clients.md.",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the Agent's choices (default 0)")
    add_fault_option(p, "switch on a seeded bug (repeatable; see `acp-model mutants`)")
    p.add_argument(
        "--common-path",
        action="store_true",
        help="take only the common path (every prompt inserted at once and answered; no "
        "rejections, child sessions, repeated snapshots or custom values): the first step for a "
        "client developer. Default: every freedom, chosen by the seed",
    )
    p.add_argument(
        "--pace",
        type=_pace,
        default=PACE,
        metavar="MIN,MAX",
        help=f"milliseconds to listen for input before each move (default "
        f"{PACE[0] * 1000:g},{PACE[1] * 1000:g}; not used under `acp-model drive`, whose turns it "
        "then moves in)",
    )
    add_reading_option(p)
    add_variant_options(p, "agent")
    return p


def build(args: argparse.Namespace) -> tuple[StdioAgent, list[str]]:
    """The Agent the options describe, and what to say about it on standard error."""
    from properties.seeded import BY_NAME
    from simulator.analysis.mutants import shows
    from simulator.explore.variant_runs import added_faults
    from simulator.peers.config import MUTANT_WALKS

    unknown = sorted(set(args.fault) - set(AGENT_FAULTS))
    if unknown:
        raise UsageError(f"unknown agent fault(s): {', '.join(unknown)} (see `acp-model mutants`)")
    variant, readings = variant_and_readings(args)
    mode = COMMON_PATH if args.common_path else EVERY_FREEDOM
    overridden = mode.conflicts(readings)
    if overridden:
        raise UsageError(
            f"--common-path acts on {', '.join(f'{n}={a}' for n, a in sorted(mode.readings.items()))}; "
            f"it cannot be combined with {', '.join(overridden)}"
        )
    # the bounds are those of the --fault bugs (as without a variant); a dropped rule's bug only
    # adds its behaviour
    cfg = agent_config(frozenset(args.fault)).with_(readings=readings, variant=variant)
    faults = frozenset(args.fault) | (added_faults(variant) & frozenset(AGENT_FAULTS))
    said = variant_lines(variant)
    for name in sorted(faults):
        mutant = BY_NAME.get(name)
        if mutant is not None and mutant.off_wire:
            said.append(f"seeded bug {name} never shows on the wire: {mutant.off_wire}")
    agent = StdioAgent(args.seed, faults, cfg=cfg, pace=args.pace, mode=mode)
    if mode is COMMON_PATH:
        said.append(
            "common path only: no rejections, child sessions, repeated snapshots or custom values (--help)"
        )
        for name in sorted(faults):  # (one off the wire is said above)
            if not BY_NAME[name].off_wire and not shows(name, agent.agent.cfg):
                said.append(
                    f"seeded bug {name} never showed in {MUTANT_WALKS} seeded runs of the common path "
                    "(it needs a freedom the common path does not take): run it without --common-path"
                )
    return agent, said


def run(args: argparse.Namespace) -> int:
    agent, said = build(args)
    if sys.stdin is None or sys.stdout is None:
        raise UsageError("standard input or output is closed")
    sys.stderr.write("".join(f"acp-model agent: {line}\n" for line in said))
    sys.stderr.flush()
    return serve(agent, sys.stdin.fileno(), sys.stdout.fileno())
