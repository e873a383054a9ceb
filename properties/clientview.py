"""The seeded faulty client views, on top of the Client's machine, and a transcript read into a view.

Owns: ``FaultyView``, the normative client view (``model.clientview.ClientView``) with one or more
of the faulty views of the registry of seeded bugs (``properties.seeded``, kind ``Misview``)
switched on, each a small branch below testing its name, for mutation testing of the client-view
checks (``properties.viewcheck``); ``CLIENT_FAULTS``, their names; ``client_view``, the view a
simulated Client keeps (the normative one without faults); and ``view_transcript``, a transcript
applied to a fresh normative view (``acp-model view``).

A faulty view folds every message as the normative one does, then departs from it where its
fault says: it overrides the steps of ``ClientView`` (how an entity is keyed and looked up, a
state update, a chunk, a request and its response, what it concludes) and calls the model's own
step for the rest, so the normative view stays stated once, in ``model/``. Its view format
(``to_json``) is the normative one's.

Must not know: transports, the agent's internals, or which rules a monitor checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from model import foreground
from model.clientview import CONTENT, ClientView
from model.clientview_parts import (
    ACTIVE_STATES,
    Entity,
    Json,
    Session,
    defaults,
    freeze,
    is_block,
    is_request_id,
    json_key,
)
from properties import seeded
from properties.bugs import Misview
from properties.findings import Finding
from properties.readings import resolve
from properties.transcript import DEFAULT_MAX_LINE_BYTES, read_transcript

_CHUNK_REPLACES = {
    "agent_message": seeded.MESSAGE_CHUNK_REPLACES.name,
    "tool_call": seeded.TOOL_CHUNK_REPLACES.name,
    "compaction": seeded.SUMMARY_CHUNK_REPLACES.name,
}
"""By entity type: the faulty view whose chunks of that type replace the content."""

CLIENT_FAULTS: tuple[str, ...] = seeded.names("client", Misview)
"""The faulty views (``properties.seeded``: each a branch below testing its name)."""


def client_view(faults: Iterable[str] = (), readings: Mapping[str, str] | None = None) -> ClientView:
    """The view a Client keeps under the readings ``readings`` (checked: ``ReadingError`` for an
    unknown one): the normative one, or a ``FaultyView`` when ``faults`` names any."""
    resolved = resolve(readings)
    chosen = frozenset(faults)
    return FaultyView(chosen, resolved) if chosen else ClientView(readings=resolved)


class _FaultySession(Session):
    """A session of a faulty view: what it concludes beyond what the Agent reported."""

    __slots__ = ("abandon_unreported", "assumed", "deferred", "taken_exited")

    def __init__(self, state: str, abandon_unreported: bool) -> None:
        super().__init__(state)
        self.assumed: set[str] = set()
        """Prompt keys taken as inserted without their response."""
        self.taken_exited: set[str] = set()
        """Terminal IDs taken as exited without their exitStatus."""
        self.deferred: list[dict[str, Json]] = []
        """State updates held back, waiting for an order it inferred."""
        self.abandon_unreported = abandon_unreported
        """Background not reported is taken as [] when judging abandonment."""

    def listed(self) -> list[Json] | None:
        listed = super().listed()
        return [] if listed is None and self.abandon_unreported else listed

    def inserted(self) -> set[str]:
        return super().inserted() | self.assumed

    def exited(self) -> set[str]:
        return super().exited() | self.taken_exited

    def held_back(self) -> int:
        return len(self.deferred)

    def _freeze(self) -> Any:
        return (
            *super()._freeze(),
            tuple(sorted(self.assumed)),
            tuple(sorted(self.taken_exited)),
            freeze(self.deferred),
            self.abandon_unreported,
        )


class FaultyView(ClientView):
    """The normative view with the named faults of ``CLIENT_FAULTS`` switched on."""

    _SHARED = ClientView._SHARED | {"faults"}

    def __init__(self, faults: Iterable[str], readings: Mapping[str, str] | None = None) -> None:
        super().__init__(readings)
        self.faults = frozenset(faults)
        unknown = self.faults - set(CLIENT_FAULTS)
        if unknown:
            raise ValueError(f"unknown client faults: {sorted(unknown)}")
        self._key_by_id = self._has(seeded.KEY_BY_ID_ONLY)
        self._move = self._has(seeded.MOVE_ON_UPDATE)

    def _has(self, bug: seeded.Seeded) -> bool:
        """Whether the faulty view ``bug`` of the registry is switched on."""
        return bug.name in self.faults

    # -- sessions and entities -------------------------------------------------------------------
    def _new_session(self, state: str) -> Session:
        return _FaultySession(state, self._has(seeded.UNREPORTED_BACKGROUND_ABANDONS))

    def _key(self, etype: str, eid: str) -> tuple[str, str]:
        return ("", eid) if self._key_by_id else (etype, eid)

    def _lookup(self, sess: Session, etype: str, eid: str) -> Entity | None:
        ent = super()._lookup(sess, etype, eid)
        if ent is None:
            return None
        if ent.etype != etype:  # only reachable under key-by-id-only: the new type overwrites
            ent.etype = etype
            ent.fields = defaults(etype)
        if self._move:
            key = self._key(etype, eid)
            sess.timeline.remove(key)
            sess.timeline.append(key)
        return ent

    # -- requests and responses ------------------------------------------------------------------
    def _on_client_request(self, rid: Json, method: str, params: dict[str, Json]) -> None:
        super()._on_client_request(rid, method, params)
        sid, content = params.get("sessionId"), params.get("prompt")
        if not self._has(seeded.LOCAL_ECHO) or method != "session/prompt" or not isinstance(content, list):
            return
        if isinstance(sid, str) and is_request_id(rid):
            # its own entry, never merged
            fields = self._create(self._session(sid), "user_message", f"local-{json_key(rid)}").fields
            fields["content"] = [b for b in content if is_block(b)]

    def _prompt_answered(self, sess: Session, key: str, result: Json, error: Json) -> None:
        kept = sess.prompts.get(key) if self._has(seeded.ASSOCIATE_BY_ORDER) else None
        super()._prompt_answered(sess, key, result, error)
        if kept is not None:  # associated by order already: the response's messageId is ignored
            sess.prompts[key] = kept
        if isinstance(sess, _FaultySession) and sess.deferred and not sess.pending():
            held, sess.deferred = sess.deferred, []  # the idles held back for this answer
            for upd in held:
                self._on_state(sess, upd)

    def _session_answered(self, sess: Session, ok: bool) -> None:
        if ok and self._has(seeded.RESPONSE_OVERWRITES_STATE):
            sess.state = "idle"

    # -- updates ---------------------------------------------------------------------------------
    def _fold(self, sid: str, sess: Session, variant: str, upd: dict[str, Json]) -> bool:
        if sess.resuming and variant in CONTENT and self._has(seeded.REPLAY_INFERS_ACTIVITY):
            sess.state = "running"  # activity inferred from replayed content
        if not super()._fold(sid, sess, variant, upd):
            return False
        # what a faulty view does after applying an update as the spec says
        if variant.startswith("session_message") and self._has(seeded.SYNTHESIZE_INCOMING):
            self._synthesize(sid, sess, upd)
        if variant.startswith("session_message") and self._has(seeded.LINK_BY_EQUAL_ID):
            self._link_equal()
        mid = upd.get("messageId")
        by_order = variant.startswith("user_message") and self._has(seeded.ASSOCIATE_BY_ORDER)
        if by_order and isinstance(mid, str) and mid not in sess.prompts.values():
            key = next(iter(sess.pending()), None)  # the oldest prompt without a message takes it
            if key is not None:
                sess.prompts[key] = mid
        return True

    def _synthesize(self, sid: str, sess: Session, upd: dict[str, Json]) -> None:
        """An incoming entry made in the recipient's session from an outgoing message."""
        mid = str(upd.get("messageId"))
        ent = sess.entities.get(self._key("session_message", mid))
        if ent is None:
            return
        recipient = ent.fields.get("recipientSessionId")
        if not isinstance(recipient, str) or recipient == sid:
            return
        other = self._session(recipient)
        if self._lookup(other, "session_message", str(mid)) is None:
            made = self._create(other, "session_message", str(mid)).fields
            made["content"] = list(ent.fields["content"])
            made["senderSessionId"] = sid

    def _link_equal(self) -> None:
        """Each view without the other's ID linked to a message of the same ID in the other
        session."""
        for sess in self._sessions.values():
            for ent in sess.entities.values():
                if ent.etype != "session_message":
                    continue
                for who, link in (
                    ("recipientSessionId", "recipientMessageId"),
                    ("senderSessionId", "senderMessageId"),
                ):
                    other = self._sessions.get(ent.fields.get(who))  # type: ignore[arg-type]
                    if ent.fields.get(link) is not None or other is None or other is sess:
                        continue
                    if self._key("session_message", ent.eid) in other.entities:
                        ent.fields[link] = ent.eid
                        ent.frozen = None
                        sess.snap = None

    def _chunked(self, sess: Session, etype: str, eid: str) -> Entity | None:
        if self._has(seeded.DROP_UNSEEN_CHUNK) and self._key(etype, eid) not in sess.entities:
            return None
        return super()._chunked(sess, etype, eid)

    def _append(self, ent: Entity, target: str, block: Json) -> None:
        if _CHUNK_REPLACES.get(ent.etype, "") in self.faults:
            ent.fields[target] = [block]
        else:
            super()._append(ent, target, block)

    def _take_state(self, sess: Session, upd: dict[str, Json], state: str) -> None:
        assert isinstance(sess, _FaultySession)
        if state == "idle":
            if self._has(seeded.IDLE_WAITS_FOR_ANSWER) and sess.pending():
                sess.deferred.append(upd)  # taken as coming after the prompt's answer
                return
            if (
                self._has(seeded.IDLE_NEEDS_KNOWN_REASON)
                and upd.get("stopReason") not in foreground.STOP_REASONS
            ):
                return  # not taken as the end of the work
            if self._has(seeded.SILENT_TERMINAL_EXITED):
                sess.taken_exited |= {
                    e.eid
                    for e in sess.entities.values()
                    if e.etype == "terminal" and e.fields["output"] is None and e.fields["exitStatus"] is None
                }
        if state == "running" and self._has(seeded.RUNNING_MEANS_INSERTED):
            sess.assumed |= set(sess.pending())
        if state == "unknown" and sess.state in ACTIVE_STATES and self._has(seeded.UNKNOWN_KEEPS_ACTIVITY):
            state = sess.state  # the earlier activity still shown as confirmed
        if state != "idle" and state not in ACTIVE_STATES and self._has(seeded.UNKNOWN_STATE_IS_IDLE):
            state = "idle"
        counted = sess.completions
        super()._take_state(sess, upd, state)
        if state == "idle" and sess.completions == counted and self._has(seeded.REPEAT_IDLE_COUNTS):
            sess.completions += 1
        if upd.get("background") is None and self._has(seeded.OMITTED_BACKGROUND_IS_EMPTY):
            sess.background = []


@dataclass
class ViewedTranscript:
    """A transcript applied to a fresh reference view (``view_transcript``)."""

    view: ClientView
    messages: int
    """Messages applied."""
    skipped: list[Finding]
    """The reader's findings for the first lines it could not use (``keep``), in line order."""
    unusable: int = 0
    """Lines it could not use, all of them."""


def view_transcript(
    stream: BinaryIO,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    readings: Mapping[str, str] | None = None,
    keep: int | None = None,
) -> ViewedTranscript:
    """Apply every usable message of a transcript to a fresh reference view, and keep the
    reader's findings for the lines that could not be used (tolerated input is not skipped):
    the first ``keep`` of them (None: all), the rest counted, so that memory does not grow with
    the number of unusable lines."""
    result = ViewedTranscript(client_view(readings=readings), 0, [])
    for item in read_transcript(stream, max_line_bytes):
        if isinstance(item, Finding):
            if item.severity != "info":
                result.unusable += 1
                if keep is None or len(result.skipped) < keep:
                    result.skipped.append(item)
            continue
        _line, sender, message = item
        result.view.apply(sender, message)
        result.messages += 1
    return result
