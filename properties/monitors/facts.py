"""Per-session facts several monitors read: reported state, resume windows, the background list.

Owns: ``Facts``, a tracker with no rules of its own. Monitors that need it name it in
``REQUIRES``; the engine creates it first and dispatches to it *after* them, so during a
message every monitor reads the facts as they stood just before that message.

Per session (``SessionFacts``):
- ``state``: the last reported ``state`` (sessions start ``idle``, spec "Initial state and
  synchronization"; a non-string state is kept as ``"?"``). During a ``session/resume`` the
  state is ``unknown`` until the snapshot comes (resume does not imply idle).
- ``resuming``: ``session/resume`` requests received and not yet answered (the replay window).
- ``before``: inside a resume window with no state reported there yet, the state reported before
  it ("" otherwise): that state is still the one reported (``held``: it was active, that work is
  still reported active, ``model.between`` ``Rules.cancel_reaches``; ``still_idle``).
- ``shown``: inside a resume window, a state was reported there (one of them is the snapshot).
- ``interval``: counts foreground intervals: it grows whenever an active state follows a
  non-active one, so entities first seen in different intervals can be told apart.
- ``period``: grows on every change of ``state``, so a monitor can report a breach once per
  stretch of one state; ``state_line``: the line of the latest change.
- ``cancel_line``: line of a ``session/cancel`` (or ``session/close``) received while the
  reported state was active (or ``held``: ``Rules.cancel_reaches``), until the next idle:
  cancellation of active work to confirm.
- ``stopping``: a ``session/cancel`` or ``session/close`` was received while the reported state
  was not idle (active, or unknown or custom: that state may have replaced running), until the
  next idle.
- ``listed``: the items of the latest concrete background list (None before any).
- ``quiet``: the latest state_update reported idle with an empty background list, and no input
  (a user or session message) came into the session since: nothing of the session runs (an idle
  child with no background work of its own, "Background work"). Input starts new work there,
  whose running state the wire may show after a parent's list names the child: nothing orders
  the reports of two sessions.
- ``bare_line``: line of the first state_update without a concrete background list sent before
  the session's first list; kept only under the reading ``state-updates-before-first-list=every``
  (0 otherwise).
- ``created``: a ``session/new`` response named this session in the stream, so everything about
  it is in view (``MonitorSet.from_start`` says so for all sessions).
- ``closed``: ``session/close`` succeeded (until a ``session/resume`` reopens it).
- ``child``: a ``subagent_update`` of another session named this session (a subagent's).
- ``terms``: tool call -> the terminals its latest content embeds (``{"type": "terminal", ...}``
  items), from its ``tool_call_update`` and a permission request's subject (``subject_call``);
  a call whose content embeds none has no entry.

Connection-wide: the user-action requests outstanding (``asking``, the one record of them: the
tool monitor reads its permission requests there): each ``session/request_permission`` and
``elicitation/create`` of a session the Agent sent, until the Client answers it or the Agent
withdraws it with ``$/cancel_request``; a URL elicitation the Client accepted stays outstanding
until the Agent's ``elicitation/complete`` (the user finishes outside the Client; URL mode is an
elicitation's: a permission request has none, "Lifecycle examples"). And what the ``initialize``
handshake said (see the attributes of ``Facts``), and whether the stream shows the connection
from its start (``opening``: the Client's first request is ``initialize``, sent before anything
named a session), and then which sessions were set up in view (``set_up``: named by a
``session/new`` or ``session/fork`` response, resumed by a successful ``session/resume``, or
announced as a child by a ``subagent_update``, which needs no setup of its own); and each child
session's parent (``parents``: the session whose ``subagent_update`` first announced it), and
which children a stop of their parent's work reaches (``reached``).

Must not know: any rule, finding or explanation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NamedTuple, TypeVar

from model.between import PROMPT_CAPABILITY_TYPES
from model.clientview_parts import ACTIVE_STATES as ACTIVE
from model.elicitation import MODES
from properties.monitor import Message, Monitor, Record, on

if TYPE_CHECKING:
    from properties.engine import MonitorSet

from properties.observe import Key, background_keys
from properties.readings import STATE_UPDATES_BEFORE_FIRST_LIST
from properties.transcript import shows_opening


def terminal_refs(content: Any) -> frozenset[str]:
    """Terminal IDs a tool call's ``content`` array embeds (``{"type": "terminal", ...}``)."""
    if type(content) is not list:
        return frozenset()
    return frozenset(
        item["terminalId"]
        for item in content
        if type(item) is dict and item.get("type") == "terminal" and type(item.get("terminalId")) is str
    )


