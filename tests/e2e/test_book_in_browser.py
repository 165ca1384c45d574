"""The course website (make book) in headless Chromium, opened from a folder with every other request refused.

The site is built from the student release of the notebooks (book/build.py, into a folder of the test's own,
without any network where the test may make a network namespace: the build needs none) and each of
its pages is opened as a reader who is offline would open it: from file:// URLs, with every request that is not
a file of the site aborted. On each page: no request was refused or failed, no console error, every image
decoded, every formula typeset by MathJax (no raw ``$…$`` or ``\\(…\\)`` left in the prose), nothing in the
right column running past its edge at 1280 px (the API pages' long module names); on a notebook's page
also every stored table, every panel with its sliders and its stored figure (drawn by the widget manager from
the widget state the notebook was saved with) under a note saying it is a snapshot, with a link to the live
notebook on Binder, and the Binder button opening that notebook of the student copy. The search page finds the
notebooks. No file of the site a reader can open (page, search index, source, downloadable notebook) holds a
line of a solution, a check's ✓ or an exercise's accepted value. Screenshots: test-artifacts/book_*.png.

Skipped, with the reason, where the book's environment is not installed (``make book`` installs it).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import nbformat
import pytest

from dpcourse.classroom.release import exercises
from tests.checks.test_checks import CASES
from tests.deploy.test_deploy_schemas import offline
from tests.e2e.conftest import ROOT, save_screenshot
from tests.test_book import build, toc_files

BOOK_PYTHON = ROOT / ".venv" / "book" / "bin" / "python"
NPM_STAMP = ROOT / "book" / "npm" / "node_modules" / ".installed"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# Sphinx's own pages beside the table of contents.
GENERATED_PAGES = ["genindex", "py-modindex", "search"]
pytestmark = pytest.mark.timeout(900)  # the build (about half a minute of CPU) and some twenty pages


PAGES = toc_files() + GENERATED_PAGES  # the table of contents' pages, root first (book/_toc.yml)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if not BOOK_PYTHON.exists() or not NPM_STAMP.exists():
        pytest.skip("the book's environment is not installed (make book installs it)")
    out = tmp_path_factory.mktemp("book")
    # Without any network where this process may make a network namespace (root, as in CI): the build needs none.
    done = subprocess.run(
        [*offline(), str(BOOK_PYTHON), str(ROOT / "book" / "build.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out / "_build" / "html"


def binder_badge_base() -> str:
    """README's Binder link up to its ``labpath``: the book's buttons must open the same repository and branch."""
    match = re.search(r"(https://mybinder\.org/v2/gh/[^)\s?]+)\?labpath=", (ROOT / "README.md").read_text())
    assert match, "README has no Binder badge"
    return match.group(1)


def stored_outputs(notebook: Path) -> dict[str, int]:
    """What a notebook's stored outputs hold that its page must show: panels, tables and images."""
    nb = json.loads(notebook.read_text())
    state = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    counts = {"panels": 0, "tables": 0, "images": 0, "panels_without_state": 0}
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                model = state.get(data[WIDGET_VIEW]["model_id"])
                if model is None:
                    counts["panels_without_state"] += 1
                elif "dpcourse-panel" in model["state"].get("_dom_classes", []):
                    counts["panels"] += 1
            elif "text/html" in data and "<table" in "".join(data["text/html"]):
                counts["tables"] += 1
            elif "image/png" in data:
                counts["images"] += 1
    return counts


class Reader:
    """One browser tab reading the site from its folder, page after page as a reader follows its links: every
    request outside the folder refused, and each visit's refused and failed requests and errors recorded.

    One tab for the whole file, not one per page: a reader's tab keeps what it has compiled and laid out once (the
    theme's scripts, MathJax, the fonts), and a fresh browser context per page cost Chromium about 2.5 s of CPU
    each, 37 pages 85–115 s against 12 s in one tab (measured on this 2-core machine)."""

    def __init__(self, browser, site: Path):
        self.site = site
        self.site_prefix = site.as_uri() + "/"
        self.refused: list[str] = []
        self.failed: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.route("**/*", self._route)
        self.page.on("requestfailed", lambda request: self.failed.append(f"{request.url}: {request.failure}"))
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))

    def visit(self, page_name: str, query: str = ""):
        """The tab, at ``page_name`` of the site; what earlier visits recorded is forgotten."""
        self.page.goto("about:blank")  # what the page before sends while it unloads is not this visit's
        for recorded in (self.refused, self.failed, self.errors):
            recorded.clear()
        self.page.goto((self.site / f"{page_name}.html").as_uri() + query)
        return self.page

    def close(self) -> None:
        self.page.close()

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith((self.site_prefix, "data:", "blob:", "about:")):
            route.continue_()
        else:
            self.refused.append(url)
            route.abort()


