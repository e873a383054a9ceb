"""Wire decidability of every rule: can a breach be seen in the messages at all?

Theory of operation
-------------------
For a rule with a seeded bug written to break it (``simulator.analysis.mutants.standing_for``: its own, or
for a rule the spec restates in several sections, the bug of another statement of it, whose
breaches and findings under any ID of the group count as the rule's), the behaviours
of the simulated peers with that bug's faults on are sampled at a small bound (``Bound``: every
named scenario, then seeded random walks of the bug's own ``Config``, each drained to
quiescence, then an exhaustive search of the first states of every explore slice,
``simulator.analysis.decidability_exhaustive``); a behaviour is *breaking* when the world recorded a
hidden step naming the rule (``World.hidden``: the fault really made a move break it). Each
distinct breaking transcript is judged by the ordinary checker
(``properties.checking.check_stream``, what ``acp-model check`` runs, on the transcript's NDJSON
bytes); it is *flagged* when the checker reports the rule.

- ``yes``: every breaking transcript is flagged (at this bound);
- ``partly`` (with the fraction flagged) or ``no`` (none flagged): some breach is invisible;
- ``unknown``: no seeded bug breaks the rule, or the bug never broke it at this bound (said so,
  never guessed).

The verdict is ``check``'s, on a transcript that may have been cut short. A run that ended
quiescent (nothing more can happen) has a complete transcript, and so has a named scenario that
ran to the end of its script with nothing left in flight (the session as written, recorded to
its end, as ``record`` hands a closed session to the checker); each is also judged as
``check --complete`` judges it: ``flagged_complete`` counts the breaking transcripts flagged
then (an obligation still open at its end is a breach). When every breach ``check`` accepts is
flagged so, the note says a complete transcript proves them, instead of searching the accepted
messages for a gap.

For ``partly`` and ``no`` a witness is searched: the shortest accepted breaking transcript (of
those ``check --complete`` does not flag either, where there are any), and a run of the conforming
peers (faults off, the same ``Config``) whose transcript is the same messages, up to the values
the spec leaves to the Agent (``simulator.analysis.decidability_renaming``) and up to the Client's
messages in flight: ``twin``, a bounded best-first search (``Bound.twin_nodes`` states) that
keeps the twin's hidden steps as close to the breaking run's as it can. When none is found under
the run's own ``Config``, the search is made once more under ``twin_config``: the seeded bug's
bounds sample its breaches, while a conforming peer may take any freedom of the model (a failure
without an error field, a hook) to send the same messages. The witness keeps both runs' hidden
steps: the breaking run's breach markers, and the steps (moves that put nothing on the wire) in
which the two runs differ, with what the conforming run may still do at the end. No twin within
the bound means the checker accepted a breach that no conforming run produces at that bound: a
gap in the checker rather than in the spec, reported as such (``twin_found`` false).

Readings and variants: ``decide`` judges under the readings it is given (the peers take their
freedoms, the checker judges by them) and under the variant in force (a dropped rule is
``unknown``: nothing checks it). ``decide_all`` computes every rule, on worker processes with
``jobs`` > 1, and with ``by_reading`` each rule again under the other alternatives of the readings
that name it (``Reading.rules``: the rules whose verdicts depend on the reading), keeping those
whose ``decidable`` differs (``Verdict.by_reading``); that no other rule's verdict moves is a
test's (``tests/test_reading_rules.py``).

Must not know: files, diagrams, printing or argument parsing (the command and the report do).
"""

from __future__ import annotations

import heapq
import io
import itertools
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from properties.catalogue import RULES, Rule
from properties.checking import check_stream
from properties.engine import MonitorSet
from properties.readings import BY_NAME as READING_BY_NAME
from properties.readings import READINGS, resolve
from properties.variants import Variant
from simulator.analysis import decidability_exhaustive
from simulator.analysis.decidability_renaming import Comparison, Renaming
from simulator.analysis.mutants import Mutant, sample, standing_for
from simulator.explore.bfs import SLICES
from simulator.peers.config import (
    DECIDABILITY_EXHAUSTIVE_STATES,
    DECIDABILITY_STEPS,
    DECIDABILITY_TWIN_NODES,
    DECIDABILITY_WALKS,
    FEATURES,
    Config,
)
from simulator.peers.scenarios import SCENARIOS
from simulator.peers.schedulers import describe
from simulator.peers.wire import to_ndjson
from simulator.peers.world import Event, Hidden, Line, World
from simulator.workers import Workers

