"""Every notebook's student copy in a real JupyterLab, with a wrong answer in every exercise and a typo in the first
answer cell: Run All reaches the end with every ✗ shown and every figure drawn, the check below the typo says its
answer cell raised, and every panel reacts to its first slider.

For each panel (``.dpcourse-panel``) the test presses the first slider's handle a few times (towards its far
end) and measures, in the page's own clock, the time from the key press to the new image
(``.dpcourse-panel-image``) being swapped in. The medians are written to
``test-artifacts/browser_latency.json`` (``python -m benchmarks bench_browser`` turns them into a
table of ``benchmarks/RESULTS.md``, running this file alone so that no other test competes for the
cores); they are recorded, not asserted, since wall time depends on the machine. After the presses the key numbers
shown in the panel (``.dpcourse-panel-numbers``) must have changed from the defaults' and name the slider's new
value, as its readout shows it (issue 39: the numbers a student reads beside a panel follow the panel). A
screenshot of each panel is saved in ``test-artifacts/``.
"""

from __future__ import annotations

import fcntl
import json
import re
import statistics
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.e2e.conftest import ROOT, open_notebook, save_screenshot
from tests.e2e.test_student_copy_in_browser import _upload, check_wrong_answers_ran_to_the_end

NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
PRESSES = 5

WATCH = """(index) => {
    const img = document.querySelectorAll('.dpcourse-panel')[index].querySelector('img.dpcourse-panel-image');
    window.__dpcourseChanged = 0;
    window.__dpcourseBusySeen = false;
    const status = document.querySelectorAll('.dpcourse-panel')[index].querySelector('.dpcourse-panel-status');
    if (window.__dpcourseObserver) window.__dpcourseObserver.disconnect();
    window.__dpcourseObserver = new MutationObserver(() => {
        if (status && status.textContent.includes('computing')) window.__dpcourseBusySeen = true;
        if (img.src !== window.__dpcourseLastSrc) {
            window.__dpcourseLastSrc = img.src;
            window.__dpcourseChanged = performance.now();
        }
    });
    window.__dpcourseLastSrc = img.src;
    window.__dpcourseObserver.observe(document.querySelectorAll('.dpcourse-panel')[index],
                                      {attributes: true, subtree: true, childList: true, characterData: true});
}"""


