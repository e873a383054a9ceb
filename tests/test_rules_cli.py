"""``acp-model rules``: each rule's line numbers in the spec text (``spec_lines``), so a reader
goes from a finding to the sentence; without the spec the output says so and has none."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli.main import main
from properties.catalogue import RULES, Rule
from properties.speclines import default_spec, rule_sentences, spec_lines

SPEC = default_spec()  # $ACP_MODEL_SHARED, else ../shared


@pytest.fixture(scope="module")
def spec_text() -> str:
    if not SPEC.is_file():
        pytest.skip(
            f"spec not found at {SPEC} (../shared is absent: set ACP_MODEL_SHARED to the shared folder)"
        )
    return SPEC.read_text(encoding="utf-8")


def test_the_default_spec_is_the_shared_one() -> None:
    assert default_spec() == SPEC and SPEC.parts[-2:] == ("spec", "acp-v2-prompt-lifecycle.txt")


def test_lines_on_a_small_text(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n".join(
        [
            "Opening words. A Client MUST wait.",  # line 1, keyword 1 (INTRO)
            "",
            "Session updates",  # a heading: line 3
            "",
            "Agents send updates. Peers MAY skip some; the Agent SHOULD NOT repeat.",  # 2 and 3
            "Unknown variants are kept verbatim by a relaying client.",  # line 6, no keyword
            "",
            "Entity IDs",
            "",
            "Types separate identical identifiers everywhere.",
        ]
    )
    # IDs are built, not written as literals: the traceability matrix would count this test as
    # exercising those catalogue rules, which it does not
    intro, upd, ent = (f"{code}-{{:02d}}".format for code in ("INTRO", "UPD", "ENT"))
    rules = (
        Rule(intro(1), "MUST", "client", "Wait.", "monitor", occurrences=(1,)),
        Rule(upd(1), "SHOULD NOT", "agent", "No repeats.", "monitor", occurrences=(3,)),
        Rule(upd(2), "MAY", "both", "Skipping.", "monitor", occurrences=(2,)),
        Rule(upd(3), "SHOULD", "client", "A relaying client keeps unknown variants verbatim.", "monitor"),
        Rule(ent(1), "MUST", "both", "Identifiers of separate types.", "monitor"),
    )
    from properties.catalogue import INFORMAL_WORDING

    # an informal rule is on the sentence of its own section holding the words given for it
    monkeypatch.setitem(INFORMAL_WORDING, upd(3), ("kept verbatim", "no keyword"))
    assert spec_lines(rules, text) == {
        intro(1): (1,),
        upd(1): (5,),
        upd(2): (5,),
        upd(3): (6,),
        ent(1): (),  # no words given: nowhere
    }


def test_every_rule_is_located_in_its_own_section_on_a_line_that_states_it(spec_text: str) -> None:
    from properties.speclines import _sections

    lines = spec_text.splitlines()
    sections = _sections(lines)
    where = spec_lines(RULES, spec_text)
    for rule in RULES:
        assert where[rule.id], rule.id
        first, last = sections[rule.section]
        for n in where[rule.id]:
            assert first + 1 <= n <= last + 1, (rule.id, n)
            if rule.occurrences:
                level = r"\s+".join(rule.level.split())
                assert re.search(rf"\b{level}\b", lines[n - 1]), (rule.id, n)
    # informal rules: the sentence they paraphrase
    assert "tool_call_content_chunk" in lines[where["TOOL-06"][0] - 1]
    assert "in the order they were received" in lines[where["ACTIVE-02"][0] - 1]
    assert "compactionId and status are required" in lines[where["COMPACT-02"][0] - 1]
    assert "Only background work is listed" in lines[where["BG-17"][0] - 1]


def test_rules_json_adds_spec_lines_and_keeps_every_field(
    spec_text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    where = spec_lines(RULES, spec_text)
    for entry, rule in zip(entries, RULES, strict=True):
        assert entry["spec_lines"] == list(where[rule.id])
        decided = (
            {"decidable", "decidable_bound"} if rule.check in ("monitor", "client-view", "model") else set()
        )
        assert set(rule.to_json()) | {"implemented_by", "spec_lines"} | decided == set(entry)


def test_rules_table_shows_the_lines(spec_text: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--section", "TOOL"]) == 0
    out = capsys.readouterr().out
    tool06 = spec_lines(RULES, spec_text)["TOOL-06"][0]
    assert f"[spec line {tool06}]" in out


def _no_shared_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default spec made missing (a ``--spec`` given that cannot be read is exit 2); its path."""
    monkeypatch.setenv("ACP_MODEL_SHARED", str(tmp_path / "none"))
    return tmp_path / "none" / "spec" / "acp-v2-prompt-lifecycle.txt"


