"""Tests of the rule catalogue (``properties.catalogue``) and of ``acp-model rules``.

The spec-dependent tests read ``../shared/spec`` relative to the repository root and skip with a
stated reason when it is absent.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict

import pytest

from cli.main import main
from properties import catalogue
from properties.catalogue import (
    CHECKS,
    CODE_SECTIONS,
    LEVELS,
    RULES,
    RULES_BY_ID,
    SECTION_CODES,
    SECTIONS,
    Rule,
    find_section,
    headings,
    keyword_occurrences,
    normalise_level,
    rules_for,
)
from properties.shared import default_spec, shared_dir

SHARED = shared_dir()  # $ACP_MODEL_SHARED, else ../shared
SPEC = default_spec()


@pytest.fixture(scope="module")
def spec_text() -> str:
    if not SPEC.is_file():
        pytest.skip(
            f"spec not found at {SPEC} (../shared is absent: set ACP_MODEL_SHARED to the shared folder)"
        )
    return SPEC.read_text(encoding="utf-8")


# -- coverage of the spec's keywords -------------------------------------------------------------


@pytest.mark.needs_shared
def test_keyword_totals_match_the_spec(spec_text: str) -> None:
    counts = Counter(kw for _, kw, _ in keyword_occurrences(spec_text))
    must = counts["MUST"] + counts["MUST NOT"]
    should = counts["SHOULD"] + counts["SHOULD NOT"]
    assert (must, counts["MUST NOT"], should, counts["SHOULD NOT"], counts["MAY"]) == (59, 17, 34, 4, 18)
    assert counts["REQUIRED"] == 0


@pytest.mark.needs_shared
def test_every_occurrence_is_covered_once_with_its_level_and_section(spec_text: str) -> None:
    occurrences = keyword_occurrences(spec_text)
    owner: dict[int, str] = {}
    for rule in RULES:
        for index in rule.occurrences:
            assert index not in owner, f"occurrence {index} in {owner.get(index)} and {rule.id}"
            owner[index] = rule.id
            _, keyword, section = occurrences[index - 1]
            assert keyword == rule.level, f"{rule.id}: occurrence {index} is {keyword}"
            assert section == rule.section, f"{rule.id}: occurrence {index} is in {section!r}"
    assert sorted(owner) == list(range(1, len(occurrences) + 1))


@pytest.mark.needs_shared
def test_catalogue_level_totals_equal_spec_totals(spec_text: str) -> None:
    spec_counts = Counter(kw for _, kw, _ in keyword_occurrences(spec_text))
    cat_counts: Counter[str] = Counter()
    for rule in RULES:
        cat_counts[rule.level] += len(rule.occurrences)
    assert cat_counts == +spec_counts


@pytest.mark.needs_shared
def test_headings_found_in_the_spec_are_the_catalogue_sections(spec_text: str) -> None:
    found = [text for _, text in headings(spec_text)]
    assert found == list(SECTIONS[1:])
    assert SECTIONS[0] == catalogue.INTRO


@pytest.mark.needs_shared
def test_paraphrases_do_not_copy_the_spec(spec_text: str) -> None:
    def words(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    spec_words = words(spec_text)
    grams = {tuple(spec_words[i : i + 8]) for i in range(len(spec_words) - 7)}
    copies = []
    for rule in RULES:
        for text in (rule.paraphrase, rule.reason):
            w = words(text)
            copies += [
                f"{rule.id}: {' '.join(w[i : i + 8])}"
                for i in range(len(w) - 7)
                if tuple(w[i : i + 8]) in grams
            ]
    assert copies == []


def test_copy_detector_would_catch_a_copy() -> None:
    """The 8-word test above is only meaningful if a verbatim sentence trips it."""
    text = "the agent must report idle when the foreground work ends today"
    words = re.findall(r"\w+", text)
    grams = {tuple(words[i : i + 8]) for i in range(len(words) - 7)}
    assert tuple(words[1:9]) in grams


def test_keyword_occurrences_on_a_small_text() -> None:
    text = (
        "Intro MUST go. It MUST NOT stop.\n\nFirst part\n\nA SHOULD  NOT b MAY c. must not d."
        "\n\nSecond\n\nREQUIRED x; MUSTARD and SHOULDER are no keywords.\n"
    )
    assert keyword_occurrences(text) == [
        (1, "MUST", "INTRO"),
        (2, "MUST NOT", "INTRO"),
        (3, "SHOULD NOT", "First part"),
        (4, "MAY", "First part"),
        (5, "REQUIRED", "Second"),
    ]


# -- shape of the catalogue ----------------------------------------------------------------------


def test_ids_unique_and_well_formed() -> None:
    assert len(RULES_BY_ID) == len(RULES)
    for rule in RULES:
        code, _, number = rule.id.rpartition("-")
        assert re.fullmatch(r"[A-Z]+", code), rule.id
        assert re.fullmatch(r"\d\d", number), rule.id
        assert CODE_SECTIONS[code] == rule.section
        assert SECTION_CODES[rule.section] == code


def test_ids_numbered_in_order_within_each_section() -> None:
    numbers: dict[str, list[int]] = defaultdict(list)
    for rule in RULES:
        numbers[rule.code].append(int(rule.id[-2:]))
    for code, seen in numbers.items():
        assert seen == list(range(1, len(seen) + 1)), code


def test_rules_follow_section_order() -> None:
    positions = [SECTIONS.index(rule.section) for rule in RULES]
    assert positions == sorted(positions)


def test_occurrences_ascend_in_spec_order() -> None:
    flat = [i for rule in RULES for i in rule.occurrences]
    assert flat == sorted(flat)


def test_fields_have_allowed_values() -> None:
    for rule in RULES:
        assert rule.level in LEVELS and rule.check in CHECKS and rule.side in catalogue.SIDES
        assert rule.paraphrase.strip() and "  " not in rule.paraphrase
        if rule.check in ("not-checkable", "unchecked"):
            assert len(rule.reason) > 20, rule.id
        else:
            assert rule.reason == "", rule.id
        if rule.level == "MAY":
            assert rule.check in ("monitor", "model"), rule.id
            assert not rule.eventually, rule.id
        assert rule.informal == (rule.occurrences == ()), rule.id


def test_informal_entries_exist_for_lowercase_must() -> None:
    informal = {rule.id for rule in RULES if rule.informal}
    # the four lowercase "must"/"must not" obligations of the spec
    assert {"SDM-02", "SDM-03", "ACC-10", "STATE-02"} <= informal


_UPPER = re.compile(r"\b(MUST\s+NOT|MUST|SHOULD\s+NOT|SHOULD|MAY|REQUIRED)\b")


@pytest.mark.needs_shared
def test_every_entry_is_on_a_sentence_with_its_keyword(spec_text: str) -> None:
    """Each entry's spec sentences carry its keyword: an entry with keyword occurrences is on
    sentences holding its level's keyword; an informal entry is in ``INFORMAL_WORDING`` (why it
    has no keyword), on the one sentence holding the words given there, and that sentence holds
    no uppercase keyword at all (else the entry would not be informal)."""
    from properties.catalogue import INFORMAL_WORDING
    from properties.speclines import spec_sentences

    found = spec_sentences(RULES, spec_text)
    informal = {rule.id for rule in RULES if rule.informal}
    assert set(INFORMAL_WORDING) == informal
    for rule in RULES:
        sentences = found[rule.id]
        assert sentences, rule.id
        if rule.informal:
            words, why = INFORMAL_WORDING[rule.id]
            assert len(why) > 10, rule.id
            ((_, sentence),) = sentences
            assert words in sentence, (rule.id, sentence)
            assert not _UPPER.search(sentence), (rule.id, sentence)
            continue
        for _, sentence in sentences:
            keywords = {" ".join(k.split()) for k in _UPPER.findall(sentence)}
            assert rule.level in keywords, (rule.id, rule.level, sentence)


def test_rule_rejects_inconsistent_entries() -> None:
    with pytest.raises(ValueError, match="reason"):
        Rule("ACC-99", "MUST", "agent", "x", "not-checkable", "", (1,))
    with pytest.raises(ValueError, match="malformed"):
        Rule("NOPE-99", "MUST", "agent", "x", "monitor", "", (1,))
    with pytest.raises(ValueError, match="malformed"):
        Rule("ACC-9", "MUST", "agent", "x", "monitor", "", (1,))
    with pytest.raises(ValueError, match="permission"):
        Rule("ACC-99", "MAY", "agent", "x", "client-view", "", (1,))
    informal = Rule("ACC-99", "MUST", "agent", "x", "monitor")
    assert (informal.section, informal.informal) == ("2. Prompt accepted", True)


def test_rules_for_filters() -> None:
    must_not = rules_for(level="must  not")
    assert must_not and all(r.level == "MUST NOT" for r in must_not)
    acc = rules_for(section="acc")
    assert acc == rules_for(section="2. PROMPT ACCEPTED")
    assert {r.section for r in acc} == {"2. Prompt accepted"}
    both = rules_for(level="MAY", section="CANCEL")
    assert both == cancel_may()
    assert all(r.level == "MAY" and r.code == "CANCEL" for r in both)
    assert rules_for() == RULES
    with pytest.raises(ValueError):
        normalise_level("OUGHT")
    with pytest.raises(ValueError):
        find_section("nowhere")


def cancel_may() -> tuple[Rule, ...]:
    return tuple(r for r in RULES if r.level == "MAY" and r.code == "CANCEL")


# -- acp-model rules -----------------------------------------------------------------------------

EXPECTED_KEYS = {
    "id",
    "section",
    "level",
    "side",
    "paraphrase",
    "check",
    "reason",
    "implemented_by",
    "spec_lines",
    "occurrences",
    "eventually",
    "informal",
}


def _run_json(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, object]]:
    assert main(["rules", "--json", *extra]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert isinstance(data, list)
    return data


def test_rules_json_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    data = _run_json(capsys)
    assert [d["id"] for d in data] == [r.id for r in RULES]
    for entry in data:
        rule = RULES_BY_ID[str(entry["id"])]
        checked = rule.check in ("monitor", "client-view", "model")
        assert set(entry) == EXPECTED_KEYS | ({"decidable", "decidable_bound"} if checked else set())
        assert isinstance(entry["implemented_by"], list)
        assert entry["occurrences"] == list(rule.occurrences)


def test_rules_json_filters(capsys: pytest.CaptureFixture[str]) -> None:
    data = _run_json(capsys, "--level", "must not", "--section", "acc")
    assert data and {(d["level"], d["section"]) for d in data} == {("MUST NOT", "2. Prompt accepted")}
    data = _run_json(capsys, "--section", "Cancellation", "--level", "MAY")
    assert [d["id"] for d in data] == [r.id for r in cancel_may()]


def test_rules_table_groups_by_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--section", "STOP"]) == 0
    out = capsys.readouterr().out
    assert "Stop reasons" in out
    for rule in rules_for(section="STOP"):
        assert rule.id in out
    assert "ACC-01" not in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [(["--level", "OUGHT"], "level"), (["--section", "Nowhere"], "section")],
)
def test_rules_bad_filter_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    assert main(["rules", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]


def test_restated_groups_share_level() -> None:
    seen: set[str] = set()
    for name, ids in catalogue.RESTATED.items():
        assert len(ids) >= 2, name
        rules = [RULES_BY_ID[i] for i in ids]
        assert len({r.level for r in rules}) == 1, name
        assert len(set(ids)) == len(ids), name
        assert not seen & set(ids), name
        seen |= set(ids)
