"""The sections of the spec report, in page order: each turns what the parts computed into
Markdown lines, JSON data and files beside the page.

Owns: the section builders (``SECTIONS_BUILDERS``) and the helpers the variant's differences
reuse (``rule_order``, ``cex_title``, ``cex_files``, ``picture``).

Must not know: how the parts run (``diagrams.spec_report.parts``) or where files go.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from diagrams.coverage import coverage_mermaid, coverage_png
from diagrams.ir import all_diagrams
from diagrams.sequence import transcript_to_mermaid
from diagrams.sequence_mpl import sequence_png
from diagrams.spec_report.parts import SOURCE_KIND, Context, Section
from diagrams.witness import SUFFIX, drawn, witness_files
from properties.catalogue import LEVELS, RULES, RULES_BY_ID, SECTIONS
from simulator.analysis import decidability as dec
from simulator.explore.common import Counterexample
from simulator.peers.wire import to_ndjson


def rule_order(rule: str) -> tuple[int, int]:
    r = RULES_BY_ID.get(rule)
    return (SECTIONS.index(r.section), RULES.index(r)) if r else (len(SECTIONS), 0)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{round(100 * x)} %"


def section_summary(ctx: Context) -> Section:
    checks = ("monitor", "client-view", "model", "unchecked", "not-checkable")
    lines = ["### Rules by level and by how each is checked", ""]
    lines.append("| level | " + " | ".join(checks) + " | total |")
    lines.append("|---|" + "---:|" * (len(checks) + 1))
    table: dict[str, dict[str, int]] = {}
    for level in LEVELS:
        row = Counter(r.check for r in RULES if r.level == level)
        table[level] = {c: row[c] for c in checks}
        lines.append(f"| {level} | " + " | ".join(str(row[c]) for c in checks) + f" | {sum(row.values())} |")
    total = Counter(r.check for r in RULES)
    lines.append("| **all** | " + " | ".join(f"**{total[c]}**" for c in checks) + f" | **{len(RULES)}** |")
    data: dict[str, Any] = {"rules": len(RULES), "by_level_and_check": table}
    verdicts: list[dec.Verdict] | None = ctx.results.get("decidability")
    if verdicts is not None:
        n = dec.counts(verdicts)
        lines += ["", "### Wire decidability", ""]
        lines.append(
            "Can a transcript prove the rule broken? For each rule with a seeded bug that breaks it, "
            "the bug's breaking behaviours were sampled and every breaking transcript was given to "
            "`acp-model check` (see [Undecidable rules](#undecidable-and-partly-decidable-rules))."
        )
        lines += ["", "| yes | partly | no | unknown |", "|---:|---:|---:|---:|"]
        lines.append(f"| {n['yes']} | {n['partly']} | {n['no']} | {n['unknown']} |")
        lines += ["", f"Bound: {ctx.opts.bound.text()}."]
        data["decidability"] = n
        alts = ctx.results.get("alternatives")
        if alts is not None:
            differ = sorted((v.rule for v in verdicts if v.by_reading), key=rule_order)
            lines += [
                "",
                f"Under {len(alts)} other reading alternatives, {len(differ)} rule(s) get another verdict"
                + (
                    f" ({', '.join(differ)}; see [the table](#where-a-reading-changes-the-verdict))."
                    if differ
                    else "."
                ),
            ]
            data["reading_dependent"] = differ
    ladder: dict[str, str | None] | None = ctx.results.get("ladder")
    if ladder is not None:
        lines += ["", "### Rules never exercised by the exhaustive slices", ""]
        if not ladder:
            lines.append("Every rule a monitor checks was exercised.")
        else:
            lines += ["| rule | level | smallest bound that exercises it |", "|---|---|---|"]
            for rule in sorted(ladder, key=rule_order):
                lvl = RULES_BY_ID[rule].level if rule in RULES_BY_ID else ""
                lines.append(f"| {rule} | {lvl} | {ladder[rule] or 'none of the bounds tried'} |")
        data["never_exercised"] = {r: ladder[r] for r in sorted(ladder, key=rule_order)}
    partial = sorted(k for k, v in ctx.partial.items() if v)
    if partial:
        lines += ["", f"**Partial** (the time budget or a state limit ended them): {', '.join(partial)}."]
    data["partial"] = partial
    return Section("summary", "Summary", lines, data)


def _witness_files(ctx: Context, v: dec.Verdict, under: str = "", draw: bool = True) -> dict[str, str]:
    """The witness files of ``v`` (``under``: the reading alternative it was found under, in the
    file names and the title); their paths by kind."""
    stem = f"witnesses/{v.rule}{'@' + under if under else ''}"
    paths = {kind: ctx.add(stem + SUFFIX[kind], data) for kind, data in witness_files(v, under).items()}
    if ctx.opts.pictures and draw:
        assert v.witness is not None
        paths["picture"] = ctx.draw(
            f"{stem}.png", sequence_png, v.witness.breaking.transcript, *drawn(v, under)
        )
    return paths


def section_decidability(ctx: Context) -> Section:
    verdicts: list[dec.Verdict] = ctx.results.get("decidability") or []
    lines: list[str] = [
        "Each rule below has breaking behaviours whose transcripts `acp-model check` does not flag "
        "with that rule. *Seen as another rule*: the checker rejects the transcript, but names a "
        "different rule (the messages cannot say which was broken). *Accepted*: the checker reports "
        "nothing; the witness is then a conforming run of the simulated peers with exactly the same "
        "messages, and the diagram marks the hidden steps in which the two runs differ (red: the "
        "breaking run, green: the conforming run).",
        "",
    ]
    witness_paths: dict[str, dict[str, str]] = {}
    reading_paths, by_reading_lines = _by_reading(ctx, verdicts)
    lines += by_reading_lines
    bad = sorted((v for v in verdicts if v.decidable in ("partly", "no")), key=lambda v: rule_order(v.rule))
    if bad and by_reading_lines:
        lines += [
            "### Under the readings in force",
            "",
            "The rules that are partly or not decidable under the readings in force, in the spec's "
            "section order:",
            "",
        ]
    if not bad:
        lines.append("None: every breach sampled is flagged by the checker with its rule.")
    for v in bad:
        rule = RULES_BY_ID[v.rule]
        paths = witness_paths[v.rule] = _witness_files(ctx, v) if v.witness is not None else {}
        lines += [f"### {v.rule}: {rule.paraphrase}", ""]
        lines.append(
            f"*{rule.section}* · {rule.level} · checked by {rule.check} · seeded bug `{v.mutant}` · "
            f"decidable: **{v.decidable}**"
        )
        lines += [
            "",
            "| breaking transcripts | flagged with the rule | seen as another rule | accepted |",
            "|---:|---:|---:|---:|",
            f"| {v.breaking} | {v.flagged} ({_pct(v.fraction)}) | {sum(v.other.values())}"
            f"{' (' + ', '.join(sorted(v.other)) + ')' if v.other else ''} | {v.accepted} |",
            "",
        ]
        w = v.witness
        if v.note and (w is None or w.twin_found):
            lines += [f"{v.note[0].upper()}{v.note[1:]}.", ""]
        if w is not None:
            if w.twin_found:
                lines.append(
                    f"Witness: the breaking run ({w.breaking.source}) and a conforming run send the same "
                    f"{len(w.breaking.transcript)} messages; `acp-model check` accepts both "
                    f"([breaking]({paths['breaking']}), [conforming]({paths['conforming']}), "
                    f"[Mermaid]({paths['diagram']}))."
                )
            else:
                lines.append(
                    f"The accepted transcript ([breaking]({paths['breaking']}), "
                    f"[Mermaid]({paths['diagram']})) has no conforming twin within "
                    f"{ctx.opts.bound.twin_nodes:,} states of the search: the checker accepts messages "
                    "the conforming peers never send at this bound."
                )
            lines += ["", picture(f"{v.rule} witness", paths), ""]
            if w.differing:
                lines += ["| after message | run | hidden step |", "|---:|---|---|"]
                for pos, run, what in w.differing:
                    lines.append(f"| {pos} | {run} | {what} |")
                lines.append("")
    data = {
        "bound": ctx.opts.bound.to_json(),
        "rules": [
            v.to_json(witness_paths.get(v.rule), reading_paths.get(v.rule))
            for v in sorted(verdicts, key=lambda v: rule_order(v.rule))
        ],
    }
    alts = ctx.results.get("alternatives")
    if alts is not None:
        data["by_reading"] = [{"reading": n, "alternative": a} for n, a in alts]
    return Section("decidability", "Undecidable and partly decidable rules", lines, data)


def _by_reading(
    ctx: Context, verdicts: list[dec.Verdict]
) -> tuple[dict[str, dict[tuple[str, str], dict[str, str]]], list[str]]:
    """The witness files of the verdicts that differ under a reading alternative (by rule, then
    (reading, alternative)) and the page's lines about them."""
    alts = ctx.results.get("alternatives")
    paths: dict[str, dict[tuple[str, str], dict[str, str]]] = {}
    if alts is None:
        return paths, []
    lines = [
        "### Where a reading changes the verdict",
        "",
        f"The decidability of the rules each reading names (`acp-model readings`: the rules whose "
        f"verdicts depend on it) was computed again under its other alternatives ({len(alts)} in "
        "all, each against the readings in force for the others), at the same bound. Rules whose "
        "verdict differs under an alternative:",
        "",
    ]
    differ = sorted((v for v in verdicts if v.by_reading), key=lambda v: rule_order(v.rule))
    if not differ:
        return paths, [*lines[:-1], "No rule's verdict depends on a reading at this bound.", ""]
    lines += [
        "| rule | decidable | reading | alternative | decidable under it | flagged | witness |",
        "|---|---|---|---|---|---:|---|",
    ]
    for v in differ:
        for r in v.by_reading or []:
            w = r.verdict
            link = "–"
            if w.witness is not None:
                files = _witness_files(ctx, w, f"{r.reading}={r.alternative}", draw=False)
                paths.setdefault(v.rule, {})[(r.reading, r.alternative)] = files
                link = f"[diagram]({files['diagram']}), [breaking]({files['breaking']})"
                if "conforming" in files:
                    link += f", [conforming]({files['conforming']})"
            lines.append(
                f"| {v.rule} | {v.decidable} | {r.reading} | {r.alternative} | **{w.decidable}** | "
                f"{_pct(w.fraction)} | {link} |"
            )
    lines.append("")
    return paths, lines


