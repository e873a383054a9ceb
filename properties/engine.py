"""The monitor engine: one online pass over a stream of wire messages.

Owns: the ``Monitor`` base class, the ``MonitorSet`` that feeds every monitor one message at a
time, the count of how often each rule's check was exercised, and the split between
"certain now" breaches (reported by ``feed``) and "eventually" obligations (reported by
``finish``). The same code serves recorded transcripts (``acp-model check``) and simulated runs.
An obligation still open when ``finish`` runs is a breach at the line that opened it when the
simulator proved quiescence, a breach at the input's last line when the input was declared
complete for its session (``check --complete``; ``record`` and ``drive`` when the Agent exited
or the session was closed), and information (kind ``open``) otherwise.

Proxy-view semantics: lines arrive in the order a proxy between the peers saw them (agent lines
in the agent's send order, client lines in the agent's receive order). A monitor flags only what
is certain from that order.

Dispatch (the hot path): a monitor does not look at every message. It lists, in ``handlers()``,
the message kinds it wants, and one table per kind is built once per list of monitor classes:

- ``update``: ``session/update`` notifications from the Agent, keyed by ``sessionUpdate``; the
  handler gets ``(sessionId, update, line, message)``;
- ``client-request`` / ``agent-request`` / ``client-notification`` / ``agent-notification``,
  keyed by method; the handler gets ``(params.sessionId or None, params, line, message)``;
- ``agent-response`` / ``client-response``: a response, keyed by the method of the request it
  answers (the set pairs them by JSON-RPC id per direction); the handler gets
  ``(sessionId of the request or None, request, line, response)``.

So ``feed`` does one dictionary lookup per message and calls only the handlers registered for
it, in monitor order. The tables are built once per list of monitor classes as (function,
monitor index) pairs, so every set of those classes, clones included, shares them (a clone
costs no table work). A handler named in its monitor's ``GATES`` is in the tables only while
a given attribute of the monitor is truthy (say, while a resume is unanswered): one version of
the tables per gate state, and the monitor calls ``regate()`` when the attribute may have
changed. A gated handler may also name, in ``WAKES``, an update field that reaches it while
its gate is closed: a required monitor that reads that field anyway (the facts tracker reads
every state_update's ``background``) passes such an update to ``MonitorSet.wake``, which calls
the sleeping handlers, so the others pay nothing for a field that is mostly absent. A monitor
that overrides ``on_message`` instead still sees every message (the old, simple interface,
kept for small test monitors).

Feeding a transcript: ``feed`` returns the findings a message made certain; ``push`` is
``feed`` without handing them back (they wait for the next ``feed`` or ``take_new``).

Shared context: a monitor may name other monitor classes in ``REQUIRES`` (for instance a tracker
of per-session facts that several monitors read). The set creates each required class once,
before the monitors that need it, and dispatches to it *after* them, so a monitor always reads
the context as it stood before the current message.

Exercise counts: ``exercise(rule)`` counts one rule; ``exercise_all(group)`` counts a group of
restated rules with one update (hot paths increment a ``rule_group`` key directly). Both go to
plain ``defaultdict(int)`` tables (an increment there costs less than half of one on a
``Counter``), merged into the ``exercised`` Counter whenever it is read, so clearing that
Counter resets the counts.

Cloning for explorers: ``MonitorSet.clone()`` is an independent copy (each monitor's ``clone``
copies its plain containers), and ``state_key()`` a hashable summary of everything that can
change future findings (counters and line numbers only in the relative form the checks use).
An explorer that keeps each distinct set once feeds ``derive()``d successors instead: they
share their parent's monitors and copy one only when the message reaches it, and
``interned_key()`` numbers each monitor's key once, reusing the parent's numbers for what is
shared. A monitor whose key reads a required monitor's counters says so (``KEY_CONTEXT``) and
is keyed again when that one's ``context_key()`` changes. An explorer that steps monitors one
at a time asks which monitors a message reaches (``reaches``), feeds a set that dispatches to
some of them only (``derive(only=...)``: its findings and counts are theirs), and combines a
monitor's copy with another set's required monitors (``graft``).

Construction options: ``MonitorSet(monitors, from_start=True)`` says every session in the stream
is seen from its creation (a simulated run); otherwise a ``session/new`` response shows it per
session. It lets the prompt monitor judge replayed IDs (ACC-11). ``readings={NAME: ALTERNATIVE}``
chooses among the readings of ambiguous spec text (``properties.readings``; every reading not
given takes its default, an unknown one raises ``ReadingError``). The set keeps the full mapping
(``readings``); a monitor asks ``self.reading(NAME)`` and names the reading on every finding
whose verdict depends on it (``breach(..., readings=(NAME,))``). Clones and derived sets share
the readings: they are configuration, not state, so no state key includes them.

Variants: ``MonitorSet(variant=...)`` (default None: the spec as written; ``properties.variants``)
sets aside every finding of a rule the variant dropped (``set_aside`` counts them by rule, and
the process-wide ``SET_ASIDE`` too; they are neither returned nor kept in ``findings``), and
hands the table monitor the variant's machine tables (``tables``; empty: the model's own) and
every monitor the rules between machines in force (``Monitor.between``, ``model.between``).
Like readings, the variant is configuration: clones and derived sets share it.

Must not know: files, JSON decoding, or how the messages were produced.
"""

