"""The simulator: the peers (``peers/``: the simulated Agent and Client, the transport and the
world that composes them, sans-IO), the explorers (``explore/``: breadth-first, random walks,
hypothesis, coverage, shrinking), what the explorations say about the rules (``analysis/``:
decidability, seeded bugs, the readings matrix), the harness for real agents (``harness/``:
drive, record, the model served as an agent; the one part that does input and output), the
worker pool every long command runs its jobs on (``workers``) and the progress interface every
part reports to (``progress``). Each part imports only the parts named before it."""
