"""The simulated Client: what it may send, read from its machine tables, and the view it keeps of
what it receives.

Theory of operation
-------------------
The Client's choices are enabled events ``("client", name, arg)`` within the bounds and features
of ``Config``, in a fixed order. It follows two machines on the wire: its session (a state of
``model.session``) and each permission request it has not answered yet (a state of
``model.permission``). Its choices for them are the tables' client rows from those states whose
guards pass (``MachineSpec.moves(state, "client")``), turned into its wire events by two small maps:
``SESSION_EVENTS`` (``close``: session/close; ``resume``: session/resume with and without
replay) and ``PERMISSION_EVENTS`` (``select``: allow, deny, or stop where the request offers
it; ``answer_cancelled``: the cancelled outcome; ``error``: a JSON-RPC error instead of a
result, behind the feature ``perm_error``). The tables are the Client's ``Config``'s
(``Config.variant``), so a row a variant adds for the Client is a move it offers, and a row a
variant removes is one it no longer offers. Config features and bounds still limit the
session moves (a feature named like the trigger; ``Config.closes``, ``resumes``,
``reattaches``). A trigger with no event here (none today) is
a row the Client cannot send, and is not offered (no Client row has a guard: they need no
context).

Where the Client's state comes from:
- its session moves fire the session table; the Agent's steps of the handshake that follows
  (replay, snapshot) are not followed (judging them is the checker's business; following them
  would split Client states the explorers merge today): the Client stays in ``resuming`` until
  the response, then takes the table's row for that response (``RESPONSE_ROW``); only the
  response to its latest close or resume counts (matched by request id: under a variant that
  lets it resume while closing, the close's response does not end the resume);
- a permission request is pending when it arrives; the Agent's withdrawal (``$/cancel_request``)
  is followed only when the tables give the Client other moves from withdrawn than from pending
  (``follows_withdrawals``: under the spec's table they are the same moves); ``abandon`` is shown
  by no message. An answer is sent once: the request is then no longer the Client's to answer.

What no table the Client can follow decides (hand-written here):
- sending ``session/prompt`` (``PROMPT_FROM``): the request creates its prompt machine, no row
  of a machine the Client follows is its cause;
- ``session/cancel`` and ``$/cancel_request`` (``CANCEL_FROM``): the prompt table lets the
  Client cover or withdraw a prompt in every state, so it refuses neither; which state a prompt
  is in is hidden (holding and inserting show on no message), so the Client does not follow
  the prompt machine, and offers them for the session states and unanswered prompts named there.

It keeps its view of the session in a ``ClientView`` (the normative one, or a faulty one for
mutation testing) fed with everything it sends and receives, or a ``BlindView`` that keeps
nothing when nothing will read it (a random walk without view faults).

Seeded client faults are the Client's named deviations of ``simulator.peers.deviations`` (a request
offered where the conforming Client sends none, a message rewritten), applied here by one
generic piece of code (``do``, ``_rewritten``). A deviation that makes a message differ
from what the conforming Client would send leaves a breach marker (``marks``, as the Agent's
do).

Must not know: the Agent's internals or the transport's order, monitors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field, fields
from typing import Any

from model import elicitation as em
from model import permission as pm
from model import session as sm
from model.clientview import ClientView
from model.core import MachineSpec
from properties import seeded
from properties.clientview import client_view
from properties.variants import tables_of
from simulator.peers import deviations, wire
from simulator.peers.agent import MAIN
from simulator.peers.config import Config

Event = tuple[str, str, Any]
Msg = dict[str, Any]

SESSION_EVENTS: Mapping[str, tuple[Event, ...]] = {
    "close": (("client", "close", None),),
    "resume": (("client", "resume", True), ("client", "resume", False)),
}
"""Session trigger -> the Client's events that fire it (the Config feature that lets the Client
fire it is named like it)."""

PERMISSION_EVENTS: Mapping[str, tuple[str, ...]] = {
    "select": ("allow", "deny", "stop"),
    "answer_cancelled": ("dismiss",),
    "error": ("fail_answer",),
}
"""Permission trigger -> the Client's events (their arg is the request id)."""

