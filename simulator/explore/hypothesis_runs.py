"""Property-based exploration: a hypothesis ``RuleBasedStateMachine`` that drives the World.

Theory of operation
-------------------
The machine class is built from the world's event names (``build_machine``): one ``@rule`` per
(actor, event name) pair, named like the protocol action (``send_prompt``, ``insert_prompt``,
``deliver_to_client``, ``agent_tool_run`` ...), guarded by a ``@precondition`` "an event of this
name is enabled now", and taking a small integer that picks the argument among the enabled
events of that name. ``deliver_or_wait`` is always enabled (it delivers the oldest message in
flight, or does nothing), so a run never stalls. Hypothesis's stateful runner already does
swarm testing: each example draws a subset of the rules (its ``FeatureStrategy``) and uses only
those, so some examples never cancel, others never answer permissions, and so on.

Invariants, one per monitor class of the catalogue (``no_<monitor>_breach``) plus
``client_view_matches_reference``, ``agent_respects_machine_tables`` and
``no_other_breach``, assert that the last step made no breach certain. When the world becomes
quiescent the "eventually" rules are judged at once; at the end of an example (teardown) the
run is settled deterministically (``explore_common.settling``) and judged, so obligations
left open by a short example are caught too.

A failing example's performed events are shrunk by ``simulator.explore.shrink`` (delta debugging over
events), so every mode reports the same kind of exact, replayable event list. Hypothesis's own
shrinker is off by default (``hypothesis_shrink=True`` turns it on, before ours): on the seeded
bugs it spent about 90% of the mode's time (hundreds of replayed examples) and ended at the
same length as delta debugging alone. Hypothesis stops at the first failure, so ``explore``
runs again with the rules already found ignored, up to ``max_rounds`` times.

Chunks: the example budget is cut into chunks that depend on the budget alone (``chunks``), each
a run of its own with its own seed (``chunk_seed``) and rounds, run here or as jobs of a worker pool
and merged in chunk order (``merge``), so the result for a seed is the same on any number of
workers. Each chunk shrinks its own counterexamples where it runs.

Reproducible: the hypothesis part of a run depends only on the seed and the options, never on
what the process did before: the seed is set on the machine (what ``@hypothesis.seed`` does),
every setting is given (``_settings``: none inherited from a loaded profile, the example database
off unless a directory is given) and hypothesis's pool of local constants is empty while the
machine runs (``isolated``); docs/exploring.md, "Reproducible from the seed alone", tells why.

Must not know: the random walker, the exhaustive search, files or printing.
"""

from __future__ import annotations

import inspect
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import StopTest, UnsatisfiedAssumption
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from model import elicitation as em
from simulator.explore.common import (
    Breach,
    Counterexample,
    add_counts,
    judge_end,
    keep_shortest,
    make_counterexample,
    new_monitors,
    settling,
    step_checked,
)
from simulator.explore.coverage import Row, recording
from simulator.explore.shrink import shrink
from simulator.peers.agent import Agent
from simulator.peers.client import PERMISSION_FEATURE, TRIGGER_OF
from simulator.peers.config import EXPLORE_EXAMPLES, HYPOTHESIS_STEPS, Config
from simulator.peers.world import Event, World
from simulator.progress import NULL, Progress

_NAMES = {
    ("client", "prompt"): "send_prompt",
    ("client", "cancel"): "send_cancel",
    ("client", "cancel_request"): "send_cancel_request",
    ("client", "allow"): "allow_permission",
    ("client", "deny"): "deny_permission",
    ("client", "dismiss"): "dismiss_permission",
    ("client", "fail_answer"): "fail_permission_answer",
    ("client", "elicit_accept"): "accept_elicitation",
    ("client", "elicit_decline"): "decline_elicitation",
    ("client", "elicit_cancel"): "cancel_elicitation",
    ("client", "close"): "send_close",
    ("client", "resume"): "send_resume",
    ("agent", "hold"): "hold_prompt",
    ("agent", "insert"): "insert_prompt",
    ("agent", "reject"): "reject_prompt",
    ("agent", "withdraw"): "withdraw_prompt",
    ("agent", "answer"): "answer_prompt",
    ("agent", "start"): "start_work",
    ("agent", "end"): "end_work",
    ("net", "to_agent"): "deliver_to_agent",
    ("net", "to_client"): "deliver_to_client",
}
"""Rule names of events, named like the protocol actions (others: ``ACTOR_NAME``)."""
CLIENT_EVENTS = (
    *("prompt", "cancel", "cancel_request"),  # they fire no row of a table the Client follows
    *TRIGGER_OF,
    *dict.fromkeys(f"elicit_{row.trigger}" for row in em.SPEC.rows if row.actor == "client"),
)
"""The client's event names (``simulator.peers.client.Client.do``): the three no table row gives,
then those of its session, permission and elicitation rows."""