CHECKED = ("monitor", "client-view", "model")
"""How a rule is judged when it "has a check" (``properties.catalogue``)."""
DECIDABLE = ("yes", "partly", "no", "unknown")


@dataclass(frozen=True)
class Bound:
    """How much behaviour is sampled per rule."""

    walks: int = DECIDABILITY_WALKS
    """Seeded random walks (seeds ``seed .. seed+walks-1``) on top of every named scenario."""
    steps: int = DECIDABILITY_STEPS
    """Choices per walk before it drains to quiescence."""
    seed: int = 0
    twin_nodes: int = DECIDABILITY_TWIN_NODES
    """States the search for a conforming twin may visit before it gives up."""
    exhaustive_states: int = DECIDABILITY_EXHAUSTIVE_STATES
    """States explored breadth-first in each slice (``simulator.analysis.decidability_exhaustive``; 0:
    no exhaustive part)."""

    def text(self) -> str:
        out = (
            f"{len(SCENARIOS)} scenarios + {self.walks} seeded walks x {self.steps} steps "
            f"(seeds {self.seed}..{self.seed + self.walks - 1}), the seeded bug's bounds"
        )
        if self.exhaustive_states > 0:
            out += (
                f"; exhaustive: the first {self.exhaustive_states:,} states (breadth-first) of each "
                f"of the {len(SLICES)} explore slices"
            )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "walks": self.walks,
            "steps": self.steps,
            "seed": self.seed,
            "twin_nodes": self.twin_nodes,
            "exhaustive": {
                "states_per_slice": self.exhaustive_states,
                "slices": [s.name for s in SLICES] if self.exhaustive_states > 0 else [],
            },
        }


DEFAULT_BOUND = Bound()


@dataclass
class Run:
    """One breaking behaviour: where it came from, its events, transcript and hidden steps."""

    source: str
    cfg: Config
    events: list[Event]
    transcript: list[Line]
    hidden: list[Hidden]
    broken: bool
    """The model's tables refused a move (the run stops there)."""
    quiescent: bool = False
    """The run's transcript is complete (what ``check --complete`` is told): it ended where
    nothing more can happen, or it is a scenario that ran to the end of its script and
    delivered everything in flight."""


@dataclass
class Witness:
    """A breaking transcript the checker accepted and a conforming run with the same messages."""

    rule: str
    breaking: Run
    conforming_events: list[Event] | None
    """The conforming run's events (None: no twin within the bound)."""
    conforming_cfg: Config | None = None
    """The configuration the conforming run was found under (None: the breaking run's)."""
    differing: list[tuple[int, str, str]] = field(default_factory=list)
    """Hidden steps (position, run: breaking or conforming, what) that differ between the runs:
    the breach markers and the moves without wire messages one run makes and the other does not."""
    conforming_next: list[str] = field(default_factory=list)
    """What the conforming run may still do after its last message (agent moves first)."""

    @property
    def twin_found(self) -> bool:
        return self.conforming_events is not None

    def to_json(self, paths: dict[str, str]) -> dict[str, Any]:
        """The JSON entry; ``paths``: the witness files by kind."""
        return {
            **{kind: paths.get(kind) for kind in ("breaking", "conforming", "diagram")},
            "twin_found": self.twin_found,
            "messages": len(self.breaking.transcript),
            "source": self.breaking.source,
            "hidden": [{"position": pos, "run": run, "step": what} for pos, run, what in self.differing],
            "conforming_next": self.conforming_next,
        }


