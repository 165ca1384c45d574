"""Issue 42's done-when, end to end: a batch with a written exercise of notebook 04 graded, held back from the LMS
files while unmarked, marked by two TAs in two Chromium contexts with the keyboard (one rubric item applied to a
group of identical answers, an item's points edited, a conflicting save refused), then ``grade --merge``: the
totals, the Canvas and Gradescope files, the feedback and the class summary carry the marks.

The report's rows are built here, as ``grade`` writes them for written answers (``needs marking``, 0 of the
maximum) with the code exercises passed; the answers go to the marks database as ``grade`` puts them there
(:func:`~dpcourse.classroom.marking.store.add_answers`). ``grade --merge`` runs in this process, with the outline
given: this test's written exercise in place of the notebook's own (grading a submission's written answer into
these rows is tests/classroom/test_grade_written.py's). The marking app is its own process on
127.0.0.1, stopped by its process id. Screenshots: test-artifacts/marks_*.png.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from dpcourse.classroom.cli import main
from dpcourse.classroom.grading.plan import read_outline, read_written
from dpcourse.classroom.grading.reports import GradeRow, read_report, write_report
from dpcourse.classroom.marking import add_answers, check_rubric, marks, open_store, store_path
from tests.e2e.conftest import ROOT, save_screenshot

NOTEBOOK = "04_above_threshold_proof"
EXERCISE = "at-proof"
TOKEN = "e2e-marks-token-0123456789"
RUBRIC = check_rubric(
    4,
    [
        {"id": "coupling", "text": "Couples the noisy threshold of D and D'", "points": 2},
        {"id": "shift", "text": "Shifts the query noise by 2Δ on the stopping query", "points": 2},
        {"id": "claims-delta", "text": "Claims a δ > 0 is needed", "points": -1},
    ],
)
ANSWERS = {
    "alice": "Couple the thresholds: $\\hat T' = \\hat T + \\Delta$, then shift the last query's noise by $2\\Delta$.",
    "bob": "couple the thresholds:  $\\hat T' = \\hat T + \\Delta$, then shift the last query's noise by $2\\Delta$.\n",
    "carol": "By composition over the k queries the loss is $k\\varepsilon$, so <b>δ</b> > 0 is needed.",
    "dan": "The noise hides every answer.",
}
COMMENT = "Right coupling; =say which query stops <script>alert(1)</script>"


def outline() -> dict[str, dict[str, float]]:
    """Notebook 04's code exercises and this test's written one (the notebook's own written exercise left out, so
    that the rubric and its keys are the ones this test presses)."""
    own = {w.exercise for w in read_written(ROOT / "notebooks").get(NOTEBOOK, [])}
    code = {ex: p for ex, p in read_outline(ROOT / "notebooks")[NOTEBOOK].items() if ex not in own}
    return {NOTEBOOK: {**code, EXERCISE: RUBRIC.points}}


@pytest.fixture
def batch(tmp_path, monkeypatch):
    """The graded batch: its report and marks database, as ``grade`` leaves them."""
    rows = []
    for student in ANSWERS:
        rows += [GradeRow(student, NOTEBOOK, ex, "passed", 1.0, 1.0) for ex in outline()[NOTEBOOK] if ex != EXERCISE]
        rows.append(
            GradeRow(student, NOTEBOOK, EXERCISE, "needs marking", 0.0, 4.0, "a written answer, marked by hand")
        )
    report = tmp_path / "grades.csv"
    write_report(rows, report)
    store = open_store(store_path(report))
    add_answers(store, EXERCISE, RUBRIC, ANSWERS.items(), prompt="Prove that AboveThreshold is ε-DP.")
    store.close()
    monkeypatch.setattr("dpcourse.classroom.cli.grade.read_outline", lambda source: outline())
    return report


@pytest.fixture
def app(batch):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "dpcourse", "mark", str(batch), "--port", "0", "--token", TOKEN]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url, deadline = None, time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = server.stdout.readline()
            found = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
            url = found.group(0) if found else None
            if not line and server.poll() is not None:
                break
        assert url, "the marking app did not print its URL"
        yield url
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()


class TA:
    """One marker in a browser context of her own; requests to other hosts are refused and recorded."""

    def __init__(self, browser, url: str, name: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        host = urlsplit(url).netloc
        self.elsewhere: list[str] = []
        self.context.route(
            "**/*",
            lambda route: (
                route.continue_()
                if urlsplit(route.request.url).netloc == host
                else (self.elsewhere.append(route.request.url), route.abort())
            ),
        )
        self.page.goto(url)
        self.page.fill("#marker-name", name)
        self.page.click("header button[type=submit]")
        self.page.wait_for_load_state("load")
        self.base = url.split("?")[0]

    def open_group(self, text: str) -> None:
        """Open the question and press j until the answer shown contains ``text``."""
        self.page.goto(self.base + f"q/{EXERCISE}")
        for _ in range(6):
            if text in self.page.inner_text("#answer"):
                return
            with self.page.expect_navigation():
                self.page.keyboard.press("j")
        raise AssertionError(f"no answer group shows {text!r}")

    def press(self, key: str, version: int) -> None:
        """Press a rubric item's key and wait until the save of ``version`` is shown."""
        self.page.keyboard.press(key)
        self.wait_saved(version)

    def wait_saved(self, version: int) -> None:
        """Wait until the page shows the save of ``version`` (a function, not a string: the CSP forbids eval)."""
        self.page.wait_for_function(
            "v => document.getElementById('question').dataset.version === String(v)", arg=version, timeout=30_000
        )


