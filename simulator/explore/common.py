"""What every explorer shares: the monitors it runs, checked stepping, replay and the counterexample value.

Theory of operation
-------------------
A *breach* is one rule broken in one run, from one of four sources:

- ``monitor``: a monitor finding of kind ``rule`` made certain by a step (``World.step``);
- ``eventually``: a monitor finding made at quiescence by ``World.finish`` (an "eventually"
  obligation nothing can discharge any more);
- ``view``: the faulty client's view differs from the reference view (``World.view_breaches``);
- ``model``: the agent tried a move its machine tables forbid (``ProtocolViolation``).

``step_checked`` performs one event and returns the breaches it caused; ``settling`` finishes a
run deterministically (oldest agent move or delivery first) so "eventually" rules can be judged
at quiescence; ``replay`` re-runs an event list (dropping events that are not enabled when their
turn comes, as the shrinker needs) and reports what it broke. A ``Counterexample`` is a shrunk
event list for one rule, with everything needed to write it out (``simulator.explore.report``).

Monitors come from ``new_monitors``: the full catalogue (``MonitorSet()``, i.e.
``properties.monitors.ALL_MONITORS``), or none when they are off, judging under the readings
of the run's ``Config``.

Must not know: which explorer is running, files, or how a counterexample is printed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from properties.engine import MonitorSet
from simulator.peers.config import DEFAULT, Config
from simulator.peers.world import Event, Line, World

SETTLE_BUDGET = 400
"""Most agent moves and deliveries ``settling`` takes before giving up on quiescence."""


def new_monitors(enabled: bool = True, cfg: Config = DEFAULT) -> MonitorSet:
    """The full catalogue of monitors, judging under the readings and the variant of ``cfg``
    (by default the spec as written), or an empty set when it is off."""
    return MonitorSet(None if enabled else [], readings=cfg.reading_map(), variant=cfg.variant)


def monitor_rules() -> tuple[str, ...]:
    """Every rule ID some default monitor reports (sorted), for coverage reports."""
    ms = new_monitors()
    rules = {rule for m in ms.monitors for rule in type(m).RULES}
    return tuple(sorted(rules))


@dataclass(frozen=True, slots=True)
class Breach:
    rule: str
    source: str
    """monitor, eventually, view or model (see the module docstring)."""
    explanation: str
    pruned: bool = False
    """A model refusal only because the variant in force removed the row (an agent move that
    needs it is pruned, not a breach)."""


def step_checked(world: World, event: Event) -> list[Breach]:
    """Perform ``event``; the breaches it made certain. After a model violation the world is
    broken (nothing is enabled) and callers stop the run."""
    before = len(world.view_breaches)
    was_broken = world.broken
    found = world.step(event)  # a refusal of the model's tables breaks the world
    broken = world.broken
    if broken is not was_broken and broken is not None:
        return [Breach(broken.rule, "model", str(broken))]
    out = [Breach(f.rule, "monitor", f.explanation) for f in found if f.kind == "rule"]
    if len(world.view_breaches) != before:
        out += [Breach(rule, "view", why) for rule, why in list(world.view_breaches.items())[before:]]
    return out


def judge_end(world: World) -> list[Breach]:
    """Judge the "eventually" rules; breaches only when the world is quiescent."""
    return [Breach(f.rule, "eventually", f.explanation) for f in world.finish() if f.kind == "rule"]


def settling(world: World) -> Iterator[Event]:
    """The moves that finish a run deterministically, one at a time (the caller performs each
    before the next is chosen): the first enabled agent move or delivery (never a client
    choice), until none is left or ``SETTLE_BUDGET`` moves were taken."""
    for _ in range(SETTLE_BUDGET):
        ev = next((ev for ev in world.enabled() if ev[0] != "client"), None)
        if ev is None:
            return
        yield ev


@dataclass
class Replay:
    """A checked run: a replay (``replay``) or a random walk."""

    world: World
    events: list[Event] = field(default_factory=list)
    """The events actually performed (disabled ones dropped, settling moves appended)."""
    breaches: list[Breach] = field(default_factory=list)
    quiescent: bool = False
    at: dict[str, int] = field(default_factory=dict)
    """Per rule broken: the transcript lines recorded when its first breach became certain (the
    breaking message is the last of them; for an "eventually" rule, the whole transcript)."""
    stop: str = ""
    """Why a random walk stopped (``simulator.explore.random_walks.walk``)."""


def replay(
    events: list[Event],
    cfg: Config,
    faults: frozenset[str],
    *,
    skip_disabled: bool = True,
    settle: bool = True,
    monitors: bool = True,
    record: bool = True,
    stop_rule: str | None = None,
) -> Replay:
    """Re-run ``events``; with ``settle``, continue with the moves of ``settling`` until quiescence
    (or ``SETTLE_BUDGET`` moves), then judge the "eventually" rules. With ``stop_rule`` the replay
    stops as soon as that rule is broken (what a shrinker needs)."""
    world = World(cfg, faults, new_monitors(monitors, cfg), record)
    out = Replay(world)

    def stopped(ev: Event) -> bool:
        """Perform ``ev``; whether the replay stops there (a model refusal, or ``stop_rule``)."""
        out.events.append(ev)
        found = step_checked(world, ev)
        _note(out, found)
        return any(b.source == "model" or b.rule == stop_rule for b in found)

    for ev in events:
        if (not skip_disabled or ev in world.enabled()) and stopped(ev):
            return out
    for ev in settling(world) if settle else ():
        if stopped(ev):
            return out
    out.quiescent = world.quiescent()
    _note(out, judge_end(world))
    return out


def _note(out: Replay, found: list[Breach]) -> None:
    out.breaches.extend(found)
    for b in found:
        out.at.setdefault(b.rule, len(out.world.transcript))


@dataclass
class Counterexample:
    """One rule broken, with the (shrunk) events that break it."""

    rule: str
    source: str
    """How the breach shows: monitor, eventually, view or model."""
    explanation: str
    mode: str
    """Which explorer found it: random, hypothesis or exhaustive."""
    found_by: str
    """Where: a walk seed, a hypothesis example, a BFS depth."""
    events: list[Event]
    cfg: Config
    faults: frozenset[str]
    original_length: int
    """Events before shrinking."""
    hits: int = 1
    """How many runs (walks, examples, states) broke this rule."""
    transcript: list[Line] = field(default_factory=list)
    breaks_at: int | None = None
    """Lines of ``transcript`` sent when the breach became certain: the breaking message is line
    ``breaks_at`` (1-based); the whole transcript for an "eventually" rule or a refused move
    (never sent); None when unknown."""


def add_counts(into: Any, other: Any) -> None:
    """Add the counts of ``other``, a dataclass (its ``int`` and ``Counter`` fields), to those of
    ``into``: how the explorers merge the results of their chunks."""
    for f in fields(other):
        mine, theirs = getattr(into, f.name), getattr(other, f.name)
        if isinstance(theirs, Counter):
            mine.update(theirs)
        elif type(theirs) is int:
            setattr(into, f.name, mine + theirs)


def rate(count: int, seconds: float) -> float:
    """``count`` per second of ``seconds`` (0 when no time passed): the reports' rates."""
    return count / seconds if seconds > 0 else 0.0


