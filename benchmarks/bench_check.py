"""Throughput and memory of ``acp-model check`` (cli/cmd_check.py over properties/transcript.py).

Run: ``python benchmarks/bench_check.py [--messages N] [--sessions K] [--repeat R] [--no-rss]
[--random-ids] [--chunks C] [--instructions]``.

Writes a transcript of N messages (default 1,000,000) to a temporary folder: the basic prompt
turn of tests/data/basic_turn.ndjson (prompt, user_message, running, agent_message_chunk,
response, idle) repeated with fresh request ids (``0, 1, ...``) and message IDs (``u<n>`` and
``a<n>``, or random UUIDs with ``--random-ids``), turns spread over a pool of K session ids
(default 1,000; ``--sessions 0`` gives every turn its own session); with ``--chunks C`` the
Agent streams its message as C chunks under one messageId, as streaming agents do (default 1:
every message brings a new ID, the costliest case for the monitors). Then, in this one process
and on the same file:

- baseline: a plain loop ``for line in file: orjson.loads(line)``;
- reader: ``properties.transcript.read_transcript`` alone (decode, envelope, id bookkeeping);
- dispatch: ``properties.checking.check_stream`` with a set of no monitors (``MonitorSet([])``):
  the reader, the check's loop and the engine's dispatch, no handler called;
- check: ``properties.checking.check_stream`` in-process with every monitor (``MonitorSet()``)
  and no schema: what ``acp-model check FILE`` does minus interpreter start-up and printing.

It prints messages/s and the ratio to the baseline for each, best of R interleaved runs
(default 3; floor: check <= 10x the baseline), then the peak RSS of a fresh subprocess
running each mode on N/10, N/3 and N messages (``VmHWM`` from /proc/self/status;
``resource.getrusage`` where /proc is absent: on Linux it inherits the parent's high-water
mark). Figures only: no asserts.

``--instructions`` times nothing: it runs each mode once in a fresh process under
``valgrind --tool=cachegrind`` (and one that only starts up, subtracted) and prints
instructions per message and their ratio to the baseline's. On a shared or noisy machine, where
the clock moved this ratio between 9x and 14x for the same tree, the count does not move; it
reads lower than the clock's ratio (Python code retires fewer instructions per cycle than the
orjson loop), so it compares trees, not the floor itself. Use a small ``--messages`` (20000).

What the check's memory grows with: not with the number of messages as such, but with what
the rules must remember per session: every agent message ID and every messageId a prompt
response returned, for as long as the session lives (DONE-03, ACC-09 and MSGID-01 may name any
of them), one plain dict entry each whatever the IDs look like (two new IDs per turn here, with
``--random-ids`` too), and the per-session state of the number of sessions.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

import orjson

from properties.checking import check_stream
from properties.engine import MonitorSet
from properties.transcript import read_transcript

_HEAD = (
    b'{"from":"client","message":{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":'
    b'{"sessionId":"%s","prompt":[{"type":"text","text":"Hello, agent"}]}}}\n'
    b'{"from":"agent","message":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s",'
    b'"update":{"sessionUpdate":"user_message","messageId":"%s","content":[{"type":"text",'
    b'"text":"Hello, agent"}]}}}}\n'
    b'{"from":"agent","message":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s",'
    b'"update":{"sessionUpdate":"state_update","state":"running"}}}}\n'
)
_CHUNK = (
    b'{"from":"agent","message":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s",'
    b'"update":{"sessionUpdate":"agent_message_chunk","messageId":"%s","content":{"type":"text",'
    b'"text":"Hello! How can I help?"}}}}}\n'
)
_TAIL = (
    b'{"from":"agent","message":{"jsonrpc":"2.0","id":%d,"result":{"messageId":"%s"}}}\n'
    b'{"from":"agent","message":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s",'
    b'"update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}}\n'
)
_FIXED = 5
"""Messages of a turn besides the agent message's chunks."""


