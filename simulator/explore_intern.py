"""Interning for the exhaustive search: distinct things numbered by key, and wire messages.

Owns: ``Interned`` (representatives and their numbers, by key), ``Messages`` (message number
<-> sender and message) and ``SHIFT``, the packing of (part state, message) memo keys.

Must not know: the simulator, the monitors or the search.
"""

from __future__ import annotations

from typing import Any

import orjson

SHIFT = 32
"""Memo keys pack (part state, message number) into one int: ``part << SHIFT | message``."""


class Interned:
    """Distinct states of one kind: representative objects and their numbers, by key."""

    def __init__(self) -> None:
        self.reps: list[Any] = []
        self.keys: list[Any] = []
        self.ids: dict[Any, int] = {}

    def intern(self, key: Any, rep: Any) -> int:
        got = self.ids.get(key)
        if got is None:
            got = self.ids[key] = len(self.reps)
            self.reps.append(rep)
            self.keys.append(key)
        return got


class Messages:
    """Interned wire messages: number <-> (sender, message), keyed by sender and JSON text
    (orjson: a tenth of the cost of ``repr``; the wire builds each message's fields in one
    order, so equal messages have equal text)."""

    def __init__(self) -> None:
        self._table = Interned()
        self.msgs: list[dict[str, Any]] = self._table.reps
        self._texts: dict[int, str] = {}

    def intern(self, sender: str, msg: dict[str, Any]) -> int:
        try:
            text: bytes | str = orjson.dumps(msg)
        except TypeError:  # not JSON data (a hand-made test message): its repr
            text = repr(msg)
        return self._table.intern((sender, text), msg)

    def key(self, x: int) -> tuple[str, bytes | str]:
        """Message ``x``'s (sender, text): what names it in every process."""
        key: tuple[str, bytes | str] = self._table.keys[x]
        return key

    def sender(self, x: int) -> str:
        sender: str = self._table.keys[x][0]
        return sender

    def text(self, x: int) -> str:
        """The message's ``repr`` (what the symmetry reduction renames IDs in)."""
        got = self._texts.get(x)
        if got is None:
            got = self._texts[x] = repr(self.msgs[x])
        return got
