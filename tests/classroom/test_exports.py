"""Reading an LMS's export without trusting it (dpcourse/classroom/exports.py): Canvas's member names read from
the left, the archive's layout decided once, a zip measured before zipfile parses its directory, Gradescope's
metadata read with caps, a folder listed entry by entry, and each student's byte budget."""

from __future__ import annotations

import io
import os
import resource
import struct
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dpcourse.classroom.lms.archive import (
    CollectError,
    CollectLimits,
    _Budget,
    _match_name,
    _Member,
    _open_zip,
    _Skip,
    _zip_members,
)
from dpcourse.classroom.lms.canvas.download import (
    _canvas_anonymous,
    _canvas_assignment,
    _canvas_layout,
    _canvas_quiz,
    _CanvasName,
)
from dpcourse.classroom.lms.folders import _folder_members
from dpcourse.classroom.lms.gradescope.export import _read_metadata

# --------------------------------------------------------------------------- Canvas's names


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        (
            "doejane_123_456_01_laplace_utility.ipynb",
            _CanvasName("123", "doejane", "01_laplace_utility.ipynb", 456, False),
        ),
        ("doejane_LATE_123_456_notes 2_7_8.txt", _CanvasName("123", "doejane", "notes 2_7_8.txt", 456, True)),
        # the upload mimics a quiz upload and a whole member of someone else's: the ids stay the uploader's
        (
            "smithbob_9_10_123_question_1_99_01.ipynb",
            _CanvasName("9", "smithbob", "123_question_1_99_01.ipynb", 10, False),
        ),
        (
            "smithbob_9_10_doejane_LATE_123_456_x.ipynb",
            _CanvasName("9", "smithbob", "doejane_LATE_123_456_x.ipynb", 10, False),
        ),
        ("_123_456_x.ipynb", _CanvasName("123", "", "x.ipynb", 456, False)),  # a user without a sortable name
        ("müllerjosé_7_8_x.ipynb", _CanvasName("7", "müllerjosé", "x.ipynb", 8, False)),
        ("doejane_123_text.html", _CanvasName("123", "doejane", "text.html", 0, False)),  # a text entry
        ("doejane_123_x_456_789_x.ipynb", None),  # the first id must be followed by the file id
        ("doejane_١٢٣_456_x.ipynb", None),  # ids are ASCII digits; "١٢٣" is text, and 456 has no file id after it
        ("doe jane_123_456_x.ipynb", None),  # Canvas keeps only word characters in the name
        ("doejane_123_456_", None),
        ("notes.txt", None),
    ],
)
def test_canvas_assignment_members_are_read_from_the_left(member, expected):
    assert _canvas_assignment(member) == expected


def test_canvas_quiz_and_anonymous_members():
    assert _canvas_quiz("doe_jane123456_question_42_789_01_x.ipynb") == _CanvasName(
        "123456", "doe_jane", "01_x.ipynb", 789, None
    )
    assert _canvas_quiz("doejane_123_456_01_x.ipynb") is None
    assert _canvas_anonymous("LATE_anon_x7Yz9_789_01_x.ipynb") == _CanvasName("anon_x7Yz9", "", "01_x.ipynb", 789, True)
    assert _canvas_anonymous("anon_x7Yz9_link.html") == _CanvasName("anon_x7Yz9", "", "link.html", 0, False)


@pytest.mark.parametrize(
    "name",
    [
        "a" + " " * 60_000 + "x.ipynb",  # the browser's " (N)" pattern once backtracked over every space
        "1" * 60_000 + "a1_question_1_2_x.ipynb",  # the quiz pattern once backtracked over every digit
        "a" + "1" * 60_000 + "x",
        "1_question_" * 6_000,
    ],
)
def test_a_64_kb_member_name_is_read_in_linear_time(name):
    cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    for read in (_canvas_assignment, _canvas_quiz, _canvas_anonymous):
        read(f"doejane_1_2_{name}")
    _match_name(name, {"x": "x"}, resubmissions=True)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu < 5  # quadratic, the first two took about 1 min


def members(*names: str) -> list[_Member]:
    return [_Member(name, i) for i, name in enumerate(names)]


def test_the_canvas_layout_is_decided_for_the_whole_archive():
    quiz = ("doe_jane1_question_4_10_a.ipynb", "smith_bob2_question_4_11_b.ipynb")
    anonymous = ("anon_aaaaa_10_a.ipynb", "LATE_anon_bbbbb_11_b.ipynb")
    assert _canvas_layout(members(*quiz, ".DS_Store")) == "quiz"
    assert _canvas_layout(members(*anonymous)) == "anonymous"
    # one honest assignment member: every quiz-looking upload of the archive reads as an assignment's
    assert _canvas_layout(members(*quiz, "doejane_1_12_c.ipynb")) == "assignment"
    assert _canvas_layout(members(*anonymous, "anon_3_13_d.ipynb", "doejane_1_12_c.ipynb")) == "assignment"
    assert _canvas_layout(members()) == "assignment"


