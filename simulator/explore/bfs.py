"""Exhaustive exploration: breadth-first search over every World state within the bounds.

Theory of operation
-------------------
A state is the compact tuple of ``simulator.explore.state``: the numbers of the Agent's, the
Client's and the monitors' states, the messages in flight, and (only with a faulty client view,
when views decide findings) the numbers of the client view and the reference view; the client's
view is left out otherwise (nothing reads it), the agent's retained history is added where a
resume replays it (``State``). A state's successors are the states each enabled event leads
to, in ``World.enabled``'s order; one loop (``search_states``) numbers the states level by level.

Symmetry (``symmetry=True``; off by default, it rarely pays): message IDs are fresh names
drawn from one counter (``msg_u_3``, ``msg_a_4`` ...). Two states that differ only by a
consistent renaming of those IDs, and in the counter itself, have the same futures up to
renaming (the monitors only compare IDs for equality), so the key renames every message ID by
order of first appearance, in the whole key including the monitors' state, and drops the
counter. Request, tool-call, terminal, permission and compaction IDs are not renamed (their
counters are also budgets). Event arguments never carry message IDs, so a path found under
symmetry replays exactly. Off with seeded bugs (some write literal IDs).

Partial-order reduction (``reduce="por"``; off by default; ``simulator.explore.por`` says which
side a state is expanded on and what the reduction keeps): the cycle proviso is checked here, a
successor already found at the state's depth or above being one whose index is below the end of
the current level (the state of greatest depth on a cycle of the reduced graph closes it that way).
A bottom cycle of the reduced graph is judged only when every state of it was expanded on both
sides (then it is a bottom cycle of the full graph); others are counted in ``unjudged_cycles`` and
the run says liveness was not judged there. Not with a depth limit (a reduced run may need more
steps to reach a situation).

Results: the first breach of each rule in BFS order has a shortest path (parent pointers give
the events); "eventually" rules are judged at every quiescent state (no event enabled) on a
copy of the monitors; and, when the search is complete, in every bottom strongly connected
component that is a cycle (the run can never leave it and never becomes quiescent): a rule
open in every state of such a cycle is a breach under the fairness assumption below.

Bound and fairness: the search covers exactly the runs allowed by the ``Config`` bounds (and
``depth``, ``max_states``, ``time_budget``: a search they stop is reported incomplete).
Fairness assumption: strong fairness of events, i.e. an event enabled infinitely often is
eventually taken, so every infinite run ends in a bottom SCC and visits all its states; a
finite run ends in a quiescent state.

Must not know: hypothesis, the random walker, files or printing.
"""

from __future__ import annotations

import gc
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from simulator.explore.common import Breach, Counterexample, make_counterexample, replay
from simulator.explore.coverage import Row, context_takers
from simulator.explore.por import AGENT_SIDE, BOTH, CLIENT_SIDE, REDUCTIONS, ample
from simulator.explore.state import COUNTER_AT, State
from simulator.peers.config import MAX_STATES as MAX_STATES
from simulator.peers.config import SMALL, Config
from simulator.peers.transport import schedule
from simulator.peers.world import Event

PROGRESS_EVERY = 0.5
"""Seconds between progress lines."""
MAX_CYCLE_STATES = 64
"""States of one bottom cycle on which "eventually" rules are judged (lowest indices first)."""


@dataclass(frozen=True)
class Slice:
    """A named bound: one configuration explored completely."""

    name: str
    cfg: Config
    purpose: str


QUIET = SMALL.with_(tool_calls=0, permissions=0, background=0, outputs=0, capacity=1)
"""``SMALL`` without tool calls, permission requests, background items or output messages, one
message in flight per direction: what most slices start from, adding their subject."""


def _slice(name: str, features: str, purpose: str, **bounds: Any) -> Slice:
    """A slice of ``QUIET`` with these bound changes and these features (space-separated)."""
    return Slice(name, QUIET.with_(features=frozenset(features.split()), **bounds), purpose)


