"""Each student notebook as a student opens it: JupyterLab at 1280 × 860, before running a cell.

The released copy (stored outputs, no answers) is uploaded through the contents API and opened once per notebook,
each in the same JupyterLab page, as a student opens one after another (:func:`tests.e2e.conftest.open_notebook`;
loading JupyterLab and showing a notebook are the suite's dearest steps). With each notebook open:

- every panel shows its last figure, not ``VBox(children=…)`` (issue 12). A notebook from git, a release or Binder
  is not trusted, so JupyterLab renders only its *safe* outputs: a panel's stored widget view is skipped and the
  PNG stored beside it shows (``Panel._repr_mimebundle_``). Each such cell is saved as
  ``test-artifacts/unrun_NN_cellC.png``.
- the notebook is scrolled a screen at a time from the top and every screen is saved as
  ``test-artifacts/read_NN_sSS.png``, so that a person can read the lab as a student does (issue 39). The number of
  screens before the notebook's *Going further* part (its core) and in all are written to
  ``test-artifacts/read_through.json`` and printed; they are recorded, not asserted, since they depend on fonts.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import nbformat
import pytest

from dpcourse.classroom.release import release_notebook
from tests.e2e.conftest import ROOT, open_notebook, save_screenshot, upload_notebook

NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
WIDTH, HEIGHT = 1280, 860
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SCROLLER = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"


def _record(name: str, screens: dict) -> None:
    out = ROOT / "test-artifacts" / "read_through.json"
    with open(out.with_suffix(".lock"), "w") as lock:  # two workers may write at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(out.read_text()) if out.exists() else {}
        data[name] = screens
        out.write_text(json.dumps(data, indent=1, sort_keys=True))


@dataclass(frozen=True)
class Unrun:
    """A released notebook open in JupyterLab before any cell has run."""

    name: str
    notebook: nbformat.NotebookNode
    page: Any


@pytest.fixture(scope="module")
def reading_page(browser) -> Iterator[Any]:
    """One page at the student's window size for the whole file: JupyterLab is loaded once, each notebook opened
    in it (:func:`open_notebook`)."""
    with closing(browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})) as page:
        yield page


@pytest.fixture(scope="module", params=NOTEBOOKS)
def unrun(request, lab, reading_page) -> Unrun:
    """The released copy of one notebook, uploaded and opened once for every test of this file that reads it."""
    name = request.param
    nb = release_notebook(nbformat.read(ROOT / "notebooks" / name, as_version=4))
    # every cell in the page: a late panel, and the read-through's full height
    open_notebook(reading_page, upload_notebook(lab, "read", name, nb))
    reading_page.wait_for_timeout(1500)  # MathJax typesets the first screen
    return Unrun(name, nb, reading_page)


@pytest.mark.e2e
def test_an_unrun_student_notebook_shows_every_panel_figure(unrun, artifacts):
    from playwright.sync_api import expect

    panels = [
        i
        for i, cell in enumerate(unrun.notebook.cells)
        if any(
            WIDGET_VIEW in out.get("data", {}) and "image/png" in out.get("data", {}) for out in cell.get("outputs", [])
        )
    ]  # a panel stores its PNG beside its view (a progress bar does not)
    assert panels, f"{unrun.name} stores no panel output"
    for index in panels:
        cell = unrun.page.locator(".jp-Notebook .jp-Cell").nth(index)
        cell.scroll_into_view_if_needed()
        figure = cell.locator(".jp-OutputArea-output[data-mime-type='image/png'] img")
        expect(figure).to_have_count(1, timeout=30_000)
        box = figure.bounding_box()
        assert box and box["width"] > 300 and box["height"] > 100, box
        assert "VBox(children" not in cell.inner_text()
        save_screenshot(cell, artifacts / f"unrun_{unrun.name[:2]}_cell{index}.png")


@pytest.mark.e2e
def test_each_notebook_reads_top_to_bottom_at_1280_px(unrun, artifacts):
    page, name = unrun.page, unrun.name
    scroller = page.locator(SCROLLER).first
    step = int(scroller.evaluate("el => el.clientHeight")) - 60  # a line of overlap between screens
    screens, core, position = 0, None, 0
    while True:
        scroller.evaluate("(el, y) => { el.scrollTop = y; }", position)
        page.wait_for_timeout(400)
        screens += 1
        save_screenshot(page, artifacts / f"read_{name[:2]}_s{screens:02d}.png")
        shown = _in_view(page)
        assert "VBox(children" not in shown["text"], f"screen {screens} of {name} shows a raw widget repr"
        if core is None and "Going further" in shown["headings"]:
            core = screens
        height = int(scroller.evaluate("el => el.scrollHeight"))
        position += step
        if position >= height - 10 or screens >= 80:
            break
    record = {"screens": screens, "core_screens": core}
    _record(name, record)
    print(f"{name}: {screens} screens at {WIDTH}×{HEIGHT}, Going further from screen {core}")


def _in_view(page) -> dict[str, str]:
    """The text of the notebook's cells now in its viewport, and of the Markdown headings in view among them.

    Only those cells are read, which the screens between them cover from top to bottom: the text of the whole
    notebook, read on every screen, made Chromium lay out again every cell JupyterLab's windowing skips while it is
    out of view.
    """
    return page.evaluate(
        """(selector) => {
            const scroller = document.querySelector(selector);
            const view = scroller.getBoundingClientRect();
            const inView = (el) => {
                const r = el.getBoundingClientRect();
                return r.bottom > view.top && r.top < view.bottom;
            };
            const cells = [...scroller.querySelectorAll('.jp-Cell')].filter(inView);
            const heading = '.jp-MarkdownOutput h1, .jp-MarkdownOutput h2';
            const headings = cells.flatMap(c => [...c.querySelectorAll(heading)]);
            return {
                text: cells.map(c => c.innerText).join('\\n'),
                headings: headings.filter(inView).map(h => h.textContent).join('\\n'),
            };
        }""",
        SCROLLER,
    )