PERMISSION_FEATURE: Mapping[str, str] = {"fail_answer": "perm_error"}
"""Permission event -> the Config feature without which the Client does not offer it."""

TRIGGER_OF: Mapping[str, str] = {
    **{name: trigger for trigger, events in SESSION_EVENTS.items() for _, name, _ in events},
    **{name: trigger for trigger, names in PERMISSION_EVENTS.items() for name in names},
}
"""Client event name -> the table trigger it fires."""

RESPONSE_ROW: Mapping[str, tuple[str, str]] = {
    sm.CLOSING: (sm.CLOSING, "closed"),
    sm.RESUMING: (sm.SYNCED, "resumed"),
}
"""Session state -> the (state, trigger) cell whose row the response to the Client's latest
session request takes it through: the close response; the resume response (the Agent's replay
and snapshot came before it, unfollowed)."""

PROMPT_FROM: tuple[str, ...] = (sm.OPEN,)
"""Session states from which the conforming Client sends session/prompt (no table row)."""

CANCEL_FROM: tuple[str, ...] = (sm.OPEN, sm.CLOSING, sm.RESUMING)
"""Session states from which the Client sends session/cancel and $/cancel_request (no table
row: the prompt table allows both in every state). Neither a close nor a resume being answered
stops it cancelling: Cancellation says the Client may cancel the session's foreground work at
any time, so a cancel may race a resume's snapshot and response (a resume of an open session
may find work running)."""


def follows_withdrawals(tables: Mapping[str, MachineSpec]) -> bool:
    """Whether the Client must tell a withdrawn request from a pending one (see the header)."""
    spec = tables["permission"]
    return spec.moves(pm.WITHDRAWN, "client") != spec.moves(pm.PENDING, "client")


CLIENT_SIDE_FAULTS = seeded.names("client", deviations.Deviation)
"""The seeded faults of what the Client sends (``properties.seeded``)."""


def _cancelled_idle(msg: Msg) -> bool:
    """``msg`` reports idle with the cancelled stop reason."""
    params = msg.get("params")
    upd = params.get("update") if isinstance(params, dict) else None
    return isinstance(upd, dict) and upd.get("state") == "idle" and upd.get("stopReason") == "cancelled"


class BlindView:
    """The view of a run where nothing reads the Client's view (no faulty view to compare
    with a reference; the Client's choices never read it): it keeps nothing."""

    def apply(self, sender: str, message: Any) -> None:
        return None

    def __deepcopy__(self, memo: dict[int, Any]) -> BlindView:
        return self  # it keeps nothing: copies may share it

    def snapshot(self) -> Any:
        return ()

    def to_json(self) -> dict[str, Any]:
        return {}


