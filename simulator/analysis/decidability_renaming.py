"""The twin comparison of a decidability witness: same messages, up to the Agent's own choices.

Theory of operation
-------------------
A conforming twin (``simulator.analysis.decidability.twin``) must send the breaking run's
messages. Some values in them the spec leaves to the Agent, and a conforming Agent may choose
them differently from the seeded bug without anything else changing: the name of a custom
state (Session states: any ``_``-prefixed value beside the standard ones), and the ID and text
of a user message no prompt response returns (a message the Agent minted and wrote itself,
such as its own insertion), and text of a ``user_message`` update that no Client sent (the
interim content of a submission's message: ``properties.readings`` user-message-content). The
comparison treats those values as names: a twin's line matches
a target line when both are equal once each free value of the target is replaced by the twin's
value under one *renaming* kept along the whole run, and the renaming is one to one (two target
values never map to one twin value, and a value is never renamed to one the target uses
elsewhere).

Everything else is compared exactly. In particular a value is never free when the target
carries it anywhere outside a free position (``pinned``): so the messageId a success response
returned, every value the Client sent (its prompt's text, request IDs), stop reasons, method
and update names, and tool-call, terminal or compaction IDs stay as they are, and a twin that
differs from the target in any of them is no twin.

Must not know: worlds, events or the search (``simulator.analysis.decidability`` does).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from simulator.peers.world import Line

Renaming = tuple[tuple[str, str], ...]
"""Target value -> twin value, sorted (hashable: a search state keeps it)."""
Path = tuple[str | int, ...]

_USER = ("user_message", "user_message_chunk")


def _update(line: Line) -> dict[str, Any] | None:
    sender, msg = line
    if sender != "agent" or msg.get("method") != "session/update":
        return None
    update = msg.get("params", {}).get("update")
    return update if isinstance(update, dict) else None


def _candidates(line: Line) -> Iterator[tuple[Path, str]]:
    """Positions of ``line`` that may hold a value of the Agent's choosing, before pinning:
    ``kind`` id, text (of the user message at the id) or state."""
    update = _update(line)
    if update is None:
        return
    base: Path = ("params", "update")
    kind = update.get("sessionUpdate")
    if kind == "state_update" and isinstance(update.get("state"), str) and update["state"].startswith("_"):
        yield (*base, "state"), "state"
    if kind in _USER and isinstance(update.get("messageId"), str):
        yield (*base, "messageId"), "id"
        content = update.get("content")
        many = isinstance(content, list)
        for i, block in enumerate(content if isinstance(content, list) else [content]):
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                yield (*base, "content", *((i,) if many else ()), "text"), "text"


def _get(msg: Any, path: Path) -> Any:
    for key in path:
        if not (
            key in msg
            if isinstance(msg, dict)
            else isinstance(msg, list) and isinstance(key, int) and key < len(msg)
        ):
            return None
        msg = msg[key]
    return msg


def _strings(value: Any, path: Path, skip: frozenset[Path]) -> Iterator[str]:
    if path in skip:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, (*path, k), skip)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, (*path, i), skip)


def pinned(target: list[Line]) -> frozenset[str]:
    """Every string the target carries outside a candidate position: compared exactly."""
    out: set[str] = set()
    for line in target:
        skip = frozenset(p for p, _ in _candidates(line))
        out.update(_strings(line[1], (), skip))
    return frozenset(out)


def free_paths(line: Line, fixed: frozenset[str]) -> list[Path]:
    """The positions of target ``line`` whose value a twin may rename: custom states, the ID and
    text of a user message whose ID is not pinned (no response returns it), and the text of a
    ``user_message`` update that is not pinned (text no Client sent: interim text of the Agent's
    own, which the reading ``user-message-content=upsert`` allows; a chunk's text stays as it is:
    it is a part of the content)."""
    cands = list(_candidates(line))
    mid = next((_get(line[1], p) for p, k in cands if k == "id"), None)
    mine = isinstance(mid, str) and mid not in fixed
    full = (_update(line) or {}).get("sessionUpdate") == "user_message"
    out: list[Path] = []
    for path, kind in cands:
        value = _get(line[1], path)
        if value in fixed:
            continue
        if kind == "state" or mine or (kind == "text" and full):
            out.append(path)
    return out


def _blank(msg: Any, paths: list[Path]) -> Any:
    """``msg`` with the values at ``paths`` replaced by None (a copy where it changes)."""
    if not paths or not isinstance(msg, (dict, list)):
        return msg
    heads: dict[str | int, list[Path]] = {}
    for p in paths:
        heads.setdefault(p[0], []).append(p[1:])
    items = msg.items() if isinstance(msg, dict) else enumerate(msg)
    out = {k: None if () in heads.get(k, []) else _blank(v, heads.get(k, [])) for k, v in items}
    return out if isinstance(msg, dict) else list(out.values())


class Comparison:
    """The twin comparison against one target transcript (its pinned values and free positions
    computed once)."""

    def __init__(self, target: list[Line]) -> None:
        self.target = target
        self.fixed = pinned(target)
        self.free = [free_paths(line, self.fixed) for line in target]

    def match(self, twin: list[Line], pos: int, renaming: Renaming) -> Renaming | None:
        """``renaming`` extended so that ``twin`` matches the target's lines from ``pos`` on, line
        by line, or None."""
        want_lines = self.target[pos : pos + len(twin)]
        if len(twin) != len(want_lines):
            return None
        forward = dict(renaming)
        backward = {v: k for k, v in renaming}
        for i, (got, want) in enumerate(zip(twin, want_lines, strict=True)):
            paths = self.free[pos + i]
            if not paths:
                if got != want:
                    return None
                continue
            if got[0] != want[0] or _blank(got[1], paths) != _blank(want[1], paths):
                return None
            for path in paths:
                t, w = _get(want[1], path), _get(got[1], path)
                if not isinstance(w, str) or (path[-1] == "state" and not w.startswith("_")):
                    return None
                if forward.get(t, w) != w or backward.get(w, t) != t or (w != t and w in self.fixed):
                    return None
                forward[t], backward[w] = w, t
        return tuple(sorted(forward.items())) if len(forward) != len(renaming) else renaming
