"""Mutated transcripts for property tests: good lines from the corpus and the basic turn, with
keys dropped, retyped or added, lines doubled, moved or broken (deterministic per seed)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st

from properties.findings import Finding
from properties.transcript import TranscriptStats
from tests.check_support import basic_turn

DATA = Path(__file__).resolve().parent / "data"
CORPUS = sorted(DATA.glob("*.ndjson"))
JUNK: list[Any] = [None, 1, -1, 2.5, "x", "", [], {}, True, "idle", "running", "session/update", [1]]
EXTRA_KEYS = ["_meta", "id", "result", "error", "method", "params", "sessionId", "jsonrpc"]


def corpus_lines() -> list[bytes]:
    out: list[bytes] = []
    for path in CORPUS:
        out += path.read_bytes().splitlines(keepends=True)
    return out


def _nodes(value: Any, out: list[tuple[Any, Any]]) -> None:
    if isinstance(value, dict):
        for key in list(value):
            out.append((value, key))
            _nodes(value[key], out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((value, index))
            _nodes(item, out)


def mutate(lines: list[bytes], seed: int) -> bytes:
    """A deterministic mess made of good lines (see the module docstring)."""
    rng = random.Random(seed)
    out: list[bytes] = []
    for raw in lines:
        roll = rng.random()
        if roll < 0.25:
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                out.append(raw)
                continue
            nodes: list[tuple[Any, Any]] = []
            _nodes(obj, nodes)
            if nodes:
                parent, key = rng.choice(nodes)
                how = rng.random()
                if how < 0.3 and isinstance(parent, dict):
                    del parent[key]
                elif how < 0.55 and isinstance(parent, dict):
                    parent[rng.choice(EXTRA_KEYS)] = rng.choice(JUNK)
                else:
                    parent[key] = rng.choice(JUNK)
            out.append(orjson.dumps(obj) + b"\n")
        elif roll < 0.29:
            out += [raw, raw]
        elif roll < 0.31 and out:
            out.insert(rng.randrange(len(out)), raw)
        elif roll < 0.32:
            out.append(raw[: len(raw) // 2] + b"\n")
        elif roll < 0.33:
            out.append(b"\xef\xbb\xbf" + raw)
        elif roll < 0.34:
            out.append(raw.rstrip(b"\n") + b"\r\n")
        else:
            out.append(raw)
    data = b"".join(out)
    return data[:-1] if rng.random() < 0.1 else data


def mutated_transcripts() -> st.SearchStrategy[bytes]:
    base = corpus_lines()
    turns = [ln for n in range(3) for ln in basic_turn(f"sess_{n % 2}", n + 1, n + 1)]
    return st.builds(mutate, st.sampled_from([base, turns, base[::-1], turns + base]), st.integers(0, 2**32))


def as_tuple(f: Finding) -> tuple[Any, ...]:
    return (f.rule, f.level, f.line, f.session, f.explanation, f.kind, f.message)


def stats_tuple(st_: TranscriptStats) -> tuple[Any, ...]:
    return (
        st_.lines, st_.messages, sorted(st_.sessions), sorted(st_.preserved.items()),
    )  # fmt: skip
