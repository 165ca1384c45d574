"""What a student sees: the released notebook in JupyterLab, Run All to the end, then a wrong answer.

The released notebooks are uploaded through the Jupyter contents API into the server the suite
started (so the solution notebooks it serves stay as they are). Screenshots of the check outputs
land in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import urllib.request

import nbformat
import pytest

from dpcourse.classroom.release import release_notebook

from .conftest import ROOT, TOKEN


def _upload(lab: str, name: str) -> str:
    nb = release_notebook(nbformat.read(ROOT / "notebooks" / name, as_version=4))
    for path, body in (("student", {"type": "directory"}),
                       (f"student/{name}", {"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))})):
        request = urllib.request.Request(f"{lab}/api/contents/{path}?token={TOKEN}", data=json.dumps(body).encode(),
                                         method="PUT", headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=30).read()
    return f"{lab}/lab/tree/student/{name}?token={TOKEN}&reset"


def _open_and_run_all(page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle", timeout=90_000)
    page.wait_for_timeout(1000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator('li[data-command="runmenu:run-all"]').click()
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent);
            return prompts.length > 0 && prompts.every(t => /\\[\\d+\\]/.test(t));
        }""", timeout=240_000)


def _check_the_run_reached_the_end(page, artifacts, name: str) -> None:
    """Every code cell got a number (nothing stopped the run), no traceback, three exercises not attempted."""
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").filter(
        has_text="Traceback").count() == 0
    not_attempted = page.locator(".jp-OutputArea-output").filter(has_text="not attempted yet")
    assert not_attempted.count() == 3
    image = page.locator(".dpcourse-panel img.dpcourse-panel-image").first  # the panel was drawn
    image.scroll_into_view_if_needed()
    page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=image.element_handle(), timeout=60_000)
    not_attempted.first.scroll_into_view_if_needed()
    not_attempted.first.screenshot(path=str(artifacts / f"student_{name[:2]}_not_attempted.png"))


# Notebook 01's Run All is checked by the wrong-answer test below, which starts with it.
@pytest.mark.e2e
def test_run_all_on_the_student_copy_reaches_the_end(lab, browser, artifacts):
    name = "06_private_mw.ipynb"
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _open_and_run_all(page, _upload(lab, name))
        _check_the_run_reached_the_end(page, artifacts, name)
    finally:
        page.close()


@pytest.mark.e2e
def test_run_all_then_a_wrong_answer_shows_one_short_block_without_traceback(lab, browser, artifacts):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _open_and_run_all(page, _upload(lab, "01_laplace_utility.ipynb"))
        _check_the_run_reached_the_end(page, artifacts, "01_laplace_utility.ipynb")
        stub = page.locator(".jp-CodeCell").filter(has_text="K_max = ...").first
        stub.scroll_into_view_if_needed()
        stub.locator(".cm-content").click()
        page.keyboard.press("Control+a")
        page.keyboard.type("n_office, alpha, beta, epsilon_office = 1_000_000, 0.01, 0.05, 0.5\nK_max = 5000")
        page.keyboard.press("Shift+Enter")  # run the answer, move to the check cell
        page.keyboard.press("Shift+Enter")  # run the check
        failure = page.locator(".jp-OutputArea-output").filter(has_text="✗ max-queries").first
        expect(failure).to_be_visible(timeout=60_000)
        text = failure.inner_text()
        assert "dropped the logarithm" in text and "Hint:" in text
        assert "Traceback" not in text and "dpcourse/checks" not in text and len(text.strip().splitlines()) <= 3
        failure.screenshot(path=str(artifacts / "student_01_wrong_answer.png"))
    finally:
        page.close()
