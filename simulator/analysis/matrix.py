"""The readings matrix: explore every alternative of some readings and tabulate what breaks.

Theory of operation
-------------------
A *cell* is one exploration (``simulator.explore.run.run``) under one choice of readings. For
``all`` (``readings_matrix(("all",), ...)``) the cells are every alternative of every reading, each
against the defaults of the others; for a few named readings they are the product of their
alternatives, the readings in the order they were named (the columns as the command line has
them; the first named varies slowest). Cells that make the same choice (every reading's default
alternative is the all-defaults exploration) are explored once and shown in each of their rows.

Cells run as jobs of a worker pool (``simulator.workers.Workers``: this process, local worker
processes or a Ray cluster): a job computes its cell's exploration (``explore_run.compute``,
every mode in the job's process) and this process writes its files (``explore_run.write``), so
the files land here even when the job ran on another node.
Each cell writes its counterexamples to a folder of its own
under ``out`` (named after its choice), and the matrix row keeps, per rule that the explored
peers break under that choice, the shortest counterexample transcript. A rule broken by peers
that follow the spec under a reading is a contradiction of the rules under that reading (the
peers take exactly the freedoms the reading gives, the monitors judge by it).

Under a variant (``Options.variant``) every cell explores it; the header and the JSON name it.

Determinism: a cell's result depends only on its choice, the options and the seed; rows are in
the order of ``cells`` whatever order the workers finish in, so the JSON without its ``seconds`` is the
same for any pool.

Must not know: argument parsing, exit codes, how the matrix is printed by a command (``cli``).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from properties.readings import BY_NAME, READINGS, ReadingError, non_default
from properties.variants import Variant
from simulator.explore import run as explore_run
from simulator.progress import NULL, Progress
from simulator.workers import Workers

Choice = tuple[tuple[str, str], ...]
"""Readings chosen for one cell, as sorted (name, alternative) pairs of non-defaults."""


@dataclass(frozen=True)
class Finding:
    rule: str
    counterexample: str | None
    """The shortest counterexample's transcript file (None when it could not be written)."""
    events: int
    explanation: str


@dataclass(frozen=True)
class Outcome:
    """What one exploration found (shared by every row that makes its choice)."""

    findings: tuple[Finding, ...]
    states: int
    """Distinct states of the exhaustive search (0 when only the random modes ran)."""
    steps: int
    """Steps of the random modes (0 when only the exhaustive mode ran)."""
    complete: bool
    """The exhaustive search covered every state within its bounds."""
    seconds: float
    write_errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Row:
    reading: str
    """The reading's name (for a product: the names, comma-separated)."""
    alternative: str
    """The alternative (for a product: the alternatives, comma-separated)."""
    choice: Choice
    outcome: Outcome

    @property
    def default(self) -> bool:
        return not self.choice

    def to_json(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "reading": self.reading,
            "alternative": self.alternative,
            "readings": dict(self.choice),
            "default": self.default,
            "findings": [asdict(f) for f in o.findings],
            "states": o.states,
            "steps": o.steps,
            "complete": o.complete,
            "seconds": o.seconds,
        }


