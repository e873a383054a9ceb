"""One self-contained HTML page for a judged run: the messages as a sequence diagram, each finding
at its line with the spec sentence it rests on, the state after any line, the spec text.

Owns: ``Page`` (what a page shows, whoever judged the run: ``acp-model check``, ``replay``, a
counterexample) and ``render``, its HTML. The page is deterministic (the same input gives the
same bytes: nothing depends on the time, the machine or the order of a set), inlines its style
and script and loads nothing.

Layout: a header (what was judged, counts, readings, the level filter, the keys, an index of the
findings), the sequence (one row per message in the transport's order, Client and Agent lanes,
the line number beside it, its JSON folded under it, foreground changes and hidden steps as notes,
the findings made at that line), a panel with the state of the machines and the client view
after the selected line (filled in by the script from the ``acp-data`` JSON, which holds the
deltas of ``diagrams.html.record``), and the spec text, one anchor per line (``#spec-N``), that
each finding's spec line links to. Lines the reader could not use get a row of their own with
their input finding; findings with no line (end of input) are listed after the last row.

A message's JSON is shown up to ``JSON_LIMIT`` characters (the rest is counted), so one huge
message cannot blow up the page.

Style and script are static files beside this module, inlined as they are (``asset``):
``page.css`` (how a page looks) and ``page.js`` (how it behaves: selecting a line rebuilds the
state after it from the deltas in the ``acp-data`` JSON, with checkpoints every 64 messages;
keyboard stepping, ``j``/``↓`` next line, ``k``/``↑`` previous, ``n`` next finding, ``p``/``N``
previous finding, ``o``/``Enter`` the selected message's JSON, ``Home``/``End``; a filter of the
findings by level; clicks on rows, findings and the findings index). The script knows only the
``acp-data`` JSON and the class names written here; the page reads without it too, since every
message, finding and spec line is in the HTML itself.

Must not know: how findings are made, the command line, files.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diagrams.html.record import Delta, Recording
from diagrams.html.states import session_id
from diagrams.sequence import Notes, Step, message_steps
from properties import check_report
from properties.catalogue import RULES, RULES_BY_ID
from properties.findings import Finding
from properties.speclines import spec_sentences

JSON_LIMIT = 20_000
"""Characters of one message's JSON shown in the page."""

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def asset(name: str) -> str:
    """A static file of this package (``page.css``, ``page.js``, ``report.css``) as text."""
    return Path(__file__).with_name(name).read_text(encoding="utf-8")


CSS, SCRIPT = asset("page.css"), asset("page.js")


_CSP = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
)
"""The page loads nothing: inline style and script only."""


def head(title: str, style: str, meta: str = "") -> str:
    """A page's start up to its ``<body>``: its ``title``, ``meta`` tags and inline ``style``."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">{meta}'
        f"<title>{_e(title)}</title><style>{style}</style></head><body>"
    )


@dataclass
class Page:
    """What one page shows (see the module docstring)."""

    title: str
    summary: str
    """One line of counts under the title."""
    recording: Recording
    findings: Sequence[Finding] = ()
    """Findings to place at their lines (kinds rule, input, suspect and open)."""
    readings: str = ""
    """The readings line (``properties.readings.describe``)."""
    chosen: Mapping[str, str] = field(default_factory=dict)
    """Every reading's alternative in force (a finding names the readings it depends on)."""
    notes: Notes | None = None
    """Hidden steps of a counterexample, by message position (``diagrams.sequence.Notes``)."""
    extra: Sequence[str] = field(default_factory=tuple)
    """More header lines (plain text)."""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def paraphrase(rule: str) -> str:
    """``properties.check_report.paraphrase``, one sentence for every input finding."""
    if rule.startswith("input."):
        return "transcript line that could not be used as it stands, or was tolerated as it is"
    return check_report.paraphrase(rule)