def cex_title(c: Counterexample) -> str:
    return f"{c.rule}: {SOURCE_KIND.get(c.source, c.source)}"


def cex_files(ctx: Context, c: Counterexample, folder: str = "contradictions") -> dict[str, str]:
    """A counterexample's transcript, Mermaid diagram and picture in ``folder``; paths by kind."""
    title = cex_title(c)
    stem = f"{folder}/{c.rule}"
    files = {
        "transcript": ctx.add(f"{stem}.ndjson", to_ndjson(c.transcript)),
        "diagram": ctx.add(f"{stem}.mmd", transcript_to_mermaid(c.transcript, title)),
    }
    if ctx.opts.pictures:
        files["picture"] = ctx.draw(f"{stem}.png", sequence_png, c.transcript, title)
    return files


def section_contradictions(ctx: Context) -> Section:
    ex = ctx.results.get("explore")
    lines: list[str] = []
    data: list[dict[str, Any]] = []
    if ex is None:
        return Section("contradictions", "Contradictions", ["Not computed."], data)
    lines.append(
        "Findings of the conforming model: the simulated peers take only moves the tables allow, so "
        "every finding is a place where the rules do not hold together: a conforming move a monitor "
        "rejects, an obligation no conforming move can discharge, a liveness failure (a cycle that "
        "never discharges it), or a client view that disagrees with the agent's truth at the end of a "
        "run. Explored: the exhaustive slices "
        f"({', '.join(s['name'] for s in ex['slices'])}) and {ex['walks']} random walks at the "
        "default bounds (with monitors), and as many walks comparing the client's view with the "
        "agent's truth."
    )
    lines.append("")
    if not ex["counterexamples"]:
        lines.append("None found at these bounds.")
    for c in ex["counterexamples"]:
        title = cex_title(c)
        files = cex_files(ctx, c)
        lines += [f"### {title}", "", c.explanation, ""]
        lines += [
            f"Shortest counterexample ({len(c.events)} steps, {c.mode}): [{files['transcript']}]"
            f"({files['transcript']})",
            "",
            picture(c.rule, files),
            "",
        ]
        data.append({"rule": c.rule, "kind": c.source, "explanation": c.explanation, **files})
    return Section("contradictions", "Contradictions", lines, data)


