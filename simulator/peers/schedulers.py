"""Schedulers: who picks the next enabled event.

Owns: the seeded random scheduler (one walk: pick uniformly among enabled events with a
``random.Random(seed)``, stop at quiescence or after ``steps``), and the scripted scheduler
(a list of events, each must be enabled when its turn comes). Explorers (hypothesis and
exhaustive search) live in ``simulator/explore*.py`` and use ``World`` directly.

Must not know: monitors' rules, files.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from properties.engine import MonitorSet
from properties.findings import Finding
from simulator.peers.config import DEFAULT, Config
from simulator.peers.world import Event, World
from simulator.progress import NULL, Progress

RARE = frozenset(
    {
        ("client", "close"),
        ("agent", "lose"),
        ("client", "cancel"),
        ("client", "resume"),
        ("agent", "tool_status"),
    }
)
"""Events a random walk re-draws once with probability 0.8, so that runs are not ended early by
a close or filled with cancellations, and a live tool call's plain completion is not crowded out
by its other statuses (one event each); they still occur in a fair share of walks."""


STARTS_WORK = frozenset(
    {
        ("client", "prompt"),
        ("client", "cancel"),
        ("client", "cancel_request"),
        ("client", "close"),
        ("client", "resume"),
    }
)
"""Client events that start something new, as opposed to answering the agent (allow, deny,
dismiss a permission request)."""


class ScriptError(Exception):
    """A scripted event that is not enabled when its turn comes."""


@dataclass
class Run:
    world: World
    events: list[Event] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    stop: str = ""


def random_walk(
    seed: int,
    steps: int,
    cfg: Config = DEFAULT,
    faults: frozenset[str] = frozenset(),
    monitors: MonitorSet | None = None,
    answers_only: bool = False,
    progress: Progress = NULL,
) -> Run:
    """One seeded random walk. Deliveries and agent moves continue after ``steps`` client/agent
    choices until quiescence (so eventually-rules are judged fairly);
    while draining, the client acts only when nothing else can, and with ``answers_only`` it
    then only answers (``STARTS_WORK`` is left out), for configurations whose client budgets
    would never run out (``simulator.peers.config.long_session``): the run stops ``settled`` when only
    new client work is left."""
    rng = random.Random(seed)
    world = World(cfg, faults, monitors)
    run = Run(world)
    n = 0
    progress.phase("random walk", steps)
    while True:
        if n == steps and world.enabled():
            progress.phase("random walk, settling")
        ev = next_event(rng, world.enabled(), n, steps, answers_only)
        if isinstance(ev, str):
            run.stop = ev
            break
        run.events.append(ev)
        run.findings.extend(world.step(ev))
        n += 1
        progress.advance()
    progress.done()
    run.findings.extend(world.finish())
    return run


def next_event(
    rng: random.Random, enabled: list[Event], n: int, steps: int, answers_only: bool = False
) -> Event | str:
    """A walk's choice after ``n`` of its ``steps`` choices among ``enabled`` (uniform, a
    ``RARE`` event re-drawn once with probability 0.8; past ``steps``, the client acts only when
    nothing else can, see ``random_walk``), or why the walk stops."""
    if not enabled:
        return "quiescent"
    if n >= steps:
        enabled = [e for e in enabled if e[0] != "client"] or (
            [e for e in enabled if e[:2] not in STARTS_WORK] if answers_only else enabled
        )
        if not enabled:
            return "settled"
        if n >= steps * 4 + 200:
            return "drain budget"
    ev = rng.choice(enabled)
    if ev[:2] in RARE and rng.random() < 0.8:
        ev = rng.choice(enabled)
    return ev


def scripted(
    script: Iterable[Event | str],
    cfg: Config = DEFAULT,
    faults: frozenset[str] = frozenset(),
    monitors: MonitorSet | None = None,
    settle: bool = True,
    strict: bool = True,
) -> Run:
    """Run a script. The string ``"deliver"`` delivers everything in flight, FIFO; with
    ``settle`` every message still in flight at the end is delivered too. Without ``strict``
    an event that is not enabled at its turn is skipped (a seeded bug may change what is
    possible) instead of raising ``ScriptError``."""
    world = World(cfg, faults, monitors)
    run = Run(world)
    for item in script:
        if item == "deliver":
            _deliver_all(run)
            continue
        assert not isinstance(item, str)
        if item not in world.enabled():
            if not strict:
                continue
            raise ScriptError(f"step {len(run.events) + 1}: {item} is not enabled")
        run.events.append(item)
        run.findings.extend(world.step(item))
    if settle:
        _deliver_all(run)
    run.stop = "quiescent" if world.quiescent() else "end of script"
    run.findings.extend(world.finish())
    return run


def _deliver_all(run: Run) -> None:
    world = run.world
    while world.net.to_agent or world.net.to_client:
        ev: Event = ("net", "to_agent", 0) if world.net.to_agent else ("net", "to_client", 0)
        run.events.append(ev)
        run.findings.extend(world.step(ev))


def replay_events(
    events: Iterable[Event],
    cfg: Config = DEFAULT,
    faults: frozenset[str] = frozenset(),
    monitors: MonitorSet | None = None,
) -> Run:
    """Re-run a recorded event list exactly (used by shrinkers and pasted counterexamples)."""
    return scripted(list(events), cfg, faults, monitors, settle=False)


def describe(ev: Event) -> str:
    actor, name, arg = ev
    return f"{actor}.{name}" + ("" if arg is None else f"({arg!r})")
