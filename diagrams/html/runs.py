"""Pages of simulated runs: the counterexamples ``acp-model explore`` writes, the shortest run of
each seeded bug ``acp-model mutants`` writes, the witnesses of the spec report.

Owns: ``transcript_page``, the page of a transcript given as (sender, message) pairs, judged by
the same check as ``acp-model check`` on its NDJSON file but with every session seen from its
creation (``MonitorSet(from_start=True)``, as the explorers judge), under the run's readings and
variant; ``hidden_notes``, the steps of a run that put nothing on the wire (an Agent holding or
inserting a prompt, a choice of a peer), placed before the message that followed them; and
``counterexample_page`` for one ``simulator.explore.common.Counterexample``, whose header also
says what the explorer found (a breach the client view or the model shows is not a monitor's
finding, so it is named there and at the end of the page); ``mutant_page`` for the shortest run
of one seeded bug.

Must not know: the command line, where files go.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from diagrams.html import page_of, spec_text
from diagrams.html.page import Page, render
from diagrams.html.record import recorded_check
from diagrams.sequence import Notes, notes_of
from properties.engine import MonitorSet
from properties.findings import Finding
from properties.variants import Variant
from simulator.analysis.decidability_exhaustive import replay
from simulator.analysis.mutants import Verdict
from simulator.explore.common import Counterexample
from simulator.peers.config import Config
from simulator.peers.wire import to_ndjson
from simulator.peers.world import Event


def transcript_page(
    transcript: Sequence[tuple[str, Any]],
    title: str,
    *,
    readings: Mapping[str, str] | None = None,
    variant: Variant | None = None,
    notes: Notes | None = None,
    extra: Sequence[str] = (),
    found: Sequence[Finding] = (),
    name: str = "run",
) -> bytes:
    """The page of a simulated run (see the module docstring); ``found``: findings of the run's
    own judge to show at the end besides the monitors'."""
    stream = io.BytesIO(to_ndjson(list(transcript)).encode("utf-8"))
    monitors = MonitorSet(from_start=True, readings=readings, variant=variant)
    report, recording = recorded_check(stream, name, monitors=monitors)
    page: Page = page_of(report, recording, title)
    page.notes = notes
    page.extra = [*extra, *page.extra]
    page.findings = [*page.findings, *found]
    return render(page, spec_text())


def hidden_notes(events: Sequence[Event], cfg: Config, faults: frozenset[str]) -> Notes:
    """The events of a run that sent nothing over the wire (``decidability_exhaustive.replay``'s
    hidden steps), by the position of the message that followed them (``diagrams.sequence.Notes``:
    lane C or A, no run name, the event)."""
    return notes_of((position, "", what) for position, what in replay(list(events), cfg, faults)[1])


def counterexample_page(cex: Counterexample) -> bytes:
    """The page of one counterexample of ``acp-model explore``."""
    from properties.catalogue import RULES_BY_ID

    said = f"{cex.mode} exploration ({cex.found_by}) found {cex.rule} ({cex.source}): {cex.explanation}"
    entry = RULES_BY_ID.get(cex.rule)
    level = entry.level if entry is not None else "MUST"
    found = Finding(cex.rule, level, None, None, f"what the explorer found: {cex.explanation}", "rule")
    steps = (
        f"{len(cex.events)} events ({cex.original_length} before shrinking), {len(cex.transcript)} messages"
    )
    faults = f"seeded bugs: {', '.join(sorted(cex.faults))}" if cex.faults else "no seeded bug"
    return transcript_page(
        cex.transcript,
        f"acp-model explore: {cex.rule} ({cex.mode}, {cex.found_by})",
        readings=cex.cfg.reading_map(),
        variant=cex.cfg.variant,
        notes=hidden_notes(cex.events, cex.cfg, cex.faults),
        extra=[
            said,
            f"{steps}; {faults}",
            "steps that sent nothing (off the wire): in italics before the next message",
        ],
        found=[found],
        name=f"{cex.mode}-{cex.rule}.ndjson",
    )


def mutant_page(verdict: Verdict) -> bytes:
    """The page of the shortest run of one seeded bug of ``acp-model mutants`` (its transcript:
    the events behind it are not kept, so no hidden steps are shown)."""
    m = verdict.mutant
    assert m is not None and verdict.shortest is not None
    caught = "caught" if verdict.caught else "MISSED"
    return transcript_page(
        verdict.shortest,
        f"acp-model mutants: {m.name} ({m.side}, intended rule {m.intended_rule}: {caught})",
        readings=m.cfg.reading_map(),
        variant=m.cfg.variant,
        extra=[
            m.description,
            f"the shortest breaking run ({verdict.shortest_source}), {len(verdict.shortest)} messages",
        ],
        name=f"{m.name}.ndjson",
    )