def section_coverage(ctx: Context) -> Section:
    ex = ctx.results.get("explore")
    if ex is None:
        return Section("coverage", "Coverage per machine", ["Not computed."], [])
    lines = [
        "Rows of each machine's table fired by the conforming model (exhaustive slices and random "
        "walks): green arrows fired, red arrows never, amber arrows carry rows of both kinds.",
        "",
        "| machine | rows fired | never fired |",
        "|---|---:|---|",
    ]
    data = []
    pics: list[str] = []
    for d, cov in zip(all_diagrams(), ex["machines"], strict=True):
        fired = {(src, trig, dest) for (m, src, trig, dest) in ex["rows"] if m == d.name}
        missed = cov["transitions_missed"]
        lines.append(
            f"| {d.name} | {cov['transitions_reached']}/{cov['transitions_total']} | "
            f"{', '.join(f'`{m}`' for m in missed) or '–'} |"
        )
        files = {"diagram": ctx.add(f"coverage/{d.name}.mmd", coverage_mermaid(d, fired))}
        if ctx.opts.pictures:
            files["picture"] = ctx.draw(f"coverage/{d.name}.png", coverage_png, d, fired)
        pics += [f"#### {d.name}", "", picture(f"{d.name} coverage", files), ""]
        data.append(
            {"machine": d.name, "method": cov["method"], "fired": len(fired), "missed": missed, **files}
        )
    lines += ["", *pics]
    return Section("coverage", "Coverage per machine", lines, data)


