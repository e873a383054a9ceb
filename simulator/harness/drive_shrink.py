"""Shrinking a failing drive run: the shortest list of the Client's choices that still fails.

``shrink_run`` minimises a failing run's choices (``simulator.explore.shrink.minimise``: a prefix
search, delta debugging, then single and pair removals), re-running the Agent for each candidate.
A run the Agent crashed in, or one that failed before the driver made any choice, is not shrunk
(``not_shrunk``: nothing in it is the Client's doing).
It first replays the original choices ``tries`` times: a failure that never comes back is
reported as not reproduced; one that comes back every time is taken as deterministic and each
candidate is run once; one that comes back only sometimes (a nondeterministic Agent, or a race
the timing decides) gets ``tries`` runs per candidate (a candidate fails when some run shows the
same rule), so that a reduction is not lost to one unlucky run. The final script is replayed
``confirm`` times; when no replay shows the rule (a reduction was kept on a failure that came by
chance), the next longer list that failed is confirmed instead, up to ``UNDO`` times. The counts
are stated in the report.

Must not know: argument parsing, how reports are printed, how a run is played
(``simulator.harness.drive.run_once``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from simulator.explore.shrink import minimise
from simulator.harness.drive import Peer, RunResult, run_once
from simulator.harness.settings import Settings
from simulator.peers.driver_client import Choice

HEARTBEAT = 10.0
"""Seconds of shrinking without a shorter list after which ``shrink_run`` says how far it got."""
UNDO = 3
"""Kept lists ``shrink_run`` steps back through when the final one does not fail again."""


def _script_key(choices: list[Choice]) -> str:
    return json.dumps(choices)


@dataclass
class Shrunk:
    rule: str
    original: list[Choice]
    choices: list[Choice]
    result: RunResult | None
    """The last run of ``choices`` that showed the rule (None: the failure did not come back)."""
    reproduced: int = 0
    replays: int = 0
    runs: int = 0
    checks: int = 0
    """Replays of the original choices before shrinking ..."""
    checked: int = 0
    """... and how many of them showed the rule."""
    per_candidate: int = 1
    """Runs a candidate may take to show the rule (more than one: a nondeterministic failure)."""
    undone: int = 0
    """Reductions given up because their list did not fail again on replay."""
    skipped: str = ""
    """Why the run was not shrunk (``not_shrunk``), else empty."""

    @property
    def nondeterministic(self) -> bool:
        return (
            self.result is None
            or self.reproduced < self.replays
            or self.checked < self.checks
            or self.undone > 0
        )


def not_shrunk(result: RunResult) -> Shrunk | None:
    """The report of a failing run that is not worth shrinking (the Agent crashed, or the
    failure came before the driver made any choice), else None."""
    if result.crashed:
        why = "the agent crashed in this run"
    elif not result.choices:
        why = "no client choice came before the failure"
    else:
        return None
    rule = result.rules[0] if result.rules else ""
    return Shrunk(rule, list(result.choices), list(result.choices), result, skipped=why)


def shrink_run(
    make_peer: Callable[[], Peer],
    settings: Settings,
    rule: str,
    choices: list[Choice],
    *,
    tries: int = 2,
    confirm: int = 3,
    budget: int = 60,
    progress: Callable[[str], None] | None = None,
) -> Shrunk:
    """Minimise ``choices`` so that a run still fails by ``rule`` (see the module docstring).
    ``progress`` is told, in a short line each, what shrinking does: the replays of the
    original, each shorter list found, a count every ``HEARTBEAT`` seconds, the confirmation."""
    out = Shrunk(rule, list(choices), list(choices), None)
    started = shown = time.monotonic()
    say = progress if progress is not None else (lambda text: None)

    def replays(script: list[Choice], times: int) -> list[RunResult]:
        """The runs of ``script``, played ``times`` times, that showed the rule."""
        out.runs += times
        runs = (run_once(make_peer(), settings, script=script) for _ in range(times))
        return [got for got in runs if rule in got.rules]

    def tell(text: str) -> None:
        nonlocal shown
        shown = time.monotonic()
        say(f"{text} ({shown - started:.0f} s)")

    say(f"replaying the {len(choices)} choices {tries} times")
    # every try, so that a failure that comes and goes is seen to
    came = replays(choices, tries)
    out.checks, out.checked = tries, len(came)
    if not came:
        say(f"{rule} did not come back in {tries} replays: not shrunk")
        return out
    # a failure that came back every time is taken as deterministic: one run per candidate
    out.per_candidate = per_candidate = 1 if out.checked == out.checks else tries
    out.result = first = came[0]
    spent, shown = 0, time.monotonic()
    failed: dict[str, RunResult] = {_script_key(first.choices): first}  # a failing run of each list
    best = len(first.choices)
    say(
        f"{rule} came back {out.checked}/{out.checks}: {per_candidate} run(s) per candidate, "
        f"at most {budget} candidates"
    )

    def test(candidate: list[Choice]) -> list[Choice] | None:
        nonlocal spent, best
        spent += 1
        for _ in range(per_candidate):
            got = replays(candidate, 1)
            if got:
                failed.setdefault(_script_key(got[0].choices), got[0])
                if len(got[0].choices) < best:
                    best = len(got[0].choices)
                    tell(f"candidate {spent}/{budget}: {len(choices)} -> {best} choices")
                return got[0].choices
        if time.monotonic() - shown >= HEARTBEAT:
            tell(f"candidate {spent}/{budget}: still {best} choices")
        return None

    out.choices = minimise(first.choices, test, lambda: spent >= budget, key=_script_key)
    # a reduction may have been kept on a failure that came by chance: confirm the final list
    # by replays, and if none shows the rule, step back through the lists kept before it
    kept = sorted(failed, key=lambda k: len(failed[k].choices))
    for k in kept[kept.index(_script_key(out.choices)) :][: 1 + UNDO]:
        out.choices = failed[k].choices
        tell(f"confirming {len(out.choices)} choices with {confirm} replays")
        came = replays(out.choices, confirm)
        out.replays = confirm
        out.reproduced = len(came)
        # the last replay that showed the rule, else the failure the list was kept on
        out.result = came[-1] if came else failed[k]
        if came:
            break
        out.undone += 1
    return out
