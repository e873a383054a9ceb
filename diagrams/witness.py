"""The files of a decidability witness: the accepted breaking transcript, the conforming twin
that sends the same messages (when one was found) and a sequence diagram of the breaking run
with the points where the two runs differ marked.

Owns: ``witness_files`` (file suffix -> contents, for ``acp-model decidability --out`` and the
spec report alike) and ``witness_title``.

Must not know: where the files go, how a witness is searched for (``simulator.analysis.decidability``).
"""

from __future__ import annotations

from diagrams.sequence import transcript_to_mermaid
from simulator.analysis import decidability as dec

Notes = dict[int, list[tuple[str, str, str]]]


def witness_title(v: dec.Verdict, under: str = "") -> str:
    """The diagram's title; ``under``: the reading alternative the verdict was found under."""
    w = v.witness
    assert w is not None
    name = f"{v.rule} under {under}" if under else v.rule
    if w.twin_found:
        return f"{name}: breaking and conforming runs, same messages"
    return f"{name}: an accepted breaking run (no conforming run found that sends these messages)"


def witness_notes(v: dec.Verdict) -> Notes:
    """Where the runs differ, by position in the breaking transcript, and what the conforming run
    may send next at its end."""
    w = v.witness
    assert w is not None
    notes: Notes = {}
    for pos, run, what in w.differing:
        notes.setdefault(pos, []).append(("C" if what.startswith("client") else "A", run, what))
    if w.twin_found:
        end = len(w.breaking.transcript)
        notes.setdefault(end, []).append(("A", "conforming", "may next: " + "; ".join(w.conforming_next[:2])))
    return notes


SUFFIX = {"breaking": ".breaking.ndjson", "conforming": ".conforming.ndjson", "diagram": ".mmd"}
"""Each witness file's kind -> the suffix its file name ends with."""


def witness_files(v: dec.Verdict, under: str = "") -> dict[str, bytes | str]:
    """Kind (``breaking``, ``conforming`` when a twin was found, ``diagram``) -> contents; the
    file of a kind is named with ``SUFFIX[kind]``."""
    w = v.witness
    assert w is not None
    files: dict[str, bytes | str] = {"breaking": dec.ndjson(w.breaking.transcript)}
    if w.twin_found:
        files["conforming"] = dec.ndjson(dec.conforming_transcript(w))
    files["diagram"] = transcript_to_mermaid(w.breaking.transcript, witness_title(v, under), witness_notes(v))
    return files