SLICES: tuple[Slice, ...] = (
    Slice(
        "core",
        SMALL.with_(capacity=1, features=(SMALL.features - {"fail"}) | {"stop_unlisted", "cancel_output"}),
        "a prompt held or inserted, session/cancel, a tool call with permission, a terminal (an "
        "unlisted one stopped by the cancel), output flushed while the cancel is carried out",
    ),
    _slice(
        "prompts",
        "hold cancel cancel_output",
        "two prompts: held and inserted in order, $/cancel_request, session/cancel (output "
        "flushed while it is carried out)",
        prompts=2,
        cancel_requests=1,
        outputs=1,
    ),
    _slice(
        "cancels",
        "cancel fail cancel_output thought plan snapshot",
        "session/cancel and $/cancel_request (each twice) reaching a prompt in every state; "
        "content (a message, thought or plan) sent after the cancel was received, before its "
        "idle; the state reported "
        "repeated (the initial idle, running while the cancel is carried out, idle after a prompt "
        "was sent)",
        cancels=2,
        cancel_requests=2,
    ),
    _slice(
        "output",
        "chunks thought plan limits notice usage fail custom_stop extras rich_prompt clear notice_detail "
        "shared_ids",
        "messages, chunks, thoughts, plans (and their removal), stop reasons (also custom), errors "
        "and rejection, notices (also of other severities, with a description or null), usage; a "
        "message's content cleared ([] or null); a tool call under the current message's ID",
        tool_calls=1,
        cancels=0,
        notices=1,
        usages=1,
        outputs=2,
    ),
    _slice(
        "background",
        "terminal bg_tool subagent followup extras bg_fail",
        "two background items (terminals and their output, background tool calls, subagents and "
        "their session-directed message chunks), follow-up work; an item failing (while idle: "
        "no stop reason)",
        background=2,
        cancels=0,
    ),
    _slice(
        "compaction",
        "compaction cancel compact_once",
        "compaction, also while idle: ended completed, failed, cancelled; custom statuses; summary "
        "patches and chunks in every status; one completed update the whole report (summary or none); "
        "a streamed compaction completed without its summary",
        compactions=1,
    ),
    _slice(
        "observability",
        "unknown future permission omit_stop",
        "loss of observability (unknown) and future states (the Client advertised custom states) "
        "from every state, restored to each state, with output under them; an idle without a stop "
        "reason (the Agent cannot tell why the work stopped)",
        tool_calls=1,
        permissions=1,
        cancels=0,
        losses=1,
        futures=1,
        outputs=1,
    ),
    _slice(
        "tools",
        "pause cancel fail correct",
        "a tool call that pauses, goes back to pending, ends completed, failed or cancelled, and "
        "has its content replaced or appended in every status",
        tool_calls=1,
        tool_updates=1,
    ),
    _slice(
        "requests",
        "permission multi_request cancel",
        "several outstanding permission requests (running with one pending, then blocked), "
        "answered after the work was cancelled or withdrawn",
        tool_calls=2,
        permissions=2,
    ),
    _slice(
        "answers",
        "permission cancel perm_error stop snapshot user_stop",
        "a permission request answered with a JSON-RPC error (pending, withdrawn, or after its "
        "work was cancelled), or left unanswered by work that stops on its own; the state "
        "reported repeated (requires_action: no new block); the user choosing the request's "
        "option that stops the work, which ends cancelled with no session/cancel",
        tool_calls=1,
        permissions=1,
    ),
    _slice(
        "bg_requests",
        "bg_tool bg_permission bg_idle bg_pause",
        "a permission request for a background tool call, also while idle, answered or withdrawn; "
        "a background tool call of the Agent's own started while idle (before a prompt, or after "
        "its work ended) or while requires_action; a listed one going pending or paused and "
        "running again",
        permissions=1,
        background=1,
        cancels=0,
    ),
    _slice(
        "elicitation",
        "elicitation cancel fail answer_held",
        "an elicitation in form or URL mode blocking foreground work, also about a tool call it "
        "starts: accepted (in URL mode, then completed outside), declined, cancelled or withdrawn; "
        "abandoned by cancelled or failed work and withdrawn; late answers and a late completion "
        "after the work ended, ignored (the tool call of the cancelled work does not run); an answer "
        "racing the Client's own session/cancel",
        tool_calls=1,
        elicitations=1,
    ),
    _slice(
        "session",
        "close resume hold cancel fail answer_after_close",
        "session/close (stopping a prompt received, held, cancelled or not yet answered; then "
        "cancels; an inserted prompt answered after the close response), session/resume with and "
        "without replay",
        cancel_requests=1,
        closes=1,
        resumes=1,
        capacity=2,
    ),
    _slice(
        "overlap",
        "close resume overlap",
        "session/close or a second session/resume while a session/resume is being answered (the "
        "resume refused, or the later one)",
        cancels=0,
        closes=1,
        resumes=1,
        outputs=1,
        capacity=2,
    ),
    _slice(
        "closes",
        "close hold resume unknown unseen_end live_only",
        "session/close sent again while the session is closing, or once it is closed; a resume "
        "replaying more than one update, or leaving out a user message reported live only; work "
        "ending unseen while unknown is reported, and the close then answered with the state "
        "still unknown",
        cancels=0,
        closes=2,
        outputs=1,
        losses=1,
        capacity=2,
    ),
    _slice(
        "hook",
        "hook hold fail cancel meta hook_refusal",
        "foreground hook work while a prompt waits: then insertion, rejection (a hook's -32600 too) "
        "or cancellation; a metadata patch of the ended work's message after its idle (cancelled "
        "or not)",
        hooks=1,
        outputs=1,
    ),
    _slice(
        "reading_rows",
        "hold cancel bg_tool",
        "the rows only an alternative reading allows (so the default run fires every row): a "
        "prompt refused for the Agent's own reason after $/cancel_request "
        "(rejected-after-cancel-request=own-reason) and a listed background tool call that "
        "foreground work starts waiting on (waited-on-background=becomes-foreground); judged "
        "under those readings",
        background=1,
        cancels=0,
        cancel_requests=1,
        capacity=2,
        readings=(
            ("rejected-after-cancel-request", "own-reason"),
            ("waited-on-background", "becomes-foreground"),
        ),
    ),
    _slice(
        "own_work",
        "goal commands bare_error fail early_state unknown unseen",
        "foreground work the Agent starts itself (a goal pursued; also unreported while unknown is "
        "reported), an available_commands_update, the error stop reason without an error field, "
        "the initial idle before the session/new response",
        cancels=0,
        outputs=1,
        losses=1,
    ),
    _slice(
        "embedded",
        "terminal embed cancel",
        "a tool call whose only live work is the terminal it runs: the terminal listed, the tool "
        "call not, ending with the terminal (also across a cancel: listed work is not covered)",
        background=1,
    ),
    _slice(
        "receipt_order",
        "hold retry",
        "two prompts held and inserted in the order received, judged under the reading that lets "
        "the wire show that order (prompt-ahead-of-held=receipt-order: a later prompt answered while "
        "an earlier one still waits); the second may be a retry with the first one's content",
        prompts=2,
        cancels=0,
        capacity=2,
        readings=(("prompt-ahead-of-held", "receipt-order"),),
    ),
)
"""The default bound of the exhaustive mode: small slices of the model, each complete, that
together switch on every feature (``acp-model explore --slice NAME`` runs one). Hook work is
bounded by ``Config.hooks`` (intervals of hook work per run): without that bound the agent
could restart hook work forever while a prompt waits, and the state space would be infinite."""
SLICE_BY_NAME = {s.name: s for s in SLICES}

