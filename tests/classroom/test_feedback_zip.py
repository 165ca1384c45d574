"""The feedback zip for Canvas's Re-Upload Submissions: built from a download zip in Canvas's format (accented and
apostrophe names, a LATE mark, a resubmission's -1 file, a text entry), collected, graded into feedback as grade
--feedback writes it, then zipped; each member named as Canvas names that student's file and read back by Canvas's
own rule, each holding only that student's feedback, hostile text inert."""

from __future__ import annotations

import html
import os
import re
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from dpcourse.classroom.cli import main
from dpcourse.classroom.course import load_course
from dpcourse.classroom.gradebook.feedback import feedback_name
from dpcourse.classroom.gradebook.roster import read_collected
from dpcourse.classroom.grading.reports import GradeRow
from dpcourse.classroom.lms.canvas.feedback_zip import FEEDBACK_MEMBER, canvas_feedback_zip, canvas_reads, feedback_html
from dpcourse.classroom.lms.collect import collect_canvas
from dpcourse.classroom.outputs import write_gradebook

STEMS = ("01_first", "02_second")
EXERCISES = ("e1", "e2")
OUTLINE = {stem: dict.fromkeys(EXERCISES, 1.0) for stem in STEMS}
COURSE = """
[assignments.week1]
name = "Week 1"
notebooks = ["01_first", "02_second"]
due = 2026-10-05T23:59:00+00:00
"""
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)> [click](javascript:alert(3))"

# Member names as canvas-lms lib/content_zipper.rb writes them: the sortable name lower-cased with every non-word
# character removed ("O'Brien, Seán" -> "obrienseán", "Müller, José" -> "müllerjosé"), LATE, the user id, then
# the attachment id and the uploaded file's display name (a file uploaded again under the same name is "-1").
DOWNLOAD = {
    "doejane_101_9001_01_first.ipynb": ("01_first", "jane one"),
    "doejane_101_9002_02_second.ipynb": ("02_second", "jane two"),
    "obrienseán_LATE_102_9003_01_first.ipynb": ("01_first", "sean"),
    "müllerjosé_103_9004_01_first.ipynb": ("01_first", "jose old"),
    "müllerjosé_103_9010_01_first-1.ipynb": ("01_first", "jose resubmitted"),
    "zedann_104_9005_01_first.ipynb": ("01_first", "ann, not graded"),
    "evileve_105_9006_01_first_102_9003_x.ipynb": ("01_first", "eve, whose upload name mimics sean's ids"),
    "textonly_106_text.html": (None, "<p>a text entry</p>"),
    "pdfonly_108_9200_answers.pdf": (None, "%PDF-1.4 a PDF instead of the notebook"),
}
FOLDERS = {
    "101": "doejane",
    "102": "obrienseán",
    "103": "müllerjosé",
    "104": "zedann",
    "105": "evileve",
    "108": "pdfonly",
}


def notebook(stem: str, marker: str) -> bytes:
    cells = [nbformat.v4.new_markdown_cell(marker)]
    for exercise in EXERCISES:
        cell = nbformat.v4.new_code_cell("answer = 1", metadata={"dpcourse": {"exercise": exercise}})
        cell["id"] = f"{stem}-{exercise}"
        cells.append(cell)
    return nbformat.writes(nbformat.v4.new_notebook(cells=cells)).encode()


@pytest.fixture
def source(tmp_path):
    folder = tmp_path / "source"
    folder.mkdir()
    for stem in STEMS:
        (folder / f"{stem}.ipynb").write_bytes(notebook(stem, f"# {stem}"))
    return folder


def canvas_download(path: Path, members=DOWNLOAD) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, (stem, marker) in members.items():
            archive.writestr(name, notebook(stem, marker) if stem else marker.encode())
    return path


