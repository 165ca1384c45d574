"""The tests' readable copy of the environment (ordinary_python.py): one for a whole pytest run."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.classroom import ordinary_python


def test_a_run_makes_one_readable_copy_and_its_workers_share_it(tmp_path, monkeypatch):
    made = []

    def readable_copy(folder):
        made.append(folder)
        (folder / "venv" / "bin").mkdir(parents=True)
        return folder / "venv" / "bin" / "python"

    monkeypatch.setattr(ordinary_python, "readable_copy", readable_copy)
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "half-made").touch()  # a process that died while making it
    first = ordinary_python._shared_readable_copy(tmp_path)
    assert first == tmp_path / "copy" / "venv" / "bin" / "python" and made == [tmp_path / "copy"]
    assert not (tmp_path / "copy" / "half-made").exists()
    assert ordinary_python._shared_readable_copy(tmp_path) == first and len(made) == 1


def test_the_main_process_names_the_shared_folder_and_its_workers_inherit_it():
    folder = os.environ.get(ordinary_python.SHARED_FOLDER_ENV)
    assert folder and os.path.isdir(folder) and os.stat(folder).st_mode & 0o055 == 0o055
    code = f"import os; print(os.environ[{ordinary_python.SHARED_FOLDER_ENV!r}])"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert child.stdout.strip() == folder


def test_a_copy_leaves_out_what_is_never_read_and_keeps_the_rest_linked(tmp_path):
    source = tmp_path / "source"
    for part in ("lib/python3.11/site-packages/pkg", "lib/python3.11/test", "lib/python3.11/json", "bin", "book/bin"):
        (source / part).mkdir(parents=True)
    for part in (
        "lib/python3.11/json/decoder.py",
        "lib/python3.11/site-packages/pkg/x.py",
        "bin/python",
        "book/pyvenv.cfg",
    ):
        (source / part).write_text("x")
    (source / "lib64").symlink_to("lib")
    leave_out = frozenset({("lib", "python3.11", "site-packages"), ("lib", "python3.11", "test"), ("book",)})
    ordinary_python._copy_tree(source, tmp_path / "copy", leave_out)
    copy = tmp_path / "copy"
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*")) == [
        "bin",
        "bin/python",
        "lib",
        "lib/python3.11",
        "lib/python3.11/json",
        "lib/python3.11/json/decoder.py",
        "lib64",
    ]
    assert (copy / "lib64").is_symlink()
    assert (copy / "bin" / "python").stat().st_ino == (source / "bin" / "python").stat().st_ino  # a hard link


def test_the_copy_of_this_environment_runs_the_grader_without_the_base_site_or_nested_environments():
    python = ordinary_python.readable_environment()
    code = "import sys, ipykernel, nbclient, numpy, scipy, dpcourse.classroom.sandbox.worker; print(sys.path)"
    done = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    copy = python.parents[2]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if sys.prefix != sys.base_prefix:  # a virtual environment that does not include the base's site-packages
        assert not (copy / "py" / "lib" / version / "site-packages").exists()
    assert not any((copy / "venv" / name / "pyvenv.cfg").exists() for name in ("book", "packaging-check"))
    nested = [name for name in ("book", "packaging-check") if (Path(sys.prefix) / name).is_dir()]
    assert [name for name in nested if (copy / "venv" / name).exists()] == []


def test_nested_environments_are_found_at_their_own_level_or_one_below(tmp_path):
    (tmp_path / "venv" / "book").mkdir(parents=True)
    (tmp_path / "venv" / "book" / "pyvenv.cfg").write_text("home = /x\n")
    (tmp_path / "venv" / "packaging-check" / "0123abcd").mkdir(parents=True)
    (tmp_path / "venv" / "packaging-check" / "0123abcd" / "pyvenv.cfg").write_text("home = /x\n")
    (tmp_path / "venv" / "lib" / "python3.11").mkdir(parents=True)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /x\n")
    _, nested = ordinary_python._unused_by_the_environment(tmp_path / "venv")
    assert nested == {("book",), ("packaging-check",)}


def test_a_base_interpreter_every_user_can_run_is_not_copied_and_one_behind_a_0700_folder_is():
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    folder = Path(tempfile.mkdtemp())  # under /tmp: every folder above it searchable, unlike pytest's own
    try:
        folder.chmod(0o755)
        base = folder / "base"
        for path in (base / "bin", base / "lib" / version):
            path.mkdir(parents=True)
        for path in (base, base / "bin", base / "lib", base / "lib" / version):
            path.chmod(0o755)  # whatever the umask
        assert ordinary_python._every_user_can_run(base)  # as /usr: used as it is
        folder.chmod(0o700)  # as pyenv's Python under /root
        assert not ordinary_python._every_user_can_run(base)
        folder.chmod(0o755)
        (base / "lib" / version).chmod(0o750)  # a standard library others cannot read
        assert not ordinary_python._every_user_can_run(base)
    finally:
        shutil.rmtree(folder)
