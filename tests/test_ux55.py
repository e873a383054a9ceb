"""Small defects a user met (review51 A6, A7; the docs helper's findings of stop 54), each pinned
by the behaviour the user sees."""

from __future__ import annotations

from properties.engine import MonitorSet


def test_update_after_idle_updates_only_what_the_ended_work_reported() -> None:
    """review51 A6: the seeded bug of DONE-03 sends an update of the ended work after its idle
    (more of the message it began, or content of a tool call it finished), never output under a
    message ID the wire has not seen: that is new work to a Client (FG-01/FG-02), so ``drive``
    found the bug under rules it does not break. Every finding of its walks is DONE-03 or, after
    a cancel, CANCEL-14 (``Rules.late_update``)."""
    from properties.seeded import BY_NAME
    from simulator.analysis.mutants import Mutant, sample

    mutant = Mutant(BY_NAME["update-after-idle"])
    rules: set[str] = set()
    for _, _, make in sample((), mutant.switched_on, mutant.cfg, 60, 60, monitors=MonitorSet):
        run = make()
        rules |= {f.rule for f in run.findings if f.kind == "rule"}
    assert "DONE-03" in rules
    assert rules <= {"DONE-03", "CANCEL-14"}, rules