def _record(name: str, index: int, latencies: list[float], busy: bool) -> None:
    out = ROOT / "test-artifacts" / "browser_latency.json"
    # `make test` runs this suite on two workers: the read-modify-write of the shared file is locked
    with open(out.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(out.read_text()) if out.exists() else {}
        data[f"{Path(name).stem} panel {index + 1}"] = {
            "median_s": statistics.median(latencies),
            "samples_s": latencies,
            "computing_shown": busy,
        }
        out.write_text(json.dumps(data, indent=1, sort_keys=True))


def _check_numbers_follow_the_slider(page, numbers, slider, at_defaults: str) -> None:
    """The key numbers shown in the panel are no longer the defaults', and their heading names the slider's value
    as its readout shows it (``At ε = 1.12, k = 100, …:`` beside a readout of 1.12)."""
    page.wait_for_function("([el, old]) => el.innerText !== old", arg=[numbers.element_handle(), at_defaults])
    shown = numbers.inner_text()
    heading = shown.splitlines()[0]
    assert heading.startswith("At ") and "defaults" not in heading and len(shown.splitlines()) > 1, shown
    label = slider.locator(".widget-label").first.inner_text().strip()
    readout = slider.locator(".widget-readout").first.inner_text().strip()
    named = re.search(rf"{re.escape(label)} = ([^,:]+)", heading)
    assert named, (label, heading)
    assert float(named.group(1).replace(",", "")) == pytest.approx(float(readout.replace(",", "")), rel=0.01), (
        heading,
        readout,
    )


@pytest.fixture(scope="module")
def workbook_page(browser) -> Iterator[Any]:
    """One page for the whole file: JupyterLab is loaded once and each notebook opened in it (:func:`open_notebook`),
    every earlier notebook closed and its kernel shut down.

    At one device pixel per CSS pixel, as the other browser tests: at two (sharper screenshots), Chromium drew four
    times the pixels of every screen the run goes through, and JupyterLab, which adds a notebook's later cells only
    while the browser is idle (or every 3 s), waited longer for them. The file alone on this 2-core machine, runs
    interleaved: Chromium 52–62 s of CPU in 89–102 s (three runs), against 62–80 s in 97–268 s (four runs)."""
    with closing(browser.new_page(viewport={"width": 1400, "height": 1000})) as page:
        yield page


@pytest.mark.e2e
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_and_its_panels_react(lab, workbook_page, artifacts, name):
    from playwright.sync_api import expect

    page = workbook_page
    # the student copy, with a wrong answer in every exercise: the run must still reach the end.
    # "The last code cell has a number" below, and the panels counted after the run, read the page's cells:
    # open_notebook waits until every cell is in the page.
    open_notebook(page, _upload(lab, name, wrong=True))
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=90_000)
    page.wait_for_timeout(1000)  # the status bar reads "Idle" briefly before the kernel is attached
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle", timeout=90_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator('li[data-command="runmenu:run-all"]').click()
    # all cells have run when no prompt shows [*] and the last code cell has a number
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent);
            return prompts.length > 0 && !prompts.some(t => t.includes('*'))
                && /\\[\\d+\\]/.test(prompts[prompts.length - 1]);
        }""",
        timeout=240_000,
    )
    errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    texts = [errors.nth(i).inner_text() for i in range(errors.count())]
    # the one error on the page is the typo planted in the first answer cell (issue 29)
    unplanned = [t for t in texts if ("Traceback" in t or "Error" in t) and "epsilon_offic" not in t]
    assert not unplanned, unplanned
    typo = page.locator(".jp-OutputArea-output").filter(has_text="your answer cell raised NameError").first
    if typo.count():  # asserted on the saved notebook below; the screenshot shows it as the student does
        typo.scroll_into_view_if_needed()
        save_screenshot(page, artifacts / f"student_{name[:2]}_typo_first_answer.png")
    check_wrong_answers_ran_to_the_end(page, lab, name, artifacts)

    panels = page.locator(".dpcourse-panel")
    assert panels.count() >= 1, "no panel on the page"
    for index in range(panels.count()):
        panel = panels.nth(index)
        panel.scroll_into_view_if_needed()
        image = panel.locator("img.dpcourse-panel-image").first
        image.wait_for(timeout=60_000)
        page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=image.element_handle())
        shown = image.bounding_box()
        assert shown["width"] >= 900, f"panel {index + 1} is shown only {shown['width']:.0f} px wide"
        slider = panel.locator(".widget-slider").first
        handle = slider.locator(".noUi-handle").first
        numbers = panel.locator(".dpcourse-panel-numbers").first
        at_defaults = numbers.inner_text()
        assert at_defaults.startswith("At the panel's defaults ("), at_defaults
        handle.focus()
        # towards the far end of the slider, so that every press moves it (a δ slider may start near its top)
        low, now, high = (float(handle.get_attribute(f"aria-value{a}") or "nan") for a in ("min", "now", "max"))
        key = "ArrowLeft" if now - low > high - now else "ArrowRight"
        latencies, busy = [], False
        for _ in range(PRESSES):
            page.evaluate(WATCH, index)
            start = page.evaluate("performance.now()")
            handle.press(key)
            page.wait_for_function("(t) => window.__dpcourseChanged > t", arg=start, timeout=60_000)
            latencies.append((page.evaluate("window.__dpcourseChanged") - start) / 1000)
            busy = busy or page.evaluate("window.__dpcourseBusySeen")
            page.wait_for_timeout(300)
        _record(name, index, latencies, busy)
        page.wait_for_timeout(300)
        _check_numbers_follow_the_slider(page, numbers, slider, at_defaults)
        shot = artifacts / f"{Path(name).stem}_panel{index + 1}.png"
        save_screenshot(panel, shot)
        from PIL import Image

        pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
        assert pixels.std() > 10, "the panel screenshot is blank"