def grade_merge(report, *extra):
    final = report.with_name("final.csv")
    args = ["grade", "--merge", str(report), "--report", str(final), "--gradebook", "canvas"]
    args += ["--gradebook", "gradescope", "--feedback", str(report.parent / "feedback"), *extra]
    return main(args), final


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_marks_from_two_tas_reach_the_totals_lms_files_and_feedback(app, batch, browser, artifacts, capsys):
    folder = batch.parent
    code_points = len(outline()[NOTEBOOK]) - 1

    # Graded, nothing marked: the totals say what is unmarked; no LMS file, no feedback; one line says why.
    status, final = grade_merge(batch)
    out = capsys.readouterr().out
    assert status == 0
    held = [line for line in out.splitlines() if line.strip().startswith("held back:")]
    assert len(held) == 1 and f"{NOTEBOOK} has 4 written answers not marked yet (16 points)" in held[0]
    assert f"mark them (python -m dpcourse mark {batch}), then run this same grade command again" in held[0]
    assert "add --write-with-unmarked to write them now" in held[0]
    assert not (folder / "final_canvas.csv").exists() and not (folder / "feedback").exists()
    assert not list(folder.glob("final_gradescope*"))
    assert read_csv(folder / "final_totals.csv")[1][-1] == "4"  # alice's unmarked points
    viewer = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
    viewer.goto((folder / "final_summary.html").as_uri())
    assert re.search(rf"{NOTEBOOK}\s+4\s+16", viewer.inner_text("#unmarked"))
    assert "written: 0 marked, 4 to mark" in viewer.inner_text("body")
    save_screenshot(viewer, artifacts / "marks_summary_unmarked.png", full_page=True)
    viewer.context.close()

    ayesha, bruno = TA(browser, app, "Ayesha"), TA(browser, app, "Bruno")
    try:
        # One rubric item applied to the group of alice's and bob's identical answers, with the keyboard.
        ayesha.open_group("Couple the thresholds")
        assert "2 identical answers" in ayesha.page.inner_text("#students")
        ayesha.press("1", 1)
        ayesha.press("2", 2)
        save_screenshot(ayesha.page, artifacts / "marks_group.png", full_page=True)

        # Bruno reads the same group; Ayesha saves a comment; Bruno's save is refused, nothing of his written.
        bruno.open_group("Couple the thresholds")
        ayesha.page.fill("#comment", COMMENT)
        ayesha.page.click("#save")
        ayesha.wait_saved(3)
        bruno.page.keyboard.press("3")
        bruno.page.wait_for_selector("#conflict:not([hidden])", timeout=30_000)
        assert "saved by Ayesha" in bruno.page.inner_text("#conflict")
        save_screenshot(bruno.page, artifacts / "marks_conflict.png", full_page=True)

        # Bruno marks carol's and dan's answers, then edits item 2's points: every answer marked with it re-scored.
        bruno.open_group("By composition")
        bruno.press("3", 1)
        bruno.open_group("The noise hides")
        bruno.press("2", 1)
        item = bruno.page.locator("#items .item").nth(1)
        item.locator(".edit").click()
        item.locator(".edit-points").fill("1.5")
        with bruno.page.expect_navigation():
            item.locator("button[type=submit]").click()
        assert bruno.page.inner_text("#total") == "1.5"
        bruno.page.goto(app.split("?")[0])
        assert "4 / 4" in bruno.page.inner_text("table.progress")
        save_screenshot(bruno.page, artifacts / "marks_progress.png", full_page=True)
        assert ayesha.elsewhere == [] and bruno.elsewhere == []
    finally:
        ayesha.context.close()
        bruno.context.close()

    store = open_store(store_path(batch))
    stored = {row.student: row.points for row in marks(store)}
    store.close()
    assert stored == {"alice": 3.5, "bob": 3.5, "carol": 0.0, "dan": 1.5}

    # Merged: the report, totals, Canvas and Gradescope files and feedback carry the marks.
    status, final = grade_merge(batch)
    out = capsys.readouterr().out
    assert status == 0 and "written answers: 4 marked, 0 not marked yet" in out and "held back" not in out
    assert {r.student: r.points for r in read_report(final) if r.exercise == EXERCISE} == stored
    expected = {s: str(code_points + p).removesuffix(".0") for s, p in stored.items()}
    canvas = read_csv(folder / "final_canvas.csv")
    assert {row[0]: row[-1] for row in canvas[2:]} == {s: expected[s] for s in ANSWERS}  # Student column first
    totals = read_csv(folder / "final_totals.csv")
    assert totals[0][-1] == "max" and {row[0]: row[1] for row in totals[1:]} == expected
    (gradescope,) = folder.glob("final_gradescope*.csv")
    assert sorted(row[-1] for row in read_csv(gradescope)[1:]) == sorted(expected.values())
    feedback = (folder / "feedback" / "alice" / f"{NOTEBOOK}.md").read_text()
    assert f"## {EXERCISE}: marked (3.5/4)" in feedback
    assert "- \\+ 2: Couples the noisy threshold of D and D'" in feedback
    assert "- \\+ 1.5: Shifts the query noise by 2Δ on the stopping query" in feedback
    assert "- comment: Right coupling; =say which query stops \\<script>alert(1)\\</script>" in feedback
    summary = folder / "final_summary.html"
    assert "<script>alert" not in summary.read_text()
    viewer = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
    viewer.goto(summary.as_uri())
    rubric = viewer.inner_text("#rubric")
    assert re.search(r"Couples the noisy threshold of D and D'\s+2\s+2 of 4", rubric)
    assert re.search(r"Claims a δ > 0 is needed\s+-1\s+1 of 4", rubric)
    viewer.locator("#rubric").scroll_into_view_if_needed()
    save_screenshot(viewer, artifacts / "marks_summary.png", full_page=True)
    viewer.context.close()
