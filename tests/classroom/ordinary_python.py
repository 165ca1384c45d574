"""A Python environment an ordinary user can run, for the tests that run the grader as one.

As root, the tests' own interpreter often lives where no other user may enter (pyenv's Python under a
0700 ``/root``, a virtual environment built on it). :func:`readable_copy` makes a copy of the base
interpreter and of the virtual environment that every user can read, as hard links where the file
system allows (seconds, no extra disk) and plain copies elsewhere, and points the copy's
``pyvenv.cfg`` at the copied interpreter. Nothing of the originals is changed: hard links share the
files, which are already world-readable; only the folders above them were not.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def _copy_tree(source: Path, target: Path) -> None:
    done = subprocess.run(["cp", "-al", str(source), str(target)], capture_output=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, symlinks=True)


def readable_copy(folder: Path) -> Path:
    """The ``python`` of a copy of this environment under ``folder`` that every user can read and run."""
    base = Path(sys.base_prefix).resolve()
    venv = Path(sys.prefix).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    _copy_tree(base, folder / "py")
    if venv == base:
        python = folder / "py" / "bin" / Path(sys.executable).name
    else:
        _copy_tree(venv, folder / "venv")
        config = folder / "venv" / "pyvenv.cfg"
        lines = [
            f"home = {folder / 'py' / 'bin'}" if line.startswith("home") else line
            for line in config.read_text().splitlines()
        ]
        config.unlink()  # a hard link: write a new file instead of changing the original's
        config.write_text("\n".join(lines) + "\n")
        for link in (folder / "venv" / "bin").iterdir():
            if link.is_symlink() and Path(os.readlink(link)).is_absolute() and str(base) in os.readlink(link):
                target = os.readlink(link).replace(str(base), str(folder / "py"))
                link.unlink()
                link.symlink_to(target)
        python = folder / "venv" / "bin" / "python"
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o555)
    return python
