"""Exact maps of wire IDs whose memory does not grow with sequential IDs.

Owns: ``IdMap``, a mapping from IDs (JSON-RPC request ids, message IDs, ...) to values with
exact membership (never a false hit or miss), and the "recent dict in front of an IdMap" pair
the monitors use for the IDs they must remember for as long as a session lives (a messageId
returned twice, output of work that already ended): new IDs go to a plain dict, which
``spill`` empties into the session's ``IdMap`` (all but its newest entry) whenever it holds
more than ``SPILL_AT`` entries. Lookups try the dict, then the map.

How the map stores IDs: an integer ID or a string of the form ``prefix + decimal counter``
(no leading zero, at most 18 digits: ``u17``, ``msg_0``) goes into a *run*: per prefix, a
sorted list of arithmetic progressions ``[start, step, count, first value, value step]``, where
the value step is an integer step for integer values and ``None`` for a repeated value. IDs a
counter hands out in order, even every k-th one (sessions taking turns on one counter), with
values that are constant or advance by a fixed step, extend one run: such a map takes O(1)
memory. Every other key (a UUID, a counter with a leading zero, a key inside a run's span but
off its progression, a value that breaks the run's pattern) is kept in a plain dict beside the
runs.

What memory still grows with: one run (about 150 bytes) per break in a progression, and one
plain dict entry (the key string, about 50 + length bytes, plus about 100 bytes of slot and
value) per ID that fits no run: random UUID message IDs cost about what a plain dict of them
would. ``benchmarks/bench_check.py --random-ids`` measures that case. The recent dicts add at
most ``SPILL_AT`` entries per table per session.

Speed: a lookup tries ``other`` (a plain dict) first; a string key not there and greater
than every run key of its length (``tops``; an integer key greater than every run integer) is
absent without parsing it. Hot handlers make both tests inline. ``spill`` compares a batch
that continues the last run with the keys the run expects as one joined string (formatting the
expected counters costs about 0.1 us per ID); other batches are parsed key by key, and after a
batch in which no key fitted a run (random IDs) the next ``PLAIN_BATCHES`` batches go to
``other`` unparsed.

Lanes: a record that keeps a pair may also keep a *lane* (``Laned``): the IDs continuing the
map's last run in order are counted in a few fields of the record instead of going through
the dict and a spill, and are added to the run only when the map is next read.

Ceilings: beside a pair, a monitor may keep its *ceiling*: "" to begin with, then passed
through ``ceiling`` with every key added to the pair. It is the greatest of the longest string
keys, and no string key of its length exceeds it (it only ever grows longer, and the first key
of a new greater length becomes it). So a string ID of the ceiling's length greater than it is
certainly absent without any lookup: with sequential IDs, every new ID.

Keys are meant to be ``str`` or ``int``; keys of other types are kept in a dict of their own
under ``(type, key)``, so ``True`` is not ``1`` here (a plain dict would merge them). Values
must be hashable for ``key()``.

Explorers: ``copy()`` is independent of the original; ``key()`` is a hashable form equal for
equal contents (a frozenset of the items: O(n), like the plain containers it replaces). A
monitor whose recent dict never spills (fewer than ``SPILL_AT`` IDs in a table, as in explored
states) never makes a map.

Must not know: monitors, rules, JSON-RPC.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

V = TypeVar("V")

_DIGITS = "0123456789"
_MAX_DIGITS = 18
_MISS: Any = object()


def _start(run: list[Any]) -> int:
    return int(run[0])


def split_id(key: Any) -> tuple[str | None, int] | None:
    """``(prefix, counter)`` of a key a run can hold (``(None, n)`` for an integer), else None."""
    if type(key) is int:
        return None, key
    if type(key) is not str:
        return None
    head = key.rstrip(_DIGITS)
    n = len(head)
    digits = len(key) - n
    if digits == 0 or digits > _MAX_DIGITS or (digits > 1 and key[n] == "0"):
        return None
    return head, int(key[n:])


def _value_step(first: Any, second: Any) -> tuple[bool, int | None]:
    """Whether ``second`` may follow ``first`` in a run, and the value step it sets."""
    if type(first) is int and type(second) is int:
        return True, second - first
    if type(first) is type(second) and first == second:
        return True, None
    return False, None


class IdMap(Generic[V]):
    """An exact mapping of IDs to values, compact for sequential IDs (see module docstring).
    Entries are only added, never changed or removed."""

    __slots__ = (
        "_itop",
        "_n",
        "_next",
        "_nextv",
        "_odd",
        "_plain",
        "_runs",
        "_tail",
        "_thead",
        "other",
        "tops"
    )

    def __init__(self) -> None:
        self._runs: dict[str | None, list[list[Any]]] = {}
        self.other: dict[Any, V] = {}
        """String and integer keys that fit no run. Callers on a hot path may look a string
        key up here themselves, then test ``tops``, before calling ``get``."""
        self._odd: dict[tuple[type, Any], tuple[Any, V]] = {}
        """Keys of other types, under (type, key): ``True`` is kept apart from ``1``."""
        self.tops: dict[int, str] = {}
        """Per length, the greatest string key held in a run: a string key that is not in
        ``other`` and is greater than the one of its length here (or of a length not here) is
        certainly absent."""
        self._itop: int | None = None
        self._n = 0
        self._tail: list[Any] | None = None
        """The last run of its prefix, when it has a step: the run the next key may extend."""
        self._thead: str | None = None
        self._next: Any = _MISS
        """The key that would extend ``_tail`` (``_MISS`` when there is no tail)."""
        self._nextv: Any = _MISS
        self._plain = 0
        """Batches ``absorb`` still stores unparsed (after one in which no run grew)."""

    # -- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def __contains__(self, key: Any) -> bool:
        return self.get(key, _MISS) is not _MISS

    def get(self, key: Any, default: Any = None) -> Any:
        t = type(key)
        if t is not str and t is not int:
            odd = self._odd.get((t, key))
            return default if odd is None else odd[1]
        found = self.other.get(key, _MISS)
        if found is not _MISS:
            return found
        if t is str:
            top = self.tops.get(len(key))
            if top is None or key > top:
                return default
        elif self._itop is None or key > self._itop:
            return default
        parts = split_id(key)
        if parts is None:
            return default
        head, c = parts
        bucket = self._runs.get(head)
        if not bucket:
            return default
        i = bisect_right(bucket, c, key=_start)
        if i == 0:
            return default
        start, step, count, value, vstep = bucket[i - 1]
        if c == start:
            return value
        if step and (c - start) % step == 0 and (c - start) // step < count:
            return value if vstep is None else value + (c - start) // step * vstep
        return default

    def items(self) -> Iterator[tuple[Any, V]]:
        for head, bucket in self._runs.items():
            for start, step, count, value, vstep in bucket:
                for j in range(count):
                    c = start + j * step
                    yield (c if head is None else head + str(c)), (
                        value if vstep is None else value + j * vstep
                    )
        yield from self.other.items()
        yield from self._odd.values()

    def __iter__(self) -> Iterator[Any]:
        for key, _ in self.items():
            yield key

    def key(self) -> frozenset[tuple[Any, V]]:
        """A hashable form, equal for equal contents whatever the order of insertion."""
        return frozenset(self.items())

    def runs(self) -> int:
        """How many runs the map holds: for tests and benchmarks."""
        return sum(len(b) for b in self._runs.values())

    # -- adding --------------------------------------------------------------------------
    def add(self, key: Any, value: V) -> None:
        """Add an entry whose key is not in the map (the caller knows it is absent)."""
        if not self._extend(key, value):
            self._insert(key, value)

    def first(self, key: Any, value: V) -> Any:
        """The value of ``key`` if present; otherwise add ``(key, value)`` and return None."""
        found = self.get(key, _MISS)
        if found is not _MISS:
            return found
        if not self._extend(key, value):
            self._insert(key, value)
        return None

    def absorb(self, keys: list[Any], values: list[Any]) -> None:
        """Add absent keys, in this order, with their values. Keys that continue the last run
        in the order it expects are added in bulk (compared as whole lists, no parsing)."""
        run = self._tail
        if run is not None and len(keys) > 1 and keys[0] == self._next and self._bulk(run, keys, values):
            return
        if self._plain:  # recent batches held no counters: store this one unparsed
            self._plain -= 1
            if self._unparsed(keys, values):
                return
        elif len(keys) > 2 and self._fresh(keys, values):
            return
        # A prefix gets runs only when it has some already or comes twice in the batch: a
        # random ID that happens to end in digits (most UUIDs do) would otherwise cost a run
        # and a prefix entry of its own.
        heads: dict[Any, int] = {}
        for key in keys:
            parts = split_id(key)
            if parts is not None:
                heads[parts[0]] = heads.get(parts[0], 0) + 1
        runs = self._runs
        plain = len(self.other) + len(self._odd)
        for key, value in zip(keys, values, strict=True):
            if not self._extend(key, value):
                parts = split_id(key)
                single = parts is not None and heads[parts[0]] < 2 and parts[0] not in runs
                self._insert(key, value, single)
        if len(self.other) + len(self._odd) - plain == len(keys) > 1:
            self._plain = PLAIN_BATCHES  # no key went to a run: skip parsing for a while

    def _unparsed(self, keys: list[Any], values: list[Any]) -> bool:
        """Add a batch of string keys to the plain dict without parsing them (keys that might
        have formed runs cost memory there, never exactness); whether it could."""
        if set(map(type, keys)) != {str}:
            return False
        self.other.update(zip(keys, values, strict=True))
        self._n += len(keys)
        return True

    def _fresh(self, keys: list[Any], values: list[Any]) -> bool:
        """Add a batch that is one progression of its own, past every run of its prefix, as a
        new run at once (the first spill of a table, or one after its run broke); whether it
        was (else nothing changed)."""
        first, second = split_id(keys[0]), split_id(keys[1])
        if first is None or second is None or first[0] != second[0] or second[1] <= first[1]:
            return False
        head, c = first
        ok, vstep = _value_step(values[0], values[1])
        if not ok:
            return False
        bucket = self._runs.get(head)
        if bucket and bucket[-1][0] + bucket[-1][1] * (bucket[-1][2] - 1) >= c:
            return False
        saved = (self._tail, self._thead, self._next, self._nextv)
        step = second[1] - c
        run = [c, step, 1, values[0], vstep]
        self._tail, self._thead = run, head
        self._next = keys[1]
        self._nextv = values[1]
        if not self._bulk(run, keys[1:], values[1:]):
            self._tail, self._thead, self._next, self._nextv = saved
            return False
        if bucket is None:
            bucket = self._runs[head] = []
        bucket.append(run)
        self._n += 1
        self._top(keys[0])
        return True

    def _bulk(self, run: list[Any], keys: list[Any], values: list[Any]) -> bool:
        """Extend ``run`` by all of ``keys`` at once if they are exactly its next keys and the
        values its next values; whether they were (else nothing changed)."""
        n = len(keys)
        start, step, count, _, vstep = run
        c = start + step * count
        end = c + step * n
        head = self._thead
        nv = self._nextv
        if vstep:
            if values != list(range(nv, nv + vstep * n, vstep)):
                return False
        elif values != [nv] * n:
            return False
        if list(map(type, values)) != [type(nv)] * n:  # (True == 1, but a run keeps one type)
            return False
        if head is None:
            if keys != list(range(c, end, step)) or list(map(type, keys)) != [int] * n:
                return False
        else:
            # Each key followed by a separator neither the prefix nor the counters contain:
            # the keys equal the expected ones exactly when the joined strings are equal (a key
            # holding the separator would add one to the joined text).
            if "\n" in head:
                return False
            try:
                joined = "\n".join(keys)
            except TypeError:  # a key that is not a string
                return False
            expected = (head.replace("%", "%%") + "%d\n") * n % tuple(range(c, end, step))
            if joined + "\n" != expected:
                return False
        run[2] = count + n
        self._next = end if head is None else head + str(end)
        self._nextv = nv if vstep is None else nv + vstep * n
        self._n += n
        last = keys[-1]
        if head is None or len(keys[0]) == len(last):  # counters grow: the last is the greatest
            self._top(last)
        else:
            for key in keys:
                self._top(key)
        return True

    def _top(self, key: Any) -> None:
        if type(key) is str:
            n = len(key)
            top = self.tops.get(n)
            if top is None or key > top:
                self.tops[n] = key
        elif type(key) is int and (self._itop is None or key > self._itop):
            self._itop = key

    def _extend(self, key: Any, value: Any) -> bool:
        """Add an absent key if it is the one ``_tail`` expects next; whether it was."""
        nxt = self._next
        if key != nxt or type(key) is not type(nxt):
            return False
        nv = self._nextv
        if value != nv or type(value) is not type(nv):
            return False
        run = self._tail
        assert run is not None
        count = run[2] + 1
        run[2] = count
        c = run[0] + run[1] * count
        head = self._thead
        if head is None:
            self._next = c
            if self._itop is None or key > self._itop:
                self._itop = key
        else:
            self._next = head + str(c)
            n = len(key)
            top = self.tops.get(n)
            if top is None or key > top:
                self.tops[n] = key
        vstep = run[4]
        self._nextv = value if vstep is None else value + vstep
        self._n += 1
        return True

    def _insert(self, key: Any, value: Any, single: bool = False) -> None:
        """Add an absent key anywhere (the general case); ``single``: keep it out of the runs."""
        runs = self._runs
        self._n += 1
        parts = None if single else split_id(key)
        if parts is None:
            if type(key) is str or type(key) is int:
                self.other[key] = value
            else:
                self._odd[(type(key), key)] = (key, value)
            return
        head, c = parts
        bucket = runs.get(head)
        if bucket is None:
            bucket = runs[head] = []
        i = bisect_right(bucket, c, key=_start)
        if i:
            run = bucket[i - 1]
            start, step, count, first, vstep = run
            end = start + step * (count - 1)
            if c <= end:  # inside the run's span, off its progression
                self.other[key] = value
                return
            self._top(key)
            if count == 1:
                ok, vs = _value_step(first, value)
                if ok:
                    run[1], run[2], run[4] = c - start, 2, vs
                    self._retail(head, bucket, run)
                    return
            elif c == end + step:
                expected = first if vstep is None else first + count * vstep
                if value == expected and type(value) is type(expected):
                    run[2] = count + 1
                    self._retail(head, bucket, run)
                    return
        if not i:
            self._top(key)
        run = [c, 0, 1, value, None]
        bucket.insert(i, run)
        self._retail(head, bucket, run)

    def _retail(self, head: str | None, bucket: list[list[Any]], run: list[Any]) -> None:
        """Keep ``_tail`` the extendable last run of the prefix touched last."""
        if run is bucket[-1] and run[2] > 1:
            start, step, count, first, vstep = run
            c = start + step * count
            self._tail, self._thead = run, head
            self._next = c if head is None else head + str(c)
            self._nextv = first if vstep is None else first + count * vstep
        elif self._thead == head and self._tail is not None and self._tail is not bucket[-1]:
            self._tail, self._thead, self._next, self._nextv = None, None, _MISS, _MISS

    # -- copying -------------------------------------------------------------------------
    def copy(self) -> IdMap[V]:
        new: IdMap[V] = IdMap.__new__(IdMap)
        new.other = dict(self.other)
        new._odd = dict(self._odd)
        new._plain = self._plain
        new.tops = dict(self.tops)
        new._itop = self._itop
        new._n = self._n
        new._thead = self._thead
        new._next = self._next
        new._nextv = self._nextv
        new._runs = {}
        new._tail = None
        for head, bucket in self._runs.items():
            copied = []
            for run in bucket:
                twin = list(run)
                if run is self._tail:
                    new._tail = twin
                copied.append(twin)
            new._runs[head] = copied
        return new

    def __repr__(self) -> str:
        return f"IdMap({len(self)} entries, {self.runs()} runs)"


# -- a plain dict of recent entries in front of an IdMap ------------------------------------

PLAIN_BATCHES = 15
"""After a batch in which no run grew (random IDs), this many batches are stored unparsed."""
SPILL_AT = 8
"""A monitor's dict of recent IDs longer than this spills into its ``IdMap`` (see ``spill``)."""