class ClientCaps(NamedTuple):
    """What a Client's initialize advertises that the checks read (``Facts.client``)."""

    may_extend: bool
    """Its capabilities carry ``_meta`` (the only place a custom extension such as custom states
    could be advertised)."""
    modes: frozenset[str]
    """The elicitation modes it advertised."""
    custom_modes_ok: bool
    """Its elicitation capabilities carry ``_meta``, where custom (``_``) modes may have been
    advertised (as custom prompt content types in the prompt capabilities')."""
    states_key: bool
    """Its ``_meta`` carries ``customStates`` (true): how the simulated Client advertises custom
    states, the model's own convention (the spec names no key)."""


def client_capabilities(caps: Any) -> ClientCaps:
    """The ``ClientCaps`` of an initialize's ``capabilities``: a non-empty ``_meta`` at its top
    (custom states) and its ``customStates`` key, the standard elicitation modes whose field is an
    object, and a non-empty ``_meta`` in its elicitation capabilities (custom modes)."""
    meta = caps.get("_meta") if type(caps) is dict else None
    states_key = type(meta) is dict and bool(meta.get("customStates"))
    found = caps.get("elicitation") if type(caps) is dict else None
    if type(found) is not dict:
        return ClientCaps(bool(meta), frozenset(), False, states_key)
    modes = frozenset(m for m in MODES if type(found.get(m)) is dict)
    return ClientCaps(bool(meta), modes, bool(found.get("_meta")), states_key)


def subject_call(params: dict[str, Any]) -> dict[str, Any] | None:
    """The tool call a permission request's ``subject`` carries (with a string ``toolCallId``),
    else None: the Client applies it like a ``tool_call_update`` (ToolCallPermissionSubject in
    the schema: a first-seen ID creates it)."""
    subject = params.get("subject")
    call = subject.get("toolCall") if type(subject) is dict else None
    return call if type(call) is dict and type(call.get("toolCallId")) is str else None


class Asked(NamedTuple):
    """An outstanding user-action request (``Facts.asking``)."""

    session: str
    permission: bool
    """A ``session/request_permission`` (else an ``elicitation/create``)."""
    tool: str | None
    """A permission request's subject tool call (``subject_call``), else None."""
    url: Any
    """The elicitationId of a URL elicitation, else None."""
    accepted: bool
    """A URL elicitation accepted and awaiting its completion."""


@dataclass(slots=True, eq=False)
class SessionFacts(Record):
    """One session's facts (see the module docstring)."""

    state: str = "idle"
    resuming: int = 0
    before: str = ""
    shown: bool = False
    interval: int = 0
    period: int = 0
    state_line: int = 0
    cancel_line: int = 0
    stopping: bool = False
    listed: frozenset[Key] | None = None
    quiet: bool = False
    created: bool = False
    closed: bool = False
    child: bool = False
    bare_line: int = 0
    terms: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def held(self) -> bool:
        """Inside a resume window, no state reported there yet, and the state reported before it
        was active: that work is still reported active."""
        return self.before in ACTIVE

    @property
    def still_idle(self) -> bool:
        """Idle is the state last reported: reported idle, or inside a resume window with no state
        reported there yet after idle was reported before it (as ``held`` keeps active work)."""
        return self.state == "idle" or self.before == "idle"

    def key(self) -> tuple[Any, ...]:
        """Without the counters and line numbers (monitors keep them only to compare), except
        whether any active interval began: a monitor's "not during active work" mark (0) equals
        the interval counter until then (the tool monitor's FAIL-04 check compares them)."""
        return (
            self.interval > 0,
            self.state,
            self.resuming,
            self.before,
            self.shown,
            bool(self.cancel_line),
            self.stopping,
            self.listed,
            self.quiet,
            self.created,
            self.closed,
            self.child,
            self.bare_line > 0,
            frozenset(self.terms.items()),
        )


