"""The "Differences" section of a variant's spec report: the variant against the spec as written.

Theory of operation
-------------------
``diagrams.spec_report.build`` runs its parts twice for ``--variant``: once for the spec as written
(the ``--reading`` choices alone) and once under the variant (its readings under them). This
module reads the two ``Context`` results and writes the section that opens the variant's page:

- what the variant changes: rules dropped, readings fixed, rows removed and added, and for each
  what it gives the simulated peers and the checker (``simulator.explore.variant_runs.notes``);
- what changes in the results: decidability verdicts that differ; contradictions found under
  the variant only (with their shortest counterexample, drawn where the variant's
  Contradictions section draws it) and those found in the spec only (drawn under
  ``differences/``); machine-table rows fired in one only (exhaustive slices: the walks'
  reach differs by sampling alone, since a variant splits them between its behaviours);
  readings-matrix rows whose broken rules differ.

Everything is sorted and carries no timing, so the same options give the same bytes; the JSON
(``report.json``'s ``differences``) holds the same facts as the page. What appears and vanishes
is ``explore --compare``'s own difference (``simulator.explore.compare.split`` and ``vanished``).

Must not know: how the parts are computed, argument parsing.
"""

from __future__ import annotations

from typing import Any

from diagrams.spec_report.parts import Context, Section
from diagrams.spec_report.sections import cex_files, cex_title, picture, rule_order
from properties.catalogue import RULES_BY_ID
from properties.variants import Variant
from simulator.explore.compare import split, vanished
from simulator.explore.variant_runs import notes


def section_differences(base: Context, var: Context) -> Section:
    variant = var.opts.variant
    assert variant is not None
    lines: list[str] = []
    data: dict[str, Any] = {"variant": variant.to_json(), "notes": notes(variant)}
    lines += _changes(variant, data)
    lines += ["### What changes in the results", ""]
    lines += _decidability(base, var, data)
    lines += _contradictions(base, var, variant, data)
    lines += _coverage(base, var, data)
    lines += _matrix(base, var, data)
    return Section("differences", "Differences", lines, data)


def _changes(variant: Variant, data: dict[str, Any]) -> list[str]:
    lines = [
        f"Variant `{variant.name}`"
        + (f" (`{variant.path}`)" if variant.path else "")
        + f": {variant.title}.",
        "",
        "### What the variant changes",
        "",
        "| change | what |",
        "|---|---|",
    ]
    for rule in variant.drop:
        r = RULES_BY_ID.get(rule)
        lines.append(f"| rule dropped | {rule}" + (f" ({r.level}): {r.paraphrase}" if r else "") + " |")
    for name, alt in variant.readings:
        lines.append(f"| reading fixed | `{name}={alt}` |")
    for change in variant.remove_rows:
        lines.append(f"| row removed | `{change.text()}` |")
    for change in variant.add_rows:
        lines.append(f"| row added | `{change.text()}` |")
    for name, params in variant.between:
        switched = ", ".join(f"{k} = {v!r}" for k, v in params)
        lines.append(f"| rule between machines switched | `{name}`: {switched} |")
    lines += ["", "What each change reaches:", ""]
    lines += [f"- {n}" for n in data["notes"]]
    lines.append("")
    return lines


def _decidability(base: Context, var: Context, data: dict[str, Any]) -> list[str]:
    b = {v.rule: v for v in base.results.get("decidability") or []}
    v = {x.rule: x for x in var.results.get("decidability") or []}
    rows = []
    for rule in sorted(set(b) & set(v), key=rule_order):
        if b[rule].decidable != v[rule].decidable:
            rows.append(
                {
                    "rule": rule,
                    "spec": b[rule].decidable,
                    "spec_fraction": b[rule].rounded(),
                    "variant": v[rule].decidable,
                    "variant_fraction": v[rule].rounded(),
                    "note": v[rule].note,
                }
            )
    data["decidability"] = rows
    lines = ["#### Decidability", ""]
    if not b or not v:
        return [*lines, "Not computed.", ""]
    if not rows:
        return [*lines, "Every rule's verdict is the same as in the spec as written.", ""]
    lines += ["| rule | spec as written | variant | note |", "|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['rule']} | {r['spec']}{_pct(r['spec_fraction'])} | **{r['variant']}**"
            f"{_pct(r['variant_fraction'])} | {r['note'] or '–'} |"
        )
    return [*lines, ""]


def _pct(x: float | None) -> str:
    return "" if x is None else f" ({round(100 * x)} % flagged)"