@dataclass(slots=True, eq=False, repr=False)
class Client:
    cfg: Config
    faults: frozenset[str] = frozenset()
    given: InitVar[ClientView | BlindView | None] = None  # its view (None: as its faults have it)
    view: ClientView | BlindView = field(init=False)
    tables: Mapping[str, MachineSpec] = field(init=False)  # the model's tables, or the run's variant's
    deviations: tuple[Any, ...] = field(init=False)
    follows: bool = field(init=False)
    # its state (``snapshot``), after the fields its run fixes
    next_id: int = field(init=False, default=0)
    prompts_sent: int = field(init=False, default=0)
    unanswered: list[int] = field(init=False, default_factory=list)  # prompts without a response yet
    cancels: int = field(init=False, default=0)
    cancel_requests: int = field(init=False, default=0)
    perms: tuple[tuple[str, str], ...] = field(init=False, default=())
    """Permission requests awaiting its answer: (request id, pending or withdrawn by the Agent)."""
    elicits: tuple[tuple[str, str, str], ...] = field(init=False, default=())
    """Elicitations awaiting its answer: (request id, mode, pending / held / withdrawn); held:
    of work it cancelled (pending when it sent session/cancel, or when the idle confirming a
    cancellation arrived), answered once the Agent withdraws it (so the user is not asked
    for input the cancelled work no longer needs). Holding is a fairness choice, not a rule:
    a Client that always answered at once would discharge the withdrawal the Agent owes
    (CANCEL-19) before it could be judged; under the feature ``answer_held`` it may also answer
    a held one at once, as if pending (``_hold``). Its answer after the withdrawal is still any of the
    elicitation table's client rows from withdrawn: an accept there is the late answer
    ``model.between`` LATE_ANSWERS_IGNORED says the Agent ignores (CANCEL-10)."""
    stoppable: tuple[str, ...] = field(init=False, default=())
    """Permission requests awaiting its answer that offer the option stopping the work
    (``wire.STOP_OPTION``): the user may choose it (``stop``), ending the work cancelled."""
    closes: int = field(init=False, default=0)
    resumes: int = field(init=False, default=0)
    reattaches: int = field(init=False, default=0)  # session/resume sent while the session was open
    session: str = field(init=False)  # a state of the session table
    marks: tuple[str, ...] = field(init=False, default=())  # breach markers: rules a fault's messages broke
    asked: int | None = field(init=False, default=None)  # its latest close's or resume's id, until answered
    first_prompt: int | None = field(init=False, default=None)
    """The id of its first session/prompt, whose content it may send again (feature ``retry``:
    None without it)."""
    retried: int | None = field(init=False, default=None)
    """The id of its session/prompt that repeated the first one's content (a retry), once per run.
    2. Prompt accepted: the Agent must give distinct submissions distinct message IDs even if
    their content is identical, the Client must not associate by content, and a retry can create
    another submission; so a later prompt may carry an earlier one's content (its text). The
    Agent then echoes what it received (``AgentState.contents``), so its user messages are
    identical too. These two ids make every prompt's text part of the Client's state; which
    prompt also carried a link (``rich_prompt``) is not, so with both features on (only the
    conforming-twin search has that) states differing only in an echoed link are merged."""
    extra_resumes: tuple[int, ...] = field(init=False, default=())
    """Ids of resumes sent while another was answered, until answered: no prompt meanwhile
    (a session/prompt waits for every resume of the session to be answered)."""

    def __post_init__(self, given: ClientView | BlindView | None) -> None:
        view_faults = self.faults.difference(CLIENT_SIDE_FAULTS)
        self.view = given if given is not None else client_view(view_faults, self.cfg.reading_map())
        self.tables = tables_of(self.cfg.variant)
        self.deviations = deviations.of(self.faults, "client")
        self.follows = follows_withdrawals(self.tables)
        self.session = self.tables["session"].initial

    def clone(self, view: ClientView | BlindView) -> Client:
        new = Client.__new__(Client)
        for name in Client.__slots__:
            setattr(new, name, getattr(self, name))
        new.view = view
        new.unanswered = list(self.unanswered)
        return new

    def snapshot(self) -> tuple[Any, ...]:
        """Everything of the Client but what its run fixes (lists as tuples)."""
        return tuple(tuple(v) if type(v) is list else v for v in map(self.__getattribute__, _STATE))

    # -- choices ------------------------------------------------------------------------------
    def enabled(self) -> list[Event]:
        cfg = self.cfg
        state = self.session
        ev: list[Event] = []
        if self.prompts_sent < cfg.prompts and (
            (state in PROMPT_FROM and not self.extra_resumes)
            or (self.deviations and deviations.offered(self.deviations, "prompt", state))
        ):
            ev.append(("client", "prompt", None))
            if "rich_prompt" in cfg.features:  # content other than text, of the baseline set
                ev.append(("client", "prompt", "link"))
            if self.first_prompt is not None and self.retried is None:  # feature retry, once
                ev.append(("client", "prompt", "same"))
        # the session table's client rows from its state: a close before the cancels, the others
        # last (the order of the enabled events is what seeded walks pick from: keep it)
        late: list[Event] = []
        for t, _ in self.tables["session"].moves(state, "client"):
            if t in SESSION_EVENTS and self._within(t):
                (ev if t == "close" else late).extend(SESSION_EVENTS[t])
        if state in CANCEL_FROM and "cancel" in cfg.features:  # a close does not stop cancels
            if self.cancels < cfg.cancels:
                ev.append(("client", "cancel", None))
            if self.cancel_requests < cfg.cancel_requests:
                # any prompt it has no answer for yet (the answer may be in flight)
                for prompt_rid in self.unanswered:
                    ev.append(("client", "cancel_request", prompt_rid))
        for rid, status in self.perms:
            for trigger, _ in self.tables["permission"].moves(status, "client"):
                for name in PERMISSION_EVENTS.get(trigger, ()):
                    if name == "stop" and rid not in self.stoppable:
                        continue  # an option the request did not offer
                    if name not in PERMISSION_FEATURE or PERMISSION_FEATURE[name] in cfg.features:
                        ev.append(("client", name, rid))
        for rid, mode, status in self.elicits:
            if status == "held":  # of cancelled work: answered once withdrawn, or at once
                if "answer_held" not in cfg.features:  # (``_answer_held``)
                    continue
                status = em.PENDING
            for trigger, _ in self.tables["elicitation"].moves(status, "client", {"url": mode == "url"}):
                ev.append(("client", f"elicit_{trigger}", rid))
        return ev + late

    def _within(self, trigger: str) -> bool:
        """The Config lets the Client fire session ``trigger`` (its feature and its bound)."""
        cfg = self.cfg
        if trigger not in cfg.features:
            return False
        if self.session == sm.RESUMING and "overlap" not in cfg.features:
            return False  # closing or resuming again while a resume is answered: a freedom of its own
        if trigger == "close":  # not once closed: the row from closed is for a close that
            # raced the close response (the Agent's to take); a Client that has the response knows
            return self.closes < cfg.closes and self.session != sm.CLOSED
        if self.session == sm.OPEN:  # a resume of a session still open: attaching again
            return self.reattaches < cfg.reattaches
        return self.resumes < cfg.resumes

    # -- moves ----------------------------------------------------------------------------------
    def _breach(self, rule: str) -> None:
        if rule not in self.marks:
            self.marks = (*self.marks, rule)

    def _rid(self) -> int:
        self.next_id += 1
        return self.next_id

    def _asked(self) -> int:
        """The id of a new session request (close or resume): the one whose response counts."""
        self.asked = self._rid()
        return self.asked

    def do(self, name: str, arg: Any) -> list[Msg]:
        if not self.deviations:
            return self._do(name, arg)
        # the deviations that offer a move the conforming Client does not take in this state
        for deviation in deviations.offered(self.deviations, name, self.session):
            self._breach(deviation.rule)
        return [self._rewritten(name, msg) for msg in self._do(name, arg)]

    def _rewritten(self, name: str, msg: Msg) -> Msg:
        """``msg`` as the first deviation that rewrites move ``name``'s messages has it (marked)."""
        for r in deviations.matching(self.deviations, deviations.Rewrite, action=name):
            if deviations.rewrite(msg, r):
                self._breach(r.rule)
                break
        return msg

    def _do(self, name: str, arg: Any) -> list[Msg]:
        if name == "prompt":
            self.prompts_sent += 1
            rid = self._rid()
            self.unanswered.append(rid)
            content = [wire.text(f"prompt {rid}")]
            if arg == "same":  # a retry: its first prompt's content again (``retried``)
                self.retried = rid
                content = [wire.text(f"prompt {self.first_prompt}")]
            elif self.first_prompt is None and "retry" in self.cfg.features:
                self.first_prompt = rid
            if arg == "link":
                content.append(wire.resource_link("file:///work/README.md", "README.md"))
            return [wire.prompt(rid, MAIN, content)]
        if name == "cancel":
            self.cancels += 1
            self._hold()
            return [wire.cancel(MAIN)]
        if name.startswith("elicit_"):  # accept, decline or cancel: the elicitation table's row
            action = name.removeprefix("elicit_")
            _, mode, status = next(e for e in self.elicits if e[0] == arg)  # withdrawn: still answered
            status = em.PENDING if status == "held" else status  # held: pending for the Agent
            self.tables["elicitation"].fire(status, action, {"url": mode == "url"})
            self.elicits = tuple(e for e in self.elicits if e[0] != arg)  # answered once
            return [wire.elicitation_answer(arg, action)]
        if name == "cancel_request":
            self.cancel_requests += 1
            return [wire.cancel_request(arg)]
        trigger = TRIGGER_OF.get(name)
        if trigger is None:
            raise ValueError(f"unknown client event {name!r}")
        if trigger in PERMISSION_EVENTS:
            at = next(i for i, (rid, _) in enumerate(self.perms) if rid == arg)
            self.tables["permission"].fire(self.perms[at][1], trigger)
            self.perms = self.perms[:at] + self.perms[at + 1 :]  # answered once: no longer its to answer
            self.stoppable = tuple(r for r in self.stoppable if r != arg)
            if name == "dismiss":
                return [wire.permission_cancelled(arg)]
            if name == "fail_answer":
                return [wire.error(arg, wire.INTERNAL_ERROR, "permission prompt failed")]
            return [wire.permission_selected(arg, name)]
        before = self.session
        self.session = self.tables["session"].fire(before, trigger)
        if name == "close":
            self.closes += 1
            return [wire.close(self._asked(), MAIN)]
        if before == sm.OPEN:
            self.reattaches += 1
        else:
            self.resumes += 1
        if before == sm.RESUMING:  # a second resume while one is answered: the first's answer counts
            rid = self._rid()
            self.extra_resumes = (*self.extra_resumes, rid)
            return [wire.resume(rid, MAIN, bool(arg))]
        return [wire.resume(self._asked(), MAIN, bool(arg))]

    def _hold(self) -> None:
        """Hold the pending elicitations: the work they belong to is cancelled.

        Answering a held elicitation at once (feature ``answer_held``) is a freedom of its own:
        Cancellation says a response can race with session/cancel before the cancellation
        completes, and Lifecycle examples that permissions and both elicitation modes follow the
        same rules. Holding stays a branch beside it, so the withdrawal the Agent owes
        (CANCEL-19) is still judged where the Client waits for it."""
        self.elicits = tuple((r, m, "held" if st == em.PENDING else st) for r, m, st in self.elicits)

    def receive(self, msg: Msg) -> None:
        method = msg.get("method")
        if method == "elicitation/create":
            self.elicits = (*self.elicits, (msg["id"], msg["params"].get("mode"), em.PENDING))
        elif method == "session/request_permission":
            self.perms = (*self.perms, (msg["id"], pm.PENDING))
            options = msg["params"].get("options") or ()
            if any(
                isinstance(o, dict) and o.get("optionId") == wire.STOP_OPTION["optionId"] for o in options
            ):
                self.stoppable = (*self.stoppable, msg["id"])
        elif method == "$/cancel_request":  # the Agent withdrew a request
            params = msg.get("params")
            rid = params.get("requestId") if isinstance(params, dict) else None
            if self.follows:
                self.perms = tuple((r, pm.WITHDRAWN if r == rid else st) for r, st in self.perms)
            if self.elicits:  # an elicitation withdrawn: still answered
                self.elicits = tuple((r, m, em.WITHDRAWN if r == rid else st) for r, m, st in self.elicits)
        elif self.elicits and method == "session/update" and _cancelled_idle(msg):
            self._hold()  # the work the pending elicitations belong to ended cancelled
        elif method is None:
            rid = msg.get("id")
            if rid in self.unanswered:
                self.unanswered.remove(rid)
            elif rid in self.extra_resumes:
                self.extra_resumes = tuple(r for r in self.extra_resumes if r != rid)
            elif rid is not None and rid == self.asked:  # its latest close's or resume's response
                self.asked = None  # (the response to an earlier one tells it nothing new)
                row = RESPONSE_ROW.get(self.session)
                after = self.tables["session"].successor(*row) if row is not None else None
                if after is not None:
                    self.session = after


_STATE = tuple(f.name for f in fields(Client))[tuple(f.name for f in fields(Client)).index("next_id") :]
"""The Client's fields that make its state (``Client.snapshot``): those after what its run fixes."""