@dataclass
class Verdict:
    rule: str
    decidable: str
    fraction: float | None
    bound: str
    mutant: str | None = None
    breaking: int = 0
    """Distinct breaking transcripts found."""
    flagged: int = 0
    flagged_complete: int = 0
    """Breaking transcripts ``check --complete`` flags: those ``check`` flags, and those of runs
    with a complete transcript (``Run.quiescent``) whose breach is still open at their end (shown
    in the text report; not yet a field of the JSON entry, whose committed copies in
    properties/decidability.json and docs/spec-report would all have to be regenerated)."""
    other: Counter[str] = field(default_factory=Counter)
    """Breaking transcripts the checker rejects under other rules only, by those rules: the breach
    is seen, but cannot be told apart from a breach of another rule."""
    accepted: int = 0
    """Breaking transcripts the checker reports nothing on."""
    refused: int = 0
    """Breaking runs the model's tables stopped at the breaching move."""
    note: str = ""
    witness: Witness | None = None
    seconds: float = 0.0
    complete: bool = True
    """The sample was taken whole (the time budget did not end it)."""
    by_reading: list[ReadingVerdict] | None = None
    """Verdicts under reading alternatives that differ from this one (None: not computed)."""
    stopped: bool = False
    """The sample ended as soon as the verdict was known to equal ``decide``'s ``same_as``
    (``partly``): its counts and fraction are those of the sample so far, never reported."""

    def rounded(self) -> float | None:
        """The fraction flagged as the JSON has it."""
        return None if self.fraction is None else round(self.fraction, 4)

    def to_json(
        self,
        paths: dict[str, str] | None = None,
        reading_paths: dict[tuple[str, str], dict[str, str]] | None = None,
    ) -> dict[str, Any]:
        """The JSON entry; ``paths``: the witness files by kind; ``reading_paths``: those of the
        witnesses under reading alternatives, by (reading, alternative)."""
        out: dict[str, Any] = {
            "rule": self.rule,
            "decidable": self.decidable,
            "fraction": self.rounded(),
            "bound": self.bound,
            "mutant": self.mutant,
            "breaking": self.breaking,
            "flagged": self.flagged,
            "seen_as_other": sum(self.other.values()),
            "other_rules": sorted(self.other),
            "accepted": self.accepted,
            "refused": self.refused,
            "note": self.note,
            "witness": None if self.witness is None else self.witness.to_json(paths or {}),
        }
        if self.by_reading is not None:
            out["by_reading"] = [
                {
                    "reading": r.reading,
                    "alternative": r.alternative,
                    "decidable": r.verdict.decidable,
                    "fraction": r.verdict.rounded(),
                    "witness": r.verdict.to_json((reading_paths or {}).get((r.reading, r.alternative)))[
                        "witness"
                    ],
                }
                for r in self.by_reading
            ]
        return out


@dataclass
class ReadingVerdict:
    """A rule's verdict under one alternative of a reading (the others as the run has them)."""

    reading: str
    alternative: str
    verdict: Verdict


def checker_rules(
    lines: list[Line],
    readings: dict[str, str] | None = None,
    variant: Variant | None = None,
    complete: bool = False,
) -> set[str]:
    """Rules ``acp-model check`` (``--variant``, ``--complete``) reports on this transcript
    (breaches, not open obligations)."""
    monitors = MonitorSet(readings=readings, variant=variant)
    report = check_stream(
        io.BytesIO(to_ndjson(lines).encode()), "transcript", monitors=monitors, complete=complete
    )
    return {f.rule for f in report.findings}