def event_names() -> list[tuple[str, str]]:
    """Every (actor, name) an event can have: the client's, the agent's ``_do_*`` choices and
    the two deliveries."""
    agent = sorted(n[4:] for n in dir(Agent) if n.startswith("_do_"))
    return (
        [("client", n) for n in CLIENT_EVENTS]
        + [("agent", n) for n in agent]
        + [k for k in _NAMES if k[0] == "net"]
    )


def rule_name(actor: str, name: str) -> str:
    return _NAMES.get((actor, name), f"{actor}_{name}")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class RuleBroken(AssertionError):
    """An invariant failed: ``breach`` is the rule broken by the last step."""

    def __init__(self, breach: Breach) -> None:
        super().__init__(f"{breach.rule} ({breach.source}): {breach.explanation}")
        self.breach = breach


OUTCOMES = {
    "completed": "completed",
    "failed": "broke a rule",
    "no_enabled_rule": "abandoned by hypothesis (none of the rules it drew was enabled)",
    "size_limit": "abandoned by hypothesis (its size limit reached)",
    "other": "abandoned by hypothesis (another reason)",
}
"""How an example ended, as counted in ``Stats.outcomes``, in a few words for reports. Only
completed examples count towards the examples asked; hypothesis runs a failing example once
more to report it; "no enabled rule": none of the rules the example drew (its swarm subset) was
enabled."""


def _outcome() -> str:
    """How the example whose teardown is running ended: hypothesis calls ``teardown`` in a
    ``finally`` clause, so the exception that ended the example (if any) is the one in flight."""
    exc = sys.exc_info()[1]
    if exc is None:
        return "completed"
    if isinstance(exc, RuleBroken):
        return "failed"
    if isinstance(exc, UnsatisfiedAssumption):
        return "no_enabled_rule"
    if isinstance(exc, StopTest):  # hypothesis concluded the example; its status says why
        try:
            status = current_build_context().data.status.name
        except Exception:  # pragma: no cover - hypothesis internals moved
            return "other"
        return {"OVERRUN": "size_limit", "INVALID": "no_enabled_rule"}.get(status, "other")
    return "other"


@dataclass
class Stats:
    examples: int = 0
    rule_executions: int = 0
    settle_steps: int = 0
    steps: int = 0
    events: Counter[str] = field(default_factory=Counter)
    exercised: Counter[str] = field(default_factory=Counter)
    rows: Counter[Row] = field(default_factory=Counter)
    failing_examples: Counter[str] = field(default_factory=Counter)
    last_failure: tuple[Breach, list[Event]] | None = None
    outcomes: Counter[str] = field(default_factory=Counter)
    """Examples by how they ended (``OUTCOMES``)."""


