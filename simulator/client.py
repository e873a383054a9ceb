"""The simulated Client: what it may send, and the view it keeps of what it receives.

Theory of operation
-------------------
The Client may send ``session/prompt`` in any state, ``session/cancel``, ``$/cancel_request``
for a prompt still unanswered, answers to permission requests (allow, deny or the cancelled
outcome), ``session/close`` (and cancels while it closes) and ``session/resume`` with or without replay, of a
closed session or of one still open (``Config.reattaches``). Each
is an enabled event ``("client", name, arg)`` within the bounds of ``Config``. It keeps its
view of the session in a ``ClientView`` (the normative one, or a faulty one for mutation
testing) fed with everything it sends and receives, or a ``BlindView`` that keeps nothing when
nothing will read it (a random walk without view faults). A fault that makes a message differ from what
the conforming Client would send leaves a breach marker (``marks``, as the Agent's do).

Must not know: the Agent's internals or the transport's order.
"""

from __future__ import annotations

from typing import Any

from properties.clientview import ClientView
from simulator import wire
from simulator.agent import MAIN
from simulator.config import Config

Event = tuple[str, str, Any]
Msg = dict[str, Any]

CLIENT_SIDE_FAULTS = (
    "empty-prompt",  # sends a session/prompt with an empty prompt array
    "image-without-capability",  # sends an image the Agent did not advertise
    "prompt-during-resume",  # sends a session/prompt before session/resume was answered
)


class BlindView:
    """The view of a run where nothing reads the Client's view (no faulty view to compare
    with a reference; the Client's choices never read it): it keeps nothing."""

    def apply(self, sender: str, message: Any) -> None:
        return None

    def snapshot(self) -> Any:
        return ()

    def to_json(self) -> dict[str, Any]:
        return {}


class Client:
    __slots__ = (
        "cancel_requests",
        "cancels",
        "cfg",
        "closes",
        "faults",
        "marks",
        "next_id",
        "perms",
        "prompts_sent",
        "reattaches",
        "resumes",
        "session",
        "unanswered",
        "view",
    )

    def __init__(
        self, cfg: Config, faults: frozenset[str] = frozenset(), view: ClientView | BlindView | None = None
    ) -> None:
        self.cfg = cfg
        self.faults = faults
        self.view = (
            view
            if view is not None
            else ClientView(faults=faults - set(CLIENT_SIDE_FAULTS), readings=cfg.reading_map())
        )
        self.next_id = 0
        self.prompts_sent = 0
        self.unanswered: list[int] = []  # prompt request ids without a response yet
        self.cancels = 0
        self.cancel_requests = 0
        self.perms: list[str] = []  # permission request ids awaiting an answer
        self.closes = 0
        self.resumes = 0
        self.reattaches = 0  # session/resume sent while the session was open
        self.session = "open"  # open, closing, closed, resuming
        self.marks: tuple[str, ...] = ()  # breach markers: rules a fault made a message break

    def clone(self, view: ClientView | BlindView) -> Client:
        new = Client.__new__(Client)
        for name in Client.__slots__:
            setattr(new, name, getattr(self, name))
        new.view = view
        new.unanswered = list(self.unanswered)
        new.perms = list(self.perms)
        return new

    def snapshot(self) -> tuple[Any, ...]:
        return (
            self.next_id,
            self.prompts_sent,
            tuple(self.unanswered),
            self.cancels,
            self.cancel_requests,
            tuple(self.perms),
            self.closes,
            self.resumes,
            self.reattaches,
            self.session,
            self.marks,
        )

    def _has(self, feature: str) -> bool:
        return feature in self.cfg.features

    def enabled(self) -> list[Event]:
        cfg = self.cfg
        features = cfg.features
        ev: list[Event] = []
        resuming_prompt = self.session == "resuming" and "prompt-during-resume" in self.faults
        if resuming_prompt and self.prompts_sent < cfg.prompts:
            ev.append(("client", "prompt", None))
        if self.session == "open":
            if self.prompts_sent < cfg.prompts:
                ev.append(("client", "prompt", None))
            if "close" in features and self.closes < cfg.closes:
                ev.append(("client", "close", None))
        if self.session in ("open", "closing"):  # a close does not stop the Client cancelling
            if "cancel" in features and self.cancels < cfg.cancels:
                ev.append(("client", "cancel", None))
            if "cancel" in features and self.cancel_requests < cfg.cancel_requests:
                # any prompt it has no answer for yet (the answer may be in flight)
                for prompt_rid in self.unanswered:
                    ev.append(("client", "cancel_request", prompt_rid))
        for rid in self.perms:
            ev.append(("client", "allow", rid))
            ev.append(("client", "deny", rid))
            ev.append(("client", "dismiss", rid))
        if "resume" in features and (
            (self.session == "closed" and self.resumes < cfg.resumes)
            or (self.session == "open" and self.reattaches < cfg.reattaches)
        ):
            ev.append(("client", "resume", True))
            ev.append(("client", "resume", False))
        return ev

    def _breach(self, rule: str) -> None:
        if rule not in self.marks:
            self.marks = (*self.marks, rule)

    def _rid(self) -> int:
        self.next_id += 1
        return self.next_id

    def do(self, name: str, arg: Any) -> list[Msg]:
        if name == "prompt":
            if self.session == "resuming":  # seeded bug "prompt-during-resume"
                self._breach("INTRO-01")
            self.prompts_sent += 1
            rid = self._rid()
            self.unanswered.append(rid)
            content: list[Any] = [wire.text(f"prompt {rid}")]
            if "empty-prompt" in self.faults:
                self._breach("USER-01")
                content = []
            elif "image-without-capability" in self.faults:
                self._breach("USER-03")
                content = [wire.image()]
            return [wire.prompt(rid, MAIN, content)]
        if name == "cancel":
            self.cancels += 1
            return [wire.cancel(MAIN)]
        if name == "cancel_request":
            self.cancel_requests += 1
            return [wire.cancel_request(arg)]
        if name in ("allow", "deny"):
            self.perms.remove(arg)
            return [wire.permission_selected(arg, name)]
        if name == "dismiss":
            self.perms.remove(arg)
            return [wire.permission_cancelled(arg)]
        if name == "close":
            self.closes += 1
            self.session = "closing"
            return [wire.close(self._rid(), MAIN)]
        if name == "resume":
            if self.session == "open":
                self.reattaches += 1
            else:
                self.resumes += 1
            self.session = "resuming"
            return [wire.resume(self._rid(), MAIN, bool(arg))]
        raise ValueError(f"unknown client event {name!r}")

    def receive(self, msg: Msg) -> None:
        method = msg.get("method")
        if method == "session/request_permission":
            self.perms.append(msg["id"])
        elif method is None:
            rid = msg.get("id")
            if rid in self.unanswered:
                self.unanswered.remove(rid)
            elif self.session == "closing":
                self.session = "closed"
            elif self.session == "resuming":
                self.session = "open"
