"""The explorers: breadth-first (exhaustive), seeded random walks and hypothesis's stateful runs
over the peers' moves, with coverage, shrinking, the report of a run and the comparison of the
spec with a variant."""
