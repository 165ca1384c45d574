"""The class summary page (grades_summary.html) in headless Chromium: it renders offline, its figure
loads, and it asks the network for nothing. Screenshot: test-artifacts/grades_summary.png."""

from __future__ import annotations

from dpcourse.classroom.gradebook.render import class_summary, write_summary_html
from dpcourse.classroom.gradebook.roster import RosterEntry
from dpcourse.classroom.gradebook.totals import course_totals, hand_in_notes
from tests.classroom.test_gradebook import EXERCISES, LOG, rows
from tests.e2e.conftest import save_screenshot


def test_the_summary_page_renders_offline_with_its_figure(browser, tmp_path, artifacts):
    outline = {"01_first": dict.fromkeys(EXERCISES, 1.0), "02_second": dict.fromkeys(EXERCISES, 2.0)}
    roster = [RosterEntry("carol")]
    totals = course_totals(rows(), outline, roster)
    notes = hand_in_notes(rows(), totals)  # who handed in what: the hostile name is listed, as text
    page_path = write_summary_html(class_summary(rows(), totals), totals, tmp_path / "grades_summary.html", notes)
    requests = []
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    try:
        page.on("request", lambda request: requests.append(request.url))
        page.goto(page_path.as_uri())
        width = page.eval_on_selector("img", "image => image.complete ? image.naturalWidth : 0")
        text = page.inner_text("body")
        scripts = page.eval_on_selector_all("script", "found => found.length")
        save_screenshot(page, artifacts / "grades_summary.png", full_page=True)
    finally:
        page.close()
    assert width > 300  # the embedded histogram decoded
    assert text.count("4 students") == 1 and scripts == 0  # the hostile name is shown as text, never run
    assert "<script>alert(1)</script>" in text and "not handed in" in text
    assert f"2 × {LOG}" in text and "1 × other wrong answers" in text
    assert [url for url in requests if not url.startswith(("file:", "data:"))] == []