from __future__ import annotations

import copy
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, TypeVar

from model.between import Rules
from model.core import MachineSpec
from properties.findings import Finding
from properties.readings import resolve
from properties.variants import Variant, rules_of

Message = dict[str, Any]
Handler = Callable[[Any, Any, int, Message], None]
"""``handler(session_id, payload, line, message)``; see the module docstring for the payloads."""

TABLES = (
    "update",
    "client-request",
    "agent-request",
    "client-notification",
    "agent-notification",
    "agent-response",
    "client-response",
)

_EMPTY: dict[str, Any] = {}
M = TypeVar("M", bound="Monitor")
_TABLES: dict[tuple[type[Monitor], ...], _Tables] = {}
"""Dispatch tables by monitor classes in order: handlers are methods, so the tables (functions
and monitor indices) depend only on the classes, and every set of the same classes shares them."""


_GROUPS: dict[str, tuple[str, ...]] = {}

SET_ASIDE: Counter[str] = Counter()
"""Findings of dropped rules set aside by every set of this process, by rule (an explorer reads
which dropped rules its runs broke: the per-set counts are scattered over copies)."""


def rule_group(*rules: str) -> str:
    """A key of ``Monitor._gx`` that exercises every rule of ``rules`` with one increment. It
    is a string because a string caches its hash, while a tuple key is hashed again, element
    by element, on every increment."""
    key = "+".join(rules)
    _GROUPS[key] = rules
    return key


