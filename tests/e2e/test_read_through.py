"""Each student notebook read top to bottom as a student opens it: JupyterLab at 1280 × 860, before running a cell.

The released copy (stored outputs, no answers) is uploaded through the contents API and scrolled a screen at a time;
every screen is saved as ``test-artifacts/read_NN_sSS.png`` so that a person can read the lab as a student does
(issue 39). The number of screens before the notebook's *Going further* part (its core) and in all are written to
``test-artifacts/read_through.json`` and printed; they are recorded, not asserted, since they depend on fonts.
"""

from __future__ import annotations

import fcntl
import json
import urllib.request

import nbformat
import pytest

from dpcourse.classroom.release import release_notebook
from tests.e2e.conftest import ROOT, TOKEN

NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
WIDTH, HEIGHT = 1280, 860
SCROLLER = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"


def _put(lab: str, path: str, body: dict) -> None:
    request = urllib.request.Request(
        f"{lab}/api/contents/{path}?token={TOKEN}",
        data=json.dumps(body).encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=30).read()


def _record(name: str, screens: dict) -> None:
    out = ROOT / "test-artifacts" / "read_through.json"
    with open(out.with_suffix(".lock"), "w") as lock:  # two workers may write at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(out.read_text()) if out.exists() else {}
        data[name] = screens
        out.write_text(json.dumps(data, indent=1, sort_keys=True))


@pytest.mark.e2e
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_each_notebook_reads_top_to_bottom_at_1280_px(lab, browser, artifacts, name):
    nb = release_notebook(nbformat.read(ROOT / "notebooks" / name, as_version=4))
    _put(lab, "read", {"type": "directory"})
    _put(lab, f"read/{name}", {"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))})
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page.goto(f"{lab}/lab/tree/read/{name}?token={TOKEN}&reset")
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
        page.wait_for_timeout(1500)  # MathJax typesets the first screen
        scroller = page.locator(SCROLLER).first
        step = int(scroller.evaluate("el => el.clientHeight")) - 60  # a line of overlap between screens
        screens, core, position = 0, None, 0
        while True:
            scroller.evaluate("(el, y) => { el.scrollTop = y; }", position)
            page.wait_for_timeout(400)
            screens += 1
            page.screenshot(path=str(artifacts / f"read_{name[:2]}_s{screens:02d}.png"))
            text = page.locator(SCROLLER).first.inner_text()
            assert "VBox(children" not in text, f"screen {screens} of {name} shows a raw widget repr"
            if core is None and "Going further" in _headings_in_view(page):
                core = screens
            height = int(scroller.evaluate("el => el.scrollHeight"))
            position += step
            if position >= height - 10 or screens >= 80:
                break
        record = {"screens": screens, "core_screens": core}
        _record(name, record)
        print(f"{name}: {screens} screens at {WIDTH}×{HEIGHT}, Going further from screen {core}")
    finally:
        page.close()


def _headings_in_view(page) -> str:
    """The text of the Markdown headings now visible in the notebook's viewport."""
    return page.evaluate(
        """(selector) => {
            const outer = document.querySelector(selector).getBoundingClientRect();
            return [...document.querySelectorAll('.jp-MarkdownOutput h1, .jp-MarkdownOutput h2')]
                .filter(h => {
                    const r = h.getBoundingClientRect();
                    return r.bottom > outer.top && r.top < outer.bottom;
                })
                .map(h => h.textContent).join('\\n');
        }""",
        SCROLLER,
    )
