"""The files of a decidability witness: the accepted breaking transcript, the conforming twin
that sends the same messages (when one was found) and a sequence diagram of the breaking run
with the points where the two runs differ marked.

Owns: ``witness_files`` (file suffix -> contents, for ``acp-model decidability --out`` and the
spec report alike), and the title and notes of a witness's diagram (``drawing``: from a
verdict, ``drawn``, or from the report's JSON, ``diagrams.html.report``).

Must not know: where the files go, how a witness is searched for (``simulator.analysis.decidability``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from diagrams.sequence import Notes, notes_of, transcript_to_mermaid
from simulator.analysis import decidability as dec
from simulator.peers.wire import to_ndjson


def drawing(
    rule: str,
    under: str,
    twin_found: bool,
    differing: Iterable[tuple[int, str, str]],
    end: int,
    conforming_next: Sequence[str],
) -> tuple[str, Notes]:
    """The title and notes of a witness's sequence diagram: ``under``, the reading alternative it
    was found under; the notes, where the runs differ (position in the breaking transcript, run,
    hidden step) and, with a twin, what the conforming run may send next at the ``end``."""
    name = f"{rule} under {under}" if under else rule
    notes = notes_of(differing)
    if not twin_found:
        return f"{name}: an accepted breaking run (no conforming run found that sends these messages)", notes
    notes.setdefault(end, []).append(("A", "conforming", "may next: " + "; ".join(conforming_next[:2])))
    return f"{name}: breaking and conforming runs, same messages", notes


def drawn(v: dec.Verdict, under: str = "") -> tuple[str, Notes]:
    """``drawing`` of ``v``'s witness."""
    w = v.witness
    assert w is not None
    return drawing(v.rule, under, w.twin_found, w.differing, len(w.breaking.transcript), w.conforming_next)


SUFFIX = {"breaking": ".breaking.ndjson", "conforming": ".conforming.ndjson", "diagram": ".mmd"}
"""Each witness file's kind -> the suffix its file name ends with."""


def witness_files(v: dec.Verdict, under: str = "") -> dict[str, bytes | str]:
    """Kind (``breaking``, ``conforming`` when a twin was found, ``diagram``) -> contents; the
    file of a kind is named with ``SUFFIX[kind]``."""
    w = v.witness
    assert w is not None
    files: dict[str, bytes | str] = {"breaking": to_ndjson(w.breaking.transcript)}
    if w.twin_found:
        files["conforming"] = to_ndjson(dec.conforming_transcript(w))
    files["diagram"] = transcript_to_mermaid(w.breaking.transcript, *drawn(v, under))
    return files
