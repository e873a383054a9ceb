"""Variants: a spec author's "what if" (rules dropped, readings fixed, rows changed), as data.

Theory of operation
-------------------
A variant is a small TOML file (``variants/*.toml``)::

    title = "Cancellation confirmed with any stop reason"
    drop = ["TRANS-04"]                      # rules that no longer bind
    [readings]                               # alternatives fixed (``properties.readings``)
    cancel-takes-effect = "on-receipt"
    [[remove_row]]                           # a row of a machine table taken out ...
    machine = "tool_call"
    trigger = "complete"
    source = "pending"
    dest = "completed"
    [[add_row]]                              # ... or put in (same four keys)
    [between.cancel_covers]                  # a parameter of a rule between machines switched
    covers_background = true

``load`` parses and validates a file into an immutable ``Variant``; every problem (malformed
TOML, an unknown key, rule, machine, state, trigger, reading or alternative, a ``remove_row``
that names no row, an ``add_row`` that duplicates one, tables that no longer hold together) is
a ``VariantError`` whose text is one line naming the file and the entry. ``from_drops`` makes
the variant of ``--drop RULE-ID`` options, ``Variant.with_drops`` adds them to a file's.

What a variant changes, and where (``Variant.tables``):

- ``drop``: every machine of ``model.registry`` is rebuilt with the dropped rules relaxed
  (``MachineSpec.changed``): a forbidden cell of a dropped rule leaves the state as it is, a
  guard of a dropped rule no longer refuses (``relaxed_cells`` lists them per machine). The
  monitor engine sets the findings of dropped rules aside (``MonitorSet``: counted, never
  reported); the simulated peers gain the behaviours that only a dropped rule forbade (the
  simulator's ``variant_runs``, which knows the seeded bugs).
- ``add_row`` / ``remove_row``: the named machine is rebuilt with the rows changed and checked
  like any spec. The checker's table monitor fires the variant's tables; the simulated agent
  fires them too (``tables_of``), and its moves that need a removed row are pruned.
- ``readings``: merged under any ``--reading`` given on the command line.
- ``between``: parameters of the rules between machines switched (``model.between``:
  ``Variant.rules`` is the ``Rules`` in force, read by the monitors and the simulated Agent alike).

In force: a run names its variant where it names its readings, never in the environment: the
simulator's ``Config.variant``, ``MonitorSet(variant=...)``; ``tables_of`` gives the tables a
variant (or the spec as written) has. A ``Variant`` travels to worker processes in its JSON form
(``__reduce__``: the tables are rebuilt there, never pickled).

Must not know: monitors, the simulator, files other than the variant's own, the CLI.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Final

from model import between as bw
from model.core import MachineSpec, Row, SpecError
from model.registry import BY_NAME, MACHINES
from properties.outputs import unreadable
from properties.readings import ReadingError, resolve

KEYS: Final = ("title", "drop", "readings", "add_row", "remove_row", "between")
ROW_KEYS: Final = ("machine", "trigger", "source", "dest")


class VariantError(ValueError):
    """A variant that cannot be used: one line naming the file and the entry."""


@dataclass(frozen=True, slots=True)
class RowChange:
    machine: str
    trigger: str
    source: str
    dest: str

    def text(self) -> str:
        return f"{self.machine}: {self.source} --{self.trigger}--> {self.dest}"


@dataclass(frozen=True)
class Variant:
    name: str
    """The file's stem, or ``drop`` for a variant made of ``--drop`` options only."""
    path: str
    """The file it was read from ("" for ``--drop`` only)."""
    title: str
    drop: tuple[str, ...] = ()
    """Rule IDs that no longer bind (sorted)."""
    readings: tuple[tuple[str, str], ...] = ()
    add_rows: tuple[RowChange, ...] = ()
    remove_rows: tuple[RowChange, ...] = ()
    between: tuple[tuple[str, tuple[tuple[str, bw.Param], ...]], ...] = ()
    """Parameters of rules between machines switched: (declaration, ((parameter, value), ...))."""
    _tables: dict[str, MachineSpec] = field(default_factory=dict, compare=False, hash=False, repr=False)

    # -- what it changes ------------------------------------------------------------------
    def tables(self) -> dict[str, MachineSpec]:
        """Every machine of the model as this variant has it (name -> spec)."""
        if not self._tables:
            self._tables.update(_build(self, self.path or "--drop"))
        return self._tables

    def rules(self) -> bw.Rules:
        """The rules between machines as this variant has them (``model.between``)."""
        return bw.SPEC.switched({name: dict(params) for name, params in self.between})

    def with_drops(self, rules: Iterable[str]) -> Variant:
        """This variant with more rules dropped (``--drop`` beside ``--variant``)."""
        out = replace(self, drop=tuple(sorted(set(self.drop) | set(rules))), _tables={})
        out.tables()
        return out

    def relaxed_cells(self) -> list[tuple[str, str, str, str, str]]:
        """Per dropped rule, what now happens where it used to forbid: (rule, machine, state,
        trigger, effect) for every forbidden cell (effect "the state stays") and every guard of
        the rule (effect "the guarded row fires")."""
        out: list[tuple[str, str, str, str, str]] = []
        for rule in self.drop:
            for spec in MACHINES:
                for state, trigger in spec.relaxed_cells(rule):
                    out.append((rule, spec.name, state, trigger, f"the state stays {state}"))
                for row in spec.rows:
                    if row.guard_name is not None and spec.guard_rules.get(row.guard_name) == rule:
                        what = f"goes to {row.dest} whatever {row.guard}"
                        out.append((rule, spec.name, row.source, row.trigger, what))
        return out

    def describe(self) -> list[str]:
        """Lines stating the variant in force (for text reports)."""
        where = f" ({self.path})" if self.path else ""
        lines = [f"variant: {self.name}{where}: {self.title}"]
        if self.drop:
            lines.append(f"  rules dropped: {', '.join(self.drop)}")
        if self.readings:
            lines.append("  readings fixed: " + ", ".join(f"{k}={v}" for k, v in self.readings))
        for r in self.remove_rows:
            lines.append(f"  row removed: {r.text()}")
        for r in self.add_rows:
            lines.append(f"  row added: {r.text()}")
        for name, params in self.between:
            switched = ", ".join(f"{k}={v!r}" for k, v in params)
            lines.append(f"  rule between machines switched: {name} ({bw.BY_NAME[name].rule}): {switched}")
        return lines

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        # to another process as its JSON form: the tables hold guard functions, and are
        # rebuilt where they are needed
        return (from_json, (self.to_json(),))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "title": self.title,
            "drop": list(self.drop),
            "readings": dict(self.readings),
            "add_row": [asdict(r) for r in self.add_rows],
            "remove_row": [asdict(r) for r in self.remove_rows],
            "between": {name: dict(params) for name, params in self.between},
        }