# --------------------------------------------------------------------------- measuring a zip


def zip_bytes(names: list[str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(name, b"")
    return buffer.getvalue()


def with_count(data: bytes, count: int) -> bytes:
    """The archive with its end record's entry counts patched to ``count``."""
    end = data.rfind(b"PK\x05\x06")
    patched = struct.pack("<2H", count, count)
    return data[: end + 8] + patched + data[end + 12 :]


def test_a_zip_whose_end_record_understates_its_entries_is_refused_by_the_entries_really_there(tmp_path):
    limits = CollectLimits(max_files=100)
    path = tmp_path / "patched.zip"
    path.write_bytes(with_count(zip_bytes([f"f{i}" for i in range(101)]), 1))
    with pytest.raises(CollectError, match="refused before reading: it lists more than 100 files"):
        with _open_zip(path, limits):
            pass
    path.write_bytes(with_count(zip_bytes([f"f{i}" for i in range(100)]), 1))
    with _open_zip(path, limits) as archive:  # at the cap, whatever the end record says
        assert len(_zip_members(archive)) == 100


def test_a_central_directory_too_large_for_the_cap_is_refused_without_walking_it(tmp_path):
    path = tmp_path / "long_names.zip"
    path.write_bytes(zip_bytes([f"{i:04d}" + "x" * 2_000 for i in range(60)]))
    with pytest.raises(CollectError, match=r"central directory is [\d,]+ bytes, more than 100 files can take"):
        with _open_zip(path, CollectLimits(max_files=100)):
            pass


def test_member_data_that_looks_like_a_central_directory_is_only_data(tmp_path):
    """Only zipfile's read of the directory is measured: a member holding central-directory headers is read."""
    header = b"PK\x01\x02" + bytes(42)
    path = tmp_path / "data.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("a", header * 50)
    with _open_zip(path, CollectLimits(max_files=2)) as archive:
        assert archive.read("a") == header * 50


# --------------------------------------------------------------------------- Gradescope's metadata


def metadata_member(text: str | bytes, name: str = "submission_metadata.yml") -> _Member:
    data = text.encode() if isinstance(text, str) else text
    return _Member(name, 0, open=lambda: io.BytesIO(data), size=len(data))


SUBMISSION = """\
submission_7:
  :submitters:
  - :name: Zoë
    :sid: '0012'
    :email: Zoe@Example.edu
  - :name: Only A Name
  - :name: Raw Number
    :sid: 0034
  :created_at: !ruby/object:ActiveSupport::TimeWithZone
    utc: 2026-11-20 10:00:00.5 Z
    zone: !ruby/object:ActiveSupport::TimeZone
      name: Etc/UTC
    time: 2026-11-20 10:00:00.5 Z
  :score: !ruby/object:BigDecimal 18:0.1e2
submission_8: just a string
"""


def test_metadata_people_are_their_sid_and_email_as_written_never_a_name_alone():
    root, submissions = _read_metadata([metadata_member(SUBMISSION)], CollectLimits())
    assert root == ""
    entry = submissions["submission_7"]
    assert not isinstance(entry, str)
    assert [(who.sid, who.email, who.name) for who in entry.people] == [
        ("0012", "zoe@example.edu", "zoe"),
        ("0034", "", "0034"),  # an unquoted 0034 is still the sid as Gradescope wrote it, not 28 (octal)
    ]
    assert entry.created_at == datetime(2026, 11, 20, 10, 0, 0, 500_000, tzinfo=UTC) and entry.number == 7
    assert "no submitter" in str(submissions["submission_8"])


def test_the_top_metadata_is_gradescopes_and_two_at_the_top_are_refused():
    ours = metadata_member(SUBMISSION, "export/submission_metadata.yml")
    students = metadata_member("submission_7: {}", "export/submission_7/submission_metadata.yml")
    root, submissions = _read_metadata([students, ours], CollectLimits())
    assert root == "export/" and "submission_7" in submissions and not students.problem
    twin = metadata_member(SUBMISSION, "other/submission_metadata.yml")
    with pytest.raises(CollectError, match="two submission_metadata.yml at the top"):
        _read_metadata([metadata_member(SUBMISSION, "export/submission_metadata.yml"), twin], CollectLimits())
    twice = "".join(f"submission_1:\n  :submitters:\n  - :sid: '{sid}'\n" for sid in (1, 2))
    _, submissions = _read_metadata([metadata_member(twice)], CollectLimits())
    assert submissions["submission_1"] == "folder 'submission_1' is listed twice in submission_metadata.yml"


def merge_bomb(levels: int) -> str:
    return "\n".join(["l0: &l0 {k: v}"] + [f"l{i}: &l{i} {{<<: [*l{i - 1}, *l{i - 1}]}}" for i in range(1, levels + 1)])


def laughs(levels: int) -> str:
    """Aliases of aliases: composing shares the nodes, but every alias is counted."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("text", "limits", "message"),
    [
        (merge_bomb(26), CollectLimits(), "uses YAML merge keys"),
        ("a: {<<: {b: 1}}", CollectLimits(), "uses YAML merge keys"),
        ("a: " + "[" * 40 + "]" * 40, CollectLimits(), "nested deeper than 32 levels"),
        (laughs(9), CollectLimits(max_metadata_aliases=50), "more than 50 YAML aliases"),
        ("[" + ", ".join(["1"] * 1_000) + "]", CollectLimits(max_metadata_nodes=500), "more than 500 YAML nodes"),
        (SUBMISSION, CollectLimits(metadata_seconds=1e-9), "took more than 1e-09 s to read"),
        (SUBMISSION, CollectLimits(max_metadata_bytes=100), "larger than 0.0001 MB"),
        (b"\xff\xfe not utf-8", CollectLimits(), "not readable YAML"),
        ("a: [unclosed", CollectLimits(), "not readable YAML"),
        ("- a list", CollectLimits(), "not a mapping of submission folders"),
    ],
)
def test_metadata_over_a_cap_or_with_merge_keys_is_refused_fast(text, limits, message):
    cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    with pytest.raises(CollectError, match=message):
        _read_metadata([metadata_member(text)], limits)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu < 10  # the merge bomb ran past 300 s


def test_aliases_under_the_cap_are_read_without_being_expanded():
    text = laughs(6) + "\nsubmission_1:\n  :submitters: *a6\n"  # 10^7 leaves if expanded
    _, submissions = _read_metadata([metadata_member(text)], CollectLimits())
    assert "no submitter with a sid or e-mail" in str(submissions["submission_1"])


# --------------------------------------------------------------------------- folders


def test_a_folder_is_refused_once_its_entries_pass_the_cap(tmp_path):
    root = tmp_path / "submissions"
    for student in ("ada", "bob"):
        (root / student / "deep" / "deeper").mkdir(parents=True)
        (root / student / "01.ipynb").write_text("{}")
        (root / student / "deep" / "deeper" / "x.ipynb").write_text("{}")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        found = _folder_members(root, fd, CollectLimits(max_files=10))  # 2 tops, 4 folders, 4 files
        assert sorted((m.name, m.problem) for m in found) == [
            ("ada/01.ipynb", ""),
            ("ada/deep/deeper/x.ipynb", "inside a subfolder of the student's folder"),
            ("bob/01.ipynb", ""),
            ("bob/deep/deeper/x.ipynb", "inside a subfolder of the student's folder"),
        ]
        assert {m.folder for m in found if not m.problem} == {"ada", "bob"}
        with pytest.raises(CollectError, match="refused: it holds more than 9 files and folders"):
            _folder_members(root, fd, CollectLimits(max_files=9))
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- budgets


def test_each_students_bytes_are_her_own_and_a_file_read_twice_is_charged_once():
    limits = CollectLimits(max_student_bytes=250, max_file_bytes=1_000)
    files = [_Member(f"f{i}", i, open=lambda: io.BytesIO(b"x" * 100), size=100) for i in range(4)]
    budget = _Budget(limits)
    sink: list[bytes] = []
    assert budget.read(files[0], sink.append, "ann") == 100
    assert budget.read(files[0], sink.append, "ann") == 100  # read again (to be written): not charged again
    assert budget.read(files[1], sink.append, "ann") == 100
    with pytest.raises(_Skip, match="this student's files are over 0.00025 MB"):
        budget.read(files[2], sink.append, "ann")
    with pytest.raises(_Skip, match="this student's files are over"):
        budget.read(files[3], sink.append, "ann")
    assert budget.read(files[3], sink.append, "ben") == 100  # ann's reading costs ben nothing


def test_new_limits_are_validated():
    for name in ("max_student_files", "max_student_bytes", "max_metadata_depth", "max_metadata_aliases"):
        with pytest.raises(ValueError, match=name):
            CollectLimits(**{name: 0})
    with pytest.raises(ValueError, match="metadata_seconds"):
        CollectLimits(metadata_seconds=float("inf"))


def test_an_unreadable_path_is_one_clear_error(tmp_path: Path):
    with pytest.raises(CollectError, match="not a readable zip archive"):
        with _open_zip(tmp_path / "missing.zip", CollectLimits()):
            pass
