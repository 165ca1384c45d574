"""The tests' readable copy of the environment (ordinary_python.py): one for a whole pytest run."""

import os
import subprocess
import sys

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
