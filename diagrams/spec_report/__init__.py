"""The spec report: one page (``index.md`` and ``report.json``) a spec author brings to a review.

Theory of operation
-------------------
Two stages. *Parts* compute (``diagrams.spec_report.parts``; each stops cleanly at its share of
``--time-budget`` and says so):

- ``decidability``: ``simulator.analysis.decidability`` for every rule that has a check, and the
  rules each ``--readings`` reading names again under its other alternatives (the page lists the
  verdicts that differ);
- ``explore``: the conforming model explored by ``simulator.explore.run.compute`` (as
  ``acp-model explore`` does) exhaustively in every slice of ``simulator.explore.bfs.SLICES``, then
  by seeded random walks at the default bounds (findings are contradictions of the rules; rows
  fired and rules exercised are the coverage);
- ``ladder``: for each rule the slices never exercised, the smallest of a few larger bounds
  (``LADDER``) whose random walks exercise it;
- ``matrix``: the readings matrix.

*Sections* (``diagrams.spec_report.sections``) render what the parts computed, in page order
(``SECTIONS_BUILDERS``): a section builder takes the ``Context`` and returns a ``Section`` (a
heading, Markdown lines, JSON data, files to write beside the page). To add a section, write one
more builder and put it in ``SECTIONS_BUILDERS`` where it belongs on the page; a part it needs
goes in ``PARTS`` (a function that fills ``Context.results[name]`` and returns whether it
completed).

For ``--variant`` (``Options.variant``) the parts run twice, for the spec as written and under
the variant (each with half the time budget), and ``diagrams.spec_report.diff`` writes the
"Differences" section that opens the page; the other sections are the variant's.
This module runs it all (``compute`` the parts for one set of options, ``build`` them with the
worker pool started and closed), renders the page's Markdown (``render``) and writes the files.

Everything written is deterministic for the same options: no timing in ``report.json`` or
``index.md`` (timing goes to standard error), files in a fixed order, pictures without metadata.
All files are written atomically, the page last. ``index.html`` and a page beside every witness
and contradiction transcript are made from what the report wrote (``diagrams.html.report``).

Must not know: argument parsing or exit codes (``cli.cmd_spec_report`` owns them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from diagrams.html.markdown import anchor
from diagrams.html.report import report_pages
from diagrams.spec_report.parts import PARTS, Context, Options, Section
from diagrams.spec_report.sections import SECTIONS_BUILDERS
from properties.outputs import dumps, write_folder
from properties.readings import resolve
from simulator.workers import Workers

__all__ = ["Context", "Options", "Section", "build", "compute", "render"]


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
    """Run the parts, render the sections, write every file; the report as JSON. The worker pool
    of ``opts`` (every core when it has none) is started, and closed at the end; a cluster that
    cannot be used raises ``simulator.workers.ClusterError``. For a variant the parts run twice,
    for the spec as written (half the time budget) and for the variant, and the page opens with
    their differences (``diagrams.spec_report.diff``)."""
    import os

    pool = opts.pool if opts.pool is not None else Workers(os.cpu_count() or 1)
    with pool:
        opts = replace(opts, pool=pool)
        base: Context | None = None
        if opts.variant is not None:
            progress("the spec as written, to compare the variant with")
            readings = opts.readings if opts.base_readings is None else opts.base_readings
            base = compute(replace(opts, variant=None, readings=readings), progress, 0.5)
            progress(f"the variant {opts.variant.name}")
        ctx = compute(opts, progress, 0.5 if base is not None else 1.0)
        sections = []
        if base is not None:
            from diagrams.spec_report.diff import section_differences

            sections.append(section_differences(base, ctx))
        sections += [b(ctx) for b in SECTIONS_BUILDERS]
        partial = sorted(k for k, v in ctx.partial.items() if v)
        if base is not None:
            partial += sorted(f"spec as written: {k}" for k, v in base.partial.items() if v)
        report: dict[str, Any] = {
            "command": "spec-report",
            "readings": {k: v for k, v in sorted(ctx.readings.items())},
            "non_default_readings": {k: v for k, v in sorted(opts.readings.items())},
            "partial": partial,
            "sections": {s.key: s.data for s in sections if s.data is not None and s.key != "differences"},
        }
        if opts.variant is not None:
            report["variant"] = opts.variant.to_json()
            report["differences"] = sections[0].data
        page = render(sections, report)
        progress(f"pictures: {len(ctx.drawings)} to draw")
        ctx.draw_all()
        ctx.files.update(report_pages(json.loads(dumps(report)), page, ctx.files))
        folders = sorted({Path(rel).parts[0] for rel in ctx.files if len(Path(rel).parts) > 1})
        files: dict[str, str | bytes] = {**ctx.files, "report.json": dumps(report), "index.md": page}
        write_folder(opts.out, files, folders)  # a page regenerated in place keeps no stale file
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
    lines += [f"- [{s.title}](#{anchor(s.title)})" for s in sections]
    lines.append("")
    for s in sections:
        lines += [f"## {s.title}", "", *s.lines, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