# -- loading --------------------------------------------------------------------------------------


def load(path: str) -> Variant:
    """The variant in ``path``; raises ``VariantError`` (one line naming file and entry)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise VariantError(unreadable(path, exc)) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise VariantError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise VariantError(f"{path}: not valid TOML ({' '.join(str(exc).split())})") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise VariantError(f"{path}: arrays or tables nested too deeply") from None
    stem = os.path.splitext(os.path.basename(path))[0]
    return from_data(data, path, stem)


def from_data(data: Mapping[str, Any], path: str, name: str) -> Variant:
    """Validate parsed TOML (see ``load``)."""
    for key in data:
        if key not in KEYS:
            raise VariantError(f"{path}: unknown key {key!r} (known: {', '.join(KEYS)})")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise VariantError(f"{path}: title: a non-empty string is required")
    drop = _drops(data.get("drop", []), path)
    readings = _readings(data.get("readings", {}), path)
    adds = _rows(data.get("add_row", []), path, "add_row")
    removes = _rows(data.get("remove_row", []), path, "remove_row")
    switched = _between(data.get("between", {}), path)
    variant = Variant(name, path, " ".join(title.split()), drop, readings, adds, removes, switched)
    variant.tables()  # every table problem is found at load time
    return variant


def from_drops(rules: Iterable[str], where: str = "--drop") -> Variant:
    """The variant of ``--drop RULE-ID`` options alone."""
    drop = _drops(list(rules), where, option=True)
    return Variant("drop", "", "rules dropped on the command line", drop)


def _drops(value: Any, path: str, option: bool = False) -> tuple[str, ...]:
    from properties.catalogue import RULES_BY_ID

    if not isinstance(value, list):
        raise VariantError(f"{path}: drop: a list of rule IDs is required")
    for i, rule in enumerate(value):
        where = f"--drop {rule}" if option else f"{path}: drop[{i}]"
        if not isinstance(rule, str):
            raise VariantError(f"{where}: a rule ID (string) is required")
        if rule not in RULES_BY_ID:
            raise VariantError(f"{where}: unknown rule {rule!r} (acp-model rules lists them)")
    return tuple(sorted(set(value)))


def _readings(value: Any, path: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise VariantError(f'{path}: readings: a table NAME = "ALTERNATIVE" is required')
    for name, alt in value.items():
        if not isinstance(alt, str):
            raise VariantError(f"{path}: readings.{name}: the alternative must be a string")
        try:
            resolve({name: alt})
        except ReadingError as exc:
            raise VariantError(f"{path}: readings.{name}: {exc}") from None
    return tuple(sorted(value.items()))


def _between(value: Any, path: str) -> tuple[tuple[str, tuple[tuple[str, bw.Param], ...]], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise VariantError(f"{path}: between: use [between.NAME] tables of PARAMETER = value")
    try:
        bw.SPEC.switched(value)
    except ValueError as exc:
        raise VariantError(f"{path}: between: {exc}") from None
    return tuple(sorted((name, tuple(sorted(params.items()))) for name, params in value.items()))


def _rows(value: Any, path: str, key: str) -> tuple[RowChange, ...]:
    if not isinstance(value, list):
        raise VariantError(f"{path}: {key}: use [[{key}]] tables")
    out: list[RowChange] = []
    for i, entry in enumerate(value):
        where = f"{path}: {key}[{i}]"
        if not isinstance(entry, dict):
            raise VariantError(f"{where}: a table with {', '.join(ROW_KEYS)} is required")
        for k in entry:
            if k not in ROW_KEYS:
                raise VariantError(f"{where}: unknown key {k!r} (known: {', '.join(ROW_KEYS)})")
        for k in ROW_KEYS:
            if not isinstance(entry.get(k), str):
                raise VariantError(f"{where}: {k}: a string is required")
        change = RowChange(entry["machine"], entry["trigger"], entry["source"], entry["dest"])
        spec = BY_NAME.get(change.machine)
        if spec is None:
            raise VariantError(f"{where}: unknown machine {change.machine!r} (known: {', '.join(BY_NAME)})")
        for k in ("source", "dest", "trigger"):
            what, known = ("trigger", spec.triggers) if k == "trigger" else ("state", spec.states)
            if entry[k] not in known:
                raise VariantError(
                    f"{where}: {k}: {change.machine} has no {what} {entry[k]!r} ({what}s: {', '.join(known)})"
                )
        exists = _matching(spec, change)
        if key == "remove_row" and not exists:
            raise VariantError(
                f"{where}: {change.text()} is not a row of the table (acp-model machines lists them)"
            )
        if key == "add_row" and exists:
            raise VariantError(f"{where}: {change.text()} is already a row of the table")
        if change in out:
            raise VariantError(f"{where}: {change.text()} is named twice")
        out.append(change)
    return tuple(out)


def _matching(spec: MachineSpec, change: RowChange) -> tuple[Row, ...]:
    return tuple(
        r for r in spec.rows if (r.trigger, r.source, r.dest) == (change.trigger, change.source, change.dest)
    )


def _build(variant: Variant, where: str) -> dict[str, MachineSpec]:
    relaxed = frozenset(variant.drop)
    out: dict[str, MachineSpec] = {}
    for spec in MACHINES:
        adds = tuple(
            Row(
                c.trigger,
                c.source,
                c.dest,
                f"variant {variant.name}",
                spec.actor_of[c.trigger],
                note=variant.title,
            )
            for c in variant.add_rows
            if c.machine == spec.name
        )
        removes = tuple(r for c in variant.remove_rows if c.machine == spec.name for r in _matching(spec, c))
        if not adds and not removes and not relaxed:
            out[spec.name] = spec
            continue
        try:
            out[spec.name] = spec.changed(adds, removes, relaxed)
        except SpecError as exc:
            raise VariantError(f"{where}: the changed table does not hold together: {exc}") from None
    return out


# -- in force -------------------------------------------------------------------------------------


def from_json(data: Mapping[str, Any]) -> Variant:
    """A variant from its JSON form (``to_json``), without reading its file."""
    return from_data({key: data[key] for key in KEYS if key in data}, data["path"], data["name"])


def rules_of(variant: Variant | None) -> bw.Rules:
    """The rules between machines as ``variant`` has them (None: the spec as written)."""
    return bw.SPEC if variant is None else variant.rules()


def tables_of(variant: Variant | None) -> Mapping[str, MachineSpec]:
    """Every machine as ``variant`` has it (None: the spec as written)."""
    return BY_NAME if variant is None else variant.tables()