# -- the search ---------------------------------------------------------------------------------


@dataclass
class BfsResult:
    cfg: Config
    name: str
    seconds: float
    counterexamples: list[Counterexample]
    exercised: Counter[str]
    foreground: Counter[str]
    """Distinct states per foreground state the agent last reported."""
    rows: Counter[Row]
    events: Counter[str]
    """How often the search took each event (``State.events``: by ``actor.name``, and by
    ``actor.name[context]`` for the contexts the freedoms name)."""
    # the fields from here to ``bottom_cycles`` are ``stats_json``'s, in its order
    symmetry: bool
    reduce: str
    """The reduction the search ran with (``simulator.explore.por.REDUCTIONS``)."""
    one_side_states: int
    """States the partial-order reduction expanded on one side only."""
    unjudged_cycles: int
    """Bottom cycles of the reduced graph not judged (a state of them was expanded on one side)."""
    states: int
    transitions: int
    max_depth: int
    depth_limit: int | None
    complete: bool
    stop: str
    quiescent_states: int
    sccs: int
    nontrivial_sccs: int
    bottom_cycles: int
    graph: Any = None

    def stats_json(self) -> dict[str, Any]:
        names = [f.name for f in fields(self)]
        stats = names[names.index("symmetry") : names.index("bottom_cycles") + 1]
        return {
            "name": self.name,
            "bounds": self.cfg.to_json(),
            **{key: getattr(self, key) for key in stats},
            "foreground": dict(sorted(self.foreground.items())),
        }