def build_machine(
    cfg: Config, faults: frozenset[str], ignore: frozenset[str], stats: Stats, progress: Progress = NULL
) -> type[RuleBasedStateMachine]:
    """A fresh machine class for one configuration (rules and invariants attached)."""
    monitors = new_monitors(True, cfg)
    groups: list[tuple[str, frozenset[str]]] = [
        (f"no_{_snake(type(m).__name__)}_breach", frozenset(type(m).RULES))
        for m in monitors.monitors
        if type(m).RULES
    ]
    grouped = frozenset().union(*(g for _, g in groups)) if groups else frozenset()

    class WorldMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.world = World(cfg, faults, new_monitors(True, cfg), record=False)
            self.events: list[Event] = []
            self.new: list[Breach] = []
            self.judged = False
            self.failed = False
            self._enabled: dict[tuple[str, str], list[Event]] | None = None
            stats.examples += 1

        # -- helpers ------------------------------------------------------------------------
        def enabled_by_name(self) -> dict[tuple[str, str], list[Event]]:
            if self._enabled is None:
                table: dict[tuple[str, str], list[Event]] = {}
                for ev in self.world.enabled():
                    table.setdefault((ev[0], ev[1]), []).append(ev)
                self._enabled = table
            return self._enabled

        def fire(self, ev: Event) -> None:
            self._enabled = None
            self.events.append(ev)
            found = [b for b in step_checked(self.world, ev) if b.rule not in ignore]
            if not self.judged and self.world.quiescent():
                self.judged = True
                found += [b for b in judge_end(self.world) if b.rule not in ignore]
            self.new = found

        def fail(self, breach: Breach) -> None:
            self.failed = True
            stats.failing_examples[breach.rule] += 1
            stats.last_failure = (breach, list(self.events))
            raise RuleBroken(breach)

        # -- the always-enabled rule ----------------------------------------------------------
        @rule()
        def deliver_or_wait(self) -> None:
            stats.rule_executions += 1
            net = self.world.net
            if net.to_agent:
                self.fire(("net", "to_agent", 0))
            elif net.to_client:
                self.fire(("net", "to_client", 0))
            else:
                self.new = []

        def teardown(self) -> None:
            outcome = _outcome()
            stats.outcomes[outcome] += 1
            if outcome == "completed":
                progress.advance()
            stats.steps += sum(self.world.counts.values())
            found: list[Breach] = []
            if not (self.failed or self.judged or any(b.source == "model" for b in self.new)):
                for ev in settling(self.world):  # settle and judge a run the example left open
                    stats.settle_steps += 1
                    stats.steps += 1
                    self.events.append(ev)
                    found = [b for b in step_checked(self.world, ev) if b.rule not in ignore]
                    if found:
                        break
                else:
                    found = [b for b in judge_end(self.world) if b.rule not in ignore]
            stats.events.update(self.world.counts)
            if self.world.monitors is not None:
                stats.exercised.update(self.world.monitors.exercised)
            if found:
                self.fail(found[0])

    def make_rule(actor: str, name: str) -> None:
        key = (actor, name)

        def body(self: WorldMachine, pick: int) -> None:
            stats.rule_executions += 1
            options = self.enabled_by_name()[key]
            self.fire(options[pick % len(options)])

        body.__name__ = rule_name(actor, name)
        fn = precondition(lambda self: key in self.enabled_by_name())(
            rule(pick=st.integers(min_value=0, max_value=7))(body)
        )
        setattr(WorldMachine, body.__name__, fn)

    for actor, name in event_names():
        if not cfg.elicitations and name.startswith("elicit"):  # a zero budget: no such rules
            continue
        feature = PERMISSION_FEATURE.get(name)
        if feature is not None and feature not in cfg.features:  # the Client never offers it
            continue
        make_rule(actor, name)

    def make_invariant(inv_name: str, wanted: Any) -> None:
        def body(self: WorldMachine) -> None:
            for b in self.new:
                if wanted(b):
                    self.fail(b)

        body.__name__ = inv_name
        setattr(WorldMachine, inv_name, invariant()(body))

    for inv_name, rules in groups:
        make_invariant(
            inv_name, lambda b, rules=rules: b.source in ("monitor", "eventually") and b.rule in rules
        )
    make_invariant("client_view_matches_reference", lambda b: b.source == "view")
    make_invariant("agent_respects_machine_tables", lambda b: b.source == "model")
    make_invariant(
        "no_other_breach",
        lambda b: b.source in ("monitor", "eventually") and b.rule not in grouped,
    )
    return WorldMachine


@dataclass
class HypothesisResult:
    seed: int
    max_examples: int
    steps_per_example: int
    rounds: int
    seconds: float
    stats: Stats
    counterexamples: list[Counterexample]
    stop: str

    def stats_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "examples": self.stats.examples,
            "max_examples": self.max_examples,
            "steps_per_example": self.steps_per_example,
            "steps": self.stats.steps,
            "rule_executions": self.stats.rule_executions,
            "settle_steps": self.stats.settle_steps,
            "rounds": self.rounds,
            "examples_by_outcome": {k: self.stats.outcomes[k] for k in OUTCOMES if self.stats.outcomes[k]},
            "stop": self.stop,
            "events": dict(sorted(self.stats.events.items())),
        }