@pytest.fixture(scope="module")
def reader(site, browser) -> Iterator[Reader]:
    with closing(Reader(browser, site)) as tab:
        yield tab


def wait_for_mathjax(page) -> None:
    page.wait_for_function(
        "() => !document.querySelector('.math') || (window.MathJax && window.MathJax.startup"
        " && window.MathJax.startup.promise)",
        timeout=60_000,
    )
    page.evaluate("() => window.MathJax && window.MathJax.startup ? window.MathJax.startup.promise.then(() => 1) : 1")


# The prose of a page (markdown cells and docstrings) without code, code cells' outputs and typeset formulas:
# where MathJax missed a formula, its source is still there as text, or a stray $ where a table split it.
PROSE = """() => {
  const article = document.querySelector('article').cloneNode(true);
  article.querySelectorAll('pre, code, .cell_output, .cell_input, mjx-container, script, style')
    .forEach(node => node.remove());
  return article.innerText;
}"""
RAW_MATH = re.compile(r".{0,40}(\$|\\\(|\\\[|\\begin\{).{0,40}", re.DOTALL)


@pytest.mark.parametrize("page_name", PAGES)
def test_every_page_renders_offline(site, reader, artifacts, page_name):
    page = reader.visit(page_name)
    page.wait_for_load_state("load")
    wait_for_mathjax(page)
    # The copy the site was built from (book/build.py stages it beside the site), not notebooks/ as it is now.
    notebook = site.parent / "source" / f"{page_name}.ipynb"
    expected = stored_outputs(notebook) if page_name.startswith("notebooks/") else None
    if expected:
        assert expected["panels_without_state"] == 0, (
            f"{notebook.name} shows a panel whose widget state was not saved with the notebook"
        )
        if expected["panels"]:
            page.wait_for_function(
                "n => [...document.querySelectorAll('.dpcourse-panel img')]"
                ".filter(image => image.complete && image.naturalWidth > 0).length >= n",
                arg=expected["panels"],
                timeout=60_000,
            )
    formulas = page.eval_on_selector_all(
        ".math", "found => found.map(node => [!!node.querySelector('mjx-container'), node.textContent])"
    )
    merrors = page.eval_on_selector_all("mjx-merror", "found => found.map(node => node.textContent)")
    prose = page.evaluate(PROSE) if page.query_selector("article") else ""
    images = page.eval_on_selector_all(
        "article img", "found => found.map(image => [image.currentSrc, image.complete && image.naturalWidth])"
    )
    panels = page.eval_on_selector_all(
        ".dpcourse-panel",
        """found => found.map(panel => {
            const image = panel.querySelector('img');
            return {
              sliders: panel.querySelectorAll('.widget-slider, .jupyter-widget-slider').length,
              width: image ? image.naturalWidth : 0,
              shown: image ? image.getBoundingClientRect().width : 0,
            };
        })""",
    )
    tables = page.eval_on_selector_all(".cell_output table", "found => found.length")
    binder = page.eval_on_selector_all(
        "a[href*='mybinder.org']", "found => found.map(link => link.getAttribute('href'))"
    )
    # Each panel under its snapshot note (in the same output), and the note's link.
    snapshots = page.eval_on_selector_all(
        ".dpcourse-snapshot",
        """found => found.map(note => ({
            text: note.innerText,
            panel: !!note.parentElement.querySelector('.dpcourse-panel'),
        }))""",
    )
    # What of the right column (this page's contents) runs past its right edge or the window's, cut off.
    cut_off = page.evaluate(
        """() => {
            const column = document.querySelector('.bd-sidebar-secondary');
            if (!column) return [];
            const edge = Math.min(column.getBoundingClientRect().right, window.innerWidth) + 1;
            return [...column.querySelectorAll('*')]
              .filter(node => node.getClientRects().length && node.getBoundingClientRect().right > edge)
              .map(node => node.textContent.trim().slice(0, 60));
        }"""
    )
    slug = page_name.replace("/", "_")
    save_screenshot(page, artifacts / f"book_{slug}.png")
    if panels:
        first = page.query_selector(".cell_output:has(.dpcourse-panel)")  # the panel under its snapshot note
        first.scroll_into_view_if_needed()
        save_screenshot(first, artifacts / f"book_{slug}_panel.png")

    assert reader.refused == [], "the page asked another host for these"
    assert reader.failed == [], "these files of the site failed to load"
    assert reader.errors == [], "console errors"
    assert all(typeset for typeset, _ in formulas), [text for typeset, text in formulas if not typeset]
    assert merrors == [], "MathJax could not typeset these"
    assert RAW_MATH.search(prose) is None, f"formula left as source: {RAW_MATH.search(prose).group(0)!r}"
    assert [src for src, width in images if not width] == [], "images that did not decode"
    assert cut_off == [], "the right column cuts these off at 1280 px"
    if expected is not None:
        assert len(panels) == expected["panels"], panels
        for panel in panels:
            assert panel["sliders"] >= 1 and panel["width"] > 300 and panel["shown"] > 300, panel
        assert tables >= expected["tables"]
        assert len(images) >= expected["images"] + expected["panels"]
        name = Path(page_name).name
        # The page's Binder button, then each panel's snapshot note: all open this notebook of the student copy.
        assert binder == [f"{binder_badge_base()}?labpath=student%2F{name}.ipynb"] * (1 + len(panels))
        assert len(snapshots) == len(panels), snapshots
        assert all(note["panel"] and note["text"].startswith("Snapshot") for note in snapshots), snapshots
    else:
        assert panels == [] and binder == [] and snapshots == []