def graded_rows() -> list[GradeRow]:
    """Every student's rows but ann's (104), who was not graded; eve's check message quotes hostile text."""
    found = []
    for student in ("doejane", "obrienseán", "müllerjosé", "evileve"):
        for stem in STEMS if student == "doejane" else STEMS[:1]:
            for exercise in EXERCISES:
                message = HOSTILE if student == "evileve" else f"{student} {stem} {exercise} ok"
                status = "failed" if student == "evileve" else "passed"
                found.append(GradeRow(student, stem, exercise, status, float(status == "passed"), 1.0, message))
    return found


@pytest.fixture
def pipeline(tmp_path, source):
    """Download → collect canvas → grade's feedback (write_gradebook, as grade --feedback calls it) → the zip."""
    download = canvas_download(tmp_path / "submissions.zip")
    collected = tmp_path / "collected"
    collect_canvas(download, collected, notebooks=source)
    course_file = tmp_path / "course.toml"
    course_file.write_text(COURSE)
    feedback = tmp_path / "feedback"
    write_gradebook(
        graded_rows(),
        OUTLINE,
        report=tmp_path / "grades.csv",
        feedback=feedback,
        course=load_course(course_file, OUTLINE),
        submissions=read_collected(collected / "collected.csv"),
    )
    out = tmp_path / "feedback.zip"
    result = canvas_feedback_zip(collected / "collected.csv", feedback, out)
    with zipfile.ZipFile(out) as archive:
        pages = {name: archive.read(name).decode() for name in archive.namelist()}
    return {"result": result, "pages": pages, "feedback": feedback, "download": download, "out": out}


def download_files(download: Path) -> dict[str, set[str]]:
    """User id → the attachment ids Canvas's download shows for that user (as Canvas knows its submission)."""
    files: dict[str, set[str]] = {}
    with zipfile.ZipFile(download) as archive:
        for name in archive.namelist():
            tokens = name.split("_")
            at = next(i for i, t in enumerate(tokens) if t.isdigit())
            if tokens[at + 1].isdigit():
                files.setdefault(tokens[at], set()).add(tokens[at + 1])
    return files


def test_every_member_is_read_by_canvas_as_its_students_file_with_the_downloads_name(pipeline):
    files = download_files(pipeline["download"])
    names = sorted(pipeline["pages"])
    assert names == sorted(
        [
            "doejane_101_9001_feedback.html",  # the first notebook of the assignment's kept file
            "evileve_105_9006_feedback.html",  # her upload's name (with sean's ids in it) is dropped
            "müllerjosé_103_9010_feedback.html",  # the resubmission's file, the one Canvas holds now
            "obrienseán_LATE_102_9003_feedback.html",  # Canvas's name part and LATE mark, as the download had them
            "pdfonly_108_9200_feedback.html",  # no notebook collected: told why, on her PDF's submission
        ]
    )
    for name in names:
        user, attachment = canvas_reads(name)
        assert attachment in files[user]  # Canvas finds the attachment among that user's submission's files
        prefix = name[: -len(FEEDBACK_MEMBER)]
        assert any(member.startswith(prefix) for member in DOWNLOAD)  # byte for byte the download's head
        assert name.split("_")[0] == FOLDERS[user]
    assert not any("_104_" in name for name in names)  # ann was not graded: nothing for her
    assert not any("_106_" in name for name in names)  # a text entry has no attachment to comment on


def text_of(page: str) -> str:
    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    parser = Text()
    parser.feed(page)
    return "".join(parser.parts)


