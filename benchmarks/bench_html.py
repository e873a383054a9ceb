"""Time and size of the page of ``acp-model check --html`` (diagrams/html), against the plain check.

Run: ``python benchmarks/bench_html.py [--messages N ...] [--sessions K] [--repeat R]``.

For each N (default 1,000 and 10,000 messages) writes the transcript of
``benchmarks/bench_check.py`` (the basic prompt turn repeated, turns spread over K session ids,
default 10) and, in this process, times ``check_stream`` alone and ``recorded_check`` (the same
check, recording the machines' state and the client view after every message) followed by
``render`` (the page), best of R runs (default 3). It prints both times, their ratio and the
page's size in bytes and per message. Figures only: no asserts (the size limit of a 1,000-message
page is a test: tests/test_html_pages.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_check import write_transcript

from diagrams.html import page_of, spec_text
from diagrams.html.page import render
from diagrams.html.record import recorded_check
from properties.checking import check_stream
from properties.engine import MonitorSet


def plain(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as fh:
        check_stream(fh, str(path), monitors=MonitorSet())
    return time.perf_counter() - start


def paged(path: Path, spec: str | None) -> tuple[float, int]:
    start = time.perf_counter()
    with path.open("rb") as fh:
        report, recording = recorded_check(fh, str(path), monitors=MonitorSet())
    data = render(page_of(report, recording, f"acp-model check: {path.name}"), spec)
    return time.perf_counter() - start, len(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--messages", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    spec = spec_text()
    print(f"spec text embedded: {'yes' if spec is not None else 'no (../shared absent)'}")
    print(f"{'messages':>9} {'check s':>9} {'page s':>9} {'ratio':>6} {'page bytes':>11} {'bytes/msg':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.messages:
            path = Path(tmp) / f"t{n}.ndjson"
            written = write_transcript(path, n, args.sessions)
            best_plain = min(plain(path) for _ in range(args.repeat))
            runs = [paged(path, spec) for _ in range(args.repeat)]
            best_page, size = min(r[0] for r in runs), runs[0][1]
            print(
                f"{written:>9,} {best_plain:>9.3f} {best_page:>9.3f} {best_page / best_plain:>6.1f} "
                f"{size:>11,} {size / written:>9.0f}"
            )


if __name__ == "__main__":
    main()
