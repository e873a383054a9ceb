"""The exhaustive search's state: a compact, hashable tuple straight from the composed World.

Theory of operation
-------------------
A World is its parts, and each part is deterministic: what the Agent may do next, and what a
move sends, depend only on the Agent's own state; the same holds for the Client and for each
client view; a monitor's state after a message depends only on its state before it, on the
state of the monitors it requires (the shared facts) and on the message. So a state of the
search (``simulator.explore.bfs``) is a tuple of small integers

    (agent, client, to_agent, to_client, monitors, view, reference)

where each part state is numbered by its own hashable snapshot, and the messages in flight are
tuples of message numbers. A part's moves are computed once per distinct part state, by
stepping a copy of a representative object with the simulator's own code, and every later
state holding the same part state looks them up. Nothing here restates a rule: it only says
which objects are equal.

Identity of a part state:

- Agent: ``Agent.snapshot()``, plus its retained history (message numbers) when a resume with
  replay is possible (replay sends it again, so its content decides future messages);
- Client: ``Client.snapshot()`` (the client's choices never read its view);
- monitors: one ``MonitorSet`` per monitor class, holding that class and the classes it
  requires. Monitors interact only through the ones they require (``properties.engine``), so
  such a set steps its monitor exactly as the whole set does, and the state of every monitor
  is the tuple of those sets' ``state_key()`` numbers (numbered in turn). A set's findings come
  in monitor order, as the whole set's;
- client view (only with a faulty client view, when views decide findings): ``snapshot()`` and
  the requests it still awaits a response for;
- message: its sender and JSON text (the wire builds every message with its fields in one
  order, so equal messages have equal text).

Counting: every memoized move is a small list whose last slots count how often the search took
it; coverage (machine rows, rules exercised, events taken) is the per-move figures
multiplied by those counts (``tally``, ``events``), which equals counting at every step.

Must not know: the search order, files or printing.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import orjson

from model.core import ProtocolViolation
from properties.clientview import CLIENT_FAULTS
from properties.engine import MonitorSet
from simulator.explore.common import Breach, new_monitors
from simulator.explore.coverage import Row, recording
from simulator.peers.agent import Agent
from simulator.peers.client import BlindView
from simulator.peers.config import SMALL, Config
from simulator.peers.world import World

SHIFT = 32
"""Memo keys pack (part state, message number) into one int: ``part << SHIFT | message``."""
BROKEN = -1
"""The part-state number of a move the model refuses (the world stops there)."""

# A memoized move: [event, next part state (or BROKEN), messages sent, breaches, count, rows fired]
# (a list so the search counts in place: ``move[4] += 1``).
Move = list[Any]
# A context of an event (``simulator.explore.coverage.CONTEXTS``): (peer, event) -> whether it holds
Context = Callable[[Any, Any], bool]
# A step of one class's set: (its next number, breaches, exercised rule counts)
Local = tuple[int, tuple[Breach, ...], tuple[tuple[str, int], ...]]


def _counter_position() -> int:
    """Where ``Agent.snapshot()`` holds the message-ID counter (found by probing, not assumed)."""
    probe = Agent(SMALL)
    probe.next_msg = -7_654_321
    snap = probe.snapshot()
    hits = [i for i, v in enumerate(snap) if v == -7_654_321]
    return hits[0] if len(hits) == 1 else -1


COUNTER_AT = _counter_position()
"""Where ``Agent.snapshot()`` holds the message-ID counter (-1: not found, no symmetry)."""
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


class Numbered:
    """Distinct values of one kind: a representative object and a number per key."""

    def __init__(self) -> None:
        self.reps: list[Any] = []
        self.keys: list[Any] = []
        self.ids: dict[Any, int] = {}

    def number(self, key: Any, rep: Any) -> int:
        got = self.ids.get(key)
        if got is None:
            got = self.ids[key] = len(self.reps)
            self.reps.append(rep)
            self.keys.append(key)
        return got


class Messages(Numbered):
    """Wire messages, numbered by sender and JSON text (orjson: a tenth of the cost of ``repr``)."""

    def of(self, sender: str, msg: dict[str, Any]) -> int:
        try:
            text: bytes | str = orjson.dumps(msg)
        except TypeError:  # not JSON data (a hand-made test message): its repr
            text = repr(msg)
        return self.number((sender, text), msg)


class Peer(Numbered):
    """One peer's states (the Agent's or the Client's), numbered, with memoized moves: the
    events it may choose in each state (``choices``) and what receiving a message does
    (``receive``)."""

    def __init__(self, side: str, msgs: Messages, history: bool = False) -> None:
        super().__init__()
        self.side = side
        self.msgs = msgs
        self.rows: list[Row] = []
        """The rows fired (``State.stepping``: while the search runs), one move at a time."""
        self.history = history
        self.moves: dict[int, list[Move]] = {}
        self.recv: dict[int, Move] = {}

    def id(self, peer: Any) -> int:
        key: Any = peer.snapshot()
        if self.history:
            key = (key, tuple([self.msgs.of("agent", m) for m in peer.history]))
        return self.number(key, peer)

    def _copy(self, n: int) -> Any:
        rep = self.reps[n]
        return rep.clone() if self.side == "agent" else rep.clone(rep.view)

    def choices(self, n: int) -> list[Move]:
        """The peer's enabled events in state ``n`` and where each leads (memoized). A move that
        needs a row the variant in force removed is not a move (``World.enabled``)."""
        moves = self.moves.get(n)
        if moves is None:
            moves = [self._move(self._copy(n), ev) for ev in self.reps[n].enabled()]
            if self.side == "agent":
                moves = [m for m in moves if not m[3] or not m[3][0].pruned]
            self.moves[n] = moves
        return moves

    def receive(self, n: int, x: int) -> Move:
        """The peer in state ``n`` receives message ``x`` (memoized)."""
        move = self.recv.get(n << SHIFT | x)
        if move is None:
            move = self.recv[n << SHIFT | x] = self._move(self._copy(n), x)
        return move

    def _move(self, new: Any, what: Any) -> Move:
        """Perform ``what`` (an event, or the number of a message received) on ``new``, a copy
        of a representative: the move it makes."""
        self.rows.clear()
        ev = what if isinstance(what, tuple) else None
        try:
            sent = (new.do(what[1], what[2]) if ev else new.receive(self.msgs.reps[what])) or []
            seq = tuple([self.msgs.of(self.side, m) for m in sent])
            move = [ev, self.id(new), seq, ()]
        except ProtocolViolation as exc:
            move = [ev, BROKEN, (), (Breach(exc.rule, "model", str(exc), exc.removed),)]
        fired = tuple(self.rows)
        self.rows.clear()
        return [*move, 0, fired]


class State:
    """Every part of the composed World, numbered, with memoized moves (see the module header)."""

    def __init__(self, cfg: Config, faults: frozenset[str], monitors: bool) -> None:
        """The parts of the initial World: views only with a faulty client view, the agent's
        history only where a resume replays it (see the module header)."""
        views = bool(faults & frozenset(CLIENT_FAULTS))
        history = "resume" in cfg.features and cfg.resumes > 0
        whole = new_monitors(monitors, cfg)
        world = World(cfg, faults, whole, record=False)
        self.msgs = Messages()
        self.agent = Peer("agent", self.msgs, history)
        self.client = Peer("client", self.msgs)
        self.root_agent = self.agent.id(world.agent)
        # the representative Client carries no view: its choices never read it
        self.root_client = self.client.id(world.client.clone(BlindView()))  # type: ignore[arg-type]
        self.monitors = Monitors(cfg, faults, whole, self.msgs)
        self.view_table: ViewTable | None = None
        self.reference_table: ViewTable | None = None
        if views:  # a faulty client view: the World keeps a reference view beside it
            assert world.reference is not None
            self.view_table = ViewTable(world.client.view, self.msgs)
            self.reference_table = ViewTable(world.reference, self.msgs)
        self.compared: dict[tuple[int, int], tuple[Breach, ...]] = {}
        self.dropped = world.dropped
        """The variant's dropped rules: ``compare_views`` sets their view breaches aside (as in
        ``World.step``)."""

    def root(self) -> tuple[Any, ...]:
        """The state of the initial World."""
        return (self.root_agent, self.root_client, (), (), 0, 0, 0)

    @contextmanager
    def stepping(self) -> Iterator[None]:
        """While the search runs: every machine row a peer fires is logged for coverage."""
        with recording() as rows:
            self.agent.rows = self.client.rows = rows
            yield

    def canonical(self, st: Any) -> Any:
        """The symmetry key of state ``st`` (``simulator.explore.bfs``): its parts spelled out,
        the message-ID counter left out, every message ID renamed by order of first appearance."""
        a, c, ta, tc, m, _, _ = st
        akey = self.agent.keys[a]
        hist: tuple[str, ...] = ()
        if self.agent.history:
            akey, held = akey
            hist = tuple([repr(self.msgs.reps[x]) for x in held])
        akey = (*akey[:COUNTER_AT], 0, *akey[COUNTER_AT + 1 :])
        flying = tuple([repr(self.msgs.reps[x]) for x in ta]), tuple([repr(self.msgs.reps[x]) for x in tc])
        return _rename((akey, self.client.keys[c], *flying, self.monitors.full_key(m), hist), {})

    def compare(self, r: int, v: int) -> tuple[Breach, ...]:
        """View breaches: where the faulty view ``v`` differs from the reference view ``r``."""
        got = self.compared.get((r, v))
        if got is None:
            from properties.viewcheck import compare_views

            assert self.view_table is not None and self.reference_table is not None
            found = compare_views(
                self.reference_table.reps[r].to_json(), self.view_table.reps[v].to_json(), self.dropped
            )
            got = self.compared[(r, v)] = tuple(Breach(rule, "view", why) for rule, why in found)
        return got

    def events(self, contexts: Mapping[str, Sequence[tuple[str, Context]]]) -> Counter[str]:
        """How often the search took each event, by ``actor.name`` (a message received:
        ``net.to_agent`` or ``net.to_client``), from the per-move counts as ``tally``; and, for
        each event name of ``contexts``, by ``actor.name[context]`` where the context holds of
        the acting peer's state (its representative) and the event."""
        out: Counter[str] = Counter()
        for peer, received in ((self.client, "net.to_client"), (self.agent, "net.to_agent")):
            taken = [
                (f"{ev[0]}.{ev[1]}", k, peer.reps[n], ev)
                for n, moves in peer.moves.items()
                for ev, _, _, _, k, _ in moves
            ]
            taken += [(received, move[4], peer.reps[key >> SHIFT], None) for key, move in peer.recv.items()]
            for name, k, rep, ev in taken:
                if k:
                    out[name] += k
                    for context, holds in contexts.get(name, ()):
                        if holds(rep, ev):
                            out[f"{name}[{context}]"] += k
        return out

    def tally(self) -> Counter[Row]:
        """The machine rows fired over every move the search took."""
        rows: Counter[Row] = Counter()
        for peer in (self.client, self.agent):
            for moves in (*peer.moves.values(), peer.recv.values()):
                for move in moves:
                    for row in move[5] if move[4] else ():
                        rows[row] += move[4]
        return rows


