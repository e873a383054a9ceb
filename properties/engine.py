"""The monitor engine: one online pass over a stream of wire messages.

Owns: the ``MonitorSet`` that feeds every monitor (``properties.monitor``) one message at a time,
the one pairing of responses with the requests they answer, the count of how often each rule's
check was exercised, and the split between "certain now" breaches (reported by ``feed``) and
"eventually" obligations (reported by ``finish``, which says how an obligation still open is
judged). The same code serves recorded transcripts (``acp-model check``) and simulated runs.

Proxy-view semantics: lines arrive in the order a proxy between the peers saw them (agent lines
in the agent's send order, client lines in the agent's receive order). A monitor flags only what
is certain from that order.

Client order (``client_order``, configuration): whether the Client lines are in the Agent's
receive order (``received``, the default and the transcript contract: every simulated run, which
feeds the monitors in the Agent's exact order) or in the order a proxy forwarded them
(``forwarded``: ``record`` and ``drive``, and ``check --client-order forwarded`` for their
transcripts). A proxy writes a Client line when it passes, so an Agent line recorded after it
may have been written before the Agent read it (the two crossed on the wire). The proof of
receipt the wire gives (``read_to``): the Agent reads its input in order, so once it has sent a
response to a Client request recorded at line R, it has read every Client line up to R (the
request itself included). A monitor may add a move of the Agent that only a Client line allows
(``proves_read``; the prompt monitor: a -32800 answer to a prompt, which the prompt table lets
the Agent give only once a session/cancel, session/close or ``$/cancel_request`` stopped it,
shows the first of those read). ``unread(line)`` says whether the Client line ``line`` may still be
unread by the Agent as the current Agent line is judged: never in received order; in forwarded
order, while no such response shows it read. A finding whose premise is that the Agent had read
a Client line names that line (``Monitor.breach(premise=...)``): while it may be unread, the
finding is a suspicion (kind ``suspect``), its explanation saying on what it depends.

Dispatch (the hot path): a monitor does not look at every message. It marks the methods that
handle the message kinds it wants with ``@on(table, key, ...)``, and one table per kind is built
once per list of monitor classes (``_tables``):

- ``update``: ``session/update`` notifications from the Agent, keyed by ``sessionUpdate``; the
  handler gets ``(sessionId, update, line, message)``;
- ``client-request`` / ``agent-request`` / ``client-notification`` / ``agent-notification``,
  keyed by method; the handler gets ``(params.sessionId or None, params, line, message)``;
- ``agent-response`` / ``client-response``: a response, keyed by the method of the request it
  answers (the set pairs them by JSON-RPC id per direction); the handler gets
  ``(sessionId of the request or None, request, line, response)``.

A handler registered under the key ``*`` gets every message of its table, whatever the key
(in monitor order with the others); in a response table it also gets each response that
answers no request awaiting one (a second response, which the reader passes on), with the
request None and the session None. So ``feed`` does one dictionary lookup per message and calls
only the handlers registered for it, in monitor order.

Shared context: a monitor may name other monitor classes in ``REQUIRES`` (for instance a tracker
of per-session facts that several monitors read). The set creates each required class once,
before the monitors that need it, and dispatches to it *after* them, so a monitor always reads
the context as it stood before the current message.

Exercise counts go to plain ``defaultdict(int)`` tables (``Monitor._ex``; ``rule_group`` keys
count a group of restated rules with one increment), merged into the ``exercised`` Counter
whenever it is read, so clearing that Counter resets the counts.

Explorers: ``clone()`` is an independent copy and ``state_key()`` a hashable summary of everything
that can change future findings. Monitors interact only through the monitors they require, so a
set of one monitor class (and the classes it requires) steps that monitor exactly as the whole
set does: the exhaustive search keeps one such set per class (``simulator.explore.state``).

Configuration (shared by clones, in no state key): ``client_order`` (above; ``read_to`` is in
the key in forwarded order only); ``from_start`` (every session in the stream is seen from its
creation, a simulated run: it lets the prompt monitor judge replayed IDs,
ACC-11); ``readings={NAME: ALTERNATIVE}`` among the readings of ambiguous spec text
(``properties.readings``: every reading not given takes its default, an unknown one raises
``ReadingError``; a monitor asks ``self.reading(NAME)`` and names the reading on every finding
whose verdict depends on it); ``variant`` (default None: the spec as written;
``properties.variants``), which sets aside every finding of a rule the variant dropped
(``set_aside`` counts them by rule, and the process-wide ``SET_ASIDE`` too; they are neither
returned nor kept in ``findings``), and hands the table monitor the variant's machine tables
(``tables``) and every monitor the rules between machines in force (``Monitor.between``).

Must not know: files, JSON decoding, or how the messages were produced.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from model.between import Rules
from properties.findings import Finding
from properties.monitor import _GROUPS, Message, Monitor, rule_group
from properties.readings import resolve
from properties.variants import Variant, rules_of

M = TypeVar("M", bound=Monitor)

__all__ = ["CLIENT_ORDERS", "Completeness", "Message", "Monitor", "MonitorSet", "rule_group"]

CLIENT_ORDERS = ("received", "forwarded")
"""The orders a stream's Client lines may be in (``MonitorSet.client_order``; the first is the
default: the transcript contract)."""

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
_TABLES: dict[tuple[type[Monitor], ...], _Tables] = {}
"""Dispatch tables by monitor classes in order: handlers are methods, so the tables (functions
and monitor indices) depend only on the classes, and every set of the same classes shares them."""


SET_ASIDE: Counter[str] = Counter()
"""Findings of dropped rules set aside by every set of this process, by rule (an explorer reads
which dropped rules its runs broke: the per-set counts are scattered over copies)."""


Completeness = bool | Callable[[str | None], bool]
"""What ``MonitorSet.finish`` is told of the input's end: complete for every session (True),
for none (False), or for the sessions a predicate accepts."""


class MonitorSet:
    """Runs a set of monitors over one stream of messages."""

    def __init__(
        self,
        monitors: Iterable[type[Monitor]] | None = None,
        *,
        from_start: bool = False,
        readings: Mapping[str, str] | None = None,
        variant: Variant | None = None,
        client_order: str = CLIENT_ORDERS[0],
    ) -> None:
        self.client_order = CLIENT_ORDERS[0]
        """The order of the stream's Client lines (``CLIENT_ORDERS``; see the module docstring)."""
        self.forwarded = False
        self.order_clients(client_order)
        self.read_to = 0
        """The latest line of a Client request the Agent has answered (0: none): it has read every
        Client line up to it (the proof of receipt, module docstring)."""
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
        self._groups: defaultdict[str, int] = defaultdict(int)
        self.findings: list[Finding] = []
        self._new: list[Finding] = []
        self._complete: Completeness = False
        self.last_line: int | None = None
        """The last line of the input, once ``finish`` was told it."""
        # requests awaiting a response, by the side that sent them: id -> (request message, its
        # params.sessionId or None, its line): the one pairing of responses with requests every monitor reads
        self.pending_client: dict[Any, Pending] = {}
        self.pending_agent: dict[Any, Pending] = {}
        # the monitors in dispatch order: the given ones, then those they require (Facts: a
        # required class requires none itself)
        classes = tuple(dict.fromkeys(monitors))
        required = tuple(dict.fromkeys(dep for cls in classes for dep in cls.REQUIRES))
        given = tuple(cls for cls in classes if cls not in required)
        order = (*given, *required)
        self._index: dict[type[Monitor], int] = {cls: i for i, cls in enumerate(order)}
        self.monitors: list[Monitor] = [None] * len(order)  # type: ignore[list-item]
        self._made = [self._index[cls] for cls in (*required, *given)]
        """Monitor indices in the order they are made (and cloned): required ones first, the
        others look them up."""
        for i in self._made:
            self.monitors[i] = order[i](self)
        tables = _TABLES.get(order)
        if tables is None:
            tables = _TABLES[order] = _tables(order)
        # per table of TABLES, in its order (shared with other sets: never changed in place)
        self._upd, self._creq, self._areq, self._cnote, self._anote, self._aresp, self._cresp = tables[0]
        (self._upd_any, self._creq_any, self._areq_any, self._cnote_any, self._anote_any, self._aresp_any,
         self._cresp_any) = tables[1]  # fmt: skip

    # -- set-up --------------------------------------------------------------------------
    def get(self, cls: type[M]) -> M:
        """The instance of a monitor class in this set (for shared context)."""
        found = self.monitors[self._index[cls]]
        assert isinstance(found, cls)
        return found

    @property
    def exercised(self) -> Counter[str]:
        """How often each rule's trigger condition was met so far."""
        ex = self._exercised
        if self._counts:
            ex.update(self._counts)
            self._counts.clear()
        if self._groups:
            for key, n in self._groups.items():
                for rule in _GROUPS[key]:
                    ex[rule] += n
            self._groups.clear()
        return ex

    def level_of(self, rule: str) -> str:
        from properties.catalogue import RULES_BY_ID

        entry = RULES_BY_ID.get(rule)
        return entry.level if entry is not None else "MUST"

    def add(self, finding: Finding) -> None:
        if finding.rule in self.dropped:
            self.set_aside[finding.rule] += 1
            SET_ASIDE[finding.rule] += 1
            return
        self.findings.append(finding)
        self._new.append(finding)

    def order_clients(self, order: str) -> None:
        """Take the Client lines as in ``order`` (``CLIENT_ORDERS``) from now on: ``drive``
        learns it from the Agent's first line (a lockstep Agent reads them in its turns)."""
        if order not in CLIENT_ORDERS:
            raise ValueError(f"client order {order!r}: expected one of {', '.join(CLIENT_ORDERS)}")
        self.client_order = order
        self.forwarded = order == "forwarded"

    # -- the hot path --------------------------------------------------------------------
    def feed(self, sender: str, msg: Message, line: int) -> list[Finding]:
        """Feed one message; returns the findings it made certain (possibly none)."""
        self.push(sender, msg, line)
        return self.take_new()

    def push(self, sender: str, msg: Message, line: int) -> None:
        """``feed`` without returning the findings: the next ``feed`` (or ``take_new``) returns
        them, in order."""
        method = msg.get("method")
        if method == "session/update":
            if sender == "agent":
                try:
                    params = msg["params"]
                    upd = params["update"]
                    handlers = self._upd.get(upd["sessionUpdate"], self._upd_any)
                    sid = params["sessionId"]
                except (KeyError, TypeError, IndexError):  # (so params and update are objects)
                    handlers = None  # malformed: the schema checker reports it
                if handlers is not None and type(sid) is str:
                    mons = self.monitors
                    for func, index in handlers:
                        func(mons[index], sid, upd, line, msg)
            if "id" not in msg:
                return
            # (an update sent with an id is a request too: its response is paired below)
        if method is None:  # a response: its handlers get the request it answers
            rid = msg.get("id")
            if type(rid) is not int and type(rid) is not str:
                return
            agent = sender == "agent"  # (answering the client's request)
            pending = (self.pending_client if agent else self.pending_agent).pop(rid, None)
            table, handlers = (self._aresp, self._aresp_any) if agent else (self._cresp, self._cresp_any)
            if pending is None:
                payload = sid = None
            else:
                payload, sid, asked = pending
                handlers = table.get(payload["method"], handlers)
                if agent and asked > self.read_to:
                    self.read_to = asked  # (the proof of receipt: module docstring)
        else:  # a request or notification: its handlers get its params
            if type(method) is not str:
                return
            payload = msg.get("params")
            if type(payload) is not dict:
                payload = _EMPTY
            sid = payload.get("sessionId")
            if type(sid) is not str:
                sid = None
            client = sender == "client"
            if "id" in msg:
                rid = msg["id"]
                if type(rid) is int or type(rid) is str:
                    (self.pending_client if client else self.pending_agent)[rid] = (msg, sid, line)
                table, every = (self._creq, self._creq_any) if client else (self._areq, self._areq_any)
            else:
                table, every = (self._cnote, self._cnote_any) if client else (self._anote, self._anote_any)
            handlers = table.get(method, every)
        if handlers is not None:
            mons = self.monitors
            for func, index in handlers:
                func(mons[index], sid, payload, line, msg)

    def client_awaits(self, method: str, session: str) -> bool:
        """Whether a client request of ``method`` for ``session`` awaits its response."""
        return self.earliest_awaiting(method, session) is not None

    def earliest_awaiting(self, method: str, session: str) -> Message | None:
        """The earliest client request of ``method`` for ``session`` still awaiting its response
        (``pending_client`` keeps receipt order), or None."""
        for request, sid, _ in self.pending_client.values():
            if request["method"] == method and sid == session:
                return request
        return None

    def unread(self, client_line: int) -> bool:
        """Whether the Agent may not yet have read the Client line ``client_line`` when it sent
        the line being fed: only in forwarded order, while no response of the Agent to a Client
        request recorded at that line or after it shows it read (``read_to``)."""
        return self.forwarded and client_line > self.read_to

    def proves_read(self, client_line: int) -> None:
        """The Agent's line being fed shows it had read the Client line ``client_line``, so every
        Client line up to it (the module docstring)."""
        if client_line > self.read_to:
            self.read_to = client_line

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
        self._complete = complete
        self.last_line = last_line
        try:
            for monitor in self.monitors:
                monitor.at_end(quiescent)
        finally:
            self._complete = False
        return self.take_new()

    def complete_for(self, session: str | None) -> bool:
        """Whether the input being finished was declared complete for ``session``."""
        complete = self._complete
        if complete is True or complete is False:
            return complete
        return bool(complete(session))

    # -- explorers -----------------------------------------------------------------------
    def clone(self, fresh: bool = False) -> MonitorSet:
        """An independent copy: feeding one never changes the other (configuration, readings,
        the variant and the dispatch tables are shared). ``fresh``: the copy starts with no
        findings and no exercise counts (the exhaustive search's step, which reports only what
        one message adds)."""
        new = MonitorSet.__new__(MonitorSet)
        new.__dict__.update(self.__dict__)
        new._complete = False
        new.pending_client = dict(self.pending_client)
        new.pending_agent = dict(self.pending_agent)
        if fresh:
            new._exercised, new.findings, new._new = Counter(), [], []
            new._counts, new._groups = defaultdict(int), defaultdict(int)
        else:
            new._exercised = Counter(self._exercised)
            new._counts = self._counts.copy()
            new._groups = self._groups.copy()
            new.findings = list(self.findings)
            new._new = list(self._new)
        new.set_aside = Counter(self.set_aside)
        new.monitors = list(self.monitors)
        for i in self._made:  # required ones first: the others look them up
            new.monitors[i] = new.monitors[i].clone(new)
        return new

    def state_key(self) -> Any:
        """Hashable summary of all monitor state that matters for future findings (not the
        findings already made, nor the exercise counts)."""
        key = (
            pending_key(self.pending_client),
            pending_key(self.pending_agent),
            tuple([m.state_key() for m in self.monitors]),
        )
        return (*key, self.read_to) if self.forwarded else key


