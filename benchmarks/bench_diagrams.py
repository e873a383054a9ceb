"""Time to regenerate every diagram (``python benchmarks/bench_diagrams.py``), by part.

Prints wall-clock seconds for the machine pictures, the Mermaid/Markdown sources, the scenario
sequence diagrams, the composed graph and the whole ``diagrams.generate.outputs()``, best of
``--repeat`` runs. No assertions: a measurement, not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def best(fn: Callable[[], object], repeat: int) -> float:
    from diagrams import composed
    from diagrams.render_mpl import measure

    times = []
    for _ in range(repeat):
        measure.cache_clear()
        composed._explored.cache_clear()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs of each part; the best is shown (default %(default)s)"
    )
    n = ap.parse_args().repeat
    from diagrams import composed, generate  # after parsing: --help imports nothing heavy
    from diagrams.ir import all_diagrams
    from diagrams.render_markdown import to_markdown
    from diagrams.render_mermaid import to_mermaid
    from diagrams.render_mpl import render

    ds = all_diagrams()
    parts: list[tuple[str, Callable[[], object]]] = [
        ("machine pictures (PNG+SVG, 8 machines)", lambda: [render(d) for d in ds]),
        ("Mermaid + Markdown (8 machines)", lambda: [(to_mermaid(d), to_markdown(d)) for d in ds]),
        ("scenario sequence diagrams", generate.scenario_files),
        ("composed graph files", composed.files),
        ("everything (outputs())", generate.outputs),
    ]
    for name, fn in parts:
        print(f"{name:<42} {best(fn, n):7.3f} s")


if __name__ == "__main__":
    main()
