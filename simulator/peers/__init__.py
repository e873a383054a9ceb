"""The peers: the simulated Agent and Client, the transport between them and the world that
composes them, sans-IO; the named scenarios, the schedulers that drive a run, the seeded
deviations, and the Agent served over stdio (its loop is ``simulator.harness.serve``)."""
