"""What a monitor is: the ``Monitor`` base class every monitor of ``properties.monitors``
derives from, and the small types and helpers monitors use (``Message``, ``rule_group``,
``Record``, ``on``).

Owns: how a monitor reports (``breach``, ``eventually``), counts a rule as
exercised, reads the readings, tables and rules between machines in force (through the
``MonitorSet`` that owns it), and is copied and summarised for the explorers: one copying
rule for every monitor and every per-session record (``copied``), so no monitor writes its own.

Must not know: how messages are dispatched to monitors (``properties.engine``), files, the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from model.core import MachineSpec
from properties.findings import Finding, Kind

if TYPE_CHECKING:
    from model.between import Rules
    from properties.engine import MonitorSet

Message = dict[str, Any]

M = TypeVar("M", bound="Monitor")
F = TypeVar("F", bound=Callable[..., None])
R = TypeVar("R", bound="Record")
_GROUPS: dict[str, tuple[str, ...]] = {}


def rule_group(*rules: str) -> str:
    """A key of ``Monitor._gx`` that exercises every rule of ``rules`` with one increment. It
    is a string because a string caches its hash, while a tuple key is hashed again, element
    by element, on every increment."""
    key = "+".join(rules)
    _GROUPS[key] = rules
    return key


def on(table: str, *keys: str) -> Callable[[F], F]:
    """Make the decorated method its monitor's handler of ``keys`` in the dispatch ``table``
    (``properties.engine``: "update", "client-request", ...; the key ``*``: every message of it),
    called as ``handler(monitor, session_id, payload, line, message)``."""

    def mark(func: F) -> F:
        func.__dict__.setdefault("_on", []).extend((table, key) for key in keys)
        return func

    return mark


def copied(value: Any) -> Any:
    """``value`` as an independent copy keeps it, for the explorers' clones: a record (``Record``)
    or a container (dict, set, list) is copied, a dict's records (a record per session)
    with it; anything else (numbers, strings, tuples, frozensets, what a container holds) is
    never changed in place, and is shared."""
    kind = type(value)
    if kind is dict:
        for first in value.values():
            if isinstance(first, Record):
                return {k: v.copy() for k, v in value.items()}
            break
        return value.copy()
    if kind is set or kind is list or isinstance(value, Record):
        return value.copy()
    return value


class Record:
    """A monitor's per-session record: its fields in ``__slots__``, copied by ``copy``."""

    __slots__ = ()

    def copy(self: R) -> R:
        """An independent copy: every field ``copied``."""
        cls = type(self)
        new = cls.__new__(cls)
        slots: tuple[str, ...] = cls.__slots__
        for name in slots:
            setattr(new, name, copied(getattr(self, name)))
        return new