def _json_text(message: Any) -> str:
    try:
        text = json.dumps(message, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(message)
    if len(text) > JSON_LIMIT:
        text = text[:JSON_LIMIT] + f"\n… ({len(text) - JSON_LIMIT} more characters not shown)"
    return text


def _intern(deltas: list[Delta], keys: dict[str, int]) -> list[list[Any]]:
    """The deltas with each row key replaced by its number in ``keys`` (new keys numbered next)."""
    return [[[keys.setdefault(key, len(keys)), value] for key, value in d] for d in deltas]


def _data(recording: Recording) -> str:
    keys: dict[str, int] = {}
    machines = _intern(recording.machines, keys)
    views = _intern(recording.views, keys)
    data = {
        "keys": list(keys),
        "lines": [line for line, _, _ in recording.messages],
        "machines": machines,
        "views": views,
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _hidden(st: Step) -> str:
    what = f"hidden step ({st.style})" if st.style else "off the wire"
    return f'<div class="hidden-step lane-{st.src}">{_e(what)}: {_e(st.label)}</div>'


class _Writer:
    def __init__(self, page: Page, spec_text: str | None) -> None:
        self.page = page
        self.spec_text = spec_text
        self.sentences = spec_sentences(RULES, spec_text) if spec_text is not None else {}
        self.cited: set[int] = set()
        self.out: list[str] = []
        self.number = 0

    def w(self, *parts: str) -> None:
        self.out.extend(parts)

    def finding(self, f: Finding) -> None:
        k = self.number
        self.number += 1
        tag = f.level + (
            " · suspected" if f.kind == "suspect" else " · open at end" if f.kind == "open" else ""
        )
        chosen = self.page.chosen
        readings = (
            " (reading " + ", ".join(f"{n}={chosen.get(n, '?')}" for n in f.readings) + ")"
            if f.readings
            else ""
        )
        session = f" [session {_e(f.session)}]" if f.session is not None else ""
        self.w(
            f'<div class="finding sev-{f.severity}" id="f{k}" data-f="{k}" data-level="{_e(f.level)}" '
            f'data-rule="{_e(f.rule)}" data-line="{"" if f.line is None else f.line}">',
            f'<span class="lvl">{_e(tag)}</span> <span class="rule">{_e(f.rule)}</span> ',
            f'<span class="para">{_e(paraphrase(f.rule))}</span>',
            f'<div class="expl">{_e(f.explanation)}{_e(readings)}{session}</div>',
        )
        places = self.sentences.get(f.rule, ())
        for line, sentence in places:
            self.cited.add(line)
            self.w(
                f'<div class="spec">spec line <a href="#spec-{line}" data-spec="{line}">{line}</a>: '
                f"<q>{_e(sentence)}</q></div>"
            )
        if not places and f.rule in RULES_BY_ID and self.spec_text is None:
            self.w('<div class="spec">spec text not available (see the README, Set-up)</div>')
        self.w("</div>")

    def index(self, ordered: list[Finding]) -> None:
        if not ordered:
            return
        self.w('<ul id="index">')
        for i, f in enumerate(ordered):
            where = "end" if f.line is None else f"line {f.line}"
            self.w(
                f'<li><a href="#f{i}" data-f="{i}" class="sev-{f.severity}" '
                f'data-level="{_e(f.level)}">{where} · {_e(f.level)} · {_e(f.rule)}</a></li>'
            )
        self.w("</ul>")


Row = tuple[int, int | None, str, list[Finding]]
"""(line, message index or None, element id, the findings shown under it)."""


def _placed(page: Page) -> tuple[list[Row], list[Finding]]:
    """The rows in line order and the findings with no row (end of input). A line holding several
    messages (a JSON-RPC batch) has a row for each; its findings go under the last."""
    rec = page.recording
    by_line: dict[int, list[Finding]] = {}
    for f in page.findings:
        if f.line is not None:
            by_line.setdefault(f.line, []).append(f)
    for found in by_line.values():
        found.sort(key=lambda f: (_SEVERITY_ORDER.get(f.severity, 3), f.rule))
    last = {line: i for i, (line, _, _) in enumerate(rec.messages)}
    rows: list[Row] = []
    seen: dict[int, int] = {}
    for i, (line, _, _) in enumerate(rec.messages):
        k = seen[line] = seen.get(line, -1) + 1
        ident = f"L{line}" if k == 0 else f"L{line}-{k}"
        rows.append((line, i, ident, by_line.get(line, []) if last[line] == i else []))
    rows += [(line, None, f"L{line}", found) for line, found in by_line.items() if line not in last]
    rows.sort(key=lambda r: r[0])
    return rows, [f for f in page.findings if f.line is None]


def render(page: Page, spec_text: str | None) -> bytes:
    """The page as UTF-8 bytes (see the module docstring)."""
    w = _Writer(page, spec_text)
    rec = page.recording
    rows, end = _placed(page)
    ordered = [f for *_, found in rows for f in found] + end
    levels = sorted({f.level for f in page.findings}, key=lambda lv: (lv in ("input", "info"), lv))
    w.w(
        head(page.title, CSS, _CSP),
        f'<header><h1>{_e(page.title)}</h1><p class="summary">{_e(page.summary)}</p>',
    )
    if page.readings:
        w.w(f'<p class="readings">{_e(page.readings)}</p>')
    for text in page.extra:
        w.w(f'<p class="readings">{_e(text)}</p>')
    w.w('<div class="controls">')
    if levels:
        w.w("<span>show findings:</span>")
        for lv in levels:
            n = sum(1 for f in page.findings if f.level == lv)
            w.w(f'<label><input type="checkbox" checked data-level="{_e(lv)}"> {_e(lv)} ({n})</label>')
    w.w(
        '<span class="keys"><kbd>j</kbd>/<kbd>↓</kbd> next line · <kbd>k</kbd>/<kbd>↑</kbd> previous · '
        "<kbd>n</kbd> next finding · <kbd>p</kbd> previous finding · <kbd>o</kbd> message JSON · "
        '<a href="#spec">spec text</a></span></div>'
    )
    w.index(ordered)
    w.w("</header><main>", '<section id="sequence">')
    w.w('<div class="lanes-head"><span></span><div class="who"><span class="c">Client</span>'
        '<span class="a">Agent</span></div></div>')  # fmt: skip
    arrows, trailing = message_steps([(sender, msg) for _, sender, msg in rec.messages], page.notes)
    last_message = -1
    for line, i, ident, found in rows:
        if i is None:
            w.w(
                f'<div class="row nomsg" id="{ident}" data-line="{line}" data-s="{last_message}">',
                f'<a class="ln" href="#L{line}">{line}</a><div class="body">',
                '<div class="arrow input"><span class="label">line not used as a message</span></div>',
            )
        else:
            last_message = i
            _, sender, message = rec.messages[i]
            hidden, arrow, notes = arrows[i]
            direction = "to-agent" if sender == "client" else "to-client"
            sid = session_id(message)
            label = arrow.label
            if sid is not None and label.startswith("["):  # the lane label names other sessions
                label = label.split("] ", 1)[-1]
            w.w(
                f'<div class="row msg" id="{ident}" data-line="{line}" data-s="{i}" data-from="{sender}">',
                f'<a class="ln" href="#L{line}">{line}</a><div class="body">',
            )
            for st in hidden:
                w.w(_hidden(st))
            w.w(
                f'<div class="arrow {arrow.kind} {direction}">',
                f'<span class="sid">{_e(sid)}</span>' if sid is not None else "",
                f'<span class="label">{_e(label)}</span></div>',
            )
            for st in notes:
                w.w(f'<div class="note">{_e(st.label)}</div>')
            w.w(
                f'<details class="json"><summary>JSON</summary><pre>{_e(_json_text(message))}</pre></details>'
            )
        for f in found:
            w.finding(f)
        w.w("</div></div>")
    for st in trailing:
        w.w(_hidden(st))
    if end:
        w.w('<div id="end"><h3>At the end of the input</h3>')
        for f in end:
            w.finding(f)
        w.w("</div>")
    if not rows:
        w.w('<p class="empty">The input holds no message.</p>')
    w.w(
        "</section>",
        '<aside id="state"><h2>After line <span id="st-line">–</span><span id="st-what"></span></h2>',
        '<h3>Machines (as the checker tracks them)</h3><div id="machines"></div>',
        '<h3>Client view</h3><div id="view"></div></aside></main>',
    )
    _spec(w)
    w.w(f'<script type="application/json" id="acp-data">{_data(rec)}</script>')
    w.w(f"<script>{SCRIPT}</script></body></html>\n")
    return "".join(w.out).encode("utf-8")


def _spec(w: _Writer) -> None:
    w.w('<section id="spec"><h2>Spec text</h2>')
    if w.spec_text is None:
        w.w("<p>The spec text was not available when this page was made (see the README, Set-up).</p>")
    else:
        for n, text in enumerate(w.spec_text.splitlines(), 1):
            cited = " cited" if n in w.cited else ""
            w.w(
                f'<div class="sl{cited}" id="spec-{n}"><span class="sn">{n}</span>',
                f"<span>{_e(text)}</span></div>",
            )
    w.w("</section>")