@dataclass
class _Found:
    breach: Breach
    state: int
    event: Event | None
    hits: int = 1


@dataclass
class _Search:
    parent: array[int] = field(default_factory=lambda: array("l"))
    via: list[Event | None] = field(default_factory=list)
    depth: array[int] = field(default_factory=lambda: array("l"))
    src: array[int] = field(default_factory=lambda: array("l"))
    dst: array[int] = field(default_factory=lambda: array("l"))
    edge_event: list[Event] = field(default_factory=list)
    states: list[Any] = field(default_factory=list)
    quiet: list[int] = field(default_factory=list)
    found: dict[str, _Found] = field(default_factory=dict)
    one_side: bytearray | None = None
    """Under the partial-order reduction: 1 for each state expanded on one side only."""
    symmetry: bool = False
    stop: str = ""
    transitions: int = 0

    def path(self, state: int) -> list[Event]:
        out: list[Event] = []
        while state > 0:
            ev = self.via[state]
            assert ev is not None
            out.append(ev)
            state = self.parent[state]
        out.reverse()
        return out

    def note(self, breach: Breach, state: int, event: Event | None) -> None:
        got = self.found.get(breach.rule)
        if got is None:
            self.found[breach.rule] = _Found(breach, state, event)
        else:
            got.hits += 1


def explore(
    cfg: Config = SLICES[0].cfg,
    faults: frozenset[str] = frozenset(),
    *,
    depth: int | None = None,
    time_budget: float | None = None,
    symmetry: bool = False,
    monitors: bool = True,
    graph: bool = False,
    progress: Callable[[str], None] | None = None,
    name: str = "",
    max_states: int | None = MAX_STATES,
    reduce: str = "none",
) -> BfsResult:
    """Breadth-first search of every state reachable within ``cfg`` (and ``depth``)."""
    if reduce not in REDUCTIONS:
        raise ValueError(f"unknown reduction {reduce!r} ({', '.join(REDUCTIONS)})")
    if reduce != "none" and depth is not None:
        raise ValueError("the partial-order reduction does not combine with a depth limit")
    t0 = time.perf_counter()
    parts, s = search_states(
        cfg, faults, max_states, monitors, depth=depth, time_budget=time_budget, symmetry=symmetry,
        progress=progress, name=name, keep_edges=graph, por=reduce == "por",
    )  # fmt: skip
    complete = s.stop == "complete"
    sccs, nontrivial, cycles = _bottom_cycles(len(s.states), s.src, s.dst) if complete else (0, 0, [])
    unjudged = 0
    for members in cycles:  # under por, only a cycle of states expanded on both sides
        if s.one_side is not None and any(s.one_side[m] for m in members):
            unjudged += 1
        else:
            _judge_cycle(members, s, cfg, faults, monitors)
    found_list = [
        make_counterexample(
            rule,
            path,
            cfg,
            faults,
            mode="exhaustive",
            found_by=f"{name + ', ' if name else ''}depth {len(path)} (shortest)",
            original_length=len(path),
            hits=f.hits,
            fallback=f.breach,
        )
        for rule, f in sorted(s.found.items())
        for path in [s.path(f.state) + ([f.event] if f.event is not None else [])]
    ]
    agents = parts.agent.reps
    fg = [agents[st[0]].reported for st in s.states]  # the foreground state each agent last reported
    return BfsResult(
        cfg=cfg,
        name=name,
        seconds=time.perf_counter() - t0,
        counterexamples=found_list,
        exercised=parts.monitors.tally() if monitors else Counter(),
        foreground=Counter(fg),
        rows=parts.tally(),
        events=parts.events(context_takers()),
        symmetry=s.symmetry,
        reduce=reduce,
        one_side_states=sum(s.one_side) if s.one_side is not None else 0,
        unjudged_cycles=unjudged,
        states=len(s.states),
        transitions=s.transitions,
        max_depth=s.depth[-1],
        depth_limit=depth,
        complete=complete,
        stop=s.stop,
        quiescent_states=len(s.quiet),
        sccs=sccs,
        nontrivial_sccs=nontrivial,
        bottom_cycles=len(cycles),
        graph=_graph(s, name, fg) if graph else None,
    )


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector while the search runs. The search keeps
    millions of small tuples alive (states, index keys, memo entries); the collector would
    scan them again and again and find nothing, a quarter to a third of the search's time.
    What the search discards in cycles (copied monitor sets) waits for the collector's next
    full run after it."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            # freeze + unfreeze moves every tracked object into the oldest generation without
            # scanning it: otherwise the first young collection after the search would scan all
            # it allocated (7% of the search on ``core``) only to find them alive
            gc.freeze()
            gc.unfreeze()
            gc.enable()