def spill(recent: dict[Any, V], old: IdMap[V] | None) -> IdMap[V]:
    """Move every entry of ``recent`` but the newest into ``old`` (a new map when None) and
    return the map. The keys of ``recent`` must all be absent from ``old``. The newest stays:
    it is the ID a stream is most likely to name again (the next chunk of the same message),
    except while the map takes batches unparsed (random IDs: there a lookup in ``other`` is as
    cheap as in ``recent``)."""
    if old is None:
        old = IdMap()
    elif old._plain and set(map(type, recent)) == {str}:  # random IDs: no parsing, none kept
        old._plain -= 1
        old.other.update(recent)
        old._n += len(recent)
        recent.clear()
        return old
    key, value = recent.popitem()
    keys = list(recent)
    values = list(recent.values())
    recent.clear()
    recent[key] = value
    run = old._tail
    if run is None or len(keys) < 2 or keys[0] != old._next or not old._bulk(run, keys, values):
        old.absorb(keys, values)
    return old


class Laned:
    """Base of a monitor's per-session record that keeps one recent-dict/``IdMap`` pair with
    a *lane*: the IDs that continue the map's last run (``IdMap._tail``) in order, with the
    values it expects, are taken by the lane, a few fields of the record itself, instead of
    the dict. The record is warm when its handler runs, while a dict insert and the periodic
    spill touch cold memory: for sequential IDs (one new ID per turn of a session) the lane
    is most of the cost saved.

    Fields: ``lane_want`` is the ID that would extend the lane (None: no lane), ``lane_wantv``
    its value, ``lane_at`` its counter; ``lane_head``, ``lane_step`` and ``lane_vstep`` the
    run's prefix, counter step and value step (0 for a repeated value). ``lane_top``: the
    pair's ceiling is the ID just before ``lane_want``, whose value is ``lane_wantv -
    lane_vstep`` (so the next chunk of the newest message is found without a lookup).

    How a record uses it: a new ID past the pair's ceiling that equals ``lane_want`` with
    the value ``lane_wantv`` extends the lane (the caller does it inline: ``lane_at +=
    lane_step``, ``lane_want = lane_head + str(lane_at)``, ``lane_wantv += lane_vstep``,
    ``lane_top = True``); any other new ID goes to the dict as before (``lane_top = False``
    when it becomes the ceiling). The IDs the lane took belong to the map's last run but are
    not counted there yet: ``lane_flush`` counts them, and must run before the map is read,
    copied or spilled into (``lane_spill`` does it, and arms the lane afterwards). A lane has
    only integer values; the map of a record without a lane is never stale.

    Must not know: what the IDs and values mean.
    """

    __slots__ = ("lane_at", "lane_head", "lane_step", "lane_top", "lane_vstep", "lane_want", "lane_wantv")

    def lane_reset(self) -> None:
        self.lane_want: str | None = None
        self.lane_wantv: int | None = None
        self.lane_at = 0
        self.lane_head = ""
        self.lane_step = 0
        self.lane_vstep = 0
        self.lane_top = False

    def lane_copy(self, other: Laned) -> None:
        """Take ``other``'s lane (with a copy of its map, the pair stays consistent)."""
        self.lane_want = other.lane_want
        self.lane_wantv = other.lane_wantv
        self.lane_at = other.lane_at
        self.lane_head = other.lane_head
        self.lane_step = other.lane_step
        self.lane_vstep = other.lane_vstep
        self.lane_top = other.lane_top

    def lane_flush(self, old: IdMap[Any] | None) -> None:
        """Count in ``old``'s last run the IDs the lane took since ``old`` was last read."""
        want = self.lane_want
        if want is None or old is None or old._next == want:
            return
        run = old._tail
        assert run is not None and old._thead == self.lane_head
        start, step, count = run[0], run[1], run[2]
        n = (self.lane_at - start) // step - count
        run[2] = count + n
        old._n += n
        old._top(self.lane_head + str(self.lane_at - step))
        old._next = want
        old._nextv = self.lane_wantv

    def lane_spill(self, recent: dict[Any, Any], old: IdMap[Any] | None, top: str) -> IdMap[Any]:
        """``spill`` for the laned pair whose ceiling is ``top``: the lane is flushed first,
        then armed on the map's last run if it has a string prefix, a step and integer
        values. The dict's newest entry, which ``spill`` keeps, moves into the run when it
        is the run's next ID (the lane then starts right after it)."""
        self.lane_flush(old)
        old = spill(recent, old)
        self.lane_want = None
        self.lane_top = False
        run = old._tail
        head = old._thead
        if run is None or head is None or run[1] <= 0 or type(old._nextv) is not int:
            return old
        if len(recent) == 1:
            key, value = next(iter(recent.items()))
            if key == old._next and type(value) is int and value == old._nextv:
                old._extend(key, value)
                recent.clear()
                self.lane_top = key == top
        vstep = run[4]
        self.lane_want = old._next
        self.lane_wantv = old._nextv
        self.lane_at = run[0] + run[1] * run[2]
        self.lane_head = head
        self.lane_step = run[1]
        self.lane_vstep = 0 if vstep is None else vstep
        return old

    def lane_get(self, recent: dict[Any, Any], old: IdMap[Any] | None, top: str, key: Any) -> Any:
        """The value of ``key`` in the laned pair whose ceiling is ``top``, or None."""
        found = recent.get(key, _MISS)
        if found is not _MISS:
            return found
        return self.lane_older(old, top, key)

    def lane_older(self, old: IdMap[Any] | None, top: str, key: Any) -> Any:
        """``lane_get`` for a key the caller already looked up in the dict: the lane, then
        the map."""
        if self.lane_top and key == top:
            return self.lane_wantv - self.lane_vstep  # type: ignore[operator]
        if old is None:
            return None
        self.lane_flush(old)
        return old.get(key)


def ceiling(top: str, key: Any) -> str:
    """The ceiling of a pair once ``key`` was added to it (see the module docstring): ``key``
    when it is a string longer than ``top``, or as long and greater, else ``top``."""
    if type(key) is str and (len(key) > len(top) or (len(key) == len(top) and key > top)):
        return key
    return top


def lookup(recent: dict[Any, V], old: IdMap[V] | None, key: Any, default: Any = None) -> Any:
    """The value of ``key`` in the pair (the dict first), or ``default``."""
    found = recent.get(key, _MISS)
    if found is not _MISS:
        return found
    return default if old is None else old.get(key, default)


def pair_items(recent: dict[Any, V], old: IdMap[V] | None) -> Iterator[tuple[Any, V]]:
    """Every entry of the pair (the map's first, then the dict's, in no particular order)."""
    if old is not None:
        yield from old.items()
    yield from recent.items()
