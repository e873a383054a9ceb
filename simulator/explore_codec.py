"""Names of search states that mean the same in every process: part digests, state bytes, recipes.

Theory of operation
-------------------
The exhaustive search numbers part states (Agent, Client, monitors, client views, messages) in
the order it meets them (``simulator.explore_parts``), so a state there is a tuple of numbers
that mean something only in that one process. The cluster search (``simulator.explore_shard``)
runs one ``Parts`` per worker, and a state moves between workers. So each part state gets a
*digest*: 8 bytes of BLAKE2b over a canonical encoding of its key (``stable``: the same data
give the same bytes in every process; sets and dicts are sorted, since Python's string
hashing, and so set order, differs between processes). A combined monitor state is named by
the digests of its pending requests and of each monitor's own state, each computed once. A state travels as
``state_bytes``: the digests of its Agent, Client and monitor state (and of its two views when
views decide findings), the number of messages in flight each way, and their digests; 40 to 80
bytes. Two states are equal exactly when their part keys are equal, as in one process; a
false merge needs two distinct part states of one kind with the same 64-bit digest (about
n^2 / 2^65 for n part states: 3 * 10^-8 at a million).

A receiving worker may not know a part state by its digest. The sender then sends its
*recipe* first (``recipes_for``): the part state it came from and the input (an event, or a
message received), recursively down to parts the receiver knows (the initial World's, which
every worker builds alike); a message's recipe is its sender and JSON text. The receiver
replays a recipe with its own ``Parts`` (the same memoized moves the search takes, so nothing
is counted twice) and checks that the part it reaches has the digest announced: every model
step is deterministic, so a mismatch is a bug, reported as such.

Must not know: Ray, the search order, how states are partitioned over workers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import orjson

from simulator.explore_parts import Parts

DIGEST = 8
"""Bytes of a part digest."""

Recipe = tuple[Any, ...]
"""(kind, digest, ...): how the receiver rebuilds one part state (see the module header)."""


def stable(obj: Any) -> bytes:
    """A canonical byte encoding of plain data: equal data, equal bytes, in every process.

    Data without sets, dicts or objects (no ``{`` and no ``<`` in its ``repr``, as with most
    part keys: tuples of strings, numbers, None) is its ``repr``, which is the same in every
    process (``{`` in a string, as in monitor keys, is checked by ``_plain``); anything else
    is the ``repr`` of its ``_canonical`` form (sets and dicts sorted), and an object that is
    not plain data is refused."""
    text = repr(obj)
    if ("{" not in text and "<" not in text) or _plain(obj):
        return b"r" + text.encode()
    return b"c" + repr(_canonical(obj)).encode()


_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})


def _plain(obj: Any) -> bool:
    """Whether ``obj`` is scalars in tuples and lists only (its ``repr`` is then canonical)."""
    t = type(obj)
    if t in _SCALARS:
        return True
    if t is tuple or t is list:
        return all(map(_plain, obj))
    return False


def _canonical(obj: Any) -> Any:
    """``obj`` with every set and dict replaced by a tagged tuple of its items' canonical
    ``repr``s, sorted; refuses anything that is not plain data."""
    t = type(obj)
    if t in _SCALARS:
        return obj
    if t is tuple:
        return tuple(map(_canonical, obj))
    if t is list:
        return list(map(_canonical, obj))
    if t is frozenset or t is set:
        return ("\x00set", tuple(sorted(repr(_canonical(x)) for x in obj)))
    if t is dict:
        return ("\x00dict", tuple(sorted(repr(_canonical(kv)) for kv in obj.items())))
    raise TypeError(f"no stable encoding for {t.__name__}")


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=DIGEST).digest()


class Sent:
    """What one worker has sent another: part states by name (kind + digest), and by its own
    numbers per kind (the quick check)."""

    def __init__(self) -> None:
        self.names: set[bytes] = set()
        self.done: dict[str, set[int]] = {k: set() for k in Codec.KINDS}


class Codec:
    """Digests, state bytes and recipes for one ``Parts`` (one worker's numbering)."""

    KINDS = ("msg", "agent", "client", "monitor", "view", "ref")

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.views = parts.view_table is not None
        self._digests: dict[str, list[bytes | None]] = {k: [] for k in self.KINDS}
        self._sub: dict[Any, bytes] = {}
        d = self._digests
        self._da, self._dc, self._dm = d["agent"], d["client"], d["monitor"]
        self._dv, self._dr, self._dx = d["view"], d["ref"], d["msg"]
        self.local: dict[str, dict[bytes, int]] = {k: {} for k in self.KINDS}
        """Per kind: digest -> this worker's number."""
        self._key_of: dict[str, Callable[[int], Any]] = {
            "msg": parts.msgs.key,
            "agent": self._agent_key,
            "client": lambda c: parts.clients.keys[c],
            "monitor": self._monitor_key,
            "view": lambda v: parts.view_table.keys[v],  # type: ignore[union-attr]
            "ref": lambda r: parts.reference_table.keys[r],  # type: ignore[union-attr]
        }
        roots = [("agent", parts.root_agent), ("client", parts.root_client), ("monitor", 0)]
        if self.views:
            roots += [("view", 0), ("ref", 0)]
        self.roots: set[bytes] = {kind.encode() + self.of(kind, n) for kind, n in roots}
        """The initial World's part states (every worker has them), as ``sent`` names them."""

    def _monitor_key(self, m: int) -> Any:
        """A combined monitor state as the digests of its parts (each computed once per
        distinct pending set and per-monitor state; combined states share them)."""
        table = self.parts.monitors
        pn, ids = table.parts[m]
        got = [self._cached(("p", pn), lambda: table.pending_key(pn))]
        for i, n in enumerate(ids):
            got.append(self._cached((i, n), lambda i=i, n=n: table.monitor_key(i, n)))  # type: ignore[misc]
        return b"".join(got)

    def _cached(self, name: Any, key: Callable[[], Any]) -> bytes:
        got = self._sub.get(name)
        if got is None:
            got = self._sub[name] = digest(stable(key()))
        return got

    def _agent_key(self, a: int) -> Any:
        key = self.parts.agents.keys[a]
        if self.parts.history:  # (snapshot, retained history as message numbers)
            snap, held = key
            key = (snap, tuple([self.of("msg", x) for x in held]))
        return key

    def of(self, kind: str, n: int) -> bytes:
        """The digest of part state ``n`` of ``kind``."""
        table = self._digests[kind]
        if n < len(table):
            got = table[n]
            if got is not None:
                return got
        else:
            table.extend([None] * (n + 1 - len(table)))
        got = table[n] = digest(stable(self._key_of[kind](n)))
        self.local[kind][got] = n
        return got

    # -- states ---------------------------------------------------------------------------
    def state_bytes(self, st: Any) -> bytes:
        """A state as bytes (see the module header)."""
        a, c, ta, tc, m, v, r = st
        try:  # every digest already known: list lookups only
            got = [self._da[a], self._dc[c], self._dm[m]]
            if self.views:
                got += [self._dv[v], self._dr[r]]
            got.append(bytes((len(ta), len(tc))))
            dx = self._dx
            got += [dx[x] for x in ta]
            got += [dx[x] for x in tc]
            return b"".join(got)  # type: ignore[arg-type]  # TypeError where one is missing
        except (IndexError, TypeError):
            pass
        of = self.of
        head = of("agent", a) + of("client", c) + of("monitor", m)
        if self.views:
            head += of("view", v) + of("ref", r)
        return b"".join([head, bytes((len(ta), len(tc))), *[of("msg", x) for x in ta + tc]])

    def state(self, data: bytes) -> Any:
        """The state ``data`` names, in this worker's numbering (its recipes already read)."""
        d = DIGEST
        local = self.local
        a = local["agent"][data[:d]]
        c = local["client"][data[d : 2 * d]]
        m = local["monitor"][data[2 * d : 3 * d]]
        at = 3 * d
        v = r = 0
        if self.views:
            v = local["view"][data[at : at + d]]
            r = local["ref"][data[at + d : at + 2 * d]]
            at += 2 * d
        na, nc = data[at], data[at + 1]
        at += 2
        msgs = local["msg"]
        xs = [msgs[data[at + i * d : at + (i + 1) * d]] for i in range(na + nc)]
        return (a, c, tuple(xs[:na]), tuple(xs[na:]), m, v, r)

    # -- recipes --------------------------------------------------------------------------
    def recipes_for(self, st: Any, sent: Sent, out: list[Recipe]) -> None:
        """Append to ``out`` the recipes of every part of ``st`` not yet sent to one worker
        (``sent``; they are added to it), each after the recipes of the parts it is made from."""
        a, c, ta, tc, m, v, r = st
        done = sent.done
        if a not in done["agent"]:
            self._need("agent", a, sent, out)
        if c not in done["client"]:
            self._need("client", c, sent, out)
        if m not in done["monitor"]:
            self._need("monitor", m, sent, out)
        if self.views:
            self._need("view", v, sent, out)
            self._need("ref", r, sent, out)
        msgs = done["msg"]
        for x in ta + tc:
            if x not in msgs:
                self._need("msg", x, sent, out)

    def _need(self, kind: str, n: int, sent: Sent, out: list[Recipe]) -> None:
        sent.done[kind].add(n)
        d = self.of(kind, n)
        name = kind.encode() + d  # two kinds may have equal keys (a view and its reference)
        if name in sent.names or name in self.roots:
            return
        parts = self.parts
        if kind == "msg":
            sender, text = parts.msgs.key(n)
            if not isinstance(text, bytes):
                raise ValueError(f"message {text[:60]} is not JSON data: it cannot travel between workers")
            sent.names.add(name)
            out.append(("msg", d, sender, text))
            return
        if kind == "agent" or kind == "client":
            origin = (parts.agent_origin if kind == "agent" else parts.client_origin)[n]
            assert origin is not None
            before, step = origin
            self._need(kind, before, sent, out)
            if type(step) is int:  # a message received
                self._need("msg", step, sent, out)
                how: Any = ("recv", self.of("msg", step))
            else:
                how = ("do", step)
            sent.names.add(name)
            out.append((kind, d, self.of(kind, before), how))
            return
        if kind == "monitor":
            before, x = parts.monitors.origin[n]
        else:
            table = parts.view_table if kind == "view" else parts.reference_table
            got = table.origin[n]  # type: ignore[union-attr]
            assert got is not None
            before, x = got
        self._need(kind, before, sent, out)
        self._need("msg", x, sent, out)
        sent.names.add(name)
        out.append((kind, d, self.of(kind, before), self.of("msg", x)))

    def read(self, recipes: list[Recipe]) -> None:
        """Rebuild the part states of ``recipes`` (in order) that this worker does not know."""
        parts = self.parts
        local = self.local
        for rec in recipes:
            kind, d = rec[0], rec[1]
            if d in local[kind]:
                continue
            if kind == "msg":
                n = parts.msgs.intern(rec[2], orjson.loads(rec[3]))
            elif kind == "agent" or kind == "client":
                before = local[kind][rec[2]]
                how, what = rec[3]
                if how == "recv":
                    x = local["msg"][what]
                    recv = parts.agent_receive if kind == "agent" else parts.client_receive
                    move = recv(before, x)
                else:
                    moves = parts.agent_choices(before) if kind == "agent" else parts.client_choices(before)
                    move = next(mv for mv in moves if mv[0] == what)
                n = move[1]
            elif kind == "monitor":
                n = parts.monitors.step(local[kind][rec[2]], local["msg"][rec[3]])[0]
            else:
                table = parts.view_table if kind == "view" else parts.reference_table
                n = table.apply(local[kind][rec[2]], local["msg"][rec[3]])  # type: ignore[union-attr]
            if self.of(kind, n) != d:
                raise RuntimeError(f"the {kind} state rebuilt from its recipe differs from the sender's")