def breaking_runs(
    rule: str,
    mutant: Mutant,
    bound: Bound,
    deadline: float | None = None,
    readings: dict[str, str] | None = None,
    variant: Variant | None = None,
    enough: Callable[[Run], bool] | None = None,
) -> tuple[list[Run], bool]:
    """Distinct breaking behaviours of ``mutant`` for ``rule`` (first found of each transcript),
    and whether the sample was completed before ``deadline``. ``enough`` sees each run as it is
    kept; when it answers True the sample ends there (and counts as completed)."""
    _, same = standing_for(rule)
    extra: dict[str, Any] = {k: v for k, v in (("readings", readings), ("variant", variant)) if v}

    def sampled() -> Iterator[tuple[str, Config, list[Event], World, bool]]:
        """(source, bounds, events, world, ended: its input ran to its end with nothing in
        flight) of each run of the sample, then of each breaking behaviour of the exhaustive part."""
        for source, cfg, make in sample(
            SCENARIOS, mutant.switched_on, mutant.cfg, bound.walks, bound.steps, bound.seed, **extra
        ):
            run = make()
            world = run.world
            if world.quiescent() and not any(h.rule in same for h in world.hidden):
                world.finish()  # scripted runs end without judging quiescence: omitted moves
            ended = run.stop == "end of script" and not world.net.to_agent and not world.net.to_client
            yield source, cfg, list(run.events), world, ended
        found = decidability_exhaustive.runs(
            same, mutant.switched_on, bound.exhaustive_states, readings, variant
        )
        yield from ((source, cfg, events, world, False) for source, cfg, events, world in found)

    seen: set[str] = set()
    out: list[Run] = []
    runs = sampled()
    while deadline is None or time.time() <= deadline:
        item = next(runs, None)
        if item is None:
            return out, True
        source, cfg, events, world, ended = item
        if not any(h.rule in same for h in world.hidden) or (key := to_ndjson(world.transcript)) in seen:
            continue
        seen.add(key)
        broken = world.broken is not None
        quiet = not broken and (ended or world.quiescent())
        out.append(Run(source, cfg, events, list(world.transcript), list(world.hidden), broken, quiet))
        if enough is not None and enough(out[-1]):
            return out, True
    return out, False


def decide(
    rule: str,
    bound: Bound = DEFAULT_BOUND,
    readings: dict[str, str] | None = None,
    deadline: float | None = None,
    same_as: str | None = None,
    variant: Variant | None = None,
) -> Verdict:
    """The wire decidability of one rule (see the module docstring). ``deadline``: a point on
    ``time.time()`` (one clock for every process, on every machine of a cluster). ``same_as``:
    the ``decidable`` of a verdict this one is compared with; when they agree no witness is
    searched, and for ``partly`` the sample ends once it holds a breach the checker flags and one
    it does not (the verdict can then only be ``partly``: it is returned as soon as that is
    known, its counts those of the sample so far, ``Verdict.stopped``)."""
    t0 = time.perf_counter()
    mutant, same = standing_for(rule)
    dropped = variant is not None and rule in variant.drop
    if dropped or mutant is None:
        why = "the variant drops this rule" if dropped else "no behaviour of the simulated peers breaks it"
        return Verdict(rule, "unknown", None, "none", note=why)
    if deadline is not None and time.time() > deadline:
        return Verdict(
            rule, "unknown", None, bound.text(), note="skipped: the time budget ended", complete=False
        )
    judged: list[set[str]] = []  # the checker's rules on each run kept, judged as it is kept
    seen = [False, False]  # a run not flagged, a run flagged

    def enough(run: Run) -> bool:
        judged.append(checker_rules(run.transcript, readings, variant))
        seen[bool(same & judged[-1])] = True
        return same_as == "partly" and all(seen)

    runs, complete = breaking_runs(rule, mutant, bound, deadline, readings, variant, enough)
    verdict = Verdict(rule, "unknown", None, bound.text(), mutant=mutant.name, breaking=len(runs))
    verdict.complete = complete
    verdict.stopped = same_as == "partly" and all(seen)
    verdict.note = "" if complete else "partial: the time budget ended the sample"
    verdict.refused = sum(1 for r in runs if r.broken)
    accepted: list[Run] = []
    unproven: list[Run] = []  # accepted breaches even a complete transcript leaves unproven
    for r, found in zip(runs, judged, strict=True):
        if same & found:
            verdict.flagged += 1
            continue
        verdict.other.update(found)
        proves = r.quiescent and bool(same & checker_rules(r.transcript, readings, variant, complete=True))
        if proves:
            verdict.flagged_complete += 1
        if not found:
            accepted.append(r)
            if not proves:
                unproven.append(r)
    verdict.flagged_complete += verdict.flagged
    verdict.accepted = len(accepted)
    if not runs:
        verdict.note = verdict.note or f"the seeded bug {mutant.name} did not break it at this bound"
    else:
        verdict.fraction = verdict.flagged / len(runs)
        verdict.decidable = "yes" if verdict.flagged == len(runs) else "partly" if verdict.flagged else "no"
    if verdict.decidable not in ("yes", "unknown") and not accepted:
        verdict.note = (
            "every breach is seen, but some only as a breach of another rule ("
            + ", ".join(sorted(verdict.other))
            + "): the messages cannot say which rule was broken"
        )
    if accepted and same_as != verdict.decidable:
        # the witness: the shortest breach even a complete transcript leaves unproven, if any
        best = min(unproven or accepted, key=lambda r: (len(r.transcript), len(r.events)))
        verdict.witness = witness(rule, best, bound)
        if verdict.refused and all(r.broken for r in accepted):
            verdict.note = (
                "the model's tables refuse the breaching move, so the breaking runs end there: "
                "the breach's later messages are never sent"
            )
        elif not unproven:
            verdict.note = (
                "the breaches check accepts are open at the end of the input: a complete "
                f"transcript proves them (check --complete flags {verdict.flagged_complete} of "
                f"{len(runs)})"
            )
        elif not verdict.witness.twin_found:
            verdict.note = (
                "no conforming run sends the same messages within the bound: the checker accepts "
                "messages the conforming peers never send (a gap in the checker, or a freedom the "
                "simulated peers do not take)"
            )
    verdict.seconds = time.perf_counter() - t0
    return verdict