def freeze(value: Any) -> Any:
    """A hashable form of plain data (dicts, lists, sets, tuples, scalars)."""
    if isinstance(value, dict):
        return ("{", tuple(sorted(((repr(k), freeze(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, list | tuple):
        return ("[", tuple(freeze(v) for v in value))
    if isinstance(value, set | frozenset):
        return ("<", tuple(sorted((freeze(v) for v in value), key=repr)))
    if isinstance(value, Monitor | MonitorSet):
        return None
    if hasattr(value, "__slots__"):
        return (type(value).__name__, tuple(freeze(getattr(value, s, None)) for s in value.__slots__))
    return value


class Monitor:
    """Base class of every monitor.

    Subclasses list the rule IDs they implement in ``RULES`` (and the MAY permissions they must
    tolerate in ``TOLERATES``), register handlers with ``handlers()`` (or override
    ``on_message``), and judge "eventually" rules in ``at_end``. They report through
    ``self.breach`` / ``self.eventually`` and count a rule as exercised with ``self.exercise``
    whenever its trigger condition is met.
    """

    RULES: ClassVar[tuple[str, ...]] = ()
    TOLERATES: ClassVar[tuple[str, ...]] = ()
    TABLES: ClassVar[tuple[MachineSpec, ...]] = ()
    """The machine tables of ``model/`` this monitor fires: their rules are reported from the
    tables' violations, never named by the monitor's own code (a test reads the source)."""
    REQUIRES: ClassVar[tuple[type[Monitor], ...]] = ()
    KEY_CONTEXT: ClassVar[bool] = False
    """True when ``state_key`` reads a required monitor's state (say, counters kept by the
    shared facts, compared with this monitor's own): a copy-on-write set (``derive``) then
    re-keys this monitor whenever that context was copied, instead of reusing its key."""
    GATES: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(handler method name, attribute name) pairs: the set calls that handler only while the
    attribute is truthy (a handler that has nothing to do most of the time then costs nothing).
    The monitor must call ``regate()`` whenever the attribute's truth may have changed."""
    WAKES: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(gated handler method name, update field) pairs: while that handler's gate is closed,
    an update carrying the field still reaches it through ``MonitorSet.wake`` (called by the
    required monitor that reads the field, for the field names it documents). The gate's
    attribute must stay true once it is true (a woken handler must not run twice for one
    message)."""

    def __init__(self, owner: MonitorSet) -> None:
        self._attach(owner)

    def _attach(self, owner: MonitorSet) -> None:
        """Belong to ``owner`` (also used by ``clone``)."""
        self._owner = owner
        self._ex = owner._counts
        """The owner's pending exercise counts (hot paths increment it directly: a plain
        ``defaultdict(int)`` is about twice as fast to increment as a ``Counter``)."""
        self._gx = owner._groups
        """Counts of rule groups exercised together (``exercise_all``), merged on reading."""

    # -- hooks ---------------------------------------------------------------------------
    def handlers(self) -> Iterable[tuple[str, str, Handler]]:
        """``(table, key, bound method of self)`` for every message kind this monitor wants. The
        answer must depend on the class only (sets of the same classes share the tables)."""
        return ()

    def on_message(self, sender: str, msg: Message, line: int) -> None:
        """Called for every decoded JSON-RPC message when a subclass overrides it."""

    def at_end(self, quiescent: bool) -> None:
        """Judge "eventually" rules. ``quiescent``: the simulator proved nothing more can happen
        (open obligations are breaches); otherwise the input merely ended (they are ``open``)."""

    # -- copying for explorers -----------------------------------------------------------
    def clone(self: M, owner: MonitorSet) -> M:
        """An independent copy attached to ``owner``. The default deep-copies the instance
        state; monitors on the hot path override it with plain container copies."""
        new = copy.copy(self)
        for name, value in vars(self).items():
            if name not in _PLUMBING:
                setattr(new, name, copy.deepcopy(value))
        new._attach(owner)
        return new

    def state_key(self) -> Any:
        """A hashable summary of the state that matters for future findings."""
        return freeze({k: v for k, v in vars(self).items() if k not in _PLUMBING})

    def context_key(self) -> Any:
        """For a monitor others require: what of its state their ``state_key`` may read (see
        ``KEY_CONTEXT``; the default, everything, is always safe)."""
        return freeze({k: v for k, v in vars(self).items() if k not in _PLUMBING})

    # -- reporting -----------------------------------------------------------------------
    def regate(self) -> None:
        """Have the set re-read the ``GATES`` attributes before its next message."""
        self._owner._regate()

    def exercise(self, rule: str) -> None:
        self._ex[rule] += 1

    def table(self, spec: MachineSpec) -> MachineSpec:
        """The table in force for ``spec``: the variant's (``MonitorSet.tables``), else the model's."""
        tables = self._owner.tables
        return tables.get(spec.name, spec) if tables else spec

    @property
    def between(self) -> Rules:
        """The rules between machines in force (``model.between``: the variant's, else the spec's)."""
        return self._owner.rules

    def reading(self, name: str) -> str:
        """The alternative in force for the reading ``name`` (``properties.readings``)."""
        return self._owner.readings[name]

    def exercise_all(self, rules: tuple[str, ...]) -> None:
        """Count every rule of a group (one dictionary update; merged when ``exercised`` is read)."""
        self._gx[rules] += 1

    def breach(
        self,
        rule: str,
        line: int | None,
        session: str | None,
        explanation: str,
        message: Any = None,
        readings: tuple[str, ...] = (),
    ) -> None:
        """Report a breach; ``readings``: the readings its verdict depends on."""
        self._owner.add(
            Finding(rule, self._owner.level_of(rule), line, session, explanation, "rule", message, readings)
        )

    def suspect(
        self,
        rule: str,
        line: int | None,
        session: str | None,
        explanation: str,
        message: Any = None,
        readings: tuple[str, ...] = (),
    ) -> None:
        """Report a likely breach the wire cannot prove (kind ``suspect``, a warning);
        ``readings``: the readings that make it a suspect rather than a breach."""
        level = self._owner.level_of(rule)
        self._owner.add(Finding(rule, level, line, session, explanation, "suspect", message, readings))

    def eventually(
        self,
        rule: str,
        quiescent: bool,
        line: int | None,
        session: str | None,
        explanation: str,
        message: Any = None,
        readings: tuple[str, ...] = (),
    ) -> None:
        """Report an obligation still open: a breach at quiescence; a breach at the last line
        when the input was declared complete for ``session`` (``MonitorSet.finish(complete=...)``);
        information at the end of any other input."""
        if quiescent:
            self.breach(rule, line, session, explanation + " (still open at quiescence)", message, readings)
        elif self._owner.complete_for(session):
            owner = self._owner
            since = "" if line is None or line == owner.last_line else f"; owed since line {line}"
            self.breach(
                rule,
                owner.last_line if owner.last_line is not None else line,
                session,
                explanation + f" (still open at the end of a complete transcript{since})",
                message,
                readings,
            )
        else:
            self._owner.add(
                Finding(
                    rule,
                    self._owner.level_of(rule),
                    line,
                    session,
                    explanation + " (open at end of input)",
                    "open",
                    message,
                    readings,
                )
            )


Completeness = bool | Callable[[str | None], bool]
"""What ``MonitorSet.finish`` is told of the input's end: complete for every session (True),
for none (False), or for the sessions a predicate accepts."""

_PLUMBING = ("_owner", "_ex", "_gx")
"""Monitor attributes that are not monitor state."""


def _ordered_classes(monitors: Iterable[type[Monitor]]) -> tuple[list[type[Monitor]], list[type[Monitor]]]:
    """(the given classes minus required ones, the required ones) in a stable order."""
    given = list(dict.fromkeys(monitors))
    required: list[type[Monitor]] = []
    pending = list(given)
    while pending:
        cls = pending.pop(0)
        for dep in cls.REQUIRES:
            if dep not in required:
                required.append(dep)
                pending.append(dep)
    return [c for c in given if c not in required], required


class MonitorSet:
    """Runs a set of monitors over one stream of messages."""

    def __init__(
        self,
        monitors: Iterable[type[Monitor]] | None = None,
        *,
        from_start: bool = False,
        readings: Mapping[str, str] | None = None,
        variant: Variant | None = None,
    ) -> None:
        self.readings: dict[str, str] = resolve(readings)
        """Every reading's alternative in force (``properties.readings``)."""
        self.variant = variant
        """The variant judged under, or None: the spec as written (``properties.variants``)."""
        self.dropped: frozenset[str] = frozenset(self.variant.drop) if self.variant else frozenset()
        self.tables: Mapping[str, Any] = self.variant.tables() if self.variant else {}
        """Machine name -> the variant's table (empty: the model's own)."""
        self.rules: Rules = rules_of(variant)
        """The rules between machines in force (``model.between``)."""
        self.set_aside: Counter[str] = Counter()
        """Findings of dropped rules, by rule (not reported)."""
        if monitors is None:
            from properties.monitors import ALL_MONITORS

            monitors = ALL_MONITORS
        self.from_start = from_start
        """Every session in the stream is seen from its creation on (true of simulated runs;
        a transcript shows it per session with a ``session/new`` response)."""
        self._exercised: Counter[str] = Counter()
        self._counts: defaultdict[str, int] = defaultdict(int)
        self._groups: defaultdict[tuple[str, ...] | str, int] = defaultdict(int)
        self.findings: list[Finding] = []
        self._new: list[Finding] = []
        self._levels: dict[str, str] = {}
        self._complete: Completeness = False
        self.last_line: int | None = None
        """The last line of the input, once ``finish`` was told it."""
        # requests awaiting a response, by the side that sent them: id -> request message
        self.pending_client: dict[Any, Message] = {}
        self.pending_agent: dict[Any, Message] = {}
        given, required = _ordered_classes(monitors)
        order = (*given, *required)
        self._index: dict[type[Monitor], int] = {cls: i for i, cls in enumerate(order)}
        self.monitors: list[Monitor] = [None] * len(order)  # type: ignore[list-item]
        for cls in (*required, *given):  # required first: the others look them up in __init__
            self.monitors[self._index[cls]] = cls(self)
        tables = _TABLES.get(order)
        if tables is None:
            tables = _TABLES[order] = _Tables(self.monitors)
        self._tables = tables
        self._raw = tables.raw
        self._numbers: tuple[tuple[int, ...], tuple[Any, ...]] | None = None
        """(monitor numbers, context keys) once ``interned_key`` ran (explorers)."""
        self._base_numbers: tuple[tuple[int, ...], tuple[Any, ...]] | None = None
        """The ``_numbers`` of the set this one was derived from."""
        self._only: tuple[int, ...] | None = None
        """The monitors a set made by ``derive(only=...)`` dispatches to (None: all)."""
        self._gates = self._gate_state()
        self._use(tables.filtered(self._gates))

    # -- set-up --------------------------------------------------------------------------
    def get(self, cls: type[M]) -> M:
        """The instance of a monitor class in this set (for shared context)."""
        found = self.monitors[self._index[cls]]
        assert isinstance(found, cls)
        return found

    def _gate_state(self) -> tuple[bool, ...]:
        mons = self.monitors
        return tuple([bool(getattr(mons[index], attr)) for index, attr in self._tables.gates])

    def _use(self, tables: dict[str, Table]) -> None:
        """Dispatch with these tables (shared with other sets: never changed in place)."""
        self._upd = tables["update"]
        self._creq = tables["client-request"]
        self._areq = tables["agent-request"]
        self._cnote = tables["client-notification"]
        self._anote = tables["agent-notification"]
        self._aresp = tables["agent-response"]
        self._cresp = tables["client-response"]

    def _regate(self) -> None:
        """Re-read the gates (``Monitor.regate``): switch to the tables of the new gate state."""
        gates = self._gate_state()
        if gates == self._gates:
            return
        self._gates = gates
        self._use(self._tables.filtered(gates, self._only))

    @property
    def exercised(self) -> Counter[str]:
        """How often each rule's trigger condition was met so far."""
        ex = self._exercised
        if self._counts:
            ex.update(self._counts)
            self._counts.clear()
        if self._groups:
            for key, n in self._groups.items():
                for rule in _GROUPS[key] if type(key) is str else key:
                    ex[rule] += n
            self._groups.clear()
        return ex

    def level_of(self, rule: str) -> str:
        level = self._levels.get(rule)
        if level is None:
            from properties.catalogue import RULES_BY_ID

            entry = RULES_BY_ID.get(rule)
            level = entry.level if entry is not None else "MUST"
            self._levels[rule] = level
        return level

    def add(self, finding: Finding) -> None:
        if finding.rule in self.dropped:
            self.set_aside[finding.rule] += 1
            SET_ASIDE[finding.rule] += 1
            return
        self.findings.append(finding)
        self._new.append(finding)

    # -- the hot path --------------------------------------------------------------------
    def feed(self, sender: str, msg: Message, line: int) -> list[Finding]:
        """Feed one message; returns the findings it made certain (possibly none)."""
        self.push(sender, msg, line)
        if not self._new:
            return []
        new, self._new = self._new, []
        return new

    def push(self, sender: str, msg: Message, line: int) -> None:
        """``feed`` without returning the findings: the next ``feed`` (or ``take_new``) returns
        them, in order."""
        if self._raw:
            mons = self.monitors
            for index in self._raw:
                mons[index].on_message(sender, msg, line)
        method = msg.get("method")
        if method == "session/update":
            if sender == "agent":
                try:
                    params = msg["params"]
                    upd = params["update"]
                    handlers = self._upd.get(upd["sessionUpdate"])
                    sid = params["sessionId"]
                except (KeyError, TypeError, IndexError):
                    handlers = None  # malformed: the schema checker reports it
                if handlers is not None and type(sid) is str and type(upd) is dict:
                    mons = self.monitors
                    for func, index in handlers:
                        func(mons[index], sid, upd, line, msg)
            return
        if method is None:  # a response: its handlers get the request it answers
            rid = msg.get("id")
            if type(rid) is not int and type(rid) is not str:
                return
            if sender == "agent":
                request = self.pending_client.pop(rid, None)
                if request is None:
                    return
                handlers = self._aresp.get(request["method"])
            else:
                request = self.pending_agent.pop(rid, None)
                if request is None:
                    return
                handlers = self._cresp.get(request["method"])
            if handlers is None:
                return
            params = request.get("params")
            sid = params.get("sessionId") if type(params) is dict else None
            if type(sid) is not str:
                sid = None
            mons = self.monitors
            for func, index in handlers:
                func(mons[index], sid, request, line, msg)
            return
        if type(method) is not str:
            return
        params = msg.get("params")
        if type(params) is not dict:
            params = _EMPTY
        sid = params.get("sessionId")
        if type(sid) is not str:
            sid = None
        if sender == "client":
            if "id" in msg:
                rid = msg["id"]
                if type(rid) is int or type(rid) is str:
                    self.pending_client[rid] = msg
                handlers = self._creq.get(method)
            else:
                handlers = self._cnote.get(method)
        elif "id" in msg:
            rid = msg["id"]
            if type(rid) is int or type(rid) is str:
                self.pending_agent[rid] = msg
            handlers = self._areq.get(method)
        else:
            handlers = self._anote.get(method)
        if handlers is not None:
            mons = self.monitors
            for func, index in handlers:
                func(mons[index], sid, params, line, msg)

    def wake(self, field: str, sid: str, upd: Message, line: int, msg: Message) -> None:
        """Call the handlers that asked, in ``WAKES``, to see updates carrying ``field`` while
        their gate is closed (open gates: the table called them already), in monitor order.
        A set made by ``derive(only=...)`` wakes only its monitors."""
        entries = self._tables.wakes.get(field)
        if entries is None:
            return
        gates = self._gates
        only = self._only
        for func, index, gate in entries:
            if not gates[gate] and (only is None or index in only):
                func(self.monitors[index], sid, upd, line, msg)

    def take_new(self) -> list[Finding]:
        """The findings made since the last ``feed`` or ``take_new`` (and forget them)."""
        new, self._new = self._new, []
        return new

    def finish(
        self, quiescent: bool = False, complete: Completeness = False, last_line: int | None = None
    ) -> list[Finding]:
        """Judge the "eventually" rules; returns the findings this produced.

        ``quiescent``: the simulator proved nothing more can happen (open obligations are
        breaches at the line that opened them). ``complete``: the user (``check --complete``)
        or the recorder (the Agent exited, a session was closed) declares that nothing more
        will come: True for every session, or a predicate of the session ID (None: the
        connection). An obligation open in a complete session is a breach reported at
        ``last_line`` (the last line of the input), the line after which no continuation
        can discharge it. Otherwise open obligations are information (kind ``open``)."""
        mons = self.monitors
        if isinstance(mons, _CopyOnWrite):  # judge copies owned by this set, not shared ones
            mons = [mons[i] for i in range(len(mons))]
        self._complete = complete
        self.last_line = last_line
        try:
            for monitor in mons:
                monitor.at_end(quiescent)
        finally:
            self._complete = False
        new, self._new = self._new, []
        return new

    def complete_for(self, session: str | None) -> bool:
        """Whether the input being finished was declared complete for ``session``."""
        complete = self._complete
        if complete is True or complete is False:
            return complete
        return bool(complete(session))

    # -- explorers -----------------------------------------------------------------------
    def clone(self) -> MonitorSet:
        """An independent copy: feeding one never changes the other."""
        new = self._successor()
        new._exercised = Counter(self._exercised)
        new._counts = self._counts.copy()
        new._groups = self._groups.copy()
        new.findings = list(self.findings)
        new.set_aside = Counter(self.set_aside)
        new._new = list(self._new)
        new.monitors = list(list.__iter__(self.monitors))  # as they are (no copy-on-write)
        for i in self._tables.clone_order:  # required ones first: the others look them up
            new.monitors[i] = new.monitors[i].clone(new)
        new._base_numbers = None
        return new

    def derive(self, only: tuple[int, ...] | None = None) -> MonitorSet:
        """A copy-on-write successor, for explorers that keep each distinct monitor state once
        and feed copies: it shares this set's monitors, and a monitor is copied only when the
        new set first reaches it (a handler, a gate, ``get``). So feeding it costs a copy of
        the monitors the message concerns, not of all of them. A set must not be fed once a
        set was derived from it (they share monitors).

        ``only``: monitor indices; the new set dispatches to their handlers alone (the others
        stand still), so its findings and exercise counts are theirs. An explorer that steps
        monitors one at a time uses it, with the required monitors among ``only``."""
        new = self._successor(only)
        new._exercised = Counter()
        new._counts = defaultdict(int)
        new._groups = defaultdict(int)
        new.findings = []
        new.set_aside = Counter()
        new._new = []
        new.monitors = _CopyOnWrite(new, list(list.__iter__(self.monitors)))
        new._base_numbers = self._numbers
        return new

    def graft(self, i: int, source: MonitorSet) -> MonitorSet:
        """A derived set (``derive``) whose monitor ``i`` is a copy of ``source``'s, attached
        to the new set (so it reads the new set's required monitors). For explorers that
        combine a monitor's state with another set's context; sound only for a monitor whose
        key does not read that context (not ``KEY_CONTEXT``)."""
        new = self.derive()
        mons = new.monitors
        assert isinstance(mons, _CopyOnWrite)
        list.__setitem__(mons, i, list.__getitem__(source.monitors, i).clone(new))
        mons.owned[i] = 1
        new._regate()
        return new

    def _successor(self, only: tuple[int, ...] | None = None) -> MonitorSet:
        """A new set with this one's configuration, tables, gates and pending requests; the
        caller sets its monitors, findings and exercise counts."""
        new = MonitorSet.__new__(MonitorSet)
        new.from_start = self.from_start
        new.readings = self.readings
        new.variant = self.variant
        new.dropped = self.dropped
        new.tables = self.tables
        new.rules = self.rules
        new._levels = self._levels
        new._complete = False
        new.last_line = self.last_line
        new.pending_client = dict(self.pending_client)
        new.pending_agent = dict(self.pending_agent)
        new._index = self._index
        new._tables = self._tables
        new._raw = self._tables.raw if only is None else tuple(i for i in self._tables.raw if i in only)
        new._numbers = None
        new._only = only
        new._gates = self._gates
        new._use(self._tables.filtered(self._gates, only))
        return new

    def reaches(self, sender: str, msg: Message, request: Message | None) -> tuple[int, ...]:
        """Indices of the monitors ``push`` may call for ``msg`` whatever their gates
        (``request``: the request a response answers, None for other messages). The monitors
        not among them stand still on ``msg``."""
        full = self._tables.full
        method = msg.get("method")
        entries: list[Any] = []
        if method == "session/update":
            params = msg.get("params")
            upd = params.get("update") if type(params) is dict else None
            kind = upd.get("sessionUpdate") if type(upd) is dict else None
            if sender == "agent" and type(kind) is str:
                entries = full["update"].get(kind, [])
        elif method is None:
            if request is not None:
                table = "agent-response" if sender == "agent" else "client-response"
                entries = full[table].get(request["method"], [])
        elif type(method) is str:
            side = "client-" if sender == "client" else "agent-"
            entries = full[side + ("request" if "id" in msg else "notification")].get(method, [])
        return tuple(sorted({*(index for _, index, _ in entries), *self._tables.raw}))

    def interned_key(self, numbers: list[dict[Any, int]]) -> tuple[Any, ...]:
        """``state_key`` with each monitor's part replaced by its number in ``numbers[i]``
        (equal keys get equal numbers). For explorers that keep each distinct set once and
        feed derived copies (``derive``): a derived set numbers only the monitors it copied,
        and reuses its parent's numbers for the monitors it shares, except that a monitor whose
        key reads a required monitor (``KEY_CONTEXT``) is numbered again when that one's
        ``context_key`` changed."""
        mons = self.monitors
        required = self._tables.required
        base = self._base_numbers
        if base is None or not isinstance(mons, _CopyOnWrite):
            ids = [number(numbers[i], m.state_key()) for i, m in enumerate(self._keyed_monitors())]
            ctx = tuple([list.__getitem__(mons, i).context_key() for i in required])
        else:
            base_ids, base_ctx = base
            ids = list(base_ids)
            owned = mons.owned
            ctx = tuple(
                [
                    list.__getitem__(mons, i).context_key() if owned[i] else base_ctx[j]
                    for j, i in enumerate(required)
                ]
            )
            rekey = self._tables.key_context if ctx != base_ctx else None
            for i, copied in enumerate(owned):
                if copied or (rekey is not None and rekey[i]):
                    ids[i] = number(numbers[i], mons[i].state_key())  # mons[i]: copied if not yet
        self._numbers = (tuple(ids), ctx)
        return (pending_key(self.pending_client), pending_key(self.pending_agent), self._numbers[0])

    def state_key(self) -> Any:
        """Hashable summary of all monitor state that matters for future findings (not the
        findings already made, nor the exercise counts)."""
        return (
            pending_key(self.pending_client),
            pending_key(self.pending_agent),
            tuple([m.state_key() for m in self._keyed_monitors()]),
        )

    def _keyed_monitors(self) -> list[Monitor]:
        """The monitors whose keys describe this set. In a derived set a shared monitor whose
        key reads a required monitor (``KEY_CONTEXT``) may still point at its parent's copy of
        that one: it is copied into this set first, so that it reads this set's."""
        mons = self.monitors
        if not isinstance(mons, _CopyOnWrite):
            return mons
        context = self._tables.key_context
        return [mons[i] if context[i] else m for i, m in enumerate(list.__iter__(mons))]


Table = dict[str, tuple[tuple[Callable[..., None], int], ...]]
"""key -> ((handler function, monitor index), ...): one dispatch table."""


class _CopyOnWrite(list):  # type: ignore[type-arg]
    """The monitors of a derived set (``MonitorSet.derive``): reading one by index copies it
    into the set the first time (an index read is how handlers, gates and ``get`` reach it);
    iterating gives the objects as they are."""

    __slots__ = ("owned", "owner")

    def __init__(self, owner: MonitorSet, monitors: list[Monitor]) -> None:
        super().__init__(monitors)
        self.owner = owner
        self.owned = bytearray(len(self))

    def __getitem__(self, i: Any) -> Any:
        m = list.__getitem__(self, i)
        if not self.owned[i]:
            self.owned[i] = 1
            m = m.clone(self.owner)
            list.__setitem__(self, i, m)
        return m


class _Tables:
    """The dispatch tables of a list of monitor classes: for each message kind, key ->
    ((handler function, monitor index), ...). They hold plain functions and indices, so every
    set of the same classes (clones included) shares them; a set passes the monitor to the
    function. Gated handlers (``Monitor.GATES``) make one version of the tables per gate
    state, built when first needed."""

    def __init__(self, monitors: list[Monitor]) -> None:
        full: dict[str, dict[str, list[tuple[Callable[..., None], int, str | None]]]]
        full = {name: {} for name in TABLES}
        raw: list[int] = []
        gates: list[tuple[int, str]] = []
        wakes: dict[str, list[tuple[Callable[..., None], int, int]]] = {}
        for index, monitor in enumerate(monitors):
            if type(monitor).on_message is not Monitor.on_message:
                raw.append(index)
            for table, key, handler in monitor.handlers():
                func = getattr(handler, "__func__", None)
                if func is None or getattr(handler, "__self__", None) is not monitor:
                    raise TypeError(f"{type(monitor).__name__}: handlers must be its own bound methods")
                gate = dict(type(monitor).GATES).get(func.__name__)
                if gate is not None and (index, gate) not in gates:
                    gates.append((index, gate))
                full[table].setdefault(key, []).append((func, index, gate))
            for name, woken_by in type(monitor).WAKES:
                gate = dict(type(monitor).GATES).get(name)
                if gate is None:
                    raise TypeError(f"{type(monitor).__name__}: WAKES names {name}, which is not gated")
                func = getattr(type(monitor), name)
                wakes.setdefault(woken_by, []).append((func, index, gates.index((index, gate))))
        self.full = full
        classes = [type(m) for m in monitors]
        needed = {dep for cls in classes for dep in cls.REQUIRES}
        self.required = tuple(i for i, cls in enumerate(classes) if cls in needed)
        """Indices of the monitors others require (shared context)."""
        self.key_context = tuple(cls.KEY_CONTEXT for cls in classes)
        """Per monitor: whether its key reads a required monitor (``Monitor.KEY_CONTEXT``)."""
        self.clone_order = (*self.required, *(i for i in range(len(classes)) if i not in self.required))
        """The order ``clone`` copies monitors in: required ones first."""
        self.raw = tuple(raw)
        """Indices of the monitors that override ``on_message``."""
        self.gates = tuple(gates)
        """(monitor index, attribute) of every gate, in the order of a gate state."""
        self.wakes = {field: tuple(entries) for field, entries in wakes.items()}
        """Update field -> (handler function, monitor index, position of its gate) of every
        ``WAKES`` entry, in monitor order."""
        self._by_state: dict[tuple[tuple[bool, ...], tuple[int, ...] | None], dict[str, Table]] = {}

    def filtered(self, state: tuple[bool, ...], only: tuple[int, ...] | None = None) -> dict[str, Table]:
        """The tables without the handlers whose gate is closed in ``state`` (and, given
        ``only``, without those of the other monitors)."""
        found = self._by_state.get((state, only))
        if found is None:
            open_gates = {gate for gate, is_open in zip(self.gates, state, strict=True) if is_open}
            found = {}
            for name, table in self.full.items():
                kept: Table = {}
                for key, entries in table.items():
                    handlers = tuple(
                        [
                            (func, index)
                            for func, index, attr in entries
                            if (attr is None or (index, attr) in open_gates)
                            and (only is None or index in only)
                        ]
                    )
                    if handlers:
                        kept[key] = handlers
                found[name] = kept
            self._by_state[(state, only)] = found
        return found


def number(table: dict[Any, int], key: Any) -> int:
    """The number of ``key`` in ``table``, numbering it next if new (``interned_key``'s
    numbering; explorers that number monitor keys themselves use it too)."""
    found = table.get(key)
    if found is None:
        found = table[key] = len(table)
    return found


def pending_tag(rid: Any, request: Message) -> tuple[Any, Any, Any]:
    """What a set's key keeps of a request awaiting its response: (id, method, sessionId)."""
    params = request.get("params")
    sid = params.get("sessionId") if type(params) is dict else None
    return (rid, request.get("method"), sid if type(sid) is str else None)


def pending_key(pending: dict[Any, Message]) -> frozenset[tuple[Any, Any, Any]]:
    """What a set's key keeps of its requests awaiting a response (``pending_tag`` of each)."""
    return frozenset([pending_tag(rid, request) for rid, request in pending.items()])
