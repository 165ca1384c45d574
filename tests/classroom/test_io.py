"""The classroom's file and text helpers (:mod:`dpcourse.classroom.io`): atomic writes (issue 31, item 4), capped
reads that never follow a link."""

from __future__ import annotations

import os

import pytest

from dpcourse.classroom import io as files
from dpcourse.classroom.grading.reports import COLUMNS, write_report
from dpcourse.classroom.io import NotRegularFile, atomic_csv, atomic_text, atomic_write, read_capped
from tests.classroom.test_reports import rows_for

# --------------------------------------------------------------------------- atomic writes (issue 31, item 4)


def _folder_after(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


@pytest.mark.parametrize("error", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_a_failure_mid_write_leaves_the_old_file_and_no_temporary_file(tmp_path, error):
    target = tmp_path / "report.csv"
    target.write_text("the old report\n")
    seen = []

    def half_then_fail(handle):
        handle.write("half of the new ")
        handle.flush()
        seen.append(target.read_text())  # what a reader sees while the new file is being written
        raise error

    with pytest.raises(type(error)):
        atomic_write(target, half_then_fail)
    assert seen == ["the old report\n"]  # never a half-written file
    assert target.read_text() == "the old report\n"
    assert _folder_after(tmp_path) == ["report.csv"]  # the temporary file is gone


def test_a_csv_whose_rows_fail_half_way_leaves_the_old_csv(tmp_path):
    target = write_report(rows_for("alice", {"max-queries": "passed"}), tmp_path / "r.csv")
    before = target.read_bytes()

    def rows():
        yield ["bob", "small", "max-queries", "passed"]
        raise ValueError("a row that cannot be made")

    with pytest.raises(ValueError, match="cannot be made"):
        atomic_csv(target, COLUMNS, rows())
    assert target.read_bytes() == before and _folder_after(tmp_path) == ["r.csv"]


def test_a_rename_that_fails_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "summary.html"
    target.mkdir()  # os.replace cannot put a file over a folder
    (target / "keep").write_text("x")
    with pytest.raises(OSError):
        atomic_text(target, "<p>new</p>")
    assert _folder_after(tmp_path) == ["summary.html"] and (target / "keep").read_text() == "x"


def test_the_new_file_is_synced_to_the_disk_before_it_replaces_the_old(tmp_path, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(files.os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(files.os, "replace", lambda a, b: (calls.append("replace"), real_replace(a, b))[1])
    atomic_text(tmp_path / "f.md", "complete\n")
    assert calls == ["fsync", "replace"]
    assert (tmp_path / "f.md").read_text() == "complete\n"


def test_bytes_are_written_atomically_too(tmp_path):
    path = atomic_write(tmp_path / "sub" / "n.ipynb", lambda handle: handle.write(b"\x00\xff"), binary=True)
    assert path.read_bytes() == b"\x00\xff" and _folder_after(path.parent) == ["n.ipynb"]


# --------------------------------------------------------------------------- capped reads (issue 41)


def test_a_capped_read_stops_one_byte_past_the_cap(tmp_path):
    path = tmp_path / "big.ipynb"
    path.write_bytes(b"x" * 1000)
    data, info = read_capped(path, 10)
    assert data == b"x" * 11 and info.st_size == 1000


def test_a_capped_read_never_follows_a_link(tmp_path):
    (tmp_path / "secret").write_text("the instructor's key")
    (tmp_path / "answer.ipynb").symlink_to(tmp_path / "secret")
    with pytest.raises(OSError):
        read_capped(tmp_path / "answer.ipynb", 100)


def test_a_capped_read_refuses_a_fifo_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegularFile, match="not a regular file"):
        read_capped(tmp_path / "pipe", 100)