# -- the conforming twin ------------------------------------------------------------------------


def twin(
    target: list[Line], cfg: Config, budget: int, prefer: Collection[tuple[int, str]] = ()
) -> list[Event] | None:
    """A conforming run (no faults) whose transcript is ``target`` up to a renaming of the values
    the Agent chooses freely (``decidability_renaming``) and up to the Client's messages in
    flight (None: none within ``budget`` states).

    A world records a Client message when the Agent receives it; a transcript recorded between
    the peers may show it as soon as the Client sent it, before Agent messages sent while it was
    still on its way. So a target Client line may be passed over while the twin's Client has
    sent that message and it waits, in order, in the twin's network (``owed``); the twin records
    it later, when its Agent receives it.

    Best first: a move that records the next target lines costs nothing, a move that records
    nothing costs one unless ``prefer`` holds it at that position (the breaking run's own hidden
    moves), so the twin found differs from the breaking run in as few hidden steps as possible.
    A state already tried at the same position (renaming, owed lines) is skipped; the search
    gives up after ``budget`` states."""
    root = World(cfg, frozenset(), None, record=True, views=False)  # the conforming client never reads it
    same = Comparison(target)
    start = same.match(root.transcript, 0, ())
    if start is None:
        return None
    seen: set[Any] = set()
    tie = itertools.count(1)
    # (cost, -position, tie, world, events, renaming, target position, owed Client lines)
    Node = tuple[int, int, int, World, list[Event], Renaming, int, tuple[int, ...]]
    first = len(root.transcript)
    heap: list[Node] = [(0, -first, 0, root, [], start, first, ())]
    while heap:
        cost, _, _, world, events, names, pos, owed = heapq.heappop(heap)
        if pos == len(target) and not owed:
            return events
        key = (world.snapshot(), pos, names, owed)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > budget:
            return None
        flying = world.net.to_agent
        if (
            pos < len(target)
            and target[pos][0] == "client"
            and len(flying) > len(owed)
            and flying[len(owed)] == target[pos][1]
        ):  # the Client's message in flight, shown before the Agent receives it
            heapq.heappush(heap, (cost, -(pos + 1), next(tie), world, events, names, pos + 1, (*owed, pos)))
        done = len(world.transcript)
        for ev in world.enabled():
            child = world.clone()
            child.step(ev)
            if child.broken is not None:
                continue
            new = child.transcript[done:]
            at, renamed, still = pos, names, owed
            for line in new:
                if still and line == target[still[0]]:
                    still = still[1:]
                    continue
                got = same.match([line], at, renamed)
                if got is None:
                    break
                at, renamed = at + 1, got
            else:
                step = 0 if new or ev[:2] == ("net", "to_client") or (pos, describe(ev)) in prefer else 1
                heapq.heappush(heap, (cost + step, -at, next(tie), child, [*events, ev], renamed, at, still))
    return None