@dataclass
class Matrix:
    names: tuple[str, ...]
    mode: str
    seed: int
    jobs: int
    faults: tuple[str, ...] = ()
    """Seeded bugs explored (none: the peers follow the spec, so a finding is a contradiction)."""
    rows: list[Row] = field(default_factory=list)
    explorations: int = 0
    """Distinct explorations run (rows that share a choice share one)."""
    seconds: float = 0.0
    """Wall time of the whole matrix."""
    variant: Variant | None = None
    """The variant every cell explores (None: the spec as written)."""

    def contradicting(self) -> list[Row]:
        """Rows under which explored peers that follow the spec break a rule."""
        return [r for r in self.rows if r.outcome.findings]

    def write_errors(self) -> list[str]:
        return list(dict.fromkeys(e for r in self.rows for e in r.outcome.write_errors))

    def to_json(self) -> dict[str, Any]:
        return {
            "matrix": [r.to_json() for r in self.rows],
            "readings": list(self.names),
            "mode": self.mode,
            "seed": self.seed,
            "faults": list(self.faults),
            "explorations": self.explorations,
            "contradicting": [
                {
                    "reading": r.reading,
                    "alternative": r.alternative,
                    "rules": [f.rule for f in r.outcome.findings],
                }
                for r in self.contradicting()
            ],
            "seconds": self.seconds,
            "variant": None if self.variant is None else self.variant.to_json(),
        }

    def to_text(self) -> str:
        """A readable table: one line per row, then one line per finding with its file. The
        exhaustive mode has no steps and the random modes no states: their column is left out."""
        head = ("reading", "alternative", "findings", "states", "steps", "seconds")
        left_out = {"exhaustive": "steps", "random": "states"}.get(self.mode)
        keep = [i for i, name in enumerate(head) if name != left_out]
        table = [head]
        for r in self.rows:
            o = r.outcome
            rules = ", ".join(f.rule for f in o.findings) or "none"
            alt = r.alternative + (" (default)" if r.default else "")
            states = f"{o.states:,}" + ("" if o.complete or not o.states else " (incomplete)")
            table.append((r.reading, alt, rules, states, f"{o.steps:,}", f"{o.seconds:.1f}"))
        widths = {i: max(len(row[i]) for row in table) for i in keep}  # the numbers right-aligned
        v = self.variant
        out = [
            f"readings matrix: {', '.join(self.names)}; mode {self.mode}, seed {self.seed}"
            + (f", faults {', '.join(self.faults)}" if self.faults else "")
            + ("" if v is None else f", variant {v.name}: {v.title}")
            + (f" (dropped: {', '.join(v.drop)})" if v is not None and v.drop else "")
            + "; "
            f"{len(self.rows)} rows, {self.explorations} explorations, {self.jobs} job(s), "
            f"{self.seconds:.1f} s",
            "",
            *(
                "  ".join(row[i].rjust(w) if i >= 3 else row[i].ljust(w) for i, w in widths.items()).rstrip()
                for row in table
            ),
        ]
        found = [(r, f) for r in self.rows for f in r.outcome.findings]
        out.append("")
        if not found:
            clean = "the peers broke no rule under any row"
            out.append(clean + ("" if self.faults else ": no reading makes the rules contradict"))
        else:
            out.append("findings (the rules broken under a row's readings; shortest counterexample):")
            shown: set[tuple[Choice, str]] = set()
            for r, f in found:
                if (r.choice, f.rule) in shown:
                    continue
                shown.add((r.choice, f.rule))
                where = ", ".join(f"{k}={v}" for k, v in r.choice) or "every reading at its default"
                out.append(f"  {where}: {f.rule} in {f.events} events: {f.counterexample or '(not written)'}")
        return "\n".join(out) + "\n"


def cells(names: tuple[str, ...]) -> list[tuple[str, str, Choice]]:
    """(reading column, alternative column, choice) of every row. ``("all",)``: every
    alternative of every reading against the defaults of the others, in catalogue order;
    otherwise the product of the named readings' alternatives, in the order named. Unknown names
    raise ``ReadingError``."""
    if names == ("all",):
        return [
            (r.name, a, tuple(non_default({r.name: a}).items()))
            for r in READINGS
            for a in r.alternative_names()
        ]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ReadingError(f"unknown reading {unknown[0]!r} (acp-model readings lists them)")
    if len(set(names)) != len(names):
        raise ReadingError("a reading is named twice")
    ordered = list(names)  # the command line's order
    rows = []
    for alts in itertools.product(*(BY_NAME[n].alternative_names() for n in ordered)):
        choice = tuple(sorted(non_default(dict(zip(ordered, alts, strict=True))).items()))
        rows.append((",".join(ordered), ",".join(alts), choice))
    return rows


def _outcome(report: dict[str, Any]) -> Outcome:
    ex = report.get("exhaustive", {})
    return Outcome(
        tuple(
            Finding(f["rule"], f.get("transcript"), int(f["counterexamples"][0]["events"]), f["explanation"])
            for f in report["findings"]
        ),
        int(ex.get("states", 0)),
        int(report.get("random", {}).get("steps", 0)),
        bool(ex.get("complete", True)),
        report["timing"]["total_seconds"],
        tuple(report["write_errors"]),
    )


def readings_matrix(
    names: tuple[str, ...],
    opts: explore_run.Options,
    pool: Workers | None = None,
    progress: Progress = NULL,
) -> Matrix:
    """Explore every row of ``names`` (``("all",)`` or reading names) with the options ``opts``
    (mode, seed, bounds, slices...; its ``readings`` are replaced by each row's choice, its
    ``out`` holds one folder per distinct choice), one job per distinct choice on ``pool``
    (None: this process)."""
    t0 = time.perf_counter()
    pool = pool if pool is not None else Workers(1)
    rows = cells(names)
    distinct: list[Choice] = list(dict.fromkeys(choice for _, _, choice in rows))
    runs = [  # each choice's counterexamples in a folder of its own under ``out``
        replace(
            opts,
            readings=dict(choice),
            out=str(Path(opts.out) / ("_".join(f"{k}={v}" for k, v in choice) or "defaults")),
            graph=None,
        )
        for choice in distinct
    ]
    reports = explore_run.run_each(runs, pool, progress, "readings matrix")
    by_choice = dict(zip(distinct, map(_outcome, reports), strict=True))
    matrix = Matrix(
        names, opts.mode, opts.seed, pool.size, tuple(sorted(opts.faults)), explorations=len(distinct),
        variant=opts.variant,
    )  # fmt: skip
    matrix.rows = [Row(reading, alt, choice, by_choice[choice]) for reading, alt, choice in rows]
    matrix.seconds = time.perf_counter() - t0
    return matrix
