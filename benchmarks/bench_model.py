"""Cost of the model: building every machine, and one step through the table and through the
``transitions`` library, each against a baseline measured in the same run.

Run: ``python benchmarks/bench_model.py``. Figures are ratios against plain-Python baselines
(building a dict of the same rows; one dict lookup), since these machines are noisy.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def best(fn: Callable[[], None], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", 1)[0]).parse_args(argv)
    from model import registry
    from model.core import Instance, MachineSpec

    specs = registry.MACHINES

    def build() -> None:
        for spec in specs:
            built = MachineSpec(
                name=spec.name,
                title=spec.title,
                per=spec.per,
                states=spec.states,
                initial=spec.initial,
                final=spec.final,
                rows=spec.rows,
                forbidden=spec.forbidden,
                guards=spec.guards,
                guard_rules=spec.guard_rules,
                home=spec.home,
            )
            assert built.machine is not None  # builds the shared transitions.Machine too

    def build_baseline() -> None:
        for spec in specs:
            {(r.source, r.trigger): r.dest for r in spec.rows}

    n_build = 20
    t_build = best(lambda: [build() for _ in range(n_build)]) / n_build
    t_base = best(lambda: [build_baseline() for _ in range(n_build)]) / n_build

    cells = [(spec, row) for spec in specs for row in spec.rows if row.guard is None]
    n = 200_000
    reps = n // len(cells) + 1
    work = cells * reps

    def fire_table() -> None:
        for spec, row in work:
            spec.fire(row.source, row.trigger)

    table = {(spec.name, r.source, r.trigger): r.dest for spec, r in cells}

    def fire_dict() -> None:
        for spec, row in work:
            table[(spec.name, row.source, row.trigger)]

    live = {spec.name: Instance(spec) for spec in specs}
    sample = work[:20_000]

    def fire_live() -> None:
        for spec, row in sample:
            inst = live[spec.name]
            inst.state = row.source
            inst.fire(row.trigger)

    t_table = best(fire_table) / len(work)
    t_dict = best(fire_dict) / len(work)
    t_live = best(fire_live) / len(sample)
    print(f"machines: {len(specs)}, rows: {sum(len(s.rows) for s in specs)}")
    print(
        f"build all machines (tables + checks + transitions.Machine): {t_build * 1e3:.2f} ms "
        f"({t_build / t_base:.0f}x a dict of the rows, {t_base * 1e6:.1f} us)"
    )
    print(
        f"one step, MachineSpec.fire: {t_table * 1e9:.0f} ns ({t_table / t_dict:.1f}x a dict lookup, "
        f"{t_dict * 1e9:.0f} ns)"
    )
    print(
        f"one step, transitions Instance.fire: {t_live * 1e6:.1f} us ({t_live / t_dict:.0f}x a dict lookup)"
    )


if __name__ == "__main__":
    main()