HANDSHAKE_FEATURES = frozenset({"early_state", "elicitation", "future", "retry"})
"""Features that change the handshake (the Client's advertised capabilities, the initial idle's
place), or how every prompt is echoed (``retry``: the Agent reports each user message with its
prompt's own content, one chunk per block, rather than in two chunks): a twin keeps the breaking
run's choice of them, or its first messages, or its user messages, would differ."""


TWIN_USES = ("futures", "losses", "notices", "usages")
"""Bounds of the Agent's freedoms that only add a message of their own (a custom state, unknown,
a notice, a usage update): the second search allows each at least once, as a twin matches every
message it sends against the target at once, and so never wanders through them."""


def twin_config(cfg: Config) -> Config:
    """``cfg`` with every feature of the model on, but those of the handshake as ``cfg`` has them,
    and each freedom of ``TWIN_USES`` allowed at least once: where the second search for a twin
    looks (``witness``)."""
    shaped = cfg.features & HANDSHAKE_FEATURES
    uses = {name: max(getattr(cfg, name), 1) for name in TWIN_USES}
    return cfg.with_(features=(frozenset(FEATURES) - HANDSHAKE_FEATURES) | shaped, **uses)


def witness(rule: str, run: Run, bound: Bound) -> Witness:
    mutant, same = standing_for(rule)
    faults = mutant.switched_on if mutant else frozenset()
    _, b_silent = decidability_exhaustive.replay(run.events, run.cfg, faults)
    events = twin(run.transcript, run.cfg, bound.twin_nodes, frozenset(b_silent))
    cfg = run.cfg
    if events is None and twin_config(run.cfg) != run.cfg:
        cfg = twin_config(run.cfg)
        events = twin(run.transcript, cfg, bound.twin_nodes, frozenset(b_silent))
    w = Witness(rule, run, events, None if cfg == run.cfg else cfg)
    differing: list[tuple[int, str, str]] = [
        (h.position, "breaking", f"{h.actor} breaks {h.rule}") for h in run.hidden if h.rule in same
    ]
    if events is not None:
        world, c_silent = decidability_exhaustive.replay(events, cfg, frozenset())
        b_count, c_count = Counter(b_silent), Counter(c_silent)
        differing += [(p, "breaking", d) for p, d in b_silent if c_count[(p, d)] < b_count[(p, d)]]
        differing += [(p, "conforming", d) for p, d in c_silent if b_count[(p, d)] < c_count[(p, d)]]
        differing = list(dict.fromkeys(differing))
        enabled = world.enabled()
        moves = [e for e in enabled if e[0] == "agent"] + [e for e in enabled if e[0] == "net"]
        w.conforming_next = [describe(e) for e in moves[:4]] or ["nothing: the run is complete"]
    differing.sort(key=lambda x: (x[0], x[1] != "breaking"))
    w.differing = differing
    return w


def conforming_transcript(w: Witness) -> list[Line]:
    """The conforming run's transcript (the breaking one's messages, up to the renaming of the
    values the Agent chooses freely: ``decidability_renaming``)."""
    assert w.conforming_events is not None
    world, _ = decidability_exhaustive.replay(
        w.conforming_events, w.conforming_cfg or w.breaking.cfg, frozenset()
    )
    return list(world.transcript)


# -- every rule ---------------------------------------------------------------------------------


def rules_with_check() -> tuple[Rule, ...]:
    """Every catalogued rule that some check judges (monitor, client view or model)."""
    return tuple(r for r in RULES if r.check in CHECKED)