def test_without_the_spec_it_says_so_and_shows_no_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = _no_shared_folder(tmp_path, monkeypatch)
    assert main(["rules"]) == 0
    captured = capsys.readouterr()
    assert "[spec line" not in captured.out and f"{len(RULES)} rules" in captured.out
    assert (
        captured.err == f"acp-model rules: no spec line numbers: {missing}: No such file or directory "
        "(see README, Set-up)\n"
    )
    assert main(["rules", "--json"]) == 0
    assert all(e["spec_lines"] is None for e in json.loads(capsys.readouterr().out))


# -- a rule in full, and the table's header (issue 35) --------------------------------------------


def test_a_rule_id_shows_the_rule_in_full_with_its_spec_sentences(
    spec_text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", "TRANS-04", "--spec", str(SPEC)]) == 0
    out = capsys.readouterr().out
    rule = next(r for r in RULES if r.id == "TRANS-04")
    assert out.startswith(f"TRANS-04  {rule.level}  binds: {rule.side}  check: {rule.check}\n")
    assert f"  section: {rule.section} (TRANS)" in out and "cancel-takes-effect" in out
    assert " ".join(rule.paraphrase.split()) in " ".join(out.split())
    (line,) = spec_lines((rule,), spec_text)["TRANS-04"]
    quoted = re.search(rf'    line {line}: "(.*?)"\n(?!      )', out, re.S)
    assert quoted is not None, out
    sentence = " ".join(quoted.group(1).split())
    assert sentence in spec_text.splitlines()[line - 1] and "MUST" in sentence
    assert main(["rules", "trans-04", "BG-05", "--json", "--spec", str(SPEC)]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in entries] == ["TRANS-04", "BG-05"]
    assert entries[0]["spec_sentences"] == [{"line": line, "text": sentence}]


def test_every_rule_has_a_sentence_on_each_of_its_lines(spec_text: str) -> None:
    lines = spec_text.splitlines()
    where = spec_lines(RULES, spec_text)
    for rule in RULES:
        found = rule_sentences(rule, spec_text)
        assert tuple(sorted({n for n, _ in found})) == where[rule.id], rule.id
        assert all(text and text in lines[n - 1] for n, text in found), rule.id


def test_an_unknown_rule_id_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "TRANS-04", "TRANS-99"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "acp-model rules: unknown rule 'TRANS-99' (acp-model rules lists them)\n"


def test_a_rule_in_full_without_the_spec_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_shared_folder(tmp_path, monkeypatch)
    assert main(["rules", "BG-05"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("BG-05  SHOULD NOT") and "the spec text: not read" in captured.out
    assert "no spec line numbers" in captured.err


def test_the_table_has_a_header_row_and_explains_its_markers_above_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_shared_folder(tmp_path, monkeypatch)
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    first_rule = next(i for i, ln in enumerate(lines) if ln.startswith("INTRO-01"))
    above = lines[:first_rule]
    assert above[0].startswith("Markers: * judged at the end of a run")
    assert any("i informal" in ln for ln in above)
    header = next(ln for ln in above if ln.startswith("rule "))
    assert header.split()[:4] == ["rule", "level", "binds", "check"]
    assert header.index("what it says") == lines[first_rule].index("A Client")  # aligned