Child = tuple[Event, Any, tuple[Breach, ...], tuple[Breach, ...]]
"""What a state's expansion yields per enabled event: (event, the next state or None where the
model refuses the move, the breaches the move makes, view breaches that count only while their
rule has not been found yet: the faulty view already differed there before the move)."""


def expander(parts: State, cfg: Config) -> tuple[Callable[..., None], Callable[[Any], bool]]:
    """``(expand, can_move)`` over integer states of ``parts`` (``simulator.explore.state``).

    ``expand(state, children)`` appends one ``Child`` per enabled event (who may move is the
    transport's ``schedule``, as for ``World.enabled``), in ``World.enabled``'s order (the
    Client's choices, the Agent's, then deliveries), and counts the moves it takes
    (``expand(state, children, sides)``: only the events of those sides, ``simulator.explore.por``)
    for coverage; ``can_move(state)`` says whether any event is enabled (what a search that
    stops at a depth limit asks of the states it does not expand)."""
    mon_step = parts.monitors.step
    agent, client = parts.agent, parts.client
    view_table, ref_table = parts.view_table, parts.reference_table
    views = view_table is not None
    cap = cfg.capacity
    ordered = cfg.transport == "fifo"

    def expand(st: Any, children: list[Child], sides: int = BOTH) -> None:
        a, c, ta, tc, m, v, r = st
        client_side = sides & CLIENT_SIDE
        agent_side = sides & AGENT_SIDE
        client_sends, agent_sends, to_agent, to_client = schedule(len(ta), len(tc), cap, ordered)
        if client_side and client_sends:
            for move in client.choices(c):
                move[4] += 1
                if move[1] < 0:
                    children.append((move[0], None, move[3], ()))
                    continue
                seq = move[2]
                v2, r2 = v, r
                if views:
                    for x in seq:
                        v2 = view_table.apply(v2, x)  # type: ignore[union-attr]
                        r2 = ref_table.apply(r2, x)  # type: ignore[union-attr]
                children.append((move[0], (a, move[1], ta + seq, tc, m, v2, r2), (), ()))
        if agent_side and agent_sends:
            for move in agent.choices(a):
                move[4] += 1
                if move[1] < 0:
                    children.append((move[0], None, move[3], ()))
                    continue
                m2 = m
                found: tuple[Breach, ...] = ()
                for x in move[2]:
                    hit = mon_step(m2, x)
                    hit[2] += 1
                    m2 = hit[0]
                    found += hit[1]
                children.append((move[0], (move[1], c, ta, tc + move[2], m2, v, r), found, ()))
        if agent_side and to_agent:
            x = ta[0]
            hit = mon_step(m, x)
            hit[2] += 1
            move = agent.receive(a, x)
            move[4] += 1
            if move[1] < 0:
                children.append((_TO_AGENT, None, move[3], ()))
            else:
                children.append((_TO_AGENT, (move[1], c, ta[1:], tc, hit[0], v, r), hit[1], ()))
        if client_side:
            for k in to_client:
                x = tc[k]
                v2, r2 = v, r
                found = ()
                maybe: tuple[Breach, ...] = ()
                if views:
                    v2 = view_table.apply(v, x)  # type: ignore[union-attr]
                    r2 = ref_table.apply(r, x)  # type: ignore[union-attr]
                    found = parts.compare(r2, v2)
                    if found:  # hits: a view rule counts where it newly differs
                        before = {b.rule for b in parts.compare(r, v)}
                        maybe = tuple(b for b in found if b.rule in before)
                        found = tuple(b for b in found if b.rule not in before)
                move = client.receive(c, x)
                move[4] += 1
                ev = ("net", "to_client", k)
                if move[1] < 0:
                    children.append((ev, None, move[3], ()))
                else:
                    children.append((ev, (a, move[1], ta, tc[:k] + tc[k + 1 :], m, v2, r2), found, maybe))

    def can_move(st: Any) -> bool:
        a, c, ta, tc = st[:4]
        client_sends, agent_sends, to_agent, to_client = schedule(len(ta), len(tc), cap, ordered)
        return bool(
            to_agent
            or to_client
            or (client_sends and client.choices(c))
            or (agent_sends and agent.choices(a))
        )

    return expand, can_move


