"""The page of ``check --html`` in a real headless browser (issue 34): Playwright for Python
driving the system's Chromium.

Skipped, with the reason, when Playwright is not installed or no Chromium executable is found
(``ACP_MODEL_CHROMIUM`` or ``ACP_CHROMIUM``, as the Mermaid tests take it, else ``chromium``,
``chromium-browser``, ``google-chrome`` on the PATH). The browser is started offline in spirit:
no sandbox, no GPU, no background networking,
no component updates, and every request the page makes other than its own file is refused and
counted (there must be none).

With ``ACP_MODEL_SCREENSHOT=1`` the test also writes the README screenshot
(``docs/img/check-html.png``) and the sha256 of the page it shows beside it
(``docs/img/check-html.sha256``); ``tests/test_html_pages.py`` fails when ``check --html``
no longer writes that page (a drift test that does not depend on how a Chromium version draws).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diagrams.html import spec_text
from diagrams.html.record import recorded_check
from diagrams.html.states import SEP
from tests.check_support import REPO, run_cli, state_after
from tests.test_html_pages import CANDIDATES

VIOLATIONS = "tests/data/mon_violations.ndjson"
BIG = "tests/data/mon_conforming.ndjson"
SHOT = REPO / "docs" / "img" / "check-html.png"
SHOT_HASH = REPO / "docs" / "img" / "check-html.sha256"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium() -> str | None:
    given = os.environ.get("ACP_MODEL_CHROMIUM") or os.environ.get("ACP_CHROMIUM")
    if given:
        return given if os.access(given, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright for Python is not installed (pip install -e '.[dev]')"
    )
    executable = _chromium()
    if executable is None:
        pytest.skip(
            "no Chromium executable (set ACP_MODEL_CHROMIUM or ACP_CHROMIUM, "
            "or install Debian's chromium package)"
        )
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _make(tmp_path: Path, transcript: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(REPO)
    out = tmp_path / "page.html"
    code, _, err = run_cli(["check", transcript, "--html", str(out)])
    assert code in (0, 1), err
    return out


def _open(browser: Any, path: Path) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    refused: list[str] = []
    errors: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith("file://") and r.request.url.split("#")[0] == path.as_uri():
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri())
    return page, refused + errors


def _rows(page: Any, pane: str, session: str) -> dict[str, str]:
    """The state panel's rows of one session: label -> text."""
    cells = page.locator(f"#{pane} table[data-session='{session}'] tr")
    return {
        cells.nth(i).locator("th").inner_text(): cells.nth(i).locator("td").inner_text()
        for i in range(cells.count())
    }


@pytest.mark.needs_shared
def test_keyboard_stepping_a_finding_its_spec_sentence_and_the_state_at_its_line(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if spec_text() is None:
        pytest.skip("spec text not found in ../shared/spec (../shared is absent): no spec links to follow")
    path = _make(tmp_path, VIOLATIONS, monkeypatch)
    page, problems = _open(browser, path)
    line = page.locator("#st-line")
    assert line.inner_text() == "1"  # the first line is selected on opening
    for _ in range(5):
        page.keyboard.press("j")
    assert line.inner_text() == "6"
    assert page.locator(".row.sel").get_attribute("data-line") == "6"
    prompt = _rows(page, "machines", "s2")["Prompt 2"]
    assert prompt.startswith(CANDIDATES)
    page.keyboard.press("k")
    assert line.inner_text() == "5"
    page.keyboard.press("n")  # the next finding: TRANS-04 at line 13
    current = page.locator(".finding.cur")
    assert current.get_attribute("data-rule") == "TRANS-04" and line.inner_text() == "13"
    page.keyboard.press("o")  # the selected message's JSON unfolds
    assert page.locator("#L13 details").get_attribute("open") is not None
    page.keyboard.press("k")

    finding = page.locator("#L13 .finding")
    finding.click()
    assert line.inner_text() == "13"
    assert finding.get_attribute("class") is not None and "cur" in str(finding.get_attribute("class"))
    assert finding.locator(".rule").inner_text() == "TRANS-04"
    assert finding.locator(".lvl").inner_text() == "MUST"
    link = finding.locator(".spec a")
    target = link.get_attribute("href")
    assert target is not None and target.startswith("#spec-")
    sentence = finding.locator(".spec q").inner_text()
    link.click()
    spec_line = page.locator(target)
    assert "hl" in str(spec_line.get_attribute("class"))
    assert sentence in spec_line.inner_text() and "cancelled" in sentence
    assert spec_line.is_visible()
    machines = _rows(page, "machines", "s2")
    assert machines["Foreground state (reported)"] == "idle"
    assert machines["Prompt 2"] == 'answered (success, messageId "v1")'
    view = _rows(page, "view", "s2")
    assert view["state"] == "idle (completions 1)" and view["last stop reason"] == '"end_turn"'
    assert problems == []

    if os.environ.get("ACP_MODEL_SCREENSHOT") == "1":
        page.set_viewport_size({"width": 1400, "height": 1060})
        page.evaluate("document.querySelectorAll('details').forEach(function (d) { d.open = false; })")
        finding.click()
        page.evaluate("window.scrollTo(0, 0)")  # the header, and the rows down to line 13
        SHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOT))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        SHOT_HASH.write_text(f"{digest}  check --html of {VIOLATIONS} (docs/img/check-html.png shows it)\n")
    page.close()


