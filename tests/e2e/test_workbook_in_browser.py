"""Every notebook in a real JupyterLab: run all cells, no errors, and the main panel reacts to a slider."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from .conftest import ROOT, TOKEN

NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.e2e
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_and_its_panel_reacts(lab, browser, artifacts, name):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{lab}/lab/tree/notebooks/{name}?token={TOKEN}&reset")
        expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=90_000)
        page.wait_for_timeout(1000)  # the status bar reads "Idle" briefly before the kernel is attached
        expect(page.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle", timeout=90_000)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator('li[data-command="runmenu:run-all"]').click()
        # all cells have run when no prompt shows [*] and the last code cell has a number
        page.wait_for_function(
            """() => {
                const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent);
                return prompts.length > 0 && !prompts.some(t => t.includes('*')) && /\\[\\d+\\]/.test(prompts[prompts.length - 1]);
            }""", timeout=240_000)
        errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
        texts = [errors.nth(i).inner_text() for i in range(errors.count())]
        assert not [t for t in texts if "Traceback" in t or "Error" in t], texts

        panel = page.locator(".widget-vbox").filter(has=page.locator(".widget-output img")).first
        panel.scroll_into_view_if_needed()
        image = panel.locator(".widget-output img").first
        image.wait_for(timeout=60_000)
        before = image.get_attribute("src")
        handle = panel.locator(".widget-slider .noUi-handle").first
        handle.focus()
        for _ in range(3):
            handle.press("ArrowRight")
        page.wait_for_function("(old) => [...document.querySelectorAll('.widget-output img')].some(i => i.src !== old)",
                               arg=before, timeout=60_000)
        page.wait_for_timeout(500)
        shot = artifacts / f"{Path(name).stem}_panel.png"
        panel.screenshot(path=str(shot))
        from PIL import Image

        pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
        assert pixels.std() > 10, "the panel screenshot is blank"
    finally:
        page.close()
