"""A real browser opens the report from disk, offline: no request, no console error, a screenshot."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_browser import Browser, chromium_path, launch
from report_support import build_training_store, val_questions

from skillharness.eval.report import build_report
from skillharness.train.config import GateConfig


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    binary = chromium_path()
    if binary is None:
        pytest.skip(
            "chromium not installed (Debian package 'chromium'; scripts/ensure-chromium.sh installs it)"
        )
    # A fresh profile outside the test's folder: the page's own folder must hold only the report.
    with (
        tempfile.TemporaryDirectory(prefix="skillharness-chromium-") as profile,
        launch(binary, Path(profile)) as browser,
    ):
        yield browser


@pytest.mark.slow
async def test_the_page_works_offline_in_chromium(tmp_path: Path, browser: Browser) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    written = await build_training_store(url, "train-web", val_questions(30), epochs=2, steps=2, draws=24)
    files = build_report(url, "train-web", tmp_path / "page" / "report.html", gate=GateConfig())
    viewport = {"width": 1280, "height": 1800, "deviceScaleFactor": 1, "mobile": False}
    browser.call("Emulation.setDeviceMetricsOverride", viewport, session=True)

    browser.open(files.html.resolve().as_uri())

    log = browser.log
    assert log.requests == [files.html.resolve().as_uri()], log.requests  # the page itself, nothing else
    assert log.exceptions == []
    assert [entry for entry in log.console if entry[0] in ("error", "warning", "assert")] == []
    assert browser.evaluate("document.querySelectorAll('section').length") == 7
    assert browser.evaluate("document.querySelectorAll('#gates svg, #curves svg').length") >= 2
    # the inline script works: filter the edits by reason, then sort the gate table by draws
    n_accept = sum(1 for d in written.decisions if d.reason == "accept")
    shown = browser.evaluate(
        "(() => { const s = document.getElementById('filter-reason'); s.value = 'accept';"
        " s.dispatchEvent(new Event('change'));"
        " return document.getElementById('edit-count').textContent; })()"
    )
    assert shown == f"{n_accept} of {len(written.decisions)} shown"
    first_after_sort = browser.evaluate(
        "(() => { const th = document.querySelectorAll('#gate-table thead th')[5]; th.click(); th.click();"
        " return document.querySelector('#gate-table tbody tr td:nth-child(6)').textContent.trim(); })()"
    )
    assert int(first_after_sort) == max(len(written.observations[d.gate_index]) for d in written.decisions)
    assert log.exceptions == []

    top = browser.screenshot(tmp_path / "report-top.png", full=False)
    full = browser.screenshot(tmp_path / "report-full.png", full=True)
    assert top[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(top) > 50_000  # a blank or broken page compresses to a few kilobytes
    assert len(full) > len(top)
    print(f"screenshots: {tmp_path / 'report-top.png'} ({len(top)} B), {tmp_path / 'report-full.png'}")