@contextmanager
def isolated() -> Iterator[None]:
    """Hypothesis with an empty pool of local constants while the block runs: hypothesis (since
    its PR #4356, 2025) draws about one value in twenty from constants it collects from every
    non-library module in ``sys.modules``, so the same seed gave different examples depending on
    which of our modules were imported. Its cache of constants is emptied on entry and on exit,
    so neither this run nor a later one sees the other's pool. A hypothesis without the pool runs
    unchanged."""
    try:
        from hypothesis.internal.conjecture import providers

        real = providers._get_local_constants
        cache = providers.CONSTANTS_CACHE.cache
        empty = providers.Constants()  # type: ignore[attr-defined]
    except (ImportError, AttributeError):  # pragma: no cover - a hypothesis before 6.131
        yield
        return
    providers._get_local_constants = lambda: empty
    cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = real
        cache.clear()


_EXPLICIT: dict[str, Any] = {"derandomize": False, "backend": "hypothesis"}
"""Settings that would otherwise come from the loaded profile (``backend`` where it exists)."""


def _settings(examples: int, steps: int, database: str | None, shrink: bool) -> settings:
    phases = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target)
    known = inspect.signature(settings.__init__).parameters
    return settings(
        **{k: v for k, v in _EXPLICIT.items() if k in known},
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=DirectoryBasedExampleDatabase(database) if database else None,
        suppress_health_check=list(HealthCheck),
        phases=(*phases, Phase.shrink) if shrink else phases,
        verbosity=Verbosity.quiet,
        print_blob=False,
        report_multiple_bugs=False,
    )


CHUNK_EXAMPLES = 100
"""Examples per chunk: a run's example budget is cut into chunks of this many (the last may be
smaller), never by the number of workers, so the merged result does not depend on it."""


def chunk_seed(base: int, index: int) -> int:
    """The hypothesis seed of chunk ``index`` of a run seeded ``base``: ``base`` itself for the
    first chunk (a run of at most ``CHUNK_EXAMPLES`` examples is the single run it always was),
    then ``base + index * 2**64`` (distinct for every (base, index) pair with ``|base| < 2**63``)."""
    return base if index == 0 else base + index * 2**64


NOT_RUN = "not run (no examples asked)"
"""``HypothesisResult.stop`` of a run asked for no examples."""


def chunks(examples: int) -> list[tuple[int, int]]:
    """(index, examples) of each chunk of a budget of ``examples`` (at least one chunk)."""
    return [
        (i, min(CHUNK_EXAMPLES, examples - start))
        for i, start in enumerate(range(0, max(examples, 1), CHUNK_EXAMPLES))
    ]


Run = tuple[int, int, Config, frozenset[str], str | None, int, bool]
"""(base seed, steps, cfg, faults, database, max_rounds, hypothesis_shrink): what every chunk
of a run shares."""
ChunkJob = tuple[int, int, str, Run]
"""(index, examples, label, the run): one chunk, as a worker receives it; ``label`` ("chunk I, "
when the run has more than one) starts the counterexamples' ``found_by``."""


