"""The options of ``acp-model drive``: declared and checked (bad values: one line, exit 2).

Owns: ``add_parser`` (every option, its help and default; ``--silence SEC`` and ``--quiet``:
without a value no progress, as on the other long commands; with one, the deprecated old name of
``--silence``, which still works with a note on standard error).

Must not know: how a campaign runs (``simulator.harness.campaign``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli.options import (
    add_fail_on_option,
    add_json_option,
    add_pool_options,
    add_reading_option,
    positive_int,
)
from simulator.harness.settings import Settings

MAX_SECONDS = 86400
"""The longest wait a seconds option takes (past what a clock holds, waits raised OverflowError)."""


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    if not value <= MAX_SECONDS:  # (inf too: no clock waits that long)
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SECONDS} (a day): {text!r}")
    return value


class _Quiet(argparse.Action):
    """``--quiet``: no progress, as on every other long command; ``--quiet SEC``, the old spelling
    of ``--silence SEC``, still sets it and says it is deprecated."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values is None:
            namespace.quiet = True
            return
        namespace.silence = values
        sys.stderr.write("acp-model drive: --quiet SEC is deprecated, say --silence SEC (the same setting)\n")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "drive",
        help="test a real Agent: play the model's Client against it, check live, shrink failures",
        description="Start AGENT_COMMAND afresh for each run and play the model's Client against "
        "it over stdio (initialize, session/new, prompts, cancels, $/cancel_request, permission "
        "answers, close, resume, extension notifications), checking every message live with the "
        "monitors of `acp-model check`. A failing run is shrunk and written as a transcript, a "
        "sequence diagram and a client script for --replay. Exit 0: no findings at the failing "
        "level; 1: findings; 2: unusable input.",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the first run (run i uses seed+i)")
    p.add_argument("--runs", type=positive_int, default=10, metavar="K", help="runs (default 10)")
    p.add_argument(
        "--steps",
        type=positive_int,
        default=Settings.steps,
        metavar="S",
        help=f"choice points per run (default {Settings.steps})",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=Settings.timeout,
        metavar="SEC",
        help=f"how long the Agent may stay silent while it owes something (default {Settings.timeout:g})",
    )
    p.add_argument(
        "--startup",
        type=_seconds,
        default=Settings.startup,
        metavar="SEC",
        help=f"how long the Agent may take to answer initialize after it starts (default "
        f"{Settings.startup:g}; at least --timeout)",
    )
    p.add_argument(
        "--silence",
        type=_seconds,
        default=Settings.silence,
        metavar="SEC",
        help="seconds without a line from the Agent after which the driver takes its next choice "
        f"(default {Settings.silence:g}); not used with an Agent that moves in the driver's turns, as "
        "`acp-model agent` does",
    )
    p.add_argument(
        "--quiet",
        action=_Quiet,
        nargs="?",
        type=_seconds,
        default=False,
        metavar="SEC",
        help="no progress lines on standard error (default: off; progress is shown only on a "
        "terminal); --quiet SEC is the old name of "
        "--silence SEC, deprecated: it still works, with a note on standard error",
    )
    p.add_argument(
        "--out", default="out/drive", metavar="DIR", help="where failing runs go (default out/drive)"
    )
    p.add_argument("--replay", metavar="SCRIPT", help="play this client script once instead of random runs")
    add_pool_options(p, "the runs (one job each; shrinking stays in this process)")
    p.add_argument(
        "--elicitation",
        action="store_true",
        help="advertise both elicitation modes (form, url) in initialize, so the Agent may elicit "
        "and the driver answers (default: none advertised)",
    )
    add_json_option(p)
    add_fail_on_option(p, "must (default): fail on errors; should: fail on warnings too")
    p.add_argument(
        "--shrink-budget",
        type=positive_int,
        default=60,
        metavar="N",
        help="candidate scripts one shrink may try (default 60)",
    )
    p.add_argument("agent", nargs=argparse.REMAINDER, metavar="-- AGENT_COMMAND [ARGS...]")
    add_reading_option(p)
    return p
