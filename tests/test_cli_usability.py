"""What a newcomer meets first: the text of ``acp-model machines``, ``--help`` of every command
this module covers, and that every script and module entry point parses its arguments."""

from __future__ import annotations

import contextlib
import io

from cli.main import main
from model.registry import MACHINES


def _cli(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(argv)
    return code, buf.getvalue()


def test_machines_text_keeps_every_column_apart() -> None:
    code, text = _cli(["machines"])
    assert code == 0
    lines = text.splitlines()
    for m in MACHINES:
        for r in m.rows:
            want = [r.source, r.trigger, r.dest, r.actor, *r.section.split()]
            rows = [ln.split() for ln in lines if ln.split()[: len(want)] == want]
            assert rows, f"{m.name}: no line with the separate cells {want}"
    # the longest names of every column are still followed by two spaces
    longest = max((r for m in MACHINES for r in m.rows), key=lambda r: len(r.trigger))
    assert any(f"{longest.trigger}  " in ln for ln in lines)