def test_the_site_has_no_page_outside_the_table_of_contents(site):
    built = {
        str(path.relative_to(site).with_suffix(""))
        for path in site.rglob("*.html")
        if path.relative_to(site).parts[0] not in ("_static", "_sources")
    }
    assert built == set(PAGES) | {"index"}  # index.html: jupyter-book's redirect to the root page


def test_search_finds_the_notebooks(reader, artifacts):
    page = reader.visit("search", "?q=Laplace")
    # Sphinx adds one result every 5 ms and writes the summary after the last: wait for the summary,
    # or a slow machine reads the first few results only.
    page.wait_for_function(
        "() => (document.querySelector('#search-results .search-summary')?.innerText ?? '').trim() !== ''",
        timeout=60_000,
    )
    summary = page.inner_text("#search-results .search-summary")
    found = page.eval_on_selector_all("#search-results li a", "found => found.map(link => link.getAttribute('href'))")
    save_screenshot(page, artifacts / "book_search_laplace.png")
    assert reader.refused == [] and reader.errors == []
    assert f"found {len(found)} page(s)" in summary, (summary, found)
    assert any("notebooks/01_laplace_utility" in href for href in found), found


def accepted_values(solutions: list[nbformat.NotebookNode], names: list[str]) -> dict[str, list[float]]:
    """Each notebook's accepted values: every number in the right answers the checks' own tests pass (tests/checks)
    for the exercises of that notebook."""
    return {
        name: [number for exercise in exercises(nb) for number in build.answer_numbers(list(CASES[exercise][1]))]
        for name, nb in zip(names, solutions, strict=True)
    }


def test_the_site_shows_no_solution_no_check_result_and_no_accepted_value(site):
    paths = sorted((ROOT / "notebooks").glob("*.ipynb"))
    solutions = [nbformat.read(path, as_version=4) for path in paths]
    assert len(build.solution_lines(solutions)) > 60  # the search has something to look for
    values = accepted_values(solutions, [path.stem for path in paths])
    assert sum(map(len, values.values())) > 30
    shown = build.answers_in(site, ROOT / "notebooks", values)
    assert shown == []