class Monitor:
    """Base class of every monitor.

    Subclasses list the rule IDs they implement in ``RULES`` (and the MAY permissions they must
    tolerate in ``TOLERATES``), mark their handlers with ``@on(table, key, ...)``, and judge
    "eventually" rules in ``at_end``. They report through ``self.breach`` / ``self.eventually``
    and count a rule as exercised (``self._ex[rule] += 1``, or a ``rule_group`` in ``self._gx``)
    whenever its trigger condition is met. Every subclass must define ``state_key`` (the base
    raises ``NotImplementedError``).
    """

    RULES: ClassVar[tuple[str, ...]] = ()
    TOLERATES: ClassVar[tuple[str, ...]] = ()
    TABLES: ClassVar[tuple[MachineSpec, ...]] = ()
    """The machine tables of ``model/`` this monitor fires: their rules are reported from the
    tables' violations, never named by the monitor's own code (a test reads the source)."""
    REQUIRES: ClassVar[tuple[type[Monitor], ...]] = ()
    """Monitor classes whose state this one reads (shared context, see the module docstring)."""

    def __init__(self, owner: MonitorSet) -> None:
        self._attach(owner)

    def _attach(self, owner: MonitorSet) -> None:
        """Belong to ``owner`` (also used by ``clone``)."""
        self._owner = owner
        self._ex = owner._counts
        """The owner's pending exercise counts (hot paths increment it directly: a plain
        ``defaultdict(int)`` is about twice as fast to increment as a ``Counter``)."""
        self._gx = owner._groups
        """Counts of rule groups exercised together (``rule_group`` keys), merged on reading."""
        self.between: Rules = owner.rules
        """The rules between machines in force (``model.between``: the variant's, else the spec's)."""

    # -- hooks ---------------------------------------------------------------------------
    def at_end(self, quiescent: bool) -> None:
        """Judge "eventually" rules. ``quiescent``: the simulator proved nothing more can happen
        (open obligations are breaches); otherwise the input merely ended (they are ``open``)."""

    # -- copying for explorers -----------------------------------------------------------
    def clone(self: M, owner: MonitorSet) -> M:
        """An independent copy attached to ``owner``: every attribute ``copied``, but a monitor
        this one requires is ``owner``'s instance."""
        cls = type(self)
        new = cls.__new__(cls)
        state = new.__dict__
        for name, value in vars(self).items():
            state[name] = owner.get(type(value)) if isinstance(value, Monitor) else copied(value)
        new._attach(owner)  # (the owner's counts and rules, not the copied ones)
        return new

    def state_key(self) -> Any:
        """A hashable summary of the state that matters for future findings (each monitor states
        its own: which counters and lines matter only relatively is the monitor's to say)."""
        raise NotImplementedError(type(self).__name__)

    # -- reporting -----------------------------------------------------------------------
    def table(self, spec: MachineSpec) -> MachineSpec:
        """The table in force for ``spec``: the variant's (``MonitorSet.tables``), else the model's."""
        tables = self._owner.tables
        return tables.get(spec.name, spec) if tables else spec

    def reading(self, name: str) -> str:
        """The alternative in force for the reading ``name`` (``properties.readings``)."""
        return self._owner.readings[name]

    def breach(
        self,
        rule: str,
        line: int | None,
        session: str | None,
        explanation: str,
        message: Any = None,
        readings: tuple[str, ...] = (),
        kind: Kind = "rule",
        premise: int = 0,
    ) -> None:
        """Report a breach; ``readings``: the readings its verdict depends on. ``kind``:
        ``suspect`` for a likely breach the wire cannot prove (a warning; ``readings``: those that
        make it a suspect rather than a breach), ``open`` for ``eventually``. ``premise``: the line
        of a Client message the verdict assumes the Agent had read (0: none); while the Agent may
        not have read it (``MonitorSet.unread``: a forwarded-order stream with no proof of
        receipt yet) a breach is only a suspicion, and says on what it depends."""
        owner = self._owner
        if premise and kind == "rule" and line is not None and owner.unread(premise):
            kind = "suspect"
            explanation += (
                f" (suspected: a breach if line {premise} reached the Agent before it sent line {line}; "
                "the Client lines are in the order a proxy forwarded them, and nothing the Agent sent "
                f"by then shows it had read line {premise})"
            )
        owner.add(Finding(rule, owner.level_of(rule), line, session, explanation, kind, message, readings))

    def eventually(
        self,
        rule: str,
        quiescent: bool,
        line: int | None,
        session: str | None,
        explanation: str,
        readings: tuple[str, ...] = (),
    ) -> None:
        """Report an obligation still open: a breach at quiescence; a breach at the last line
        when the input was declared complete for ``session`` (``MonitorSet.finish(complete=...)``);
        information at the end of any other input."""
        owner = self._owner
        kind: Kind = "rule"
        if quiescent:
            explanation += " (still open at quiescence)"
        elif owner.complete_for(session):
            since = "" if line is None or line == owner.last_line else f"; owed since line {line}"
            explanation += f" (still open at the end of a complete transcript{since})"
            line = owner.last_line if owner.last_line is not None else line
        else:
            explanation += " (open at end of input)"
            kind = "open"
        self.breach(rule, line, session, explanation, None, readings, kind)
