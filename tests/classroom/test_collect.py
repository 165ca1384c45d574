"""Collecting an LMS's download into DIR/<student>/<notebook>.ipynb: Canvas's and Gradescope's real archive
formats, today's folders with browser duplicates, the roster, and every kind of hostile input."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import stat
import unicodedata
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import pytest

from dpcourse.classroom.collect import (
    COLUMNS,
    CollectError,
    CollectLimits,
    add_collect_command,
    collect_canvas,
    collect_folders,
    collect_gradescope,
    safe_student,
)
from dpcourse.classroom.gradebook import read_roster

STEMS = ("01_laplace_utility", "02_rr_vs_laplace", "03_threshold_query_trees")


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
            ("LATE_anon_x7Yz9_7890008_01_laplace_utility.ipynb", submitted("anonymous")),
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
    assert marker(out / "anon_x7Yz9" / "01_laplace_utility.ipynb") == "anonymous"
    assert files_under(out) == {
        "collected.csv",
        "doejane/01_laplace_utility.ipynb",
        "doejane/02_rr_vs_laplace.ipynb",
        "müllerjosé/01_laplace_utility.ipynb",
        "smithbob/03_threshold_query_trees.ipynb",
        "anon_x7Yz9/01_laplace_utility.ipynb",
    }
    assert result.students == ["anon_x7Yz9", "doejane", "müllerjosé", "smithbob"]

    rows = by_source(read_csv(out))
    assert len(rows) == 9  # every member of the archive
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
    assert rows["smithbob_334455_7890005_notes.txt"]["note"] == "not a notebook of this course"
    assert rows["smithbob_334455_7890006_Untitled.ipynb"]["note"] == (
        "named 'Untitled.ipynb'; 03_threshold_query_trees by its cells"
    )
    assert rows["../doejane_123456_7890011_01_laplace_utility-5.ipynb"]["note"] == "unsafe path"
    assert rows["doejane_123456_7890009_01_laplace_utility-2.ipynb"]["note"].startswith("a link")
    assert rows["LATE_anon_x7Yz9_7890008_01_laplace_utility.ipynb"]["late"] == "true"
    assert not (tmp_path / "doejane_123456_7890011_01_laplace_utility-5.ipynb").exists()

    summary = result.summary()
    assert "4 students, 5 notebooks kept" in summary and "older files, not kept: 1" in summary
    assert "late (kept): 2" in summary and "ignored: 3" in summary and "unsafe path" in summary


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
    assert rows["LATE_anon_x7Yz9_7890008_01_laplace_utility.ipynb"]["note"].startswith("not on the roster")
    assert not (out / "smithbob").exists()


def test_canvas_quiz_uploads_and_colliding_sortable_names(tmp_path, course):
    """Quizzes::QuizSubmissionZipper: "<name><user id>_question_<id>_<file id>_<file>", no late mark. Two students
    whose sortable names are both "leeann" must not be merged."""
    archive = write_zip(
        tmp_path / "quiz.zip",
        [
            ("doe_jane123456_question_42_7890010_02_rr_vs_laplace.ipynb", submitted("quiz", STEMS[1])),
            ("leeann_111_501_01_laplace_utility.ipynb", submitted("first lee")),
            ("leeann_222_502_01_laplace_utility.ipynb", submitted("second lee")),
        ],
    )
    out = tmp_path / "out"
    result = collect_canvas(archive, out, notebooks=course)
    assert marker(out / "doe_jane" / "02_rr_vs_laplace.ipynb") == "quiz"
    assert marker(out / "leeann_111" / "01_laplace_utility.ipynb") == "first lee"
    assert marker(out / "leeann_222" / "01_laplace_utility.ipynb") == "second lee"
    quiz = by_source(read_csv(out))["doe_jane123456_question_42_7890010_02_rr_vs_laplace.ipynb"]
    assert quiz["late"] == "" and len(result.kept) == 3


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
    assert ignored[ROOT + "submission_404/02_rr_vs_laplace.ipynb"].startswith("a link")
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


def test_folders_keep_the_highest_duplicate_number_and_never_follow_links(tmp_path, course, folders):
    out = tmp_path / "out"
    result = collect_folders(folders, out, notebooks=course)
    assert marker(out / "ada" / "01_laplace_utility.ipynb") == "ada (2)"  # the number beats the mtime
    assert marker(out / "bob" / "02_rr_vs_laplace.ipynb") == "bob copy"
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
    assert [rows[f"ada/01_laplace_utility{s}.ipynb"]["kept"] for s in ("", " (1)", " (2)")] == ["false"] * 2 + ["true"]
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


def test_per_file_and_total_caps_count_real_bytes(tmp_path, course):
    padding = {"cells": [], "metadata": {"pad": "x" * 400_000}, "nbformat": 4, "nbformat_minor": 5}
    archive = write_zip(
        tmp_path / "caps.zip",
        [(f"s{i}_{i}_{i}_01_laplace_utility.ipynb", json.dumps(padding)) for i in range(1, 4)]
        + [("huge_9_9_01_laplace_utility.ipynb", b" " * 2_000_000)],
    )
    out = tmp_path / "out"
    limits = CollectLimits(max_file_bytes=1_000_000, max_total_bytes=1_000_000)
    result = collect_canvas(archive, out, notebooks=course, limits=limits)
    rows = by_source(read_csv(out))
    assert rows["huge_9_9_01_laplace_utility.ipynb"]["note"] == "larger than 1 MB"
    assert [rows[f"s{i}_{i}_{i}_01_laplace_utility.ipynb"]["kept"] for i in range(1, 4)] == ["true", "true", "false"]
    assert "total is over 1 MB" in rows["s3_3_3_01_laplace_utility.ipynb"]["note"]
    assert not (out / "s3").exists() and len(result.kept) == 2


def test_ten_thousand_members_are_capped_and_every_one_is_listed(tmp_path, course):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("first_1_1_01_laplace_utility.ipynb", submitted("first"))
        for i in range(9_999):
            archive.writestr(f"spam_{i}_{i}_x{i}.txt", b"")
    (tmp_path / "many.zip").write_bytes(buffer.getvalue())
    out = tmp_path / "out"
    result = collect_canvas(tmp_path / "many.zip", out, notebooks=course)
    rows = read_csv(out)
    assert len(rows) == 10_000 and marker(out / "first" / "01_laplace_utility.ipynb") == "first"
    capped = [r for r in rows if r["note"] == "not read: the archive holds more than 5000 files"]
    assert len(capped) == 5_000 and len(result.kept) == 1


def test_an_archive_listing_far_more_files_than_the_cap_is_refused_before_it_is_parsed(tmp_path, course):
    archive = write_zip(tmp_path / "wide.zip", [(f"f{i}.txt", b"") for i in range(101)])
    with pytest.raises(CollectError, match="lists 101 files"):
        collect_canvas(archive, tmp_path / "out", notebooks=course, limits=CollectLimits(max_files=10))
    assert not (tmp_path / "out").exists()


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
    assert "collect canvas: 4 students" in printed.out and printed.err == ""

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
