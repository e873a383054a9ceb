"""Exhaustive exploration: breadth-first search over every World state within the bounds.

Theory of operation
-------------------
States are Worlds; a state's successors are the Worlds reached by each enabled event (the
state is forked, the fork stepped). Two states are the same when their *keys* are equal
(``_Keys.key``): the agent's and client's snapshots, the messages in flight, the monitors'
state, and two things the world's own ``snapshot`` leaves out or adds:

- the client's view is left out when the client is not faulty: then nothing reads it (the
  client's choices never depend on it and no view rule can break), so states that differ only
  in what has been drawn are merged, and the fork carries a view that ignores everything. With
  a faulty client view the view and the reference view are both in the key (they decide future
  view breaches).
- the agent's retained history is added when a resume with replay is possible (replay sends
  it again, so its content, not only its length, decides future messages).

Monitors are hash-consed and memoized (``_MonitorMemo``): each distinct monitor state
(``MonitorSet.state_key``) is kept once, each (state, message) pair is fed once, and a world
only carries the number of its monitor state. Monitors are deterministic, so this gives the
same states and findings as cloning the monitors at every step, for a fraction of the cost.

Symmetry (``symmetry=True``; off by default, it rarely pays): message IDs are fresh names
drawn from one counter (``msg_u_3``, ``msg_a_4`` ...). Two states that differ only by a
consistent renaming of those IDs, and in the counter itself, have the same futures up to
renaming (the monitors only compare IDs for equality), so the key renames every message ID by
order of first appearance, in the whole key including the monitors' state, and drops the
counter. Request, tool-call, terminal, permission and compaction IDs are not renamed (their
counters are also budgets). Event arguments never carry message IDs, so a path found under
symmetry replays exactly. Off with seeded bugs (some write literal IDs).

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

import copy
import re
import time
import tracemalloc
from array import array
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from properties.engine import MonitorSet
from properties.findings import Finding
from simulator.agent import Agent
from simulator.clientview import CLIENT_FAULTS
from simulator.config import SMALL, Config
from simulator.explore_common import Breach, Counterexample, make_counterexample, new_monitors, step_checked
from simulator.explore_coverage import Observer, Row, recording
from simulator.world import Event, World

MAX_STATES = 100_000
"""Default cap on distinct states per search: a seeded bug can make the state space infinite
(a compaction reopened forever), and the frontier of worlds costs memory."""
PROGRESS_EVERY = 2.0
"""Seconds between progress lines."""
MAX_CYCLE_STATES = 64
"""States of one bottom cycle on which "eventually" rules are judged (lowest indices first)."""


@dataclass(frozen=True)
class Slice:
    """A named bound: one configuration explored completely."""

    name: str
    cfg: Config
    purpose: str


SLICES: tuple[Slice, ...] = (
    Slice(
        "core",
        SMALL.with_(capacity=1, features=SMALL.features - {"fail"}),
        "a prompt held or inserted, session/cancel, a tool call with permission, a terminal",
    ),
    Slice(
        "prompts",
        SMALL.with_(
            prompts=2,
            tool_calls=0,
            permissions=0,
            background=0,
            cancel_requests=1,
            capacity=1,
            features=frozenset({"hold", "cancel"}),
        ),
        "two prompts: held and inserted in order, $/cancel_request, session/cancel",
    ),
    Slice(
        "output",
        SMALL.with_(
            background=0,
            permissions=0,
            cancels=0,
            notices=1,
            usages=1,
            outputs=2,
            capacity=1,
            features=frozenset({"chunks", "thought", "plan", "limits", "notice", "usage", "fail"}),
        ),
        "messages, chunks, thoughts, plans, stop reasons, errors and rejection, notices, usage",
    ),
    Slice(
        "background",
        SMALL.with_(
            tool_calls=0,
            permissions=0,
            background=2,
            cancels=0,
            outputs=0,
            capacity=1,
            features=frozenset({"terminal", "bg_tool", "subagent", "followup"}),
        ),
        "two background items (terminals, background tool calls, subagents), follow-up work",
    ),
    Slice(
        "compaction",
        SMALL.with_(
            tool_calls=0,
            permissions=0,
            background=0,
            compactions=1,
            losses=1,
            outputs=0,
            capacity=1,
            features=frozenset({"compaction", "unknown", "cancel"}),
        ),
        "compaction, loss and restoration of observability",
    ),
    Slice(
        "session",
        SMALL.with_(
            tool_calls=0,
            permissions=0,
            background=0,
            cancels=0,
            closes=1,
            resumes=1,
            outputs=1,
            capacity=2,
            features=frozenset({"close", "resume"}),
        ),
        "session/close, session/resume with and without replay",
    ),
)
"""The default bound of the exhaustive mode: small slices of the model, each complete, that
together switch on every feature but ``hook`` (``acp-model explore --slice NAME`` runs one).
``hook`` is left out because it makes the state space infinite: while a prompt waits the agent
may run hook work again and again, and each round grows the message counter and history."""
SLICE_BY_NAME = {s.name: s for s in SLICES}

# -- keys ---------------------------------------------------------------------------------------


def _counter_position() -> int:
    """Where ``Agent.snapshot()`` holds the message-ID counter (found by probing, not assumed)."""
    probe = Agent(SMALL)
    probe.next_msg = -7_654_321
    snap = probe.snapshot()
    hits = [i for i, v in enumerate(snap) if v == -7_654_321]
    return hits[0] if len(hits) == 1 else -1


_COUNTER_AT = _counter_position()
_MSG_ID = re.compile(r"msg_([a-z]+)_(\d+)")


def _rename(obj: Any, table: dict[str, str]) -> Any:
    """``obj`` with every message ID renamed by order of first appearance (``table``)."""
    t = type(obj)
    if t is tuple:
        return tuple([_rename(x, table) for x in obj])
    if t is str and "msg_" in obj:

        def sub(m: re.Match[str]) -> str:
            num = table.get(m.group(2))
            if num is None:
                num = table[m.group(2)] = str(len(table) + 1)
            return f"msg_{m.group(1)}_#{num}"

        return _MSG_ID.sub(sub, obj)
    if t is frozenset:
        return frozenset(_rename(x, table) for x in obj)
    return obj


class _Keys:
    """Builds state keys. A message is keyed by its ``repr`` (memoized per object: forks share
    the messages in flight); ``wire`` builds every message with its fields in a fixed order."""

    def __init__(self, cfg: Config, faults: frozenset[str], symmetry: bool) -> None:
        self.symmetry = symmetry and _COUNTER_AT >= 0 and not faults
        self.view = bool(faults & frozenset(CLIENT_FAULTS))
        self.history = "resume" in cfg.features and cfg.resumes > 0
        self._frozen: dict[int, tuple[Any, Any]] = {}

    def freeze(self, msg: Any) -> Any:
        got = self._frozen.get(id(msg))
        if got is not None and got[0] is msg:
            return got[1]
        if len(self._frozen) > 500_000:
            self._frozen.clear()
        frozen = repr(msg)  # dicts keep insertion order, and the wire builds them alike
        self._frozen[id(msg)] = (msg, frozen)
        return frozen

    def key(self, world: World, monitor_part: Any) -> Any:
        freeze = self.freeze
        agent = world.agent.snapshot()
        if self.symmetry:
            agent = (*agent[:_COUNTER_AT], 0, *agent[_COUNTER_AT + 1 :])
        extra: tuple[Any, ...] = ()
        if self.view:
            ref = world.reference
            extra = (world.client.view.snapshot(), ref.snapshot() if ref is not None else None)
        if self.history:
            extra = (*extra, tuple([freeze(m) for m in world.agent.history]))
        key = (
            agent,
            world.client.snapshot(),
            tuple([freeze(m) for m in world.net.to_agent]),
            tuple([freeze(m) for m in world.net.to_client]),
            monitor_part,
            extra,
        )
        if self.symmetry:
            return _rename(key, {})
        return key


class _MonitorMemo:
    """Hash-consed monitor states and memoized monitor transitions.

    Monitors are deterministic: the findings a message causes and the state after it depend
    only on the state before it (summarised by ``MonitorSet.state_key``) and the message. So
    each distinct monitor state is kept once (``sets[mid]``, never fed again) and each
    (state, message) pair is fed once; later worlds reuse the result. A world's monitors are a
    small ``_MonitorsRef`` naming its state by number.
    """

    def __init__(self, root: MonitorSet, freeze: Callable[[Any], Any]) -> None:
        self.sets: list[MonitorSet] = [root]
        self.keys: list[Any] = [root.state_key()]
        self.ids: dict[Any, int] = {self.keys[0]: 0}
        self.steps: dict[tuple[int, str, Any], tuple[int, list[Finding], tuple[tuple[str, int], ...]]] = {}
        self.ends: dict[int, list[Finding]] = {}
        self.exercised: Counter[str] = Counter(root.exercised)
        self.freeze = freeze
        self.fed = 0

    def feed(self, mid: int, sender: str, msg: Any, line: int) -> tuple[int, list[Finding]]:
        k = (mid, sender, self.freeze(msg))
        hit = self.steps.get(k)
        if hit is None:
            self.fed += 1
            ms = self.sets[mid].clone()
            ms.exercised.clear()
            ms.findings = []
            found = ms.feed(sender, msg, line)
            skey = ms.state_key()
            nid = self.ids.get(skey)
            if nid is None:
                nid = len(self.sets)
                self.ids[skey] = nid
                self.sets.append(ms)
                self.keys.append(skey)
            hit = (nid, found, tuple(ms.exercised.items()))
            self.steps[k] = hit
        ex = self.exercised
        for rule, n in hit[2]:
            ex[rule] += n
        return hit[0], hit[1]

    def finish(self, mid: int) -> list[Finding]:
        """The findings of judging state ``mid`` at quiescence (computed once per state)."""
        got = self.ends.get(mid)
        if got is None:
            ms = self.sets[mid].clone()
            ms.exercised.clear()
            got = [f for f in ms.finish(quiescent=True) if f.kind == "rule"]
            self.ends[mid] = got
            self.exercised.update(ms.exercised)
        return got


class _MonitorsRef:
    """What ``World.monitors`` holds during the search: a monitor state by number."""

    __slots__ = ("memo", "mid")

    def __init__(self, memo: _MonitorMemo, mid: int) -> None:
        self.memo = memo
        self.mid = mid

    def feed(self, sender: str, msg: Any, line: int) -> list[Finding]:
        self.mid, found = self.memo.feed(self.mid, sender, msg, line)
        return found


class _ViewMemo:
    """Hash-consed client views (faulty or reference) and memoized ``apply``, like the monitors.

    A view's identity is ``ClientView.snapshot()`` plus the requests it still awaits a response
    for (``_pending``: they decide how a response is applied, and ``snapshot`` leaves them out).
    Also memoizes the comparison of a faulty view with the reference (``compare``).
    """

    def __init__(self, root: Any, freeze: Callable[[Any], Any]) -> None:
        self.views: list[Any] = [root]
        self.ids: dict[Any, int] = {self._key(root): 0}
        self.steps: dict[tuple[int, str, Any], int] = {}
        self.json: dict[int, Any] = {}
        self.compared: dict[tuple[int, int], list[tuple[str, str]]] = {}
        """(reference view, this view) -> the view findings (used on the faulty view's memo)."""
        self.freeze = freeze

    @staticmethod
    def _key(view: Any) -> Any:
        pending = getattr(view, "_pending", {})
        return (view.snapshot(), frozenset((repr(k), v) for k, v in pending.items()))

    def apply(self, vid: int, sender: str, msg: Any) -> int:
        k = (vid, sender, self.freeze(msg))
        hit = self.steps.get(k)
        if hit is None:
            view = copy.deepcopy(self.views[vid])
            view.apply(sender, msg)
            key = self._key(view)
            hit = self.ids.get(key)
            if hit is None:
                hit = len(self.views)
                self.ids[key] = hit
                self.views.append(view)
            self.steps[k] = hit
        return hit

    def to_json(self, vid: int) -> Any:
        got = self.json.get(vid)
        if got is None:
            got = self.json[vid] = self.views[vid].to_json()
        return got


class _ViewRef:
    """What ``Client.view`` / ``World.reference`` hold during the search: a view by number."""

    __slots__ = ("memo", "vid")

    def __init__(self, memo: _ViewMemo, vid: int) -> None:
        self.memo = memo
        self.vid = vid

    def apply(self, sender: str, message: Any) -> None:
        self.vid = self.memo.apply(self.vid, sender, message)

    def snapshot(self) -> Any:
        return self.vid

    def to_json(self) -> Any:
        return self.memo.to_json(self.vid)


class _SearchWorld(World):
    """A World whose view comparison is memoized per (reference view, faulty view) pair."""

    __slots__ = ()

    def view_findings(self) -> list[tuple[str, str]]:
        ref = self.reference
        view = self.client.view
        if isinstance(ref, _ViewRef) and isinstance(view, _ViewRef):
            key = (ref.vid, view.vid)
            compared = view.memo.compared
            got = compared.get(key)
            if got is None:
                got = compared[key] = World.view_findings(self)
            return got
        return World.view_findings(self)


class _NullView:
    """A client view that ignores everything (a fault-free client's view decides nothing)."""

    def apply(self, sender: str, message: Any) -> None:
        return None

    def snapshot(self) -> Any:
        return ()

    def to_json(self) -> dict[str, Any]:
        return {}


def _fork(world: World) -> World:
    """A copy of ``world`` that ``step`` may change (immutable parts shared)."""
    new = type(world).__new__(type(world))
    for name in World.__slots__:  # immutable fields are shared; the mutable ones replaced below
        setattr(new, name, getattr(world, name))
    new.agent = world.agent.clone()
    view: Any = world.client.view
    if isinstance(view, _ViewRef):
        view = _ViewRef(view.memo, view.vid)
    elif not isinstance(view, _NullView):
        view = copy.deepcopy(view)
    new.client = world.client.clone(view)
    new.net = world.net.clone()
    new.transcript = []
    ref = world.monitors
    if isinstance(ref, _MonitorsRef):
        new.monitors = _MonitorsRef(ref.memo, ref.mid)  # type: ignore[assignment]
    reference: Any = world.reference
    if isinstance(reference, _ViewRef):
        new.reference = _ViewRef(reference.memo, reference.vid)  # type: ignore[assignment]
    elif reference is not None:
        new.reference = copy.deepcopy(reference)
    new.record = False
    new.view_breaches = dict(world.view_breaches)
    return new


# -- the search ---------------------------------------------------------------------------------


@dataclass
class BfsResult:
    cfg: Config
    faults: frozenset[str]
    symmetry: bool
    states: int
    transitions: int
    max_depth: int
    seconds: float
    complete: bool
    stop: str
    depth_limit: int | None
    quiescent_states: int
    sccs: int
    nontrivial_sccs: int
    bottom_cycles: int
    counterexamples: list[Counterexample]
    exercised: Counter[str]
    events: Counter[str]
    foreground: Counter[str]
    """Distinct states per foreground state the agent last reported."""
    graph: Any = None
    name: str = ""
    entity: Counter[str] = field(default_factory=Counter)
    rows: Counter[Row] = field(default_factory=Counter)
    stored_bytes: int | None = None
    """Traced memory right after the search, frontier emptied (only when tracemalloc runs):
    the state index, parent pointers, depths and edges."""
    _search: Any = None

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else 0.0

    def stats_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bounds": self.cfg.to_json(),
            "symmetry": self.symmetry,
            "states": self.states,
            "transitions": self.transitions,
            "max_depth": self.max_depth,
            "depth_limit": self.depth_limit,
            "complete": self.complete,
            "stop": self.stop,
            "quiescent_states": self.quiescent_states,
            "sccs": self.sccs,
            "nontrivial_sccs": self.nontrivial_sccs,
            "bottom_cycles": self.bottom_cycles,
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
    fg: list[str] = field(default_factory=list)
    src: array[int] = field(default_factory=lambda: array("l"))
    dst: array[int] = field(default_factory=lambda: array("l"))
    edge_event: list[Event] = field(default_factory=list)
    quiet: list[int] = field(default_factory=list)
    found: dict[str, _Found] = field(default_factory=dict)

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
) -> BfsResult:
    """Breadth-first search of every state reachable within ``cfg`` (and ``depth``)."""
    with recording() as rows:
        result = _explore(
            cfg, faults, depth, time_budget, symmetry, monitors, progress, name, rows, max_states
        )
    if graph:
        result.graph = _graph(result._search, result)
    result._search = None
    return result


