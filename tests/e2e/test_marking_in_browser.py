"""The marking app (``dpcourse mark``) in headless Chromium, two TAs in two browser contexts.

The app runs as its own process on 127.0.0.1 over a store seeded directly (six answers to a written question: two
identical up to whitespace and case, one hostile, one a megabyte of math) and is stopped by its process id.
Formulas are checked typeset when the app finds a MathJax (``book/npm/node_modules`` after ``make book``, or
``$DPCOURSE_MATHJAX``); without one, the page's notice that formulas are shown as TeX is checked instead.
Screenshots: test-artifacts/marking_*.png.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from dpcourse.classroom.marking import add_answers, check_rubric, marks, open_store, store_path
from dpcourse.classroom.marking.app import find_mathjax
from tests.e2e.conftest import ROOT, save_screenshot

TOKEN = "e2e-marking-token-0123456789"
HOSTILE = (
    "<script>alert('script')</script> [click](javascript:alert('link')) <img src=x onerror=alert('img')>\n\n"
    "![remote](http://evil.example/pixel.png) <style>body{display:none}</style> "
    '<iframe src="http://evil.example/"></iframe> [go](javascript:alert%281%29) '
    "$\\href{javascript:alert('tex')}{tex}$\n\n```js\nunclosed"
)
ANSWERS = [
    ("alice", "The step that fails is the threshold's **noise** $\\rho$: it is drawn once."),
    ("bob", "the step that FAILS is the threshold's   **noise** $\\rho$:\n it is drawn once.  "),
    ("carol", HOSTILE),
    ("dan", "By composition, $$\\sum_{i=1}^{k} \\varepsilon_i = k\\varepsilon$$ so the budget grows with $k$."),
    ("erin", "I do not know."),
    ("frank", "$$" + "x^{2}+" * 200_000 + "$$"),
]


@pytest.fixture
def marking_app(tmp_path):
    report = tmp_path / "grades.csv"
    store = open_store(store_path(report))
    rubric = check_rubric(
        4,
        [
            {"id": "names-step", "text": "Names the step that fails (the threshold's noise)", "points": 2},
            {"id": "why", "text": "Says why: the noise is reused across queries", "points": 2},
            {"id": "claims-private", "text": "Claims the variant is still private", "points": -1},
        ],
    )
    add_answers(
        store,
        "svt-flaw",
        rubric,
        ANSWERS,
        prompt="Which step of the proof does **Alg. 3** break, and why?",
        model_answer="The threshold noise $\\rho$ is drawn once …",
    )
    store.close()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    mathjax = find_mathjax()
    command = [sys.executable, "-m", "dpcourse", "mark", str(report), "--port", "0", "--token", TOKEN]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = server.stdout.readline()
            found = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
            url = found.group(0) if found else url
            if not line and server.poll() is not None:
                break
        assert url, "the marking app did not print its URL"
        yield url, report, mathjax
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()


class TA:
    """One marker: a browser context of her own, recording dialogs, requests to other hosts and console errors."""

    def __init__(self, browser, url: str, name: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.host = urlsplit(url).netloc
        self.dialogs: list[str] = []
        self.elsewhere: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        self.context.route("**/*", self._route)
        self.page.goto(url)
        self.page.fill("#marker-name", name)
        self.page.click("header button[type=submit]")
        self.page.wait_for_load_state("load")
        self.base = url.split("?")[0]

    def _route(self, route) -> None:
        if urlsplit(route.request.url).netloc == self.host:
            route.continue_()
        else:
            self.elsewhere.append(route.request.url)
            route.abort()

    def open_group(self, text: str) -> None:
        """Open the question and press j until the answer shown contains ``text``."""
        self.page.goto(self.base + "q/svt-flaw")
        for _ in range(8):
            if text in self.page.inner_text("#answer"):
                return
            with self.page.expect_navigation():
                self.page.keyboard.press("j")
        raise AssertionError(f"no answer group shows {text!r}")

    def wait_saved(self, version: int) -> None:
        self.page.wait_for_function(
            "v => document.getElementById('question').dataset.version === String(v)", arg=version, timeout=30_000
        )


def by_student(report) -> dict[str, object]:
    store = open_store(store_path(report))
    try:
        return {row.student: row for row in marks(store)}
    finally:
        store.close()


def test_two_tas_mark_a_question_with_the_keyboard(marking_app, browser, artifacts):
    url, report, mathjax = marking_app
    ayesha, bruno = TA(browser, url, "Ayesha"), TA(browser, url, "Bruno")
    try:
        # The identical pair is one group, marked once with the keyboard; names hidden until asked.
        ayesha.open_group("threshold's noise")
        page = ayesha.page
        assert "2 identical answers" in page.inner_text("#students")
        assert "alice" not in page.inner_text("body") and "bob" not in page.inner_text("body")
        page.keyboard.press("1")
        ayesha.wait_saved(1)
        page.keyboard.press("2")
        ayesha.wait_saved(2)
        assert page.inner_text("#total") == "4"
        assert page.inner_text("#progress") == "Marked: 1 of 5 groups, 2 of 6 answers."
        if mathjax is not None:
            page.wait_for_selector("body[data-mathjax=done]", timeout=60_000)
            assert page.locator("#answer mjx-container").count() == 1  # $\rho$ typeset by the app's own MathJax
        else:  # no MathJax installed (make book's npm step, or $DPCOURSE_MATHJAX): the page says formulas are TeX
            assert "MathJax was not found" in page.inner_text("body")
        save_screenshot(page, artifacts / "marking_group.png", full_page=True)
        page.click("#names")
        page.wait_for_load_state("load")
        assert "alice, bob" in page.inner_text("#students")

        # Bruno opens the same group (version 2); Ayesha saves a comment (version 3); Bruno's save is refused.
        bruno.open_group("threshold's noise")
        page.fill("#comment", "Right step; say which queries reuse it.")
        page.click("#save")
        ayesha.wait_saved(3)
        bruno.page.keyboard.press("1")
        bruno.page.wait_for_selector("#conflict:not([hidden])", timeout=30_000)
        message = bruno.page.inner_text("#conflict")
        assert "saved by Ayesha" in message and "version 3" in message and "nothing of yours was saved" in message
        save_screenshot(bruno.page, artifacts / "marking_conflict.png", full_page=True)
        assert by_student(report)["alice"].items == ("names-step", "why")  # Bruno's change was not written

        # Bruno marks dan's answer with item 1 (its math typeset), then edits item 1's points: both groups re-scored.
        bruno.open_group("composition")
        bruno.page.keyboard.press("1")
        bruno.wait_saved(1)
        if mathjax is not None:
            bruno.page.wait_for_selector("body[data-mathjax=done]", timeout=60_000)
            assert bruno.page.locator("#answer mjx-container").count() == 2
        item = bruno.page.locator("#items .item").first
        item.locator(".edit").click()
        item.locator(".edit-points").fill("1.5")
        with bruno.page.expect_navigation():
            item.locator("button[type=submit]").click()
        assert bruno.page.inner_text("#total") == "1.5"
        rows = by_student(report)
        assert (rows["alice"].points, rows["bob"].points, rows["dan"].points) == (3.5, 3.5, 1.5)
        assert (
            rows["alice"].comment == "Right step; say which queries reuse it." and rows["alice"].marked_by == "Ayesha"
        )

        # An item added mid-way gets the next key.
        bruno.page.fill("#add-text", "Cites the lecture's Lemma 3")
        bruno.page.fill("#add-points", "1")
        with bruno.page.expect_navigation():
            bruno.page.click("#add-item button")
        assert bruno.page.locator("#items .item").count() == 4
        assert "4" in bruno.page.inner_text("#items .item:nth-child(4) kbd")

        # The hostile answer is inert: nothing ran, nothing was fetched elsewhere, no element has an on* attribute.
        ayesha.open_group("click")
        answer = ayesha.page.inner_html("#answer")
        assert (
            "&lt;script&gt;" in answer
            and "&lt;iframe" in answer
            and "javascript:"
            not in ayesha.page.eval_on_selector_all("#answer a", "links => links.map(a => a.href).join(' ')")
        )
        if mathjax is not None:  # the \\href to javascript: inside $…$ is typeset without a link
            ayesha.page.wait_for_selector("body[data-mathjax=done]", timeout=60_000)
            assert ayesha.page.locator("#answer mjx-container").count() == 1
        handlers = ayesha.page.evaluate(
            "() => [...document.querySelectorAll('*')].flatMap(e => [...e.attributes].map(a => a.name))"
            ".filter(n => n.startsWith('on'))"
        )
        assert handlers == []
        assert ayesha.page.locator("#answer .refused-link").count() == 1  # the javascript: link, shown as text
        assert ayesha.page.locator("#answer img, #answer iframe, #answer style, #answer script").count() == 0
        save_screenshot(ayesha.page, artifacts / "marking_hostile.png", full_page=True)

        # A megabyte of math: cut to 64 KiB, shown as TeX source with the note, not typeset.
        ayesha.open_group("x^{2}")
        assert "answer cut" in ayesha.page.inner_text("#answer")
        assert ayesha.page.locator("#answer mjx-container").count() == 0

        # k goes back; progress per question on the first page.
        with ayesha.page.expect_navigation():
            ayesha.page.keyboard.press("k")
        ayesha.page.goto(url.split("?")[0])
        assert "2 / 5" in ayesha.page.inner_text("table.progress")  # groups marked: the pair and dan's
        assert "3 / 6" in ayesha.page.inner_text("table.progress")
        save_screenshot(ayesha.page, artifacts / "marking_progress.png", full_page=True)
        for ta in (ayesha, bruno):
            assert ta.dialogs == [] and ta.elsewhere == []
            assert [e for e in ta.errors if "Content Security Policy" in e or "uncaught" in e] == []
    finally:
        ayesha.context.close()
        bruno.context.close()
