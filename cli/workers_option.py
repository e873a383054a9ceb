"""``--jobs N`` and ``--cluster local|ADDRESS``: the one way every long command uses more cores.

Owns: adding the two options to a command (``add_pool_options``) and the pool they ask for
(``pool_of``: ``simulator.workers.Workers``, not started; a cluster that cannot be used raises
``ClusterError``, which ``cli.main`` prints as one line, exit 2). ``--jobs N`` is N local worker
processes (1: this process); with ``--cluster``, N is the number of Ray workers. The answers are
the same for any N.

Must not know: what the jobs compute.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from cli.main import UsageError
from simulator.workers import Workers

CLUSTER_HELP = (
    "run the jobs on Ray instead of local processes: local starts a private Ray instance with "
    "--jobs workers, HOST:PORT joins a running cluster; the same answers; needs "
    "pip install -e '.[cluster]' (default: local processes, Ray not used)"
)


def add_pool_options(p: Any, what: str, default: str = "1", jobs: bool = True) -> None:
    """``--jobs`` (``what``: the jobs, for its help; ``default``: said in the help) and
    ``--cluster``. ``jobs`` False: the command has its own ``--jobs`` already."""
    if jobs:
        p.add_argument(
            "--jobs",
            type=int,
            metavar="N",
            help=f"worker processes (with --cluster: Ray workers) for {what}; the answers are the "
            f"same for any number (default {default})",
        )
    p.add_argument("--cluster", metavar="local|ADDRESS", help=CLUSTER_HELP)


def pool_of(args: argparse.Namespace, default: int | None = 1, option: str = "--jobs") -> Workers:
    """The pool ``--jobs`` and ``--cluster`` ask for (``default`` None: every core)."""
    value: int | None = getattr(args, "jobs", None)
    if value is not None and value < 1:
        raise UsageError(f"{option} {value}: must be >= 1")
    cluster: str | None = getattr(args, "cluster", None)
    if cluster is not None and not cluster.strip():
        raise UsageError("--cluster: expected local or HOST:PORT")
    size = value if value is not None else (default if default is not None else (os.cpu_count() or 1))
    return Workers(size, cluster)
