"""The background monitor: the ``background`` list of every state_update, against the items' own
updates ("Background work"), and the mirror of an exposed child's state ("Session states").

What is certain in proxy order, and why: agent lines are in send order, so "the item's own update
was sent before the snapshot" is a plain fact, and so is "the snapshot carries no background".

- BG-07 (``model.between`` list_on_every_snapshot): once a concrete list was reported in a
  session, a later state_update without a list (field omitted, null or not an array) breaks it.
  Whether the state_updates before the first list are held to it too is the reading
  ``state-updates-before-first-list``: under ``every`` (not the default) the first list of a
  session that sent a state_update without one is a breach.
- BG-09, BG-10, BG-11 and BG-17 (announced before listed, finalized before removed, listed
  only once and never again once finished, removed once finished) are rows, cells and an
  eventual obligation of the background item table
  (``model.background``), fired by the table monitor from the observer layer
  (``properties.observe``): not here.
- BG-13 (``model.between`` terminal_listed_alone): a tool call listed together with a terminal
  that its content embeds. Whether such a
  tool call's only live work is that terminal is the reading ``tool-with-listed-terminal``: by
  default (``only-live-work``) it is, and listing both is a breach; under
  ``may-have-other-work`` the tool call may have live work the wire does not show (no breach).
  Which terminals a tool call's content embeds is ``Facts.terms``.
- STATE-01 (SHOULD, eventually): an exposed child is one announced by a ``subagent_update`` in
  its parent. The child reports its own state with ``state_update`` in its own session; the
  parent's ``subagent_update.state`` should show the same state. Mirroring may lag, so this is
  judged at the end: the last state the child reported must equal the ``state`` inside the
  parent's latest ``subagent_update.state`` for it.

Tolerated: a tool call opened for background work without one of its own, even while idle
(BG-04); cancellation stopping unlisted background activity (CANCEL-03). Unknown item types are
skipped (they still count as background work).

Must not know: foreground state, prompts, the background item lifecycle (the table states it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from model import between as bw
from properties.monitor import Message, Monitor, on
from properties.monitors.facts import Facts
from properties.observe import background_keys
from properties.readings import STATE_UPDATES_BEFORE_FIRST_LIST, TOOL_WITH_LISTED_TERMINAL

if TYPE_CHECKING:
    from properties.engine import MonitorSet

_UNSET: Any = "<never mirrored>"


class BackgroundMonitor(Monitor):
    """Background lists against the items' own updates (see module docstring)."""

    RULES = (bw.LIST_ON_EVERY_SNAPSHOT.rule, bw.TERMINAL_LISTED_ALONE.rule, "STATE-01")
    TOLERATES = ("BG-04", "CANCEL-03")
    REQUIRES = (Facts,)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.facts = owner.get(Facts)
        self.parents: dict[str, str] = {}  # exposed child -> parent
        self.mirrored: dict[str, Any] = {}  # child -> state the parent last showed
        self.own: dict[str, tuple[Any, int]] = {}  # child -> (state it last reported itself, line)

    @on("update", "subagent_update")
    def _subagent(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        child = upd.get("sessionId")
        if type(child) is not str:
            return
        self.parents.setdefault(child, sid)
        if "state" in upd:
            snap = upd["state"]
            self.mirrored[child] = snap.get("state") if type(snap) is dict else None

    # -- snapshots -----------------------------------------------------------------------
    @on("update", "state_update")
    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """An exposed child's own state, and the snapshot's background list."""
        if sid in self.parents:
            self._ex["STATE-01"] += 1
            self.own[sid] = (upd.get("state"), line)
        # (the facts record a state_update's session anyway)
        fs = self.facts.sessions.get(sid) or self.facts.of(sid)
        reported = fs.listed is not None  # a concrete list was reported before
        if not reported and "background" not in upd:
            return  # nothing reported yet, nothing reported now
        raw = upd.get("background")
        keys = background_keys(raw)
        rule = bw.LIST_ON_EVERY_SNAPSHOT.rule
        bare = bool(fs.bare_line)
        every = self.between.lists_before_first(self.reading(STATE_UPDATES_BEFORE_FIRST_LIST))
        if reported or (keys is not None and bare):
            self._ex[rule] += 1
        if self.between.list_missing(reported, bare, every, keys is not None):
            if reported:
                what = "omits background" if "background" not in upd else f"has background {raw!r}"
                why = f"state_update {what} after this session reported a background list"
                self.breach(rule, line, sid, why, msg)
            else:
                why = (
                    "the session's first background list comes after a state_update without one "
                    f"(line {fs.bare_line})"
                )
                self.breach(rule, line, sid, why, msg, (STATE_UPDATES_BEFORE_FIRST_LIST,))
        if keys is None:
            return
        terms = fs.terms
        if terms and self.between.terminal_alone_binds(self.reading(TOOL_WITH_LISTED_TERMINAL)):
            alone = bw.TERMINAL_LISTED_ALONE.rule
            for ident, both, breaks in self.between.listed_with_terminal(frozenset(keys), terms):
                self._ex[alone] += 1  # a tool call runs a listed terminal: is it listed too?
                if breaks:
                    self.breach(
                        alone,
                        line,
                        sid,
                        f"background lists tool call {ident!r} and the terminal "
                        f"{', '.join(map(repr, both))} it runs: list the terminal only",
                        msg,
                        (TOOL_WITH_LISTED_TERMINAL,),
                    )

    def at_end(self, quiescent: bool) -> None:
        for child, (state, line) in self.own.items():
            shown = self.mirrored.get(child, _UNSET)
            if shown != state:
                self.eventually(
                    "STATE-01",
                    quiescent,
                    line,
                    self.parents[child],
                    f"child {child!r} last reported {state!r}, its parent's subagent_update shows {shown!r}",
                )

    # -- explorers -----------------------------------------------------------------------
    def state_key(self) -> Any:
        return (
            frozenset(self.parents.items()),
            frozenset((k, repr(v)) for k, v in self.mirrored.items()),
            frozenset((k, repr(v[0])) for k, v in self.own.items()),
        )
