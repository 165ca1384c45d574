"""A notebook opened before it is run shows each panel's last figure, not ``VBox(children=…)`` (issue 12).

A notebook that comes from git, a release or Binder is not trusted, so JupyterLab renders only
its *safe* outputs: a panel's stored widget view is skipped and the PNG stored beside it shows
(``Panel._repr_mimebundle_``). The released notebooks are uploaded through the contents API into
the suite's server and opened without running a cell.
"""

from __future__ import annotations

import json
import urllib.request

import nbformat
import pytest

from dpcourse.classroom.release import release_notebook
from tests.e2e.conftest import ROOT, TOKEN

NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _put(lab: str, path: str, body: dict) -> None:
    request = urllib.request.Request(
        f"{lab}/api/contents/{path}?token={TOKEN}",
        data=json.dumps(body).encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=30).read()


@pytest.mark.e2e
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_an_unrun_student_notebook_shows_every_panel_figure(lab, browser, artifacts, name):
    from playwright.sync_api import expect

    nb = release_notebook(nbformat.read(ROOT / "notebooks" / name, as_version=4))
    panels = [
        i
        for i, cell in enumerate(nb.cells)
        if any(
            WIDGET_VIEW in out.get("data", {}) and "image/png" in out.get("data", {}) for out in cell.get("outputs", [])
        )
    ]  # a panel stores its PNG beside its view (a progress bar does not)
    assert panels, f"{name} stores no panel output"
    _put(lab, "unrun", {"type": "directory"})
    _put(lab, f"unrun/{name}", {"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(nb))})
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{lab}/lab/tree/unrun/{name}?token={TOKEN}&reset")
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
        for index in panels:
            cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
            cell.scroll_into_view_if_needed()
            figure = cell.locator(".jp-OutputArea-output[data-mime-type='image/png'] img")
            expect(figure).to_have_count(1, timeout=30_000)
            box = figure.bounding_box()
            assert box and box["width"] > 300 and box["height"] > 100, box
            assert "VBox(children" not in cell.inner_text()
            cell.screenshot(path=str(artifacts / f"unrun_{name[:2]}_cell{index}.png"))
    finally:
        page.close()
