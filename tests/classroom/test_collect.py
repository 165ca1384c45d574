"""Collecting an LMS's download into DIR/<student>/<notebook>.ipynb: Canvas's and Gradescope's real archive
formats, today's folders with browser duplicates, the roster, and every kind of hostile input."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import resource
import stat
import struct
import tracemalloc
import unicodedata
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import pytest

from dpcourse.classroom.cli.collect import add_collect_command
from dpcourse.classroom.gradebook.roster import read_collected, read_roster
from dpcourse.classroom.grading.plan import pick_graded
from dpcourse.classroom.lms.collect import (
    CollectError,
    CollectLimits,
    collect_canvas,
    collect_folders,
    collect_gradescope,
    safe_student,
)
from dpcourse.classroom.lms.collected import COLUMNS

STEMS = ("01_laplace_utility", "02_rr_vs_laplace", "03_threshold_query_trees")
NOT_COURSE = "not a notebook of this course"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def course(tmp_path):
    """Three small course notebooks; each has its own cell ids and exercise ids, so content can name it."""
    folder = tmp_path / "source"
    folder.mkdir()
    for number, stem in enumerate(STEMS, start=1):
        cells = [nbformat.v4.new_markdown_cell(f"# Notebook {number}")]
        for exercise in range(2):
            cell = nbformat.v4.new_code_cell(
                "answer = ...", metadata={"dpcourse": {"exercise": f"nb{number}-{exercise}"}}
            )
            cell["id"] = f"nb{number}-cell{exercise}"
            cells.append(cell)
        nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / f"{stem}.ipynb")
    return folder


def submitted(marker: str, like: str = STEMS[0]) -> bytes:
    """A student's notebook whose first cell says which file it was (to see which one was kept)."""
    number = STEMS.index(like) + 1
    cells = [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": marker}]
    cells += [
        {
            "cell_type": "code",
            "id": f"nb{number}-cell{e}",
            "metadata": {"dpcourse": {"exercise": f"nb{number}-{e}"}},
            "source": "answer = 1",
            "outputs": [],
            "execution_count": None,
        }
        for e in range(2)
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def marker(path: Path) -> str:
    return json.loads(path.read_bytes())["cells"][0]["source"]


def link_member(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    """A zip symlink entry, as Info-ZIP's ``zip --symlinks`` writes it: Unix mode S_IFLNK, the target as data."""
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def write_zip(path: Path, members) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def read_csv(out: Path) -> list[dict[str, str]]:
    with open(out / "collected.csv", newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        return list(reader)


def by_source(rows: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {row["source_file"]: row for row in rows}


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()}


# --------------------------------------------------------------------------- Canvas

# Member names as canvas-lms lib/content_zipper.rb writes them: get_filename joins the sortable name (lower-cased,
# only word characters: "Doe, Jane" -> "doejane"), "LATE" for a late submission and the user id, then
# add_upload_submission appends the attachment id and the uploaded file's display name; a file uploaded again under
# the same name is "name-1.ipynb" (Attachment.make_unique_filename). Anonymous grading: "anon_<anonymous id>"
# in place of name and user id.
NFD_NAME = unicodedata.normalize("NFD", "müllerjosé")


def canvas_zip(folder: Path) -> Path:
    return write_zip(
        folder / "submissions.zip",
        [
            ("doejane_123456_7890001_01_laplace_utility.ipynb", submitted("jane first")),
            ("doejane_LATE_123456_7890002_01_laplace_utility-1.ipynb", submitted("jane resubmitted")),
            ("doejane_123456_7890003_02_rr_vs_laplace.ipynb", submitted("jane 02", STEMS[1])),
            (f"{NFD_NAME}_223344_7890004_01_laplace_utility.ipynb", submitted("jose")),
            ("smithbob_334455_7890005_notes.txt", b"my notes"),
            ("smithbob_334455_7890006_Untitled.ipynb", submitted("bob untitled", STEMS[2])),
            ("../doejane_123456_7890011_01_laplace_utility-5.ipynb", submitted("escaped")),
            link_member("doejane_123456_7890009_01_laplace_utility-2.ipynb", "/etc/passwd"),
        ],
    )


def test_canvas_keeps_the_resubmission_marks_it_late_and_names_the_student_by_the_sortable_name(tmp_path, course):
    out = tmp_path / "out"
    result = collect_canvas(canvas_zip(tmp_path), out, notebooks=course)
    assert marker(out / "doejane" / "01_laplace_utility.ipynb") == "jane resubmitted"
    assert marker(out / "doejane" / "02_rr_vs_laplace.ipynb") == "jane 02"
    assert marker(out / "müllerjosé" / "01_laplace_utility.ipynb") == "jose"  # NFC, whatever the zip said
    assert marker(out / "smithbob" / "03_threshold_query_trees.ipynb") == "bob untitled"  # matched by its cells
    assert files_under(out) == {
        "collected.csv",
        "doejane/01_laplace_utility.ipynb",
        "doejane/02_rr_vs_laplace.ipynb",
        "müllerjosé/01_laplace_utility.ipynb",
        "smithbob/03_threshold_query_trees.ipynb",
    }
    assert result.students == ["doejane", "müllerjosé", "smithbob"]

    rows = by_source(read_csv(out))
    assert len(rows) == 8  # every member of the archive
    late = rows["doejane_LATE_123456_7890002_01_laplace_utility-1.ipynb"]
    assert (late["student"], late["notebook"], late["kept"], late["late"]) == (
        "doejane",
        "01_laplace_utility",
        "true",
        "true",
    )
    first = rows["doejane_123456_7890001_01_laplace_utility.ipynb"]
    assert (first["kept"], first["late"], first["submitted_at"]) == ("false", "false", "")
    assert first["note"].startswith("older submission")
    notes = rows["smithbob_334455_7890005_notes.txt"]
    assert (notes["student"], notes["note"]) == ("smithbob", "not a notebook of this course")  # still his
    assert rows["smithbob_334455_7890006_Untitled.ipynb"]["note"] == (
        "named 'Untitled.ipynb'; 03_threshold_query_trees by its cells"
    )
    assert rows["../doejane_123456_7890011_01_laplace_utility-5.ipynb"]["note"] == "unsafe path"
    link = rows["doejane_123456_7890009_01_laplace_utility-2.ipynb"]
    assert link["note"].startswith("a link") and (link["student"], link["kept"]) == ("doejane", "false")
    assert rows["../doejane_123456_7890011_01_laplace_utility-5.ipynb"]["student"] == ""  # not Canvas's name
    assert not (tmp_path / "doejane_123456_7890011_01_laplace_utility-5.ipynb").exists()

    summary = result.summary()
    assert "3 students, 4 notebooks kept" in summary and "older files, not kept: 1" in summary
    assert "late (kept): 1" in summary and "ignored: 3" in summary and "unsafe path" in summary
    assert "smithbob: smithbob_334455_7890005_notes.txt: not a notebook of this course" in summary


def test_canvas_with_a_roster_uses_its_ids_and_lists_students_not_on_it(tmp_path, course):
    roster = tmp_path / "roster.csv"
    roster.write_text("student,canvas_id\njdoe,123456\njmuller,223344\n")
    out = tmp_path / "out"
    result = collect_canvas(canvas_zip(tmp_path), out, roster=read_roster(roster), notebooks=course)
    assert result.students == ["jdoe", "jmuller"]
    rows = by_source(read_csv(out))
    bob = rows["smithbob_334455_7890006_Untitled.ipynb"]
    assert (bob["student"], bob["kept"]) == ("", "false") and bob["note"].startswith("not on the roster")
    assert "334455" in bob["note"]
    assert not (out / "smithbob").exists()
    assert result.absent == ()


def test_canvas_anonymous_grading_names_members_by_the_anonymous_id(tmp_path, course):
    archive = write_zip(
        tmp_path / "anonymous.zip",
        [
            ("LATE_anon_x7Yz9_7890008_01_laplace_utility.ipynb", submitted("anonymous")),
            ("anon_Q2w3E_7890009_01_laplace_utility.ipynb", submitted("other")),
            ("anon_Q2w3E_text.html", b"<p>my answer</p>"),
        ],
    )
    out = tmp_path / "out"
    result = collect_canvas(archive, out, notebooks=course)
    assert marker(out / "anon_x7Yz9" / "01_laplace_utility.ipynb") == "anonymous"
    assert marker(out / "anon_Q2w3E" / "01_laplace_utility.ipynb") == "other"
    rows = by_source(read_csv(out))
    assert rows["LATE_anon_x7Yz9_7890008_01_laplace_utility.ipynb"]["late"] == "true"
    assert rows["anon_Q2w3E_text.html"]["student"] == "anon_Q2w3E"  # a text entry: hers, not a notebook
    assert result.students == ["anon_Q2w3E", "anon_x7Yz9"]


def test_canvas_quiz_uploads_and_colliding_sortable_names(tmp_path, course):
    """Quizzes::QuizSubmissionZipper's own download: "<name><user id>_question_<id>_<file id>_<file>", no late
    mark. In an assignment's download, two students whose sortable names are both "leeann" must not be merged."""
    quiz = write_zip(
        tmp_path / "quiz.zip",
        [
            ("doe_jane123456_question_42_7890010_02_rr_vs_laplace.ipynb", submitted("quiz", STEMS[1])),
            ("smith_bob334455_question_42_7890011_02_rr_vs_laplace.ipynb", submitted("bob's quiz", STEMS[1])),
        ],
    )
    out = tmp_path / "out"
    result = collect_canvas(quiz, out, notebooks=course)
    assert marker(out / "doe_jane" / "02_rr_vs_laplace.ipynb") == "quiz"
    assert marker(out / "smith_bob" / "02_rr_vs_laplace.ipynb") == "bob's quiz"
    row = by_source(read_csv(out))["doe_jane123456_question_42_7890010_02_rr_vs_laplace.ipynb"]
    assert row["late"] == "" and len(result.kept) == 2

    archive = write_zip(
        tmp_path / "same_names.zip",
        [
            ("leeann_111_501_01_laplace_utility.ipynb", submitted("first lee")),
            ("leeann_222_502_01_laplace_utility.ipynb", submitted("second lee")),
        ],
    )
    result = collect_canvas(archive, tmp_path / "out2", notebooks=course)
    assert marker(tmp_path / "out2" / "leeann_111" / "01_laplace_utility.ipynb") == "first lee"
    assert marker(tmp_path / "out2" / "leeann_222" / "01_laplace_utility.ipynb") == "second lee"
    assert len(result.kept) == 2


# --------------------------------------------------------------------------- Gradescope

# submission_metadata.yml as Gradescope's Export Submissions writes it: folder -> Ruby-symbol keys; the key names
# (:submitters with :name, :sid, :email; :created_at; :score; :history) are the ones public parsers of the export
# read, and the time format ("2026-04-26 17:34:00.861687000 Z") and the "assignment_<id>_export/" top folder are
# those of a public test fixture of a Gradescope-export reader. Ruby objects (BigDecimal scores) carry Ruby tags.
METADATA = """\
submission_401:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1001'
    :email: ada@example.edu
  :created_at: 2026-11-20 10:00:00.123456000 Z
  :score: !ruby/object:BigDecimal 18:0.1e2
  :history: []
submission_405:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1001'
    :email: ada@example.edu
  :created_at: 2026-11-20 12:00:00.000000000 Z
  :score: 8.0
  :history:
  - :id: 401
    :created_at: 2026-11-20 10:00:00.123456000 Z
    :score: 10.0
submission_403:
  :submitters:
  - :name: Bob Stone
    :sid: '1002'
    :email: Bob.Stone@example.edu
  - :name: Carol Wu
    :sid: '1003'
    :email: cwu@example.edu
  :created_at: 2026-11-21 09:30:00.000000000 Z
  :score: 7.0
submission_404:
  :submitters:
  - :name: Dan Late
    :sid: 1004
    :email: dlate@example.edu
  :created_at: 2026-11-23 08:00:00.000000000 Z
  :score: 6.0
"""
ROOT = "assignment_9100_export/"
DUE = datetime(2026, 11, 22, 23, 59, tzinfo=UTC)


def gradescope_zip(folder: Path) -> Path:
    return write_zip(
        folder / "export.zip",
        [
            (ROOT + "submission_metadata.yml", METADATA),
            (ROOT + "submission_401/01_laplace_utility.ipynb", submitted("ada morning")),
            (ROOT + "submission_405/01_laplace_utility (1).ipynb", submitted("ada noon")),
            (ROOT + "submission_403/02_rr_vs_laplace.ipynb", submitted("group", STEMS[1])),
            (ROOT + "submission_404/01_laplace_utility.ipynb", submitted("dan")),
            (ROOT + "submission_999/01_laplace_utility.ipynb", submitted("nobody")),
            ("__MACOSX/" + ROOT + "submission_401/._01_laplace_utility.ipynb", b"\x00\x05\x16\x07"),
            link_member(ROOT + "submission_404/02_rr_vs_laplace.ipynb", "../../../../etc/shadow"),
        ],
    )


def test_gradescope_keeps_the_latest_submission_gives_a_group_to_each_member_and_marks_late_files(tmp_path, course):
    out = tmp_path / "out"
    result = collect_gradescope(gradescope_zip(tmp_path), out, notebooks=course, due=DUE)
    assert marker(out / "ada" / "01_laplace_utility.ipynb") == "ada noon"
    assert marker(out / "bob.stone" / "02_rr_vs_laplace.ipynb") == "group"
    assert marker(out / "cwu" / "02_rr_vs_laplace.ipynb") == "group"
    assert marker(out / "dlate" / "01_laplace_utility.ipynb") == "dan"
    assert result.students == ["ada", "bob.stone", "cwu", "dlate"]

    rows = read_csv(out)
    assert len(rows) == 9  # 8 members, the group's file once per member
    found = {(r["student"], r["source_file"]): r for r in rows}
    noon = found[("ada", ROOT + "submission_405/01_laplace_utility (1).ipynb")]
    assert (noon["kept"], noon["submitted_at"], noon["late"]) == ("true", "2026-11-20T12:00:00+00:00", "false")
    morning = found[("ada", ROOT + "submission_401/01_laplace_utility.ipynb")]
    assert morning["kept"] == "false" and morning["submitted_at"] == "2026-11-20T10:00:00.123456+00:00"
    assert found[("dlate", ROOT + "submission_404/01_laplace_utility.ipynb")]["late"] == "true"
    assert found[("cwu", ROOT + "submission_403/02_rr_vs_laplace.ipynb")]["note"] == "group submission"
    ignored = {r["source_file"]: r["note"] for r in rows if not r["student"]}
    assert "is not in submission_metadata.yml" in ignored[ROOT + "submission_999/01_laplace_utility.ipynb"]
    link = found[("dlate", ROOT + "submission_404/02_rr_vs_laplace.ipynb")]  # never opened, but his
    assert link["note"].startswith("a link") and (link["notebook"], link["kept"]) == ("02_rr_vs_laplace", "false")
    assert ignored["__MACOSX/" + ROOT + "submission_401/._01_laplace_utility.ipynb"].startswith("macOS")
    assert ignored[ROOT + "submission_metadata.yml"].startswith("Gradescope's metadata")


def test_gradescope_with_a_roster_matches_sid_then_email(tmp_path, course):
    roster = tmp_path / "roster.csv"
    roster.write_text("student,sid,email\nalovelace,1001,\nbstone,,bob.stone@example.edu\n")
    out = tmp_path / "out"
    result = collect_gradescope(gradescope_zip(tmp_path), out, roster=read_roster(roster), notebooks=course)
    assert result.students == ["alovelace", "bstone"]
    notes = [r["note"] for r in read_csv(out) if r["note"].startswith("not on the roster")]
    assert len(notes) == 2 and any("Carol Wu" in n for n in notes) and any("Dan Late" in n for n in notes)
    assert all(r["late"] == "" for r in read_csv(out))  # no due time: lateness unknown


def test_an_archive_without_gradescope_metadata_or_with_broken_metadata_is_refused(tmp_path, course):
    plain = write_zip(tmp_path / "plain.zip", [("submission_1/01_laplace_utility.ipynb", submitted("x"))])
    with pytest.raises(CollectError, match="no submission_metadata.yml"):
        collect_gradescope(plain, tmp_path / "out", notebooks=course)
    broken = write_zip(tmp_path / "broken.zip", [("submission_metadata.yml", ":a: [unclosed")])
    with pytest.raises(CollectError, match="not readable YAML"):
        collect_gradescope(broken, tmp_path / "out", notebooks=course)
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- folders


def write(path: Path, data: bytes, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))


@pytest.fixture
def folders(tmp_path):
    """Today's layout with browser duplicates, a Mac's NFD folder name, links, a pipe and stray files."""
    root = tmp_path / "submissions"
    write(root / "ada" / "01_laplace_utility.ipynb", submitted("ada original"), 3_000)
    write(root / "ada" / "01_laplace_utility (1).ipynb", submitted("ada (1)"), 2_000)
    write(root / "ada" / "01_laplace_utility (2).ipynb", submitted("ada (2)"), 1_000)
    write(root / "ada" / "old" / "01_laplace_utility.ipynb", submitted("ada old"), 4_000)
    write(root / "bob" / "02_rr_vs_laplace.ipynb", submitted("bob original", STEMS[1]), 1_000)
    write(root / "bob" / "02_rr_vs_laplace-Copy1.ipynb", submitted("bob copy", STEMS[1]), 500)
    write(root / unicodedata.normalize("NFD", "José") / "01_laplace_utility.ipynb", submitted("jose"), 1_000)
    write(root / "stray.ipynb", submitted("stray"), 1_000)
    outside = tmp_path / "secret.ipynb"
    outside.write_bytes(submitted("secret"))
    (root / "eve").mkdir()
    (root / "eve" / "01_laplace_utility.ipynb").symlink_to(outside)
    (root / "mallory").symlink_to(tmp_path)
    os.mkfifo(root / "ada" / "02_rr_vs_laplace.ipynb")
    return root


def test_folders_keep_the_newest_file_and_never_follow_links(tmp_path, course, folders):
    out = tmp_path / "out"
    result = collect_folders(folders, out, notebooks=course)
    assert marker(out / "ada" / "01_laplace_utility.ipynb") == "ada original"  # the newest, whatever its number
    assert marker(out / "bob" / "02_rr_vs_laplace.ipynb") == "bob original"
    assert marker(out / "José" / "01_laplace_utility.ipynb") == "jose"
    assert result.students == ["José", "ada", "bob"]
    assert files_under(out) == {
        "collected.csv",
        "ada/01_laplace_utility.ipynb",
        "bob/02_rr_vs_laplace.ipynb",
        "José/01_laplace_utility.ipynb",
    }
    rows = by_source(read_csv(out))
    assert len(rows) == 11
    assert rows["eve/01_laplace_utility.ipynb"]["note"].startswith("a link")
    assert rows["mallory"]["note"].startswith("a link")
    assert rows["ada/02_rr_vs_laplace.ipynb"]["note"] == "not a regular file"
    assert rows["ada/old/01_laplace_utility.ipynb"]["note"].startswith("inside a subfolder")
    assert rows["stray.ipynb"]["note"] == "not inside a student's folder"
    assert [rows[f"ada/01_laplace_utility{s}.ipynb"]["kept"] for s in ("", " (1)", " (2)")] == ["true"] + ["false"] * 2
    assert all(r["submitted_at"] == "" and r["late"] == "" for r in rows.values())


def test_folders_with_a_roster_match_nfc_names_and_list_the_others(tmp_path, course, folders):
    roster = tmp_path / "roster.txt"
    roster.write_text("ada\nJosé\n")
    out = tmp_path / "out"
    result = collect_folders(folders, out, roster=read_roster(roster), notebooks=course)
    assert result.students == ["José", "ada"]
    bob = [r for r in read_csv(out) if r["source_file"].startswith("bob/")]
    assert len(bob) == 2 and all(r["note"].startswith("not on the roster") for r in bob)


def test_folders_refuse_an_out_inside_the_input(tmp_path, course, folders):
    with pytest.raises(CollectError, match="inside the input folder"):
        collect_folders(folders, folders / "ada" / "collected", notebooks=course)


# --------------------------------------------------------------------------- hostile archives


def test_a_zip_bomb_is_stopped_by_the_bytes_read_not_the_header(tmp_path, course):
    big = b"\x00" * 3_000_000  # deflates to a few kB
    archive = write_zip(
        tmp_path / "bomb.zip",
        [
            ("bomber_1_1_01_laplace_utility.ipynb", big),
            ("honest_2_2_01_laplace_utility.ipynb", submitted("honest")),
        ],
    )
    # The central directory and the local header now both claim 100 bytes uncompressed.
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as z:
        info = z.getinfo("bomber_1_1_01_laplace_utility.ipynb")
    lying = (100).to_bytes(4, "little")
    data[info.header_offset + 22 : info.header_offset + 26] = lying
    directory = data.rfind(b"PK\x01\x02", 0, data.rfind(b"honest") - 46)
    data[directory + 24 : directory + 28] = lying
    archive.write_bytes(bytes(data))
    out = tmp_path / "out"
    collect_canvas(archive, out, notebooks=course, limits=CollectLimits(max_file_bytes=1_000_000))
    rows = by_source(read_csv(out))
    assert rows["bomber_1_1_01_laplace_utility.ipynb"]["kept"] == "false"
    assert rows["bomber_1_1_01_laplace_utility.ipynb"]["note"].startswith(("unreadable", "larger than"))
    assert not (out / "bomber").exists() and marker(out / "honest" / "01_laplace_utility.ipynb") == "honest"


def test_the_per_file_cap_counts_real_bytes_and_each_students_byte_cap_is_her_own(tmp_path, course):
    """A hoarder's three 400 kB notebooks come first in the zip; her 1 MB leaves her oldest unread, and every
    classmate after her is collected."""
    padding = {"cells": [], "metadata": {"pad": "x" * 400_000}, "nbformat": 4, "nbformat_minor": 5}
    archive = write_zip(
        tmp_path / "caps.zip",
        [(f"hoarder_1_{f}_pad{f}.ipynb", json.dumps(padding)) for f in (11, 12, 13)]
        + [("huge_9_9_01_laplace_utility.ipynb", b" " * 2_000_000)]
        + [(f"s{i}_{i}_{100 + i}_01_laplace_utility.ipynb", submitted(f"s{i}")) for i in range(2, 6)],
    )
    out = tmp_path / "out"
    limits = CollectLimits(max_file_bytes=1_000_000, max_student_bytes=1_000_000)
    result = collect_canvas(archive, out, notebooks=course, limits=limits)
    rows = by_source(read_csv(out))
    assert rows["huge_9_9_01_laplace_utility.ipynb"]["note"] == "larger than 1 MB"
    assert rows["hoarder_1_13_pad13.ipynb"]["note"] == rows["hoarder_1_12_pad12.ipynb"]["note"] == NOT_COURSE
    assert rows["hoarder_1_11_pad11.ipynb"]["note"] == "not read: this student's files are over 1 MB"
    assert [marker(out / f"s{i}" / "01_laplace_utility.ipynb") for i in range(2, 6)] == ["s2", "s3", "s4", "s5"]
    assert len(result.kept) == 4 and rows["hoarder_1_11_pad11.ipynb"]["student"] == "hoarder"


def test_an_input_over_the_whole_ceiling_is_refused_up_front_naming_it(tmp_path, course, capsys):
    padding = {"cells": [], "metadata": {"pad": "x" * 400_000}, "nbformat": 4, "nbformat_minor": 5}
    archive = write_zip(
        tmp_path / "big.zip",
        [(f"s{i}_{i}_{i}_01_laplace_utility.ipynb", json.dumps(padding)) for i in range(1, 4)],
    )
    limits = CollectLimits(max_total_bytes=1_000_000)
    with pytest.raises(CollectError, match=r"refused before reading: its 3 students' notebooks .* cap of 1 MB"):
        collect_canvas(archive, tmp_path / "out", notebooks=course, limits=limits)
    assert not (tmp_path / "out").exists()


def test_one_students_flood_of_files_leaves_every_classmate_collected(tmp_path, course):
    """6,000 notebooks from one student before his classmates in the zip: only his 100 latest are read, his real
    one (the latest) is kept, and every classmate is collected."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for i in range(6_000):
            archive.writestr(f"flooder_7_{1_000 + i}_x{i}.ipynb", b"{}")
        archive.writestr("flooder_7_9000_01_laplace_utility.ipynb", submitted("flooder's own"))
        for i in range(1, 4):
            archive.writestr(f"classmate_{i}_{9_100 + i}_01_laplace_utility.ipynb", submitted(f"classmate {i}"))
    (tmp_path / "many.zip").write_bytes(buffer.getvalue())
    out = tmp_path / "out"
    result = collect_canvas(tmp_path / "many.zip", out, notebooks=course)
    rows = read_csv(out)
    assert len(rows) == 6_004
    assert [marker(out / f"classmate_{i}" / "01_laplace_utility.ipynb") for i in range(1, 4)] == [
        "classmate 1",
        "classmate 2",
        "classmate 3",
    ]
    assert marker(out / "flooder" / "01_laplace_utility.ipynb") == "flooder's own"
    capped = [r for r in rows if r["note"].startswith("not read: more than 100 notebook files from this student")]
    assert len(capped) == 6_001 - 100 and {r["student"] for r in capped} == {"flooder"}
    assert not any(r["source_file"] == "flooder_7_6999_x5999.ipynb" for r in capped)  # his latest were read
    assert len(result.kept) == 4


def test_an_archive_listing_more_files_than_the_cap_is_refused_before_it_is_parsed(tmp_path, course):
    archive = write_zip(tmp_path / "wide.zip", [(f"f{i}.txt", b"") for i in range(101)])
    with pytest.raises(CollectError, match="lists more than 10 files"):
        collect_canvas(archive, tmp_path / "out", notebooks=course, limits=CollectLimits(max_files=10))
    assert not (tmp_path / "out").exists()


def lying_zip(path: Path, entries: int) -> Path:
    """A zip whose central directory holds ``entries`` one-letter entries, all pointing at one empty local file,
    and whose end record says it holds 1 (what a writer patching counts would leave)."""
    name = b"a"
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0) + name
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, 0)
    central += name
    with open(path, "wb") as handle:
        handle.write(local)
        for _ in range(entries // 10_000):
            handle.write(central * 10_000)
        end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central) * entries, len(local), 0)
        handle.write(end)
    return path


def test_a_million_entry_zip_whose_end_record_lies_is_refused_fast_with_bounded_memory(tmp_path, course, capsys):
    """The issue's 59 MB zip listing 10^6 entries took 84 s and 1.2 GB, and wrote a 74 MB collected.csv: the
    directory is now walked as zipfile is about to parse it, and refused at entry 50,001."""
    archive = lying_zip(tmp_path / "million.zip", 1_000_000)
    out = tmp_path / "out"
    tracemalloc.start()
    cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    try:
        with pytest.raises(CollectError, match="lists more than 50,000 files"):
            collect_canvas(archive, out, notebooks=course)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Bounds far from what is measured (a few hundred kB, well under a second) and from the 1.2 GB, 84 s.
    assert peak < 20_000_000
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu < 10
    assert not out.exists()
    status = run(["collect", "canvas", str(archive), "--out", str(out), "--source", str(course)])
    error = capsys.readouterr().err
    assert status == 2 and error.count("\n") == 1 and "50,000" in error and not out.exists()


def test_absolute_backslash_and_non_utf8_names_are_listed_and_nothing_leaves_out(tmp_path, course):
    placeholder = "bad_XX_1_01_laplace_utility.ipynb"
    archive = write_zip(
        tmp_path / "names.zip",
        [
            ("/abs_1_1_01_laplace_utility.ipynb", submitted("absolute")),
            ("..\\win_2_2_01_laplace_utility.ipynb", submitted("backslash")),
            (placeholder, submitted("not utf-8")),
            ("good_3_3_01_laplace_utility.ipynb", submitted("good")),
        ],
    )
    # A name in Latin-1 bytes without the UTF-8 flag: zipfile decodes it as CP437, and it is not UTF-8.
    archive.write_bytes(archive.read_bytes().replace(b"bad_XX", b"bad_\xe9\xe9"))
    out = tmp_path / "out"
    before = files_under(tmp_path)
    collect_canvas(archive, out, notebooks=course)
    notes = sorted(r["note"] for r in read_csv(out) if r["kept"] == "false")
    assert notes == ["its name is not UTF-8", "unsafe path", "unsafe path"]
    assert files_under(tmp_path) - before == {"out/collected.csv", "out/good/01_laplace_utility.ipynb"}
    assert any("\\xe9" in r["source_file"] for r in read_csv(out))


def test_unreadable_and_corrupt_archives_are_refused_as_a_whole(tmp_path, course):
    (tmp_path / "junk.zip").write_bytes(b"this is not a zip archive at all")
    with pytest.raises(CollectError, match="not a readable zip"):
        collect_canvas(tmp_path / "junk.zip", tmp_path / "out", notebooks=course)
    with pytest.raises(CollectError, match="not a readable zip"):
        collect_canvas(tmp_path / "missing.zip", tmp_path / "out", notebooks=course)
    assert not (tmp_path / "out").exists()


def test_a_corrupt_member_is_one_row_and_the_rest_is_collected(tmp_path, course):
    archive = write_zip(
        tmp_path / "crc.zip",
        [("bad_1_1_01_laplace_utility.ipynb", submitted("bad")), ("ok_2_2_01_laplace_utility.ipynb", submitted("ok"))],
    )
    data = archive.read_bytes()
    with zipfile.ZipFile(archive) as z:
        info = z.getinfo("bad_1_1_01_laplace_utility.ipynb")
    start = info.header_offset + 30 + len(info.filename) + 5
    archive.write_bytes(data[:start] + bytes(b ^ 0xFF for b in data[start : start + 8]) + data[start + 8 :])
    out = tmp_path / "out"
    collect_canvas(archive, out, notebooks=course)
    rows = by_source(read_csv(out))
    assert rows["bad_1_1_01_laplace_utility.ipynb"]["note"].startswith("unreadable")
    assert not (out / "bad").exists() and marker(out / "ok" / "01_laplace_utility.ipynb") == "ok"


def test_student_folder_names_are_checked():
    assert safe_student(unicodedata.normalize("NFD", "José")) == "José"
    for bad in ("", "..", ".hidden", "a/b", "a\\b", "a\nb", "collected.csv", "x" * 129):
        assert safe_student(bad) is None


def test_limits_are_validated():
    with pytest.raises(ValueError, match="max_files"):
        CollectLimits(max_files=0)


# --------------------------------------------------------------------------- the command


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add_collect_command(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.run(args))


def test_the_command_collects_prints_a_summary_and_refuses_bad_arguments(tmp_path, course, capsys):
    archive = canvas_zip(tmp_path)
    out = tmp_path / "out"
    assert run(["collect", "canvas", str(archive), "--out", str(out), "--source", str(course)]) == 0
    printed = capsys.readouterr()
    assert "collect canvas: 3 students" in printed.out and printed.err == ""

    assert run(["collect", "canvas", str(archive), "--out", str(out), "--source", str(course)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "not empty" in error and "--force" in error
    assert run(["collect", "canvas", str(archive), "--out", str(out), "--source", str(course), "--force"]) == 0
    capsys.readouterr()

    (tmp_path / "junk.zip").write_bytes(b"PK\x03\x04 truncated")
    assert run(["collect", "gradescope", str(tmp_path / "junk.zip"), "--out", str(tmp_path / "o2")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("collect: ")

    due = ["--due", "2026-11-22T23:59+00:00"]
    assert run(["collect", "canvas", str(archive), "--out", str(tmp_path / "o3"), "--source", str(course), *due]) == 2
    assert "gradescope only" in capsys.readouterr().err
    assert run(["collect", "folders", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o4")]) == 2
    assert run(["collect", "canvas", str(archive), "--out", str(tmp_path / "o5"), "--source", str(tmp_path)]) == 2
    assert "no notebooks there" in capsys.readouterr().err
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert run(["collect", "canvas", str(archive), "--out", str(tmp_path / "o6"), "--roster", str(empty)]) == 2
    unsafe = tmp_path / "unsafe.txt"
    unsafe.write_text("ada\n../../etc\n")
    assert run(["collect", "canvas", str(archive), "--out", str(tmp_path / "o6"), "--roster", str(unsafe)]) == 2
    assert "cannot be a folder name" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        run(["collect", "gradescope", str(archive), "--out", str(tmp_path / "o7"), "--due", "next friday"])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit):  # a due time without its timezone cannot be compared with Gradescope's
        run(["collect", "gradescope", str(archive), "--out", str(tmp_path / "o7"), "--due", "2026-11-22T23:59"])


def test_the_gradescope_command_takes_a_due_time(tmp_path, course, capsys):
    out = tmp_path / "out"
    argv = ["collect", "gradescope", str(gradescope_zip(tmp_path)), "--out", str(out), "--source", str(course)]
    assert run([*argv, "--due", "2026-11-22T23:59:00+00:00"]) == 0
    assert "late (kept): 1" in capsys.readouterr().out


# --------------------------------------------------------------------------- issue 38: who a file is from


def test_canvas_upload_names_cannot_take_a_classmates_file_or_drop_a_late_mark(tmp_path, course):
    """In an assignment's download the name after the file id is the student's own: bob names his upload as if
    it were a quiz upload of jane's (user id first), or a whole member of hers; carol, late, names hers as a quiz
    upload of her own. Read from the left, every file stays its uploader's, with his late mark."""
    archive = write_zip(
        tmp_path / "submissions.zip",
        [
            ("doejane_1001_5001_01_laplace_utility.ipynb", submitted("jane's own")),
            ("smithbob_1002_5002_1001_question_1_99999999_01_laplace_utility.ipynb", submitted("bob as jane")),
            ("smithbob_1002_5003_doejane_1001_99999999_02_rr_vs_laplace.ipynb", submitted("bob as jane 2", STEMS[1])),
            ("kingcarol_LATE_1003_5004_1003_question_1_5_01_laplace_utility.ipynb", submitted("carol late")),
        ],
    )
    roster = tmp_path / "roster.csv"
    roster.write_text("student,canvas_id\njane,1001\nbob,1002\ncarol,1003\n")
    for people, names in (
        (None, ("doejane", "smithbob", "kingcarol")),
        (read_roster(roster), ("jane", "bob", "carol")),
    ):
        out = tmp_path / f"out-{names[0]}"
        result = collect_canvas(archive, out, roster=people, notebooks=course)
        jane, bob, carol = (out / name for name in names)
        assert marker(jane / "01_laplace_utility.ipynb") == "jane's own"
        assert not (jane / "02_rr_vs_laplace.ipynb").exists()
        assert marker(bob / "01_laplace_utility.ipynb") == "bob as jane"  # his, matched by its cells
        assert marker(bob / "02_rr_vs_laplace.ipynb") == "bob as jane 2"
        rows = by_source(read_csv(out))
        late = rows["kingcarol_LATE_1003_5004_1003_question_1_5_01_laplace_utility.ipynb"]
        assert (late["student"], late["late"], late["kept"]) == (names[2], "true", "true")
        assert result.students == sorted(names)


def test_gradescope_folder_names_are_never_shared_even_when_a_local_part_looks_like_a_disambiguated_one(
    tmp_path, course
):
    """Two students with the e-mail local part "jane" get their sid appended; a third whose local part is
    literally "jane_1001" must not share (or overwrite) the first Jane's folder; "Ada" and "ada" differ only in
    case, which a Mac's disk does not tell apart."""
    metadata = "".join(
        f"submission_{n}:\n  :submitters:\n  - :name: {name}\n    :sid: '{sid}'\n    :email: {email}\n"
        f"  :created_at: 2026-11-20 10:00:{n % 60:02d}.000000000 Z\n"
        for n, name, sid, email in (
            (501, "Jane A", 1001, "jane@a.edu"),
            (502, "Jane B", 1002, "jane@b.edu"),
            (503, "Mallory", 1003, "jane_1001@c.edu"),
            (504, "Ada Upper", 1004, "Ada@d.edu"),
            (505, "Ada Lower", 1005, "ada@e.edu"),
        )
    )
    archive = write_zip(
        tmp_path / "export.zip",
        [
            ("submission_metadata.yml", metadata),
            ("submission_501/01_laplace_utility.ipynb", submitted("jane a")),
            ("submission_502/01_laplace_utility.ipynb", submitted("jane b")),
            ("submission_503/01_laplace_utility.ipynb", submitted("mallory's stub")),
            ("submission_504/01_laplace_utility.ipynb", submitted("ada upper")),
            ("submission_505/01_laplace_utility.ipynb", submitted("ada lower")),
        ],
    )
    out = tmp_path / "out"
    result = collect_gradescope(archive, out, notebooks=course)
    kept = {r.student: marker(out / r.student / "01_laplace_utility.ipynb") for r in result.kept}
    assert sorted(kept.values()) == ["ada lower", "ada upper", "jane a", "jane b", "mallory's stub"]
    assert kept["jane_1001"] == "mallory's stub" and kept["jane_1001_2"] == "jane a" and kept["jane_1002"] == "jane b"
    assert len({s.casefold() for s in kept}) == 5 and not result.older


def test_gradescope_with_a_roster_one_student_cannot_claim_anothers_sid(tmp_path, course):
    """Mallory's Gradescope account carries Jane's sid (self-enrolment lets a student type one): Jane, whose sid
    and e-mail both agree with the roster, keeps her file; an account whose sid and e-mail name two roster
    students gets neither."""
    metadata = """\
submission_1:
  :submitters:
  - :name: Jane
    :sid: '1001'
    :email: jane@example.edu
  :created_at: 2026-11-20 10:00:00.000000000 Z
submission_2:
  :submitters:
  - :name: Mallory
    :sid: '1001'
    :email: mallory@example.edu
  :created_at: 2026-11-20 11:00:00.000000000 Z
submission_3:
  :submitters:
  - :name: Trent
    :sid: '1002'
    :email: jane@example.edu
  :created_at: 2026-11-20 12:00:00.000000000 Z
"""
    archive = write_zip(
        tmp_path / "export.zip",
        [
            ("submission_metadata.yml", metadata),
            ("submission_1/01_laplace_utility.ipynb", submitted("jane's")),
            ("submission_2/01_laplace_utility.ipynb", submitted("mallory's")),
            ("submission_3/01_laplace_utility.ipynb", submitted("trent's")),
        ],
    )
    roster = tmp_path / "roster.csv"
    roster.write_text("student,sid,email\njane,1001,jane@example.edu\nbob,1002,bob@example.edu\n")
    out = tmp_path / "out"
    result = collect_gradescope(archive, out, roster=read_roster(roster), notebooks=course)
    assert marker(out / "jane" / "01_laplace_utility.ipynb") == "jane's" and result.students == ["jane"]
    rows = by_source(read_csv(out))
    assert rows["submission_2/01_laplace_utility.ipynb"]["student"] == ""
    assert "also matches roster student jane" in rows["submission_2/01_laplace_utility.ipynb"]["note"]
    assert (
        "the roster gives sid 1002 to bob and jane@example.edu to jane"
        in (rows["submission_3/01_laplace_utility.ipynb"]["note"])
    )
    assert result.absent == ("bob",)


def test_a_roster_giving_one_id_to_two_students_or_two_ids_differing_in_case_is_refused(tmp_path, course, capsys):
    archive = canvas_zip(tmp_path)
    for text, words in (
        ("student,canvas_id\njane,123456\njoe,123456\n", "canvas_id '123456' is given to both"),
        ("Ada\nada\n", "differ only in case"),
    ):
        roster = tmp_path / "roster.csv"
        roster.write_text(text)
        out = tmp_path / "out"
        argv = ["collect", "canvas", str(archive), "--out", str(out), "--source", str(course), "--roster", str(roster)]
        assert run(argv) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and words in error and not out.exists()


# --------------------------------------------------------------------------- issue 38: which file is the latest


def test_canvas_keeps_the_file_canvas_received_last_not_the_one_with_a_typed_number(tmp_path, course):
    """Jane's draft is named "…-2.ipynb" (Canvas's number for a re-upload, which she can type herself); the file
    Canvas received last (the larger file id) is her final one."""
    archive = write_zip(
        tmp_path / "submissions.zip",
        [
            ("doejane_1001_5001_01_laplace_utility-2.ipynb", submitted("draft")),
            ("doejane_1001_5002_01_laplace_utility.ipynb", submitted("final")),
        ],
    )
    out = tmp_path / "out"
    collect_canvas(archive, out, notebooks=course)
    assert marker(out / "doejane" / "01_laplace_utility.ipynb") == "final"
    draft = by_source(read_csv(out))["doejane_1001_5001_01_laplace_utility-2.ipynb"]
    assert draft["note"] == "older submission (kept doejane_1001_5002_01_laplace_utility.ipynb)"


def test_collect_folders_then_grade_keeps_the_file_grade_would(tmp_path, course):
    """The browser's "(1)" is a later download than the file it copies, but a copy number is no time: of a
    draft downloaded again as "(1)" and a final saved after it, the final is kept, as grade's pick_graded picks."""
    root = tmp_path / "submissions"
    write(root / "ada" / "01_laplace_utility (1).ipynb", submitted("draft (1)"), 1_000)
    write(root / "ada" / "01_laplace_utility.ipynb", submitted("final"), 2_000)
    write(root / "bob" / "01_laplace_utility.ipynb", submitted("bob old"), 1_000)
    write(root / "bob" / "01_laplace_utility-Copy1.ipynb", submitted("bob newer copy"), 2_000)
    write(root / "carol" / "01_laplace_utility.ipynb", submitted("carol same time"), 1_000)
    write(root / "carol" / "01_laplace_utility (2).ipynb", submitted("carol (2)"), 1_000)
    out = tmp_path / "out"
    collect_folders(root, out, notebooks=course)
    for student in ("ada", "bob", "carol"):
        paths = sorted((root / student).iterdir())
        graded = pick_graded(paths, STEMS[0], {p: p.stat().st_mtime for p in paths})
        assert marker(out / student / "01_laplace_utility.ipynb") == marker(graded)
    assert [marker(out / s / "01_laplace_utility.ipynb") for s in ("ada", "bob", "carol")] == [
        "final",
        "bob newer copy",
        "carol (2)",  # the same time: the copy number breaks the tie, as in pick_graded
    ]


def test_gradescope_keeps_the_later_submission_time_then_the_larger_submission_id(tmp_path, course):
    metadata = """\
submission_900:
  :submitters:
  - :sid: '1'
    :email: ann@example.edu
  :created_at: 2026-11-20 09:00:00.000000000 Z
submission_800:
  :submitters:
  - :sid: '1'
    :email: ann@example.edu
  :created_at: 2026-11-20 10:00:00.000000000 Z
submission_700:
  :submitters:
  - :sid: '2'
    :email: ben@example.edu
  :created_at: 2026-11-20 10:00:00.000000000 Z
submission_701:
  :submitters:
  - :sid: '2'
    :email: ben@example.edu
  :created_at: 2026-11-20 10:00:00.000000000 Z
"""
    archive = write_zip(
        tmp_path / "export.zip",
        [
            ("submission_metadata.yml", metadata),
            ("submission_900/01_laplace_utility (3).ipynb", submitted("ann earlier")),
            ("submission_800/01_laplace_utility.ipynb", submitted("ann later")),
            ("submission_700/01_laplace_utility.ipynb", submitted("ben 700")),
            ("submission_701/01_laplace_utility.ipynb", submitted("ben 701")),
        ],
    )
    out = tmp_path / "out"
    collect_gradescope(archive, out, notebooks=course)
    assert marker(out / "ann" / "01_laplace_utility.ipynb") == "ann later"
    assert marker(out / "ben" / "01_laplace_utility.ipynb") == "ben 701"


# --------------------------------------------------------------------------- issue 38: hostile metadata


def merge_bomb(levels: int = 26) -> str:
    """A submission_metadata.yml of about 1.5 kB whose merge keys double a mapping's entries at every level."""
    lines = ["l0: &l0 {k: v}"] + [f"l{i}: &l{i} {{<<: [*l{i - 1}, *l{i - 1}]}}" for i in range(1, levels + 1)]
    return METADATA + "\n".join(lines) + "\n"


def test_gradescope_metadata_with_a_merge_key_bomb_is_refused_fast_and_nothing_is_collected(tmp_path, course, capsys):
    bomb = merge_bomb()
    assert len(bomb.encode()) < 2_000 + len(METADATA)
    archive = write_zip(
        tmp_path / "export.zip",
        [(ROOT + "submission_metadata.yml", bomb), (ROOT + "submission_401/01_laplace_utility.ipynb", submitted("a"))],
    )
    out = tmp_path / "out"
    cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    with pytest.raises(CollectError, match=r"refused: it uses YAML merge keys"):
        collect_gradescope(archive, out, notebooks=course)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu < 10  # it was past 300 s and 4.7 GB
    assert not out.exists()
    argv = ["collect", "gradescope", str(archive), "--out", str(out), "--source", str(course)]
    assert run(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "merge keys" in error and not out.exists()


# --------------------------------------------------------------------------- issue 38: files that are no notebook


def test_a_file_that_is_no_notebook_keeps_its_student_and_the_summary_names_who_handed_in_nothing(tmp_path, course):
    """Jane is on the roster and uploaded a PDF: its row is hers (so her feedback names it, rather than "nothing
    was handed in"), and the summary says what she handed in instead; Carol uploaded nothing at all."""
    archive = write_zip(
        tmp_path / "submissions.zip",
        [
            ("doejane_1001_5001_homework.pdf", b"%PDF-1.4"),
            ("smithbob_1002_5002_01_laplace_utility.ipynb", submitted("bob")),
        ],
    )
    roster = tmp_path / "roster.csv"
    roster.write_text("student,canvas_id\njane,1001\nbob,1002\ncarol,1003\n")
    out = tmp_path / "out"
    result = collect_canvas(archive, out, roster=read_roster(roster), notebooks=course)
    pdf = by_source(read_csv(out))["doejane_1001_5001_homework.pdf"]
    assert (pdf["student"], pdf["notebook"], pdf["kept"], pdf["note"]) == ("jane", "", "false", NOT_COURSE)
    assert result.absent == ("jane", "carol")
    summary = result.summary()
    assert "on the roster, no notebook collected: 2" in summary
    assert f"jane: handed in doejane_1001_5001_homework.pdf ({NOT_COURSE})" in summary
    assert "carol: nothing in the input" in summary
    handed_in = read_collected(out / "collected.csv")  # what grade's feedback reads
    assert handed_in[("jane", "")].ignored == (("doejane_1001_5001_homework.pdf", NOT_COURSE),)


def test_a_file_name_that_is_not_utf8_and_a_name_with_terminal_escapes_are_rows_not_crashes(tmp_path, course):
    """A folder file whose name is not UTF-8 (Python holds it with lone surrogates, which no CSV can hold) and a
    Gradescope account name that clears the instructor's terminal are shown escaped; the batch goes on."""
    root = tmp_path / "submissions"
    write(root / "ada" / "01_laplace_utility.ipynb", submitted("ada"), 1_000)
    (root / "ada" / os.fsdecode(b"\xff01_laplace_utility.ipynb")).write_bytes(submitted("latin-1 name"))
    out = tmp_path / "out"
    collect_folders(root, out, notebooks=course)
    odd = next(r for r in read_csv(out) if "\\udcff" in r["source_file"])
    assert (odd["note"], odd["kept"]) == ("its name is not UTF-8", "false")
    assert marker(out / "ada" / "01_laplace_utility.ipynb") == "ada"

    metadata = 'submission_1:\n  :submitters:\n  - :name: "\\e[2JEve"\n    :sid: "9\\e[31m"\n    :email: eve@x.edu\n'
    archive = write_zip(
        tmp_path / "export.zip",
        [("submission_metadata.yml", metadata), ("submission_1/01_laplace_utility.ipynb", submitted("eve"))],
    )
    roster = tmp_path / "roster.txt"
    roster.write_text("ada\n")
    result = collect_gradescope(archive, tmp_path / "out2", roster=read_roster(roster), notebooks=course)
    summary = result.summary()
    assert "\x1b" not in summary and "\\x1b[2JEve (sid ?, eve@x.edu)" in summary  # a sid with an escape is none


# --------------------------------------------------------------------------- issue 38: when Canvas received a file

# The JSON of Canvas's submissions API (GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions): a
# list of Submission objects; submitted_at in UTC ("…Z"), the user id a number (its digits with string ids).
SUBMISSIONS = [
    {
        "id": 9001,
        "assignment_id": 77,
        "user_id": 123456,
        "attempt": 2,
        "submitted_at": "2026-11-03T04:30:00Z",
        "workflow_state": "submitted",
        "late": True,
        "seconds_late": 88_200,
        "missing": False,
        "submission_type": "online_upload",
    },
    {
        "id": 9002,
        "assignment_id": 77,
        "user_id": "223344",
        "attempt": 1,
        "submitted_at": "2026-10-30T20:00:00Z",
        "workflow_state": "graded",
        "late": False,
        "seconds_late": 0,
    },
    {
        "id": 9003,
        "assignment_id": 77,
        "user_id": 33445,
        "attempt": 1,
        "submitted_at": "2026-10-29T10:00:00Z",
        "workflow_state": "submitted",
        "late": False,
        "seconds_late": 0,
    },
    {
        "id": 9004,
        "assignment_id": 77,
        "user_id": 555,
        "attempt": None,
        "submitted_at": None,
        "workflow_state": "unsubmitted",
        "late": False,
        "seconds_late": 0,
    },
]


def submissions_json(path: Path, entries=SUBMISSIONS) -> Path:
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def test_canvas_submissions_json_gives_each_users_files_their_submitted_at(tmp_path, course):
    """jane's files (user 123456, LATE-marked) and josé's (user "223344") get the API's times; bob (334455) is not
    in the JSON, and user 33445's time is not his: the ids are matched exactly, never by their start."""
    out = tmp_path / "out"
    json_path = submissions_json(tmp_path / "submissions.json")
    collect_canvas(canvas_zip(tmp_path), out, notebooks=course, submissions=[json_path])
    rows = by_source(read_csv(out))
    jane = rows["doejane_LATE_123456_7890002_01_laplace_utility-1.ipynb"]
    assert (jane["kept"], jane["late"], jane["submitted_at"]) == ("true", "true", "2026-11-03T04:30:00+00:00")
    assert rows["doejane_123456_7890003_02_rr_vs_laplace.ipynb"]["submitted_at"] == "2026-11-03T04:30:00+00:00"
    jose = rows[unicodedata.normalize("NFC", f"{NFD_NAME}_223344_7890004_01_laplace_utility.ipynb")]
    assert jose["submitted_at"] == "2026-10-30T20:00:00+00:00"
    assert rows["smithbob_334455_7890006_Untitled.ipynb"]["submitted_at"] == ""
    times = read_collected(out / "collected.csv")
    assert times[("doejane", "01_laplace_utility")].submitted_at == datetime(2026, 11, 3, 4, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ({"user_id": 1}, "not a list"),
        ([[1]], "entry 0: not an object"),
        ([{"submitted_at": "2026-11-03T04:30:00Z"}], "entry 0: user_id is missing"),
        ([{"user_id": True}], "user_id is true/false"),
        ([{"user_id": -5}], "user_id is -5"),
        ([{"user_id": "12a"}], "'12a' is not a Canvas id"),
        ([{"user_id": 1.5}], "user_id is 1.5"),
        ([{"user_id": 1, "submitted_at": 1762144200}], "submitted_at is 1762144200"),
        ([{"user_id": 1, "submitted_at": "2026-11-03T04:30:00"}], "not an ISO 8601 time with its offset"),
        ([{"user_id": 1, "submitted_at": "yesterday"}], "not an ISO 8601 time"),
        ([{"user_id": 1, "late": "yes"}], "late is a string"),
        ([{"user_id": 1, "attempt": 1.5}], "attempt is 1.5"),
        ([{"user_id": 1}, {"user_id": "1"}], "entry 1: user_id 1 is listed twice"),
        ([{"user_id": 1, "assignment_id": 77}, {"user_id": 2, "assignment_id": 78}], "several assignments (77, 78)"),
    ],
)
def test_a_canvas_submissions_json_of_the_wrong_shape_is_refused_naming_the_entry(tmp_path, course, entries, problem):
    json_path = submissions_json(tmp_path / "submissions.json", entries)
    with pytest.raises(CollectError, match="--canvas-submissions") as error:
        collect_canvas(canvas_zip(tmp_path), tmp_path / "out", notebooks=course, submissions=[json_path])
    assert problem in str(error.value) and "\n" not in str(error.value)
    assert not (tmp_path / "out").exists()  # nothing collected


def test_a_canvas_submissions_json_over_its_cap_or_not_json_is_refused(tmp_path, course):
    archive = canvas_zip(tmp_path)
    big = submissions_json(tmp_path / "big.json", SUBMISSIONS * 50)
    limits = CollectLimits(max_metadata_bytes=4_000)
    with pytest.raises(CollectError, match="larger than 0.004 MB"):
        collect_canvas(archive, tmp_path / "out", notebooks=course, submissions=[big], limits=limits)
    flood = tmp_path / "flood.json"
    flood.write_text("[" + ",".join(["[]"] * 3_000) + "]")  # small in bytes, many objects once parsed
    with pytest.raises(CollectError, match="refused before parsing: up to 6,000 JSON values"):
        collect_canvas(
            archive,
            tmp_path / "out",
            notebooks=course,
            submissions=[flood],
            limits=CollectLimits(max_metadata_nodes=5_000),
        )
    for name, text in (
        ("nan.json", '[{"user_id": 1, "seconds_late": NaN}]'),
        ("twice.json", '[{"user_id": 1, "user_id": 2}]'),
        ("deep.json", "[" * 100_000 + "]" * 100_000),
        ("huge.json", '[{"user_id": 1, "seconds_late": 1e999}]'),
    ):
        (tmp_path / name).write_text(text)
        with pytest.raises(CollectError, match=r"--canvas-submissions .*"):
            collect_canvas(archive, tmp_path / "out", notebooks=course, submissions=[tmp_path / name])
    assert not (tmp_path / "out").exists()


def test_the_command_takes_canvas_submissions_for_canvas_only(tmp_path, course, capsys):
    archive = canvas_zip(tmp_path)
    json_path = submissions_json(tmp_path / "submissions.json")
    argv = ["collect", "canvas", str(archive), "--source", str(course), "--canvas-submissions", str(json_path)]
    assert run([*argv, "--out", str(tmp_path / "out")]) == 0
    assert by_source(read_csv(tmp_path / "out"))["doejane_123456_7890003_02_rr_vs_laplace.ipynb"]["submitted_at"]
    capsys.readouterr()
    gradescope = ["collect", "gradescope", str(gradescope_zip(tmp_path)), "--out", str(tmp_path / "o2")]
    assert run([*gradescope, "--source", str(course), "--canvas-submissions", str(json_path)]) == 2
    assert "canvas only" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("[1]")
    assert run([*argv[:-1], str(tmp_path / "bad.json"), "--out", str(tmp_path / "o3")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("collect: --canvas-submissions") and error.count("\n") == 1