def test_each_member_is_that_students_feedback_rendered_one_page_per_assignment(pipeline):
    pages = pipeline["pages"]
    jane = pages["doejane_101_9001_feedback.html"]
    assert jane.startswith("<!DOCTYPE html>")
    # both notebooks of the assignment in one file, in order, rendered from the Markdown grade wrote
    assert jane.index("<h1>01_first: feedback for doejane</h1>") < jane.index("<h1>02_second: feedback for doejane")
    for stem in STEMS:
        markdown = (pipeline["feedback"] / "doejane" / f"{stem}.md").read_text()
        assert "**" in markdown and "<strong>" in jane  # Markdown became HTML
        assert f"doejane {stem} e1 ok" in text_of(jane)
    sean = text_of(pages["obrienseán_LATE_102_9003_feedback.html"])
    assert "feedback for obrienseán" in sean and "marked late" in sean
    assert "02_second" in sean and "Nothing was handed in for this notebook." in sean
    for name, page in pages.items():  # nobody's page holds another student's feedback
        others = {s for s in FOLDERS.values() if not name.startswith(s)}
        assert not any(f"feedback for {s}" in page for s in others), name
    pdf = text_of(pages["pdfonly_108_9200_feedback.html"])
    assert "Files of pdfonly that were not graded" in pdf and "answers.pdf" in pdf
    result = pipeline["result"]
    assert {m.student: m.sections for m in result.members}["doejane"] == STEMS
    assert {m.student: m.sections for m in result.members}["pdfonly"] == ("not-graded",)
    assert dict(result.left_out)["zedann"].startswith("no feedback")


def test_a_students_hostile_text_is_escaped(pipeline):
    eve = pipeline["pages"]["evileve_105_9006_feedback.html"]
    assert "<script" not in eve and "<img" not in eve and "href" not in eve
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in eve
    assert "<script>alert(1)</script>" in html.unescape(text_of(eve))  # shown as text, literally
    assert not re.search(r"<a\s", eve)  # the student's [click](…) is no link


def test_anonymous_downloads_are_refused_and_a_second_run_needs_force(tmp_path, source, pipeline):
    anonymous = canvas_download(
        tmp_path / "anonymous.zip",
        {"anon_Xk3p9_9001_01_first.ipynb": ("01_first", "a"), "anon_Q7w2z_9002_01_first.ipynb": ("01_first", "b")},
    )
    collect_canvas(anonymous, tmp_path / "anon", notebooks=source)
    with pytest.raises(ValueError, match="anonymous download"):
        canvas_feedback_zip(tmp_path / "anon" / "collected.csv", pipeline["feedback"], tmp_path / "a.zip")
    assert not (tmp_path / "a.zip").exists()
    with pytest.raises(ValueError, match="exists"):
        canvas_feedback_zip(tmp_path / "collected" / "collected.csv", pipeline["feedback"], pipeline["out"])
    again = canvas_feedback_zip(
        tmp_path / "collected" / "collected.csv", pipeline["feedback"], pipeline["out"], force=True
    )
    assert again.members == pipeline["result"].members


def test_rows_giving_one_canvas_account_to_two_students_send_neither_anything(tmp_path, pipeline):
    table = (tmp_path / "collected" / "collected.csv").read_text(encoding="utf-8")
    forged = table.replace("evileve_105_9006", "evileve_101_9006")  # eve's row now names jane's account
    (tmp_path / "forged.csv").write_text(forged, encoding="utf-8")
    result = canvas_feedback_zip(tmp_path / "forged.csv", pipeline["feedback"], tmp_path / "forged.zip")
    assert {m.student for m in result.members} == {"obrienseán", "müllerjosé", "pdfonly"}
    left = dict(result.left_out)
    assert "also" in left["doejane"] and "also" in left["evileve"]


def test_a_feedback_file_that_is_a_link_or_a_fifo_is_left_out_named_and_never_read(tmp_path, pipeline):
    feedback = pipeline["feedback"]
    eve = feedback / "evileve" / "01_first.md"
    eve.unlink()
    eve.symlink_to(feedback / "doejane" / "01_first.md")  # would send jane's feedback to eve
    sean = feedback / feedback_name("obrienseán") / "01_first.md"
    sean.unlink()
    os.mkfifo(sean)  # reading it would wait for a writer forever
    result = canvas_feedback_zip(tmp_path / "collected" / "collected.csv", feedback, tmp_path / "links.zip")
    left = dict(result.left_out)
    sent = {m.student: m.sections for m in result.members}
    assert sent["evileve"] == ("02_second",) and "01_first.md left out" in left["evileve"]  # jane's text not sent
    assert sent["obrienseán"] == ("02_second",) and "not a regular file" in left["obrienseán"]


