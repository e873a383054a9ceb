"""The readings matrix as a picture of rules by alternatives: what each alternative of a reading
changes, rule by rule.

Theory of operation
-------------------
A column is one alternative of a reading (``reading = alternative``, each against the defaults
of the others); a row is a rule some alternative changes. A cell says how:

- *breaks* (red): the exhaustive search of the conforming model under that alternative breaks
  the rule (the rules contradict under that reading);
- *before → after* (coloured by the verdict after): the rule's wire decidability (yes, partly,
  no, unknown) under that alternative differs from the one under the readings in force.

A column ``(defaults)`` holds the rules broken under every reading's default, when there are any.
``effects`` builds the grid from the JSON of the spec report (its ``matrix`` rows and its
``decidability`` rules with their ``by_reading`` verdicts), so a report folder's picture can be
drawn again from its ``report.json``; ``effects_png`` draws it with matplotlib under the
committed diagrams' settings (``RC``, no metadata), so the same grid gives the same bytes. A grid
with no cell says so in words.

Must not know: how the matrix or the verdicts were computed, files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from diagrams.coverage import FIRED, NEVER, SOME
from diagrams.render_mpl import RC, png
from properties.catalogue import RULES

DEFAULTS = "(defaults)"
COLOURS = {"breaks": NEVER, "yes": FIRED, "partly": SOME, "no": "#7b1fa2", "unknown": "#9e9e9e"}
"""Cell colour by kind: a contradiction, or the decidability verdict under the alternative."""
_ORDER = {rule.id: i for i, rule in enumerate(RULES)}


@dataclass
class Effects:
    """The grid of the picture (see the module docstring)."""

    columns: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    """(rule, column) -> (kind, text)."""


def effects(
    matrix_rows: Sequence[Mapping[str, Any]], decidability_rules: Sequence[Mapping[str, Any]]
) -> Effects:
    """The grid from the spec report's JSON: ``sections.matrix.matrix`` and
    ``sections.decidability.rules`` (either may be empty)."""
    grid = Effects()

    def column(name: str) -> str:
        if name not in grid.columns:
            grid.columns.append(name)
        return name

    broken: dict[tuple[str, str], None] = {}
    for row in matrix_rows:
        rules = sorted(
            {str(f["rule"]) for f in row.get("findings", [])}, key=lambda r: _ORDER.get(r, len(_ORDER))
        )
        if row.get("default"):
            for rule in rules:
                broken[(rule, DEFAULTS)] = None
            continue
        name = column(f"{row['reading']} = {row['alternative']}")
        for rule in rules:
            broken[(rule, name)] = None
    changed: dict[tuple[str, str], tuple[str, str]] = {}
    for entry in decidability_rules:
        for alt in entry.get("by_reading") or []:
            name = column(f"{alt['reading']} = {alt['alternative']}")
            changed[(str(entry["rule"]), name)] = (
                str(alt["decidable"]),
                f"{entry['decidable']} → {alt['decidable']}",
            )
    if any(col == DEFAULTS for _, col in broken):
        grid.columns.insert(0, DEFAULTS)
    for key in sorted({*broken, *changed}):
        if key in broken:
            text = "breaks" + (f"; {changed[key][1]}" if key in changed else "")
            grid.cells[key] = ("breaks", text)
        else:
            grid.cells[key] = changed[key]
    grid.rules = sorted({rule for rule, _ in grid.cells}, key=lambda r: (_ORDER.get(r, len(_ORDER)), r))
    return grid


def effects_png(grid: Effects) -> bytes:
    """The picture of ``grid`` (see the module docstring)."""
    cols, rules = grid.columns, grid.rules
    with rc_context(RC):
        width = 2.2 + 1.25 * max(1, len(cols))
        fig = Figure(figsize=(width, 2.6 + 0.34 * max(1, len(rules))))
        ax = fig.add_subplot()
        if not grid.cells:
            ax.text(
                0.5, 0.5,
                "No alternative of the readings changes a rule's verdict or decidability at these bounds.",
                ha="center", va="center", fontsize=10, wrap=True,
            )  # fmt: skip
            ax.set_axis_off()
        else:
            for y, rule in enumerate(rules):
                for x, col in enumerate(cols):
                    kind, text = grid.cells.get((rule, col), ("", ""))
                    colour = COLOURS.get(kind, "#9e9e9e") if kind else "#f5f5f5"  # light grey: no cell
                    ax.add_patch(Rectangle((x, y), 1, 1, facecolor=colour, edgecolor="white"))
                    if kind:
                        ax.text(x + 0.5, y + 0.5, text.replace("; ", "\n"), ha="center", va="center",
                                fontsize=7, color="white")  # fmt: skip
            ax.set_xlim(0, len(cols))
            ax.set_ylim(len(rules), 0)
            ax.set_yticks([y + 0.5 for y in range(len(rules))], rules, fontsize=8)
            ax.xaxis.tick_top()
            ax.set_xticks(
                [x + 0.5 for x in range(len(cols))],
                [c.replace(" = ", " =\n") for c in cols],
                fontsize=7, rotation=40, ha="left", rotation_mode="anchor",
            )  # fmt: skip
            ax.tick_params(length=0)
            for side in ax.spines.values():
                side.set_visible(False)
            handles = [Patch(color=COLOURS["breaks"], label="rule broken (the rules contradict)")]
            handles += [
                Patch(color=COLOURS[k], label=f"decidable under it: {k}")
                for k in ("yes", "partly", "no", "unknown")
            ]
            fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=7, frameon=False)
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        return png(fig)