Handlers = tuple[tuple[Callable[..., None], int], ...]
"""((handler function, monitor index), ...), in monitor order."""
Table = dict[str, Handlers]
"""key -> its handlers: one dispatch table (the ``*`` handlers included under every key)."""
Pending = tuple[Message, str | None, int]
"""A request awaiting its response, its ``params.sessionId`` (None: none, or not a string) and its
line."""
_Tables = tuple[tuple[Table, ...], tuple[Handlers | None, ...]]


def _tables(classes: tuple[type[Monitor], ...]) -> _Tables:
    """The dispatch tables of a list of monitor classes, one per message kind in ``TABLES`` order
    (key -> ((handler function, monitor index), ...): the methods marked with ``on``), and per
    kind its ``*`` handlers (None: there are none): what a key no one named gets. They hold plain
    functions and indices, so every set of the same classes (clones included) shares them; a set
    passes the monitor to the function."""
    full: dict[str, dict[str, list[tuple[Callable[..., None], int]]]] = {name: {} for name in TABLES}
    for index, cls in enumerate(classes):
        for name in dir(cls):
            func = getattr(cls, name)
            for table, key in getattr(func, "_on", ()):
                full[table].setdefault(key, []).append((func, index))
    every = {name: table.pop("*", []) for name, table in full.items()}
    return (
        tuple(
            {key: _in_order(entries + every[name]) for key, entries in full[name].items()} for name in TABLES
        ),
        tuple(_in_order(every[name]) or None for name in TABLES),
    )


def _in_order(entries: list[tuple[Callable[..., None], int]]) -> Handlers:
    """Handlers in monitor order (a monitor's own in the order it listed them)."""
    return tuple(sorted(entries, key=lambda entry: entry[1]))


def pending_key(pending: dict[Any, Pending]) -> frozenset[tuple[Any, Any, Any]]:
    """What a set's key keeps of its requests awaiting a response: (id, method, sessionId)."""
    return frozenset([(rid, request["method"], sid) for rid, (request, sid, _) in pending.items()])