def search_states(
    cfg: Config,
    faults: frozenset[str],
    max_states: int | None,
    monitors: bool = False,
    *,
    depth: int | None = None,
    time_budget: float | None = None,
    symmetry: bool = False,
    progress: Callable[[str], None] | None = None,
    name: str = "",
    keep_edges: bool = False,
    por: bool = False,
) -> tuple[State, _Search]:
    """The breadth-first search itself, without judging cycles or assembling coverage and
    counterexamples (``explore`` does): the numbered parts and the search (states, parent
    pointers, quiescent states, first breach of each rule, why it stopped). For callers that
    look at the states themselves too (``simulator.analysis.decidability_exhaustive``).
    Symmetry applies only where it can (see above); ``_Search.symmetry`` says whether it did."""
    parts = State(cfg, faults, monitors)
    s = _Search(one_side=bytearray() if por else None)
    s.symmetry = symmetry and COUNTER_AT >= 0 and not faults
    with parts.stepping(), collector_paused():
        t0 = time.perf_counter()
        expand, can_move = expander(parts, cfg)
        canon = parts.canonical if s.symmetry else None
        side = ample(parts, cfg) if por else None
        states, parent, via, depths = s.states, s.parent, s.via, s.depth
        root = parts.root()
        index: dict[Any, int] = {canon(root) if canon else root: 0}
        states.append(root)
        parent.append(-1)
        via.append(None)
        depths.append(0)
        i = d = transitions = 0
        level_end = 1  # states are numbered level by level: where the current depth's end
        cut = False
        stop = "complete"
        next_report = t0 + PROGRESS_EVERY
        limit = max_states if max_states is not None else 1 << 62
        deepest = depth if depth is not None else 1 << 62
        children: list[Child] = []
        while i < len(states):
            if i == level_end:
                d += 1
                level_end = len(states)
            if i & 63 == 0:
                now = time.perf_counter()
                if time_budget is not None and now - t0 > time_budget:
                    stop = "time budget"
                    break
                if progress is not None and now >= next_report:
                    next_report = now + PROGRESS_EVERY
                    progress(
                        f"bfs{' ' + name if name else ''}: {len(states):,} states, "
                        f"{transitions:,} transitions, depth {d}, queue {len(states) - i:,}, "
                        f"{len(states) / (now - t0):,.0f} states/s"
                    )
            if len(states) >= limit:
                stop = "state limit"
                break
            if d >= deepest:
                if not cut and can_move(states[i]):
                    cut = True
                i += 1
                continue
            children.clear()
            if side is None:
                expand(states[i], children)
            else:
                st = states[i]
                sd = side(st)
                expand(st, children, sd)
                if sd != BOTH and _seen_above(children, index, canon, level_end):
                    expand(st, children, BOTH ^ sd)  # the cycle proviso (see the module header)
                    sd = BOTH
                s.one_side.append(sd != BOTH)  # type: ignore[union-attr]
            if not children:
                s.quiet.append(i)
                for b in parts.monitors.finish(states[i][4]):
                    s.note(b, i, None)
                i += 1
                continue
            transitions += len(children)
            for ev, child, found, maybe in children:
                if maybe:  # evaluated before this move's own breaches are noted
                    found += tuple(b for b in maybe if b.rule not in s.found)
                for b in found:
                    s.note(b, i, ev)
                if child is None:
                    continue
                n = len(states)
                j = index.setdefault(canon(child) if canon else child, n)
                if j == n:
                    states.append(child)
                    parent.append(i)
                    via.append(ev)
                    depths.append(d + 1)
                s.src.append(i)
                s.dst.append(j)
                if keep_edges:
                    s.edge_event.append(ev)
            i += 1
        else:
            stop = "depth limit" if cut else "complete"
        s.stop, s.transitions = stop, transitions
    return parts, s