def test_the_level_filter_hides_findings_from_view_and_from_stepping(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _make(tmp_path, VIOLATIONS, monkeypatch)
    page, problems = _open(browser, path)
    findings = page.locator("#sequence .finding")
    assert findings.count() == 3 and all(findings.nth(i).is_visible() for i in range(3))
    page.locator("input[data-level='MUST']").uncheck()
    assert not any(findings.nth(i).is_visible() for i in range(3))
    page.keyboard.press("n")
    assert page.locator(".finding.cur").count() == 0 and page.locator("#st-line").inner_text() == "1"
    page.locator("input[data-level='MUST']").check()
    page.locator("#index a", has_text="ACC-09").click()  # the index at the top
    assert page.locator(".finding.cur").get_attribute("data-rule") == "ACC-09"
    assert page.locator("#st-line").inner_text() == "17"
    page.keyboard.press("p")
    assert page.locator(".finding.cur").get_attribute("data-rule") == "DONE-03"
    assert problems == []
    page.close()


def _panel(page: Any, pane: str) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    tables = page.locator(f"#{pane} table")
    for t in range(tables.count()):
        session = str(tables.nth(t).get_attribute("data-session"))
        out.update({(session, label): text for label, text in _rows(page, pane, session).items()})
    return out


def _python_state(index: int) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    with open(REPO / BIG, "rb") as fh:
        _, rec = recorded_check(fh, BIG)
    machines, view = state_after(rec, index)

    def split(rows: dict[str, str]) -> dict[tuple[str, str], str]:
        return {(k.split(SEP, 1)[0], k.split(SEP, 1)[1][1:]): v for k, v in rows.items()}

    return split(machines), split(view)


def test_the_panel_after_a_line_is_the_state_the_checker_recorded_there(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the script's checkpoints (every 64 messages) and back: the panel at a line shows
    the rows the recording holds for it, whichever way the line was reached."""
    path = _make(tmp_path, BIG, monkeypatch)
    page, problems = _open(browser, path)
    page.keyboard.press("End")
    last = int(page.locator("#st-line").inner_text())
    assert last > 64
    page.keyboard.press("k")
    page.keyboard.press("k")
    assert page.locator("#st-line").inner_text() == str(last - 2)
    machines, view = _python_state(last - 3)
    assert _panel(page, "machines") == machines and machines
    assert _panel(page, "view") == view and view
    page.keyboard.press("Home")
    for _ in range(last - 3):
        page.keyboard.press("ArrowDown")
    assert page.locator("#st-line").inner_text() == str(last - 2)
    assert (_panel(page, "machines"), _panel(page, "view")) == (machines, view)
    machines, view = _python_state(9)
    page.keyboard.press("Home")
    for _ in range(9):
        page.keyboard.press("j")
    assert (_panel(page, "machines"), _panel(page, "view")) == (machines, view)
    assert problems == []
    page.close()