def explore(
    cfg: Config,
    faults: frozenset[str] = frozenset(),
    *,
    seed: int = 0,
    examples: int = EXPLORE_EXAMPLES,
    steps: int = HYPOTHESIS_STEPS,
    database: str | None = None,
    max_rounds: int = 6,
    hypothesis_shrink: bool = False,
    progress: Progress = NULL,
    chunk_map: Callable[[Callable[[Any], HypothesisResult], list[Any]], Iterable[HypothesisResult]]
    | None = None,
) -> HypothesisResult:
    """``examples`` examples in chunks of ``CHUNK_EXAMPLES`` (``chunks``), each its own run of the
    machine seeded by ``chunk_seed`` (``run_chunk``). The chunks run here one after another, or
    elsewhere through ``chunk_map`` (``run_chunk``, the jobs; results in job order: a worker
    pool); either way they are merged in chunk order (``merge``), so the result is the same."""
    if examples <= 0:  # ``--examples 0``: a run of the random walks alone
        return replace(merge([], seed, 0, 0.0), stop=NOT_RUN)
    t0 = time.perf_counter()
    parts = chunks(examples)
    many = len(parts) > 1
    run: Run = (seed, steps, cfg, faults, database, max_rounds, hypothesis_shrink)
    jobs: list[ChunkJob] = [(i, n, f"chunk {i}, " if many else "", run) for i, n in parts]
    if chunk_map is None:
        results = [run_chunk(job, progress) for job in jobs]
    else:
        progress.phase(f"hypothesis, {len(parts)} chunk(s) of examples as jobs of the worker pool", examples)
        results = []
        for job, res in zip(jobs, chunk_map(run_chunk, jobs), strict=True):
            results.append(res)
            progress.advance(job[1])
        progress.done()
    return merge(results, seed, examples, time.perf_counter() - t0)


def merge(parts: list[HypothesisResult], seed: int, examples: int, seconds: float) -> HypothesisResult:
    """The chunks' results as one run: counts summed, coverage a union (row counts summed), per
    rule the shortest counterexample (the earliest chunk on ties) with the hits of every chunk;
    rounds are the most any chunk ran."""
    stats = Stats()
    best: dict[str, Counterexample] = {}
    hits: Counter[str] = Counter()
    for p in parts:
        add_counts(stats, p.stats)
        hits.update({c.rule: c.hits for c in p.counterexamples})
        keep_shortest(best, p.counterexamples)
    return HypothesisResult(
        seed=seed,
        max_examples=examples,
        steps_per_example=parts[0].steps_per_example if parts else 0,
        rounds=max((p.rounds for p in parts), default=0),
        seconds=seconds,
        stats=stats,
        counterexamples=[replace(best[r], hits=hits[r]) for r in sorted(best)],
        stop="round limit" if any(p.stop == "round limit" for p in parts) else "examples exhausted",
    )


def run_chunk(job: ChunkJob, progress: Progress = NULL) -> HypothesisResult:
    """One run of the machine (one chunk, module-level so a worker can run it), ``isolated`` as
    every run of the machine is: each round stops at its first (shrunk) failure, later rounds
    ignore the rules already found."""
    index, examples, label, (base, steps, cfg, faults, database, max_rounds, hypothesis_shrink) = job
    seed = chunk_seed(base, index)
    t0 = time.perf_counter()
    stats = Stats()
    found: dict[str, Counterexample] = {}
    rounds = 0
    stop = "examples exhausted"
    while rounds < max_rounds:
        rounds += 1
        progress.phase(f"hypothesis, {label}round {rounds}", examples)
        machine = build_machine(cfg, faults, frozenset(found), stats, progress)
        machine._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
        stats.last_failure = None
        try:
            with recording() as rows, isolated():
                try:
                    run_state_machine_as_test(  # type: ignore[no-untyped-call]
                        machine, settings=_settings(examples, steps, database, hypothesis_shrink)
                    )
                finally:
                    stats.rows.update(rows)
        except RuleBroken:
            if stats.last_failure is None:  # pragma: no cover - set by every RuleBroken
                raise
            breach, events = stats.last_failure
            progress.phase(f"hypothesis, shrinking the {breach.rule} counterexample")
            found[breach.rule] = make_counterexample(
                breach.rule,
                shrink(events, cfg, faults, breach.rule),
                cfg,
                faults,
                fallback=breach,
                mode="hypothesis",
                found_by=f"{label}round {rounds}" + (", shrunk by hypothesis" if hypothesis_shrink else ""),
                original_length=len(events),
                hits=stats.failing_examples[breach.rule],
            )
            if rounds == max_rounds:
                stop = "round limit"
            continue
        break
    progress.done()
    return HypothesisResult(
        seed=seed,
        max_examples=examples,
        steps_per_example=steps,
        rounds=rounds,
        seconds=time.perf_counter() - t0,
        stats=stats,
        counterexamples=[found[r] for r in sorted(found)],
        stop=stop,
    )