class Monitors:
    """The monitors' states: one set per monitor class, numbered; memoized steps (see above).

    ``step(m, x)`` is a list ``[next state, breaches, count, exercised]``; the search counts
    its uses in place (``count``)."""

    def __init__(self, cfg: Config, faults: frozenset[str], whole: MonitorSet, msgs: Messages) -> None:
        self.msgs = msgs
        self.base_exercised: Counter[str] = Counter(whole.exercised)
        """The rules the handshake exercised before the search."""
        required = {dep for m in whole.monitors for dep in m.REQUIRES}
        classes = [type(m) for m in whole.monitors if type(m) not in required]
        self._sets: list[Numbered] = []
        for cls in classes:
            # the same handshake as the whole set's, fed to a set of this class alone
            one = MonitorSet(
                [cls], from_start=whole.from_start, readings=whole.readings, variant=whole.variant
            )
            World(cfg, faults, one, record=False)
            one.take_new()
            one.exercised.clear()
            table = Numbered()
            table.number(one.state_key(), one)
            self._sets.append(table)
        self._states = Numbered()
        self._states.number((0,) * len(classes), None)
        self.parts: list[tuple[int, ...]] = self._states.keys
        """Per monitor state: the number of each class's set."""
        self._local: dict[tuple[int, int, int], Local] = {}
        self.steps: dict[int, list[Any]] = {}
        self.ends: dict[int, tuple[Breach, ...]] = {}
        self.ended: Counter[str] = Counter()
        """The rules judging states at quiescence exercised."""
        self.line = 1_000
        """The line each feed is given: later than any line a stored set holds."""

    def step(self, m: int, x: int) -> list[Any]:
        """Monitor state ``m`` fed message ``x`` (memoized)."""
        key = m << SHIFT | x
        hit = self.steps.get(key)
        if hit is None:
            new = []
            breaches: tuple[Breach, ...] = ()
            exercised: tuple[tuple[str, int], ...] = ()
            local = self._local
            for i, n in enumerate(self.parts[m]):
                got = local.get((i, n, x))
                if got is None:
                    got = self._feed(i, n, x)
                new.append(got[0])
                breaches += got[1]
                exercised += got[2]
            hit = self.steps[key] = [self._states.number(tuple(new), None), breaches, 0, exercised]
        return hit

    def _feed(self, i: int, n: int, x: int) -> Local:
        table = self._sets[i]
        ms = table.reps[n].clone(fresh=True)
        self.line += 1
        found = ms.feed(self.msgs.keys[x][0], self.msgs.reps[x], self.line)
        breaches = tuple(Breach(f.rule, "monitor", f.explanation) for f in found if f.kind == "rule")
        got = self._local[(i, n, x)] = (
            table.number(ms.state_key(), ms),
            breaches,
            tuple(ms.exercised.items()),
        )
        return got

    def finish(self, m: int) -> tuple[Breach, ...]:
        """The breaches of judging state ``m`` at quiescence (computed once per state)."""
        got = self.ends.get(m)
        if got is None:
            got = ()
            for table, n in zip(self._sets, self.parts[m], strict=True):
                ms = table.reps[n].clone(fresh=True)
                got += tuple(
                    Breach(f.rule, "eventually", f.explanation)
                    for f in ms.finish(quiescent=True)
                    if f.kind == "rule"
                )
                self.ended.update(ms.exercised)
            self.ends[m] = got
        return got

    def full_key(self, m: int) -> Any:
        """Every monitor set's ``state_key`` in state ``m`` (what symmetry renames)."""
        return tuple([table.keys[n] for table, n in zip(self._sets, self.parts[m], strict=True)])

    def tally(self) -> Counter[str]:
        """How often each rule's check was exercised over every step the search took."""
        out = Counter(self.base_exercised)
        out.update(self.ended)
        for _, _, n, ex in self.steps.values():
            for rule, k in ex if n else ():
                out[rule] += k * n
        return out


class ViewTable(Numbered):
    """Client views (faulty or reference), numbered, with memoized ``apply``, like the monitors.

    A view's identity is ``snapshot()`` plus the requests it still awaits a response for
    (``_pending``: they decide how a response is applied, and ``snapshot`` leaves them out).
    """

    def __init__(self, root: Any, msgs: Messages) -> None:
        super().__init__()
        self.number(self._key(root), root)
        self.steps: dict[int, int] = {}
        self.msgs = msgs

    @staticmethod
    def _key(view: Any) -> Any:
        pending = getattr(view, "_pending", {})
        return (view.snapshot(), frozenset((repr(k), v) for k, v in pending.items()))

    def apply(self, vid: int, x: int) -> int:
        key = vid << SHIFT | x
        hit = self.steps.get(key)
        if hit is None:
            view = copy.deepcopy(self.reps[vid])
            view.apply(self.msgs.keys[x][0], self.msgs.reps[x])
            hit = self.steps[key] = self.number(self._key(view), view)
        return hit