def _explore(
    cfg: Config,
    faults: frozenset[str],
    depth: int | None,
    time_budget: float | None,
    symmetry: bool,
    monitors: bool,
    progress: Callable[[str], None] | None,
    name: str,
    rows: Counter[Row],
    max_states: int | None,
) -> BfsResult:
    t0 = time.perf_counter()
    observer = Observer()
    keys = _Keys(cfg, faults, symmetry)
    root: World = _SearchWorld(cfg, faults, new_monitors(monitors), record=False)
    if not keys.view:
        root.client.view = _NullView()  # type: ignore[assignment]
    else:
        root.client.view = _ViewRef(_ViewMemo(root.client.view, keys.freeze), 0)  # type: ignore[assignment]
        if root.reference is not None:
            root.reference = _ViewRef(_ViewMemo(root.reference, keys.freeze), 0)  # type: ignore[assignment]
    memo: _MonitorMemo | None = None
    if root.monitors is not None:
        memo = _MonitorMemo(root.monitors, keys.freeze)
        root.monitors = _MonitorsRef(memo, 0)  # type: ignore[assignment]

    def monitor_part(w: World) -> Any:
        ref = w.monitors
        if not isinstance(ref, _MonitorsRef):
            return None
        return ref.memo.keys[ref.mid] if keys.symmetry else ref.mid

    index: dict[Any, int] = {keys.key(root, monitor_part(root)): 0}
    s = _Search()
    s.parent.append(-1)
    s.via.append(None)
    s.depth.append(0)
    s.fg.append(root.agent.reported)
    queue: deque[tuple[World, int]] = deque([(root, 0)])
    events: Counter[str] = Counter()
    transitions = 0
    max_depth = 0
    stop = "complete"
    cut = False
    pops = 0
    next_report = t0 + PROGRESS_EVERY
    note = s.note
    while queue:
        pops += 1
        if pops & 63 == 0:
            now = time.perf_counter()
            if time_budget is not None and now - t0 > time_budget:
                stop = "time budget"
                break
            if progress is not None and now >= next_report:
                next_report = now + PROGRESS_EVERY
                rate = len(s.parent) / (now - t0)
                progress(
                    f"bfs{' ' + name if name else ''}: {len(s.parent):,} states, "
                    f"{transitions:,} transitions, depth {max_depth}, queue {len(queue):,}, "
                    f"{rate:,.0f} states/s"
                )
        if max_states is not None and len(s.parent) >= max_states:
            stop = "state limit"
            break
        world, i = queue.popleft()
        d = s.depth[i]
        enabled = world.enabled()
        if depth is not None and d >= depth:
            cut = cut or bool(enabled)
            continue
        if not enabled:
            s.quiet.append(i)
            ref = world.monitors
            if isinstance(ref, _MonitorsRef) and world.broken is None:
                for f in ref.memo.finish(ref.mid):
                    note(Breach(f.rule, "eventually", f.explanation), i, None)
            continue
        for ev in enabled:
            child = _fork(world)
            if ev[0] == "agent":
                sent = child.net.to_client
                before = len(sent)
                found = step_checked(child, ev)
                observer.observe(sent, before)
            else:
                found = step_checked(child, ev)
            transitions += 1
            events[f"{ev[0]}.{ev[1]}"] += 1
            broken = False
            for b in found:
                note(b, i, ev)
                broken = broken or b.source == "model"
            if broken:
                continue
            k = keys.key(child, monitor_part(child))
            j = index.get(k)
            if j is None:
                j = len(s.parent)
                index[k] = j
                s.parent.append(i)
                s.via.append(ev)
                s.depth.append(d + 1)
                s.fg.append(child.agent.reported)
                if d + 1 > max_depth:
                    max_depth = d + 1
                queue.append((child, j))
            s.src.append(i)
            s.dst.append(j)
            s.edge_event.append(ev)
    else:
        stop = "depth limit" if cut else "complete"
    searched_rows = Counter(rows)  # before the replays below
    complete = stop == "complete"
    states = len(s.parent)
    queue.clear()
    stored = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else None
    sccs = nontrivial = bottom = 0
    if complete:
        sccs, nontrivial, cycles = _bottom_cycles(states, s.src, s.dst)
        bottom = len(cycles)
        for members in cycles:
            _judge_cycle(members, s, cfg, faults, monitors)
    seconds = time.perf_counter() - t0
    found_list = []
    for rule in sorted(s.found):
        f = s.found[rule]
        path = s.path(f.state) + ([f.event] if f.event is not None else [])
        found_list.append(
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
        )
    result = BfsResult(
        cfg=cfg,
        faults=faults,
        symmetry=keys.symmetry,
        states=states,
        transitions=transitions,
        max_depth=max_depth,
        seconds=seconds,
        complete=complete,
        stop=stop,
        depth_limit=depth,
        quiescent_states=len(s.quiet),
        sccs=sccs,
        nontrivial_sccs=nontrivial,
        bottom_cycles=bottom,
        counterexamples=found_list,
        exercised=memo.exercised if memo is not None else Counter(),
        events=events,
        foreground=Counter(s.fg),
        name=name,
        entity=observer.entity,
        rows=searched_rows,
        stored_bytes=stored,
    )
    result._search = s
    return result


