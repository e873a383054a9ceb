"""The Markdown our own pages are written in (the spec report's ``index.md``), as HTML.

Owns: the small subset the spec report uses, and nothing more: ATX headings (with the anchors
the page's own links use: lower case, spaces to hyphens, other punctuation dropped), pipe tables
(the separator row sets each column's alignment), ``- `` lists, paragraphs, and inline code,
images, links, ``**bold**`` and ``*italic*``. Everything is escaped first, so no text can become
markup. ``link_extra`` lets the caller add HTML after a link (the spec report's page link beside
each witness transcript).

Must not know: what the page says.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from itertools import groupby

_CODE = re.compile(r"`([^`]+)`")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")
_HEADING = re.compile(r"^(#{1,6}) (.*)$")


def anchor(title: str) -> str:
    """The anchor of a heading, as the spec report's links spell it."""
    return "".join(ch for ch in title.lower().replace(" ", "-") if ch.isalnum() or ch == "-")


def inline(text: str, link_extra: Callable[[str], str] | None = None) -> str:
    """One line of Markdown text as HTML (see the module docstring)."""
    codes: list[str] = []

    def keep(match: re.Match[str]) -> str:
        codes.append(f"<code>{html.escape(match.group(1), quote=False)}</code>")
        return f"\x00{len(codes) - 1}\x00"

    text = _CODE.sub(keep, text)
    text = html.escape(text, quote=True)
    text = _IMAGE.sub(lambda m: f'<img alt="{m.group(1)}" src="{m.group(2)}">', text)

    def link(m: re.Match[str]) -> str:
        extra = link_extra(html.unescape(m.group(2))) if link_extra is not None else ""
        return f'<a href="{m.group(2)}">{m.group(1)}</a>{extra}'

    text = _LINK.sub(link, text)
    text = _BOLD.sub(r"<strong>\1</strong>", text)
    text = _ITALIC.sub(r"<em>\1</em>", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: codes[int(m.group(1))], text)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(rows: list[str], link_extra: Callable[[str], str] | None) -> list[str]:
    head = _cells(rows[0])
    aligns = ["right" if c.endswith(":") else "" for c in _cells(rows[1])] if len(rows) > 1 else []
    body = rows[2:] if len(rows) > 1 and set(rows[1].replace("|", "").strip()) <= set("-: ") else rows[1:]

    def cell(tag: str, i: int, text: str) -> str:
        align = ' class="r"' if i < len(aligns) and aligns[i] else ""
        return f"<{tag}{align}>{inline(text, link_extra)}</{tag}>"

    out = ["<table>", "<thead><tr>" + "".join(cell("th", i, c) for i, c in enumerate(head)) + "</tr></thead>"]
    out.append("<tbody>")
    for row in body:
        out.append("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(_cells(row))) + "</tr>")
    out.append("</tbody></table>")
    return out


def _kind(line: str) -> str:
    if not line.strip():
        return ""
    if _HEADING.match(line):
        return "h"
    return "table" if line.startswith("|") else "list" if line.startswith("- ") else "p"


def to_html(markdown: str, link_extra: Callable[[str], str] | None = None) -> str:
    """A Markdown document (the subset of the module docstring) as HTML body text: blocks are
    runs of lines of one kind (a heading is a block of its own, blank lines end a block)."""
    out: list[str] = []
    for kind, lines in groupby(markdown.splitlines(), _kind):
        block = list(lines)
        if kind == "h":
            for line in block:
                hashes, title = line.split(" ", 1)
                level, title = len(hashes), title.strip()
                out.append(f'<h{level} id="{anchor(title)}">{inline(title, link_extra)}</h{level}>')
        elif kind == "table":
            out += _table(block, link_extra)
        elif kind == "list":
            out += ["<ul>", *(f"<li>{inline(b[2:], link_extra)}</li>" for b in block), "</ul>"]
        elif kind == "p":
            out.append(f"<p>{inline(' '.join(b.strip() for b in block), link_extra)}</p>")
    return "\n".join(out) + "\n"
