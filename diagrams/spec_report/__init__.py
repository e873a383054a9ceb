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
``diagrams.spec_report.page`` runs it all and writes the files.

Everything written is deterministic for the same options: no timing in ``report.json`` or
``index.md`` (timing goes to standard error), files in a fixed order, pictures without metadata.
All files are written atomically, the page last. ``index.html`` and a page beside every witness
and contradiction transcript are made from what the report wrote (``diagrams.html.report``).

Must not know: argument parsing or exit codes (``cli.cmd_spec_report`` owns them).
"""

from __future__ import annotations

from diagrams.spec_report.page import build, render
from diagrams.spec_report.parts import Context, Options, Section

__all__ = ["Context", "Options", "Section", "build", "render"]