class Facts(Monitor):
    """Shared per-session context (no rules)."""

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.sessions: dict[str, SessionFacts] = {}
        self.init_pending = False
        self.client: ClientCaps | None = None
        """None: no successful answer to a Client's initialize was seen; else what the latest
        initialize answered with a result advertised. The schema (InitializeRequest): "The latest
        successful ``initialize`` is authoritative": a failed or withdrawn one negotiates nothing."""
        self.prompt_types: frozenset[str] | None = None
        """Content types the Agent accepts in prompts (None: its initialize answer not seen)."""
        self.custom_prompt_ok = True
        """Whether custom content types may have been advertised (prompt capability ``_meta``)."""
        self.offered: dict[Any, ClientCaps] = {}
        """The capabilities of each Client initialize awaiting its answer, by request id: taken
        as negotiated only when that answer is a result."""
        self.opening: bool | None = None
        """None before the Client's first request; then whether it was ``initialize``, sent before
        anything named a session: the stream shows the connection from its start."""
        self.set_up: set[str] = set()
        """Under ``opening``: the sessions set up in view (see the module docstring)."""
        self.asking: dict[Any, Asked] = {}
        """Outstanding user-action requests by request id (see the module docstring). Kept from
        the request itself: an explorer's key keeps only a pending request's id, method and session."""
        self.parents: dict[str, str] = {}
        """Each child session -> the session whose ``subagent_update`` first announced it."""
        self.bare_kept = owner.readings[STATE_UPDATES_BEFORE_FIRST_LIST] == "every"
        """Whether ``bare_line`` is kept (the reading ``state-updates-before-first-list``)."""

    def reached(self, sid: str, closing: bool) -> list[str]:
        """The child sessions (``parents``) whose foreground work is part of the work of ``sid``,
        which a stop of that work (``closing``: a session/close) reaches (``Rules.stop_reaches``):
        not detached, that is named by their parent's latest concrete background list
        (background work of the parent, not its foreground work)."""
        parents = self.parents
        detached = frozenset(
            child
            for child, parent in parents.items()
            if parent in self.sessions and ("subagent", child) in (self.sessions[parent].listed or ())
        )
        return [
            child for child in parents if self.between.stop_reaches(sid, child, parents, detached, closing)
        ]

    def of(self, sid: str) -> SessionFacts:
        return self.sessions.get(sid) or self.sessions.setdefault(sid, SessionFacts())

    def quiet(self, sid: str) -> bool:
        """Nothing of the session runs (``SessionFacts.quiet``)."""
        fs = self.sessions.get(sid)
        return fs is not None and fs.quiet

    def replaying(self, sid: str) -> bool:
        """Inside a resume window of this session that asked for a history replay: the resume
        being answered (the earliest of the session's awaiting their response: a later one is
        refused) carries a ``replayFrom``. A window that asked for none holds no replay, only the
        snapshot and live updates ("following any requested history replay", Initial state and
        synchronization); one whose request has no usable id (none awaits) may have asked. The one
        statement of it: monitors ask here, never test ``resuming`` for replay themselves."""
        fs = self.sessions.get(sid)
        if fs is None or not fs.resuming:
            return False
        first = self._owner.earliest_awaiting("session/resume", sid)
        params = None if first is None else first.get("params")
        return first is None or (type(params) is dict and params.get("replayFrom") is not None)

    def from_start(self, sid: str) -> bool:
        if self._owner.from_start:
            return True
        found = self.sessions.get(sid)
        return found is not None and found.created

    def active(self, sid: str) -> bool:
        found = self.sessions.get(sid)
        return found is not None and found.state in ACTIVE

    # -- handlers ------------------------------------------------------------------------
    @on("update", "state_update")
    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        fs = self.sessions.get(sid) or self.of(sid)
        state = upd.get("state")
        if type(state) is not str:
            state = "?"
        prev = fs.state
        if state in ACTIVE and prev not in ACTIVE:
            fs.interval += 1
        if state != prev:
            fs.period += 1
            fs.state_line = line
            fs.state = state
        if state == "idle":
            fs.cancel_line = 0
            fs.stopping = False
            fs.quiet = upd.get("background") == []
        else:
            fs.quiet = False
        if fs.resuming:
            fs.before = ""
            fs.shown = True
        keys = background_keys(upd.get("background"))
        if fs.listed is None and not fs.bare_line and self.bare_kept and keys is None:
            fs.bare_line = line
        if keys is not None:
            fs.listed = frozenset(keys)

    @on("update", "session_message", "user_message", "user_message_chunk")
    def _input(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        fs = self.sessions.get(sid)
        if fs is not None:
            fs.quiet = False  # new work may be starting: no longer known to be quiet

    @on("update", "tool_call_update")
    def _tool(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        tid = upd.get("toolCallId")
        if type(tid) is str and "content" in upd:
            self._embeds(sid, tid, upd["content"])

    def _embeds(self, sid: str, tid: str, content: Any) -> None:
        refs = terminal_refs(content)
        if refs:
            self.of(sid).terms[tid] = refs
        else:
            fs = self.sessions.get(sid)
            if fs is not None and fs.terms:
                fs.terms.pop(tid, None)

    @on("agent-request", "session/request_permission", "elicitation/create")
    def _asked(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is None:
            return
        if msg["method"] == "elicitation/create":
            url = params.get("elicitationId") if params.get("mode") == "url" else None
            self.asking[msg["id"]] = Asked(sid, False, None, url, False)
            return
        call = subject_call(params)
        self.asking[msg["id"]] = Asked(sid, True, None if call is None else call["toolCallId"], None, False)
        if call is not None and "content" in call:
            self._embeds(sid, call["toolCallId"], call["content"])

    @on("client-response", "session/request_permission", "elicitation/create")
    def _answered(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        asked = self.asking.pop(msg["id"], None)
        if asked is None:
            return
        result = msg.get("result")
        if asked.url is not None and type(result) is dict and result.get("action") == "accept":
            self.asking[msg["id"]] = asked._replace(accepted=True)  # the user goes on outside

    @on("agent-notification", "elicitation/complete")
    def _completed(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        eid = params.get("elicitationId")
        for rid, asked in list(self.asking.items()):
            if asked.accepted and asked.url == eid:
                del self.asking[rid]

    @on("agent-notification", "$/cancel_request")
    def _withdrawn(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        rid = params.get("requestId")
        if (type(rid) is int or type(rid) is str) and rid in self.asking and not self.asking[rid].accepted:
            del self.asking[rid]

    @on("client-request", "session/resume")
    def _resume(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is not None:
            fs = self.of(sid)
            if not fs.resuming:  # the window opens
                fs.before = fs.state
                fs.shown = False
            fs.resuming += 1
            fs.closed = False
            if fs.state != "unknown":
                fs.period += 1
                fs.state_line = line
            fs.state = "unknown"

    @on("agent-response", "session/resume")
    def _resumed(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        if sid is not None:
            fs = self.of(sid)
            fs.resuming = max(0, fs.resuming - 1)
            if not fs.resuming:  # the window closes
                fs.before = ""
                fs.shown = False
            if self.opening and "result" in msg:
                self.set_up.add(sid)

    @on("client-notification", "session/cancel")
    @on("client-request", "session/close")
    def _cancel(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is not None:
            fs = self.of(sid)
            if not fs.cancel_line and self.between.cancel_reaches(fs.state in ACTIVE, fs.held):
                fs.cancel_line = line
            if fs.state != "idle":
                fs.stopping = True

    @on("agent-response", "session/close")
    def _closed(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        if sid is not None and "result" in msg:
            self.of(sid).closed = True

    @on("client-request", "initialize")
    def _initialize(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        self.init_pending = True
        rid = msg["id"]
        if type(rid) is int or type(rid) is str:  # (only these are paired with a response)
            self.offered[rid] = client_capabilities(params.get("capabilities"))

    @on("agent-response", "initialize")
    def _initialized(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        offered = self.offered.pop(msg["id"], None)
        if "result" not in msg:  # an error (a withdrawn one too: -32800) negotiates nothing
            self.init_pending = self.client is None  # unless an earlier one succeeded
            return
        self.init_pending = False
        if offered is not None:
            self.client = offered
        result = msg.get("result")
        if type(result) is not dict:
            return
        caps = result.get("capabilities")
        session = caps.get("session") if type(caps) is dict else None
        prompt = session.get("prompt") if type(session) is dict else None
        advertised: tuple[str, ...] = ()
        custom = False
        if type(prompt) is dict:
            # only an object advertises: omitted and null do not, and the schema deserializes any
            # other value (false, true, ...) to that default (x-deserialize-default-on-error)
            advertised = tuple(f for f in PROMPT_CAPABILITY_TYPES if type(prompt.get(f)) is dict)
            custom = bool(prompt.get("_meta"))
        self.prompt_types = self.between.allowed_types(advertised)
        self.custom_prompt_ok = custom

    @on("agent-response", "session/new", "session/fork")
    def _created(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        """The new session is set up; a fork's is not seen from its creation: it starts from
        another session's history, which a resume may replay."""
        result = msg.get("result")
        new_sid = result.get("sessionId") if type(result) is dict else None
        if type(new_sid) is str:
            if request["method"] == "session/new":
                self.of(new_sid).created = True
            if self.opening:
                self.set_up.add(new_sid)

    @on("update", "subagent_update")
    def _child(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        child = upd.get("sessionId")
        if type(child) is str and child != sid:
            self.of(child).child = True
            self.parents.setdefault(child, sid)
        if self.opening and type(child) is str:
            self.set_up.add(child)  # a child needs no setup of its own (SubagentUpdate)

    @on("client-request", "*")
    def _request(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if self.opening is None:
            self.opening = shows_opening(msg["method"], bool(self.sessions))

    # -- explorers -----------------------------------------------------------------------
    def state_key(self) -> Any:
        return (
            tuple(sorted((k, v.key()) for k, v in self.sessions.items())),
            self.init_pending,
            self.client,
            self.prompt_types,
            self.custom_prompt_ok,
            frozenset(self.offered.items()),
            frozenset(self.asking.items()),
            frozenset(self.parents.items()),
            self.opening,
            frozenset(self.set_up),
        )


S = TypeVar("S")


class SessionMonitor(Monitor, Generic[S]):
    """Base of the monitors that keep one record per session (built by ``SESSION``) and read
    the shared ``Facts`` (``self.facts``): one place for the get-or-create of a session's record."""

    REQUIRES: ClassVar[tuple[type[Monitor], ...]] = (Facts,)
    SESSION: ClassVar[type[Any]]

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.facts = owner.get(Facts)
        self.sessions: dict[str, S] = {}

    def _session(self, sid: str) -> S:
        return self.sessions.get(sid) or self.sessions.setdefault(sid, self.SESSION())

    def _keys_in_interval(self) -> tuple[Any, ...]:
        """Each session's record's ``key(interval, period)``, given its session's interval and
        period counters (``SessionFacts``; 0 before any), in session order."""
        records: dict[str, Any] = self.sessions
        out = []
        for sid, record in sorted(records.items()):
            fs = self.facts.sessions.get(sid)
            out.append((sid, record.key(fs.interval, fs.period) if fs is not None else record.key(0, 0)))
        return tuple(out)