def _bottom_cycles(n: int, src: array[int], dst: array[int]) -> tuple[int, int, list[list[int]]]:
    """(SCC count, non-trivial SCC count, bottom non-trivial SCCs as sorted member lists)."""
    start = [0] * (n + 1)
    for a in src:
        start[a + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    adj = [0] * len(src)
    fill = start[:]
    self_loop = bytearray(n)
    for a, b in zip(src, dst, strict=True):
        adj[fill[a]] = b
        fill[a] += 1
        if a == b:
            self_loop[a] = 1
    comp = _tarjan(n, start, adj)
    ncomp = max(comp) + 1 if n else 0
    size = [0] * ncomp
    for c in comp:
        size[c] += 1
    leaves = bytearray(ncomp)
    for a, b in zip(src, dst, strict=True):
        if comp[a] != comp[b]:
            leaves[comp[a]] = 1
    nontrivial_ids = {c for c in range(ncomp) if size[c] > 1}
    nontrivial_ids |= {comp[v] for v in range(n) if self_loop[v]}
    members: dict[int, list[int]] = {}
    for v in range(n):
        c = comp[v]
        if c in nontrivial_ids and not leaves[c]:
            members.setdefault(c, []).append(v)
    cycles = sorted(members.values(), key=lambda m: m[0])
    return ncomp, len(nontrivial_ids), cycles


def _tarjan(n: int, start: list[int], adj: list[int]) -> list[int]:
    """Iterative Tarjan: the component number of every vertex."""
    index = [-1] * n
    low = [0] * n
    on = bytearray(n)
    comp = [-1] * n
    stack: list[int] = []
    counter = 0
    ncomp = 0
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, start[root])]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on[root] = 1
        while work:
            v, pos = work[-1]
            end = start[v + 1]
            pushed = False
            while pos < end:
                w = adj[pos]
                pos += 1
                if index[w] == -1:
                    work[-1] = (v, pos)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on[w] = 1
                    work.append((w, start[w]))
                    pushed = True
                    break
                if on[w] and index[w] < low[v]:
                    low[v] = index[w]
            if pushed:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on[w] = 0
                    comp[w] = ncomp
                    if w == v:
                        break
                ncomp += 1
    return comp


def _judge_cycle(members: list[int], s: _Search, cfg: Config, faults: frozenset[str], monitors: bool) -> None:
    """Rules open in every judged state of a bottom cycle are breaches (see the docstring)."""
    from simulator.explore_common import replay

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


def _graph(s: _Search, result: BfsResult) -> Any:
    import networkx as nx

    from simulator.schedulers import describe

    g = nx.MultiDiGraph()
    quiet = set(s.quiet)
    for v in range(result.states):
        g.add_node(v, depth=int(s.depth[v]), quiescent=v in quiet, foreground=s.fg[v])
    for a, b, ev in zip(s.src, s.dst, s.edge_event, strict=True):
        g.add_edge(a, b, event=describe(ev))
    g.graph.update(
        {
            "states": result.states,
            "transitions": result.transitions,
            "quiescent_states": result.quiescent_states,
            "sccs": result.sccs,
            "nontrivial_sccs": result.nontrivial_sccs,
            "bottom_cycles": result.bottom_cycles,
            "complete": result.complete,
            "symmetry": result.symmetry,
        }
    )
    return g