def alternatives(names: tuple[str, ...], base: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(reading, alternative) of every alternative of the named readings (``("all",)``: every
    reading) that differs from the one ``base`` has in force, in catalogue order."""
    chosen = resolve(dict(base or {}))
    wanted = [r for r in READINGS if names == ("all",) or r.name in names]
    unknown = [n for n in names if n != "all" and n not in READING_BY_NAME]
    if unknown:
        raise ValueError(f"unknown reading {unknown[0]!r}")
    return [(r.name, a) for r in wanted for a in r.alternative_names() if a != chosen[r.name]]


def affected(reading: str, rule: str) -> bool:
    """Whether ``rule``'s verdict may depend on ``reading``: the reading names it (``Reading.rules``)
    or a rule whose breaches and findings count as its (``standing_for``: the statements of one
    obligation the spec restates, judged by one seeded bug). Only those verdicts are computed again
    under the reading's alternatives."""
    named = READING_BY_NAME[reading].rules
    return rule in named or not standing_for(rule)[1].isdisjoint(named)


Job = tuple[str, Bound, dict[str, str] | None, float | None, str | None, Variant | None]
"""(rule, bound, readings, deadline, same_as, variant): one ``decide`` call."""


def _decide_job(job: Job) -> Verdict:
    return decide(*job)


def decide_all(
    rules: Iterable[str],
    bound: Bound = DEFAULT_BOUND,
    readings: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
    time_budget: float | None = None,
    *,
    by_reading: list[tuple[str, str]] | None = None,
    pool: Workers | None = None,
    variant: Variant | None = None,
) -> tuple[list[Verdict], bool]:
    """Verdicts of ``rules`` in the given order under ``readings`` and ``variant``; and whether all
    were computed in the budget (rules not reached are "unknown", noted as skipped).

    ``by_reading`` (reading, alternative) pairs: each rule's verdict is computed again under each
    alternative (on top of ``readings``) of a reading that names the rule (``affected``), and
    ``Verdict.by_reading`` keeps those whose ``decidable`` differs (the fraction flagged alone
    moves with the sample, whose random walks take other paths under another reading; a witness
    is searched only for those that differ, and the sample of one compared with a ``partly``
    verdict ends once it is ``partly`` too); the budget's skipped or partial ones are not
    compared.
    ``pool``: the ``decide`` calls run as its jobs (None: in this process); each is independent
    of the others, so the verdicts are the same for any pool."""
    pool = pool if pool is not None else Workers(1)
    progress = progress or (lambda _: None)
    deadline = None if time_budget is None else time.time() + time_budget
    work: list[Job] = [(rule, bound, readings, deadline, None, variant) for rule in rules]
    out: list[Verdict] = []
    for i, v in enumerate(pool.map(_decide_job, work), 1):
        out.append(v)
        extra = f" ({v.flagged}/{v.breaking} flagged)" if v.breaking else ""
        progress(f"decidability {i}/{len(work)}: {v.rule} {v.decidable}{extra}, {v.seconds:.1f} s")
    complete = all(v.complete for v in out)
    if by_reading is None:
        return out, complete
    again: list[tuple[Verdict, str, str]] = [
        (v, name, alt)
        for v in out
        if v.mutant is not None and v.complete
        for name, alt in by_reading
        if affected(name, v.rule)
    ]
    work = [
        (v.rule, bound, {**(readings or {}), name: alt}, deadline, v.decidable, variant)
        for v, name, alt in again
    ]
    for v in out:
        v.by_reading = []
    for i, ((v, name, alt), w) in enumerate(zip(again, pool.map(_decide_job, work), strict=True), 1):
        complete &= w.complete
        if w.complete and w.decidable != v.decidable:
            assert v.by_reading is not None
            v.by_reading.append(ReadingVerdict(name, alt, w))
        if i % 50 == 0 or i == len(work):
            progress(f"decidability by reading: {i}/{len(work)} rule-alternative pairs")
    return out, complete


def counts(verdicts: Iterable[Verdict]) -> dict[str, int]:
    c = Counter(v.decidable for v in verdicts)
    return {k: c[k] for k in DECIDABLE}