def _seen_above(children: list[Child], index: dict[Any, int], canon: Any, level_end: int) -> bool:
    """Whether a successor was already found at the current depth or above."""
    for _, child, _, _ in children:
        if child is not None:
            j = index.get(canon(child) if canon else child)
            if j is not None and j < level_end:
                return True
    return False


_TO_AGENT: Event = ("net", "to_agent", 0)


def _bottom_cycles(n: int, src: array[int], dst: array[int]) -> tuple[int, int, list[list[int]]]:
    """(SCC count, non-trivial SCC count, bottom non-trivial SCCs as sorted member lists).

    A state with no edge in or no edge out (among the states left) is on no cycle, so it is
    a component of its own; peeling such states off until none is left (numpy, a few passes
    over the edges) leaves only the states that may be on cycles, usually none or a few. The
    components of what is left are networkx's."""
    import networkx as nx

    kind = f"i{src.itemsize}"
    s_all = np.frombuffer(src, dtype=kind) if len(src) else np.zeros(0, dtype=np.int64)
    d_all = np.frombuffer(dst, dtype=kind) if len(dst) else np.zeros(0, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    s_e, d_e = s_all, d_all
    count = n
    while True:
        alive &= (np.bincount(s_e, minlength=n) > 0) & (np.bincount(d_e, minlength=n) > 0)
        left = int(alive.sum())
        if left == count:
            break
        count = left
        keep = alive[s_e] & alive[d_e]
        s_e, d_e = s_e[keep], d_e[keep]
    if not count:
        return n, 0, []
    g = nx.DiGraph(zip(s_e.tolist(), d_e.tolist(), strict=True))
    comps = [sorted(c) for c in nx.strongly_connected_components(g)]
    comp_of = np.full(n, -1, dtype=np.int64)
    for c, members in enumerate(comps):
        comp_of[members] = c
    # a component is left by an edge to another component or to a peeled state
    from_rest = alive[s_all]
    s_r, d_r = s_all[from_rest], d_all[from_rest]
    left_by = set(comp_of[s_r[comp_of[s_r] != comp_of[d_r]]].tolist())
    nontrivial = [len(m) > 1 or g.has_edge(m[0], m[0]) for m in comps]
    cycles = sorted(
        (m for c, m in enumerate(comps) if nontrivial[c] and c not in left_by), key=lambda m: m[0]
    )
    return n - count + len(comps), sum(nontrivial), cycles


def _judge_cycle(members: list[int], s: _Search, cfg: Config, faults: frozenset[str], monitors: bool) -> None:
    """Rules open in every judged state of a bottom cycle are breaches (see the docstring)."""
    common: dict[str, str] | None = None
    for state in members[:MAX_CYCLE_STATES]:
        run = replay(
            s.path(state), cfg, faults, skip_disabled=False, settle=False, monitors=monitors, record=False
        )
        ms = run.world.monitors
        if ms is None:
            return
        open_now = {f.rule: f.explanation for f in ms.finish(quiescent=True) if f.kind == "rule"}
        common = open_now if common is None else {r: e for r, e in common.items() if r in open_now}
        if not common:
            return
    for rule, why in sorted((common or {}).items()):
        if rule not in s.found:
            s.found[rule] = _Found(
                Breach(
                    rule,
                    "cycle",
                    f"{why}; open in every state of a cycle of {len(members)} states that never "
                    "becomes quiescent",
                ),
                members[0],
                None,
            )


def _graph(s: _Search, name: str, fg: list[str]) -> Any:
    """The search's state graph, its states named ``NAME:INDEX`` (``run`` joins the slices')."""
    import networkx as nx

    from simulator.peers.schedulers import describe

    g = nx.MultiDiGraph()
    quiet = set(s.quiet)
    for v in range(len(s.states)):
        g.add_node(f"{name}:{v}", depth=int(s.depth[v]), quiescent=v in quiet, foreground=fg[v], slice=name)
    for a, b, ev in zip(s.src, s.dst, s.edge_event, strict=True):
        g.add_edge(f"{name}:{a}", f"{name}:{b}", event=describe(ev))
    return g