def test_canvas_reads_names_as_its_reupload_does():
    assert canvas_reads("doejane_101_9001_feedback.html") == ("101", "9001")
    assert canvas_reads("obrienseán_LATE_102_9003_x_7_y.html") == ("102", "9003")
    assert canvas_reads("doejane_101_link.html") is None  # a URL submission: no attachment
    assert canvas_reads("._doejane_101_9001_x.html") is None  # a Mac's resource fork
    assert canvas_reads("doejane_101_text.html") is None


def test_a_name_over_255_bytes_is_shortened_and_canvas_still_reads_its_ids(tmp_path, source):
    # 235 bytes of name: shortened to 232 it would end in "_12", a number Canvas would take for the user id
    long_name = "a" * 229 + "_12xyz"
    members = {f"{long_name}_107_9100_01_first.ipynb": ("01_first", "long")}
    collect_canvas(canvas_download(tmp_path / "long.zip", members), tmp_path / "long", notebooks=source)
    (student,) = [p.name for p in (tmp_path / "long").iterdir() if p.is_dir()]
    folder = tmp_path / "fb" / feedback_name(student)
    folder.mkdir(parents=True)
    (folder / "01_first.md").write_text("# fine\n")
    result = canvas_feedback_zip(tmp_path / "long" / "collected.csv", tmp_path / "fb", tmp_path / "long-fb.zip")
    (member,) = result.members
    assert len(member.member.encode()) <= 255
    assert canvas_reads(member.member) == ("107", "9100")
    assert member.member == "_107_9100_feedback.html"  # the name part dropped rather than misread


def test_raw_html_and_harmful_links_in_the_markdown_itself_are_inert():
    # a feedback file edited by hand, not escaped by grade: mistune's escape=True still shows it as text
    page = feedback_html("<b>x</b>", ["# t\n\n<script>alert(1)</script>\n\n[a](javascript:alert(2)) <img src=x>\n"])
    assert "<script" not in page and "<img" not in page and "javascript:" not in page and "<b>" not in page
    assert "&lt;script&gt;" in page


def test_the_command_writes_the_zip_and_prints_who_was_left_out(tmp_path, pipeline, capsys):
    out = tmp_path / "again.zip"
    status = main(
        [
            "feedback",
            "canvas",
            str(tmp_path / "collected" / "collected.csv"),
            "--feedback",
            str(pipeline["feedback"]),
            "--out",
            str(out),
            "--notebook",
            "01_first",
            "--notebook",
            "02_second",
        ]
    )
    printed = capsys.readouterr()
    assert status == 0, printed.err
    assert "5 students' feedback" in printed.out and "zedann: no feedback" in printed.out
    with zipfile.ZipFile(out) as archive:
        assert sorted(archive.namelist()) == sorted(pipeline["pages"])
    assert (
        main(
            [
                "feedback",
                "canvas",
                str(tmp_path / "nowhere.csv"),
                "--feedback",
                str(tmp_path),
                "--out",
                str(tmp_path / "x.zip"),
            ]
        )
        == 2
    )
    assert "feedback:" in capsys.readouterr().err
    for name, text in (("nul.csv", "student,notebook\0\n"), ("other.csv", "a,b\n1,2\n")):
        (tmp_path / name).write_text(text)
        argv = [
            "feedback",
            "canvas",
            str(tmp_path / name),
            "--feedback",
            str(tmp_path),
            "--out",
            str(tmp_path / "y.zip"),
        ]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("feedback: ") and err.count("\n") == 1, err
    assert not (tmp_path / "y.zip").exists()