def _contradictions(base: Context, var: Context, variant: Variant, data: dict[str, Any]) -> list[str]:
    bx, vx = base.results.get("explore"), var.results.get("explore")
    lines = ["#### Contradictions", ""]
    if bx is None or vx is None:
        data["contradictions"] = None
        return [*lines, "Not computed.", ""]
    b = {c.rule: c for c in bx["counterexamples"]}
    v = {c.rule: c for c in vx["counterexamples"]}
    appear, vanish = split(b, v, rule_order)
    data["contradictions"] = {"appear": [], "vanish": []}
    if not appear and not vanish:
        return [*lines, "The same rules contradict as in the spec as written (none differ).", ""]
    for c in (v[r] for r in appear):
        files = cex_files(var, c)
        data["contradictions"]["appear"].append(
            {"rule": c.rule, "kind": c.source, "explanation": c.explanation, "steps": len(c.events), **files}
        )
        lines += [
            f"**{cex_title(c)}**: under the variant only. {c.explanation} (shortest counterexample: "
            f"{len(c.events)} steps, [{files['transcript']}]({files['transcript']})).",
            "",
            picture(f"{c.rule} under the variant", files),
            "",
        ]
    for c in (b[r] for r in vanish):
        files = cex_files(var, c, "differences")
        why = vanished(c.rule, variant, "found")
        data["contradictions"]["vanish"].append(
            {"rule": c.rule, "kind": c.source, "explanation": c.explanation, "why": why, **files}
        )
        lines += [
            f"**{cex_title(c)}**: in the spec as written only ({why}). {c.explanation} "
            f"([{files['transcript']}]({files['transcript']}), [Mermaid]({files['diagram']})).",
            "",
        ]
    return lines


def _rows(ctx: Context) -> set[str]:
    ex = ctx.results.get("explore")
    if ex is None:
        return set()
    return {f"{m}: {s} --{t}--> {d}" for (m, s, t, d), n in ex["slice_rows"].items() if n}


def _coverage(base: Context, var: Context, data: dict[str, Any]) -> list[str]:
    lines = ["#### Coverage", ""]
    if base.results.get("explore") is None or var.results.get("explore") is None:
        data["coverage"] = None
        return [*lines, "Not computed.", ""]
    gained, lost = split(_rows(base), _rows(var))
    data["coverage"] = {"gained": gained, "lost": lost}
    if not gained and not lost:
        return [
            *lines,
            "The exhaustive slices fire the same table rows as in the spec as written.",
            "",
        ]
    lines += [
        "Machine-table rows fired by the conforming model in the exhaustive slices in one of the two "
        "only (the random walks are not compared: a variant splits them between its behaviours, so "
        "their reach differs by sampling alone):",
        "",
        "| row | fired |",
        "|---|---|",
    ]
    lines += [f"| `{r}` | under the variant only |" for r in gained]
    lines += [f"| `{r}` | in the spec as written only |" for r in lost]
    return [*lines, ""]


def _matrix(base: Context, var: Context, data: dict[str, Any]) -> list[str]:
    lines = ["#### Readings matrix", ""]
    bm, vm = base.results.get("matrix"), var.results.get("matrix")
    if bm is None or vm is None:
        data["matrix"] = None
        return [*lines, "Not run (`--readings none`).", ""]
    b = {(r.reading, r.alternative): r for r in bm.rows}
    rows = []
    for r in vm.rows:
        other = b.get((r.reading, r.alternative))
        if other is None:
            continue
        v_rules = sorted({f.rule for f in r.outcome.findings})
        b_rules = sorted({f.rule for f in other.outcome.findings})
        if v_rules != b_rules or r.outcome.complete != other.outcome.complete:
            rows.append(
                {
                    "reading": r.reading,
                    "alternative": r.alternative,
                    "spec": b_rules,
                    "variant": v_rules,
                    "spec_complete": other.outcome.complete,
                    "variant_complete": r.outcome.complete,
                }
            )
    data["matrix"] = rows
    if not rows:
        return [*lines, "Every row breaks the same rules as in the spec as written.", ""]
    lines += [
        "| reading | alternative | rules broken, spec as written | rules broken, variant |",
        "|---|---|---|---|",
    ]
    for r in rows:

        def cell(rules: list[str], complete: bool) -> str:
            return (", ".join(rules) or "none") + ("" if complete else " (state limit)")

        lines.append(
            f"| {r['reading']} | {r['alternative']} | {cell(r['spec'], r['spec_complete'])} | "
            f"**{cell(r['variant'], r['variant_complete'])}** |"
        )
    return [*lines, ""]
