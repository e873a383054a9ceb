"""The spec report: one page (``index.md`` and ``report.json``) a spec author brings to a review.

Theory of operation
-------------------
Two stages. *Parts* compute (each stops cleanly at its share of ``--time-budget`` and says so):

- ``decidability``: ``simulator.decidability`` for every rule that has a check, and again under
  every other alternative of the ``--readings`` readings (the page lists the verdicts that
  differ);
- ``explore``: the conforming model explored exhaustively in every slice of
  ``simulator.explore_bfs.SLICES``, then by seeded random walks at the default bounds
  (findings are contradictions of the rules; rows fired and rules exercised are the coverage);
- ``ladder``: for each rule the slices never exercised, the smallest of a few larger bounds
  (``LADDER``) whose random walks exercise it.

*Sections* render what the parts computed, in page order (``SECTIONS``): a section builder
takes the ``Context`` and returns a ``Section`` (a heading, Markdown lines, JSON data, files to
write beside the page). To add a section (the readings matrix, a variant's differences), write
one more builder and put it in ``SECTIONS`` where it belongs on the page; a part it needs goes
in ``PARTS`` (a function that fills ``Context.results[name]`` and returns whether it completed).

For ``--variant`` (``Options.variant``) the parts run twice, for the spec as written and under
the variant (each with half the time budget), and ``cli.spec_report_diff`` writes the
"Differences" section that opens the page; the other sections are the variant's.

Everything written is deterministic for the same options: no timing in ``report.json`` or
``index.md`` (timing goes to standard error), files in a fixed order, pictures without metadata.
All files are written atomically, the page last. ``index.html`` and a page beside every witness
and contradiction transcript are made from what the report wrote (``diagrams.html.report``).

Must not know: argument parsing or exit codes (``cli.cmd_spec_report`` owns them).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from diagrams.coverage import coverage_mermaid, coverage_png
from diagrams.html.report import report_pages
from diagrams.ir import all_diagrams
from diagrams.sequence import transcript_to_mermaid
from diagrams.sequence_mpl import sequence_png
from model.registry import MACHINES
from properties.catalogue import LEVELS, RULES, RULES_BY_ID, SECTIONS
from properties.outputs import dumps, write_atomic
from properties.readings import resolve
from properties.variants import Variant
from simulator import decidability as dec
from simulator import explore_bfs, explore_random
from simulator.agent import MAIN
from simulator.config import DEFAULT, EXPLORE_STEPS, Config, long_session
from simulator.explore_common import Counterexample, keep_shortest, monitor_rules
from simulator.explore_coverage import machine_coverage
from simulator.schedulers import random_walk
from simulator.variant_runs import behaviours
from simulator.workers import Workers

REPORT_WALKS = 400
"""Random walks of the conforming model (default bounds) after the exhaustive slices."""
LADDER: tuple[tuple[str, int, int], ...] = (
    ("default bounds, 400 walks x 60 steps", 400, 60),
    ("long session (budgets for 200 steps), 400 walks x 200 steps", 400, 200),
)
"""Larger bounds tried, smallest first, for rules the exhaustive slices never exercise."""
LADDER_CHUNK = 50
"""Walks of a ladder bound run between two looks at the time budget (chunk ``k`` is seeded ``k``)."""
SOURCE_KIND = {
    "monitor": "a conforming move the checker rejects",
    "eventually": "an obligation no conforming move can discharge (the run is over)",
    "cycle": "a liveness failure (a cycle that never discharges the obligation)",
    "view": "the client's view disagrees with the agent's truth",
    "model": "a move the peer made that the tables refuse",
}


@dataclass
class Options:
    out: Path
    readings: dict[str, str] = field(default_factory=dict)
    bound: dec.Bound = dec.DEFAULT_BOUND
    time_budget: float | None = None
    rules: tuple[str, ...] | None = None
    """Rules whose decidability is computed (None: every rule with a check)."""
    slices: tuple[str, ...] | None = None
    """Exhaustive slices (None: all)."""
    walks: int = REPORT_WALKS
    ladder: tuple[tuple[str, int, int], ...] = LADDER
    pictures: bool = True
    """Draw the PNG pictures (matplotlib); without, the page links the Mermaid files only."""
    matrix: tuple[str, ...] = ("all",)
    """Readings of the readings matrix (``("all",)``, reading names, or ``()`` for no matrix);
    the decidability of every rule is also computed under each other alternative of them."""
    pool: Workers | None = None
    """The worker pool of the decidability samples and the readings matrix (``--jobs``,
    ``--cluster``; started and closed by ``build``). None: every core of this machine."""
    variant: Variant | None = None
    """The variant the page is for (None: the spec as written); its readings are in ``readings``."""
    base_readings: dict[str, str] | None = None
    """For a variant: the readings of the spec as written it is compared with (None: ``readings``)."""


@dataclass
class Section:
    key: str
    title: str
    lines: list[str]
    data: Any


@dataclass
class Context:
    opts: Options
    progress: Callable[[str], None]
    results: dict[str, Any] = field(default_factory=dict)
    partial: dict[str, bool] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    """Files to write, by path relative to the output folder."""
    readings: dict[str, str] = field(default_factory=dict)

    @property
    def pool(self) -> Workers:
        """Where the parts run their jobs (this process when the options name no pool)."""
        return self.opts.pool if self.opts.pool is not None else Workers(1)

    def add(self, rel: str, data: str | bytes) -> str:
        self.files[rel] = data.encode("utf-8") if isinstance(data, str) else data
        return rel


# -- parts ---------------------------------------------------------------------------------------


def part_decidability(ctx: Context, budget: float | None) -> bool:
    rules = ctx.opts.rules or tuple(r.id for r in dec.rules_with_check())
    alts = dec.alternatives(ctx.opts.matrix, ctx.readings) if ctx.opts.matrix else None
    verdicts, complete = dec.decide_all(
        rules,
        ctx.opts.bound,
        ctx.readings,
        ctx.progress,
        budget,
        by_reading=alts,
        pool=ctx.pool,
        variant=ctx.opts.variant,
    )
    ctx.results["alternatives"] = alts
    ctx.results["decidability"] = verdicts
    return complete


def _cfg(ctx: Context, cfg: Config) -> Config:
    """``cfg`` under the report's readings and variant (the simulated peers and monitors take
    them from it)."""
    return cfg.with_(readings=ctx.opts.readings, variant=ctx.opts.variant)


def part_explore(ctx: Context, budget: float | None) -> bool:
    t0 = time.perf_counter()
    slices = [s for s in explore_bfs.SLICES if ctx.opts.slices is None or s.name in ctx.opts.slices]
    rows: Counter[Any] = Counter()
    exercised: Counter[str] = Counter()
    events: Counter[str] = Counter()
    entity: Counter[str] = Counter()
    cexs: dict[str, Counterexample] = {}
    complete = True
    stats = []

    def absorb(found: Any) -> None:
        """Add one exploration's coverage and counterexamples (the shortest per rule)."""
        rows.update(found.rows)
        exercised.update(found.exercised)
        events.update(found.events)
        entity.update(found.entity)
        keep_shortest(cexs, found.counterexamples)

    sets = behaviours(ctx.opts.variant, frozenset())
    for sl in slices:
        for label, faults in sets:
            left = None if budget is None else max(0.0, budget - (time.perf_counter() - t0))
            name = sl.name if label == "spec" else f"{sl.name}+{label}"
            ctx.progress(f"explore: slice {name}")
            r = explore_bfs.explore(_cfg(ctx, sl.cfg), faults, time_budget=left, name=name)
            complete &= r.complete
            stats.append({"name": name, "states": r.states, "complete": r.complete, "stop": r.stop})
            absorb(r)
    slice_exercised = Counter(exercised)
    slice_rows = Counter(rows)
    walks = ctx.opts.walks
    if budget is not None and time.perf_counter() - t0 > budget:
        walks, complete = 0, False
    if walks:
        ctx.progress(f"explore: {walks} random walks at the default bounds")
        left_walks = walks
        for k, (_, faults) in enumerate(sets):  # a variant's walks: the first half (rounded up)
            n = -(-left_walks // (len(sets) - k))  # with the spec's behaviours, then the rest
            left_walks -= n
            w = explore_random.explore(_cfg(ctx, DEFAULT), faults, seed=0, walks=n, steps=EXPLORE_STEPS)
            absorb(w)
    if walks:
        ctx.progress(f"explore: {walks} walks, the client's view against the agent's truth")
        for c in view_against_truth(walks, _cfg(ctx, DEFAULT)):
            cexs.setdefault(c.rule, c)
    ctx.results["explore"] = {
        "slices": stats,
        "walks": walks,
        "rows": rows,
        "machines": machine_coverage(rows, events, entity, ctx.opts.variant),
        "exercised": exercised,
        "slice_exercised": slice_exercised,
        "slice_rows": slice_rows,
        "counterexamples": [cexs[r] for r in sorted(cexs)],
    }
    return complete


VIEW_TRUTH = "VIEW-TRUTH"
"""The name a disagreement between the client's view and the agent's truth is reported under."""


def view_against_truth(walks: int, cfg: Config = DEFAULT) -> list[Counterexample]:
    """Seeded conforming walks at the default bounds: at quiescence (everything delivered), the
    foreground state in the client's view of the session must be the one the agent is really in;
    the shortest disagreement, if any."""
    best: Counterexample | None = None
    for seed in range(walks):
        run = random_walk(seed, EXPLORE_STEPS, cfg)
        world = run.world
        if run.stop != "quiescent" or world.agent.session != "open":
            continue
        seen = world.client.view.to_json().get(MAIN, {}).get("session", {}).get("state")
        truth = world.agent.real
        if seen != truth and (best is None or len(run.events) < len(best.events)):
            best = Counterexample(
                VIEW_TRUTH,
                "view",
                f"the client's view says {seen}, the agent is {truth}",
                "random",
                f"seed {seed}",
                list(run.events),
                DEFAULT,
                frozenset(),
                len(run.events),
                transcript=list(world.transcript),
            )
    return [best] if best is not None else []


def part_ladder(ctx: Context, budget: float | None) -> bool:
    t0 = time.perf_counter()
    rules = monitor_rules()
    ex = ctx.results.get("explore")
    seen = ex["slice_exercised"] if ex else Counter()
    missing = [r for r in rules if not seen[r]]
    smallest: dict[str, str | None] = {r: None for r in missing}
    complete = True
    for name, walks, steps in ctx.opts.ladder:
        todo = [r for r in missing if smallest[r] is None]
        if not todo:
            break
        if budget is not None and time.perf_counter() - t0 > budget:
            complete = False
            break
        ctx.progress(f"ladder: {name}")
        cfg = long_session(steps) if steps > EXPLORE_STEPS else DEFAULT
        for chunk in range(0, walks, LADDER_CHUNK):  # the budget is checked between chunks
            if budget is not None and time.perf_counter() - t0 > budget:
                complete = False
                break
            n = min(LADDER_CHUNK, walks - chunk)
            w = explore_random.explore(_cfg(ctx, cfg), frozenset(), seed=chunk, walks=n, steps=steps)
            for r in todo:
                if w.exercised[r] and smallest[r] is None:
                    smallest[r] = name
    ctx.results["ladder"] = smallest
    return complete


def part_matrix(ctx: Context, budget: float | None) -> bool:
    """The readings matrix (``simulator.matrix``) at the default slices, exhaustive, seed 0:
    every alternative of the chosen readings, peers and checker under it."""
    if not ctx.opts.matrix:
        return True
    import tempfile

    from simulator import explore_run
    from simulator.matrix import readings_matrix

    with tempfile.TemporaryDirectory() as tmp:
        opts = explore_run.Options(mode="exhaustive", seed=0, out=tmp, variant=ctx.opts.variant)
        ctx.results["matrix"] = readings_matrix(ctx.opts.matrix, opts, ctx.pool)
    return True


PARTS: tuple[tuple[str, Callable[[Context, float | None], bool], float], ...] = (
    ("decidability", part_decidability, 0.5),
    ("explore", part_explore, 0.2),
    ("ladder", part_ladder, 0.2),
    ("matrix", part_matrix, 0.1),
)
"""(name, function, share of the time budget), run in this order."""


# -- sections ------------------------------------------------------------------------------------


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
    w = v.witness
    assert w is not None
    stem = f"witnesses/{v.rule}{'@' + under if under else ''}"
    paths = {"breaking": ctx.add(f"{stem}.breaking.ndjson", dec.ndjson(w.breaking.transcript))}
    if w.twin_found:
        paths["conforming"] = ctx.add(f"{stem}.conforming.ndjson", dec.ndjson(dec.conforming_transcript(w)))
    notes: dict[int, list[tuple[str, str, str]]] = {}
    for pos, run, what in w.differing:
        lane = "C" if what.startswith("client") else "A"
        notes.setdefault(pos, []).append((lane, run, what))
    if w.twin_found:
        end = len(w.breaking.transcript)
        notes.setdefault(end, []).append(("A", "conforming", "may next: " + "; ".join(w.conforming_next[:2])))
    name = f"{v.rule} under {under}" if under else v.rule
    title = (
        f"{name}: breaking and conforming runs, same messages"
        if w.twin_found
        else f"{name}: an accepted breaking run (no conforming run found that sends these messages)"
    )
    paths["diagram"] = ctx.add(f"{stem}.mmd", transcript_to_mermaid(w.breaking.transcript, title, notes))
    if ctx.opts.pictures and draw:
        paths["picture"] = ctx.add(f"{stem}.png", sequence_png(w.breaking.transcript, title, notes))
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
    entries: list[dict[str, Any]] = []
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
        paths = _witness_files(ctx, v) if v.witness is not None else {}
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
        entries.append(v.to_json(paths, reading_paths.get(v.rule)))
    data = {
        "bound": ctx.opts.bound.to_json(),
        "rules": [
            v.to_json(None, reading_paths.get(v.rule)) if v.decidable not in ("partly", "no") else e
            for v, e in _merge(sorted(verdicts, key=lambda v: rule_order(v.rule)), entries)
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
        f"Every rule's decidability was computed again under each of {len(alts)} other "
        "alternatives of the readings (`acp-model readings`; each against the readings in force "
        "for the others), at the same bound. Rules whose verdict differs under an alternative:",
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


def _merge(verdicts: list[dec.Verdict], entries: list[dict[str, Any]]) -> list[tuple[dec.Verdict, Any]]:
    by_rule = {e["rule"]: e for e in entries}
    return [(v, by_rule.get(v.rule)) for v in verdicts]


def cex_title(c: Counterexample) -> str:
    return f"{c.rule}: {SOURCE_KIND.get(c.source, c.source)}"


def cex_files(ctx: Context, c: Counterexample, folder: str = "contradictions") -> dict[str, str]:
    """A counterexample's transcript, Mermaid diagram and picture in ``folder``; paths by kind."""
    title = cex_title(c)
    stem = f"{folder}/{c.rule}"
    files = {
        "transcript": ctx.add(f"{stem}.ndjson", dec.ndjson(c.transcript)),
        "diagram": ctx.add(f"{stem}.mmd", transcript_to_mermaid(c.transcript, title)),
    }
    if ctx.opts.pictures:
        files["picture"] = ctx.add(f"{stem}.png", sequence_png(c.transcript, title))
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
    diagrams = {d.name: d for d in all_diagrams()}
    data = []
    pics: list[str] = []
    for spec, cov in zip(MACHINES, ex["machines"], strict=True):
        if cov["method"] == "triggers":
            missed = cov["triggers_missed"]
            lines.append(
                f"| {spec.name} | triggers only: {len(cov['triggers']) - len(missed)}/"
                f"{len(cov['triggers'])} | {', '.join(missed) or '–'} |"
            )
            data.append({"machine": spec.name, "method": "triggers", "missed": missed})
            continue
        fired = {(src, trig, dest) for (m, src, trig, dest) in ex["rows"] if m == spec.name}
        missed = cov["transitions_missed"]
        lines.append(
            f"| {spec.name} | {cov['transitions_reached']}/{cov['transitions_total']} | "
            f"{', '.join(f'`{m}`' for m in missed) or '–'} |"
        )
        d = diagrams[spec.name]
        files = {"diagram": ctx.add(f"coverage/{spec.name}.mmd", coverage_mermaid(d, fired))}
        if ctx.opts.pictures:
            files["picture"] = ctx.add(f"coverage/{spec.name}.png", coverage_png(d, fired))
        pics += [f"#### {spec.name}", "", picture(f"{spec.name} coverage", files), ""]
        data.append(
            {"machine": spec.name, "method": cov["method"], "fired": len(fired), "missed": missed, **files}
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
    lines.append(
        "Every alternative of every reading (`acp-model readings`), each against the defaults of "
        "the others, explored exhaustively at the default slices: the simulated peers take the "
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
        picture = ctx.add("matrix.png", effects_png(effects(data["matrix"], verdicts)))
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


# -- the page ------------------------------------------------------------------------------------


def compute(opts: Options, progress: Callable[[str], None], share: float = 1.0) -> Context:
    """Run the parts for ``opts`` (under its variant, if any) with ``share`` of the time budget."""
    ctx = Context(opts, progress, readings=resolve(opts.readings))
    for name, fn, part_share in PARTS:
        t0 = time.perf_counter()
        budget = None if opts.time_budget is None else opts.time_budget * share * part_share
        progress(f"part {name}: started")
        ctx.partial[name] = not fn(ctx, budget)
        took = time.perf_counter() - t0
        progress(f"part {name}: {took:.1f} s{' (partial)' if ctx.partial[name] else ''}")
    return ctx


def build(opts: Options, progress: Callable[[str], None]) -> dict[str, Any]:
    """``_build`` with the worker pool of ``opts`` (every core when it has none) started, and
    closed at the end; a cluster that cannot be used raises ``simulator.workers.ClusterError``."""
    import os

    pool = opts.pool if opts.pool is not None else Workers(os.cpu_count() or 1)
    with pool:
        return _build(replace(opts, pool=pool), progress)


def _build(opts: Options, progress: Callable[[str], None]) -> dict[str, Any]:
    """Run the parts, render the sections, write every file; the report as JSON. For a variant
    the parts run twice, for the spec as written (half the time budget) and for the variant, and
    the page opens with their differences (``cli.spec_report_diff``)."""
    base: Context | None = None
    if opts.variant is not None:
        progress("the spec as written, to compare the variant with")
        readings = opts.readings if opts.base_readings is None else opts.base_readings
        base = compute(replace(opts, variant=None, readings=readings), progress, 0.5)
        progress(f"the variant {opts.variant.name}")
    ctx = compute(opts, progress, 0.5 if base is not None else 1.0)
    readings = ctx.readings
    sections = []
    if base is not None:
        from cli.spec_report_diff import section_differences

        sections.append(section_differences(base, ctx))
    sections += [b(ctx) for b in SECTIONS_BUILDERS]
    partial = sorted(k for k, v in ctx.partial.items() if v)
    if base is not None:
        partial += sorted(f"spec as written: {k}" for k, v in base.partial.items() if v)
    report: dict[str, Any] = {
        "command": "spec-report",
        "readings": {k: v for k, v in sorted(readings.items())},
        "non_default_readings": {k: v for k, v in sorted(opts.readings.items())},
        "partial": partial,
        "sections": {s.key: s.data for s in sections if s.data is not None and s.key != "differences"},
    }
    if opts.variant is not None:
        report["variant"] = opts.variant.to_json()
        report["differences"] = sections[0].data
    page = render(sections, report)
    ctx.files.update(report_pages(json.loads(dumps(report)), page, ctx.files))
    out = opts.out
    for folder in sorted({Path(rel).parts[0] for rel in ctx.files if len(Path(rel).parts) > 1}):
        for old in sorted((out / folder).glob("*")):  # a page regenerated in place keeps no stale
            if old.is_file() and str(old.relative_to(out)) not in ctx.files:  # witness or picture
                old.unlink()
    for rel in sorted(ctx.files):
        write_atomic(out / rel, ctx.files[rel])
    write_atomic(out / "report.json", dumps(report))
    write_atomic(out / "index.md", page)
    return report


def render(sections: list[Section], report: dict[str, Any]) -> str:
    lines = [
        "# Spec report: ACP v2 prompt lifecycle",
        "",
        "Generated by `acp-model spec-report`: which rules a transcript can prove broken, where the "
        "rules contradict each other, and what the model never reaches. Readings: "
        + (", ".join(f"`{k}={v}`" for k, v in report["non_default_readings"].items()) or "all defaults")
        + ".",
        "",
    ]
    variant = report.get("variant")
    if variant is not None:
        lines[0] += f" (variant `{variant['name']}`)"
        lines[2:2] = [
            f"**Variant `{variant['name']}`: {variant['title']}.** Every section below is for the "
            "variant; [Differences](#differences) compares it with the spec as written.",
            "",
        ]
    lines += [f"- [{s.title}](#{_anchor(s.title)})" for s in sections]
    lines.append("")
    for s in sections:
        lines += [f"## {s.title}", "", *s.lines, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _anchor(title: str) -> str:
    return "".join(ch for ch in title.lower().replace(" ", "-") if ch.isalnum() or ch == "-")