def write_transcript(
    path: Path, messages: int, sessions: int, random_ids: bool = False, chunks: int = 1
) -> int:
    """Write whole turns until at least ``messages`` messages; returns the count written.
    Message IDs are ``u<turn>`` and ``a<turn>``, or with ``random_ids`` random UUIDs (seeded:
    the same file every time). With ``chunks`` above 1 the Agent streams its message as that
    many ``agent_message_chunk`` updates under one messageId (a turn is 5 + chunks messages)."""
    per_turn = _FIXED + chunks
    turns = -(-messages // per_turn)
    rnd = random.Random(0)
    with path.open("wb", buffering=1 << 20) as fh:
        for t in range(turns):
            s = (b"sess_%d" % (t % sessions)) if sessions else (b"sess_%d" % t)
            if random_ids:
                user = str(uuid.UUID(int=rnd.getrandbits(128), version=4)).encode()
                agent = str(uuid.UUID(int=rnd.getrandbits(128), version=4)).encode()
            else:
                user, agent = b"u%d" % t, b"a%d" % t
            fh.write(_HEAD % (t, s, s, user, s) + _CHUNK % (s, agent) * chunks + _TAIL % (t, user, s))
    return turns * per_turn


def monitors_available() -> bool:
    try:
        from properties.monitors import ALL_MONITORS
    except ImportError:
        return False
    return bool(ALL_MONITORS)


# -- the four timed loops --------------------------------------------------------------------------


def run_baseline(path: Path) -> int:
    n = 0
    loads = orjson.loads
    with path.open("rb") as fh:
        for raw in fh:
            loads(raw)
            n += 1
    return n


def _count_messages(path: Path, read: Callable[[BinaryIO], Iterator[Any]]) -> int:
    n = 0
    with path.open("rb") as fh:
        for item in read(fh):
            if type(item) is tuple:
                n += 1
    return n


def run_reader(path: Path) -> int:
    return _count_messages(path, read_transcript)


def run_dispatch(path: Path) -> int:
    with path.open("rb") as fh:
        report = check_stream(fh, str(path), monitors=MonitorSet([]))
    return report.stats.messages


def run_check(path: Path) -> int:
    with path.open("rb") as fh:
        report = check_stream(fh, str(path), monitors=MonitorSet())
    return report.stats.messages


MODES = {"baseline": run_baseline, "reader": run_reader, "dispatch": run_dispatch, "check": run_check}
CHILD_MODES = {**MODES, "none": lambda path: 0}
"""What a measuring subprocess may run; ``none``: only the start-up, subtracted from the others."""


def timed(mode: str, path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    n = MODES[mode](path)
    return time.perf_counter() - start, n


# -- peak memory, one fresh process per measurement ------------------------------------------------


def _peak_kib() -> int:
    """Peak RSS of this process in KiB. On Linux ``getrusage`` keeps the parent's high-water
    mark across fork+exec (a child never reports less than its parent held when it was
    started), so the kernel's per-process ``VmHWM`` is preferred where it exists."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for text in fh:
                if text.startswith("VmHWM:"):
                    return int(text.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def peak_rss_child(mode: str, path: Path) -> None:
    """Entry point of the measuring subprocess: run one mode and print peak RSS in KiB."""
    CHILD_MODES[mode](path)
    print(_peak_kib(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def peak_rss(mode: str, path: Path) -> int:
    out = subprocess.run(
        [sys.executable, __file__, "--rss-child", mode, str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(out.stdout.split()[0])


def instructions(mode: str, path: Path) -> int:
    """Instructions a fresh process runs for ``mode`` on ``path`` (cachegrind's ``I refs``)."""
    out = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, __file__, "--rss-child", mode, str(path)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    for text in out.stderr.splitlines():
        if "I" in text and "refs:" in text:
            return int(text.split("refs:")[1].replace(",", ""))
    raise RuntimeError(f"no instruction count in valgrind's output: {out.stderr[-300:]}")


def report_instructions(modes: list[str], path: Path, n: int) -> None:
    """Instructions per message of each mode, start-up subtracted, and the ratio to the baseline:
    what the clock cannot show on a loaded or noisy machine."""
    start = instructions("none", path)
    per = {mode: (instructions(mode, path) - start) / n for mode in modes}
    print(f"instructions per message (cachegrind; start-up, {start:,}, subtracted):")
    for mode in modes:
        print(f"{mode:<9} {per[mode]:12,.0f} {per[mode] / per['baseline']:10.2f}x baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="messages in the timed transcript")
    parser.add_argument("--sessions", type=int, default=1000, help="session id pool (0: a new one per turn)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per mode (the best is kept)")
    parser.add_argument("--no-rss", action="store_true", help="skip the peak-memory subprocesses")
    parser.add_argument(
        "--random-ids", action="store_true", help="random UUID message IDs instead of u<n> and a<n>"
    )
    parser.add_argument(
        "--chunks", type=int, default=1, help="agent_message_chunk updates per agent message (streaming)"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per message under valgrind (cachegrind) instead of timing; use a "
        "small --messages, such as 20000",
    )
    parser.add_argument("--rss-child", nargs=2, metavar=("MODE", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        peak_rss_child(args.rss_child[0], Path(args.rss_child[1]))
        return

    full = monitors_available()
    modes = ["baseline", "reader", "dispatch", *(["check"] if full else [])]
    with tempfile.TemporaryDirectory(prefix="bench_check.") as tmp:
        big = Path(tmp) / "big.ndjson"
        if args.chunks < 1:
            parser.error("--chunks must be at least 1")
        n = write_transcript(big, args.messages, args.sessions, args.random_ids, args.chunks)
        size = big.stat().st_size
        pool = f"a pool of {args.sessions} sessions" if args.sessions else "a new session per turn"
        ids = "random UUID message IDs" if args.random_ids else "message IDs u<n>, a<n>"
        ids += f", {args.chunks} chunks per agent message" if args.chunks > 1 else ""
        print(f"transcript: {n:,} messages, {size / 1e6:.1f} MB, {pool}, {ids}")
        host = f"{os.uname().sysname} {os.uname().machine}, {os.cpu_count()} CPUs"
        print(f"python {sys.version.split()[0]} on {host}")
        if not full:
            print("properties.monitors.ALL_MONITORS is not available: full check not measured")
        if args.instructions:
            report_instructions(modes, big, n)
            return
        run_baseline(big)  # warm the page cache
        best = dict.fromkeys(modes, float("inf"))
        for _ in range(args.repeat):  # modes interleaved, so load changes hit them alike
            for mode in modes:
                seconds, count = timed(mode, big)
                assert count == n, (mode, count, n)
                best[mode] = min(best[mode], seconds)
        print(f"best of {args.repeat} runs, in this process:")
        print(f"{'mode':<9} {'seconds':>8} {'messages/s':>12} {'x baseline':>10}")
        for mode in modes:
            seconds = best[mode]
            print(f"{mode:<9} {seconds:8.2f} {n / seconds:12,.0f} {seconds / best['baseline']:10.2f}")
        if args.no_rss:
            return
        sizes = [args.messages // 10, args.messages // 3]
        paths = []
        for i, size_n in enumerate(sizes):
            paths.append(Path(tmp) / f"rss{i}.ndjson")
            sizes[i] = write_transcript(paths[i], size_n, args.sessions, args.random_ids, args.chunks)
        sizes.append(n)
        paths.append(big)
        print("peak RSS of a fresh process (KiB) by messages:")
        print(f"{'mode':<9} " + " ".join(f"{k:>11,}" for k in sizes) + "  growth from the first")
        for mode in modes:
            peaks = [peak_rss(mode, path) for path in paths]
            print(f"{mode:<9} " + " ".join(f"{p:>11,}" for p in peaks) + f"  {peaks[-1] - peaks[0]:+,} KiB")


if __name__ == "__main__":
    main()