def keep_shortest(
    best: dict[str, Counterexample],
    found: Iterable[Counterexample],
    key: Callable[[Counterexample], str] = lambda c: c.rule,
) -> None:
    """Merge ``found`` into ``best``: one counterexample per ``key`` (by default the rule), the
    shortest; of equal lengths the first one met stays."""
    for c in found:
        k = key(c)
        if k not in best or len(c.events) < len(best[k].events):
            best[k] = c


def make_counterexample(
    rule: str,
    events: list[Event],
    cfg: Config,
    faults: frozenset[str],
    *,
    mode: str,
    found_by: str,
    original_length: int,
    hits: int = 1,
    fallback: Breach | None = None,
) -> Counterexample:
    """Replay ``events`` exactly (recording the transcript) and describe the breach of ``rule``
    as that replay shows it (``fallback`` when the replay does not break it, which a test
    forbids); the other fields are the ``Counterexample``'s."""
    run = replay(events, cfg, faults, skip_disabled=False, settle=False)
    breach = next((b for b in run.breaches if b.rule == rule), fallback)
    return Counterexample(
        rule=rule,
        source=breach.source if breach else "unknown",
        explanation=breach.explanation if breach else "did not reproduce",
        events=list(events),
        cfg=cfg,
        faults=faults,
        transcript=list(run.world.transcript),
        breaks_at=run.at.get(rule),
        mode=mode,
        found_by=found_by,
        original_length=original_length,
        hits=hits,
    )
