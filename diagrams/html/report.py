"""The spec report as HTML: ``index.html`` beside ``index.md``, and a page for every witness and
contradiction transcript the report links to.

Owns: ``report_pages``, a pure function of what the report wrote (``report.json`` as a dict, the
text of ``index.md``, the files beside it by relative path), so the pages of a report folder can
be made again from the folder alone and are the same bytes as the report made them. Each witness
page is the page of its breaking transcript (``diagrams.html.runs.transcript_page``) judged under
the readings of the report (and the alternative it was found under) and its variant, with the
hidden steps in which the breaking and the conforming runs differ placed before the message they
preceded, and what the conforming run may do next at the end. ``index.html`` is ``index.md`` as
HTML (``diagrams.html.markdown``) with a link to the page beside every transcript link; its
pictures are the PNG files beside it, its style the static ``report.css`` beside this module.

Must not know: how the report is computed, the command line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from diagrams.html.markdown import to_html
from diagrams.html.page import asset, head
from diagrams.html.runs import transcript_page
from diagrams.witness import drawing
from properties.variants import Variant, from_json
from simulator.harness.drive import transcript_item

_STYLE = asset("report.css")


def page_of_transcript(transcript: str) -> str | None:
    """The page beside a transcript the report links to (None: not one it makes a page of)."""
    path = PurePosixPath(transcript)
    if path.name.endswith(".breaking.ndjson"):
        return str(path.with_name(path.name[: -len(".breaking.ndjson")] + ".html"))
    if path.parts[:1] == ("contradictions",) and path.suffix == ".ndjson":
        return str(path.with_suffix(".html"))
    return None


def _lines(data: bytes) -> list[tuple[str, Any]]:
    return [item for line in data.splitlines() if (item := transcript_item(line)) is not None]


def _witness(
    rule: str,
    witness: Mapping[str, Any],
    files: Mapping[str, bytes],
    readings: Mapping[str, str],
    variant: Variant | None,
    alt: Mapping[str, Any] | None,
) -> bytes:
    """The page of a witness found under the report's ``readings``, or under its alternative ``alt``."""
    under = f"{alt['reading']}={alt['alternative']}" if alt else ""
    if alt:
        readings = {**readings, alt["reading"]: alt["alternative"]}
    transcript = _lines(files[witness["breaking"]])
    twin = bool(witness.get("twin_found"))
    differing = [(int(h["position"]), str(h["run"]), str(h["step"])) for h in witness.get("hidden") or []]
    title, notes = drawing(rule, under, twin, differing, len(transcript), witness.get("conforming_next", []))
    said = (
        "a conforming run sends the same messages"
        if twin
        else "no conforming twin was found within the bound"
    )
    return transcript_page(
        transcript,
        f"spec report witness: {title}",
        readings=readings,
        variant=variant,
        notes=notes,
        extra=[
            f"acp-model check accepts this breaking run; {said}",
            f"breaking run: {witness.get('source')}; hidden steps: where the two runs differ",
        ],
        name=witness["breaking"],
    )


def report_pages(report: Mapping[str, Any], index_md: str, files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The HTML files of a spec report, by path relative to its folder (see the module docstring)."""
    readings = dict(report.get("readings") or {})
    variant = from_json(report["variant"]) if report.get("variant") else None
    sections = report.get("sections") or {}
    out: dict[str, bytes] = {}
    for entry in (sections.get("decidability") or {}).get("rules", []):
        for alt in [None, *(entry.get("by_reading") or [])]:  # as found, then under each alternative
            w = (alt or entry).get("witness")
            if w and w.get("breaking") in files:
                page = _witness(entry["rule"], w, files, readings, variant, alt)
                out[str(page_of_transcript(w["breaking"]))] = page
    for c in sections.get("contradictions") or []:
        where = page_of_transcript(str(c.get("transcript")))
        if where is not None and c["transcript"] in files:
            out[where] = transcript_page(
                _lines(files[c["transcript"]]),
                f"spec report contradiction: {c['rule']} ({c.get('kind')})",
                readings=readings,
                variant=variant,
                extra=[str(c.get("explanation", ""))],
                name=c["transcript"],
            )

    def beside(target: str) -> str:
        page = page_of_transcript(target)
        return f' (<a class="page" href="{page}">page</a>)' if page is not None and page in out else ""

    title = index_md.splitlines()[0].lstrip("# ").strip() if index_md else "Spec report"
    body = to_html(index_md, beside)
    out["index.html"] = f"{head(title, _STYLE)}\n{body}</body></html>\n".encode()
    return out