def picture(alt: str, files: dict[str, str]) -> str:
    """The picture (with a link to its Mermaid source), or the Mermaid link alone."""
    if "picture" in files:
        return f"![{alt}]({files['picture']})\n\n[Mermaid source]({files['diagram']})"
    return f"[{alt} (Mermaid)]({files['diagram']})"


def section_all_rules(ctx: Context) -> Section:
    verdicts = {v.rule: v for v in ctx.results.get("decidability") or []}
    lines = ["| rule | level | checked by | decidable | flagged |", "|---|---|---|---|---:|"]
    for r in RULES:
        v = verdicts.get(r.id)
        if v is None:
            continue
        lines.append(f"| {r.id} | {r.level} | {r.check} | {v.decidable} | {_pct(v.fraction)} |")
    return Section("rules", "Every rule with a check", lines, None)


SectionBuilder = Callable[[Context], Section]


def section_matrix(ctx: Context) -> Section:
    matrix = ctx.results.get("matrix")
    lines: list[str] = []
    if matrix is None:
        lines.append("Not run (`--readings none`).")
        return Section("matrix", "Readings matrix", lines, None)
    where = "the default slices" if ctx.opts.slices is None else "the slices " + ", ".join(ctx.opts.slices)
    lines.append(
        "Every alternative of every reading (`acp-model readings`), each against the defaults of "
        f"the others, explored exhaustively at {where}: the simulated peers take the "
        "freedoms of the alternative and the checker judges under it. A rule broken in a row means "
        "the rules contradict under that reading (`acp-model explore --readings all` gives the same "
        "table with its counterexamples)."
    )
    lines += ["", "| reading | alternative | rules broken | states | complete |", "|---|---|---|---:|---|"]
    for r in matrix.rows:
        rules = sorted({f.rule for f in r.outcome.findings})
        alt = f"{r.alternative} (default)" if r.default else r.alternative
        lines.append(
            f"| {r.reading} | {alt} | {', '.join(rules) or 'none'} | {r.outcome.states:,} | "
            f"{'yes' if r.outcome.complete else 'no (state limit)'} |"
        )
    contradicting = matrix.contradicting()
    lines += [
        "",
        "**No reading makes the rules contradict** at these bounds."
        if not contradicting
        else f"**{len(contradicting)} row(s) make the rules contradict.**",
    ]
    # the report names its variant once, at the top (``variant``)
    data = {k: v for k, v in matrix.to_json().items() if k not in ("seconds", "variant")}
    if ctx.opts.pictures:
        from diagrams.matrix_png import effects, effects_png

        verdicts = [v.to_json() for v in ctx.results.get("decidability") or []]
        picture = ctx.draw("matrix.png", effects_png, effects(data["matrix"], verdicts))
        lines += [
            "",
            "Rules by alternative: red where the alternative breaks the rule, else the rule's wire "
            "decidability under the readings in force and under the alternative (see "
            "[Where a reading changes the verdict](#where-a-reading-changes-the-verdict)).",
            "",
            f"![readings matrix: rules by alternative]({picture})",
        ]
    for row in data["matrix"]:
        row.pop("seconds", None)
        for finding in row["findings"]:  # written to a temporary folder that is gone by now
            finding.pop("counterexample", None)
    return Section("matrix", "Readings matrix", lines, data)


SECTIONS_BUILDERS: tuple[SectionBuilder, ...] = (
    section_summary,
    section_matrix,
    section_decidability,
    section_contradictions,
    section_coverage,
    section_all_rules,
)
"""Section builders in page order (see the module docstring)."""
