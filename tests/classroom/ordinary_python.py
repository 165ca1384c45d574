"""A Python environment an ordinary user can run, for the tests that run the grader as one.

As root, the tests' own interpreter often lives where no other user may enter (pyenv's Python under a
0700 ``/root``, a virtual environment built on it). :func:`readable_copy` makes a copy of the virtual
environment that every user can read, as hard links where the file system allows (seconds, no extra
disk) and plain copies elsewhere, and of the base interpreter too unless every user can already run it
(a system Python under ``/usr``), pointing the copy's ``pyvenv.cfg`` at the copied interpreter.
Nothing of the originals is changed: hard links share the files, which are already world-readable;
only the folders above them were not.

The checkout may sit in such a folder too (a clone in ``mktemp -d``'s 0700 folder, or under ``/root``),
so the copy also holds the checkout's ``dpcourse/`` and ``tests/`` (:func:`copied_checkout`), and its
environment imports ``dpcourse`` from there instead of through the editable install's path to the checkout.
A command meant to run from the checkout runs from :func:`copied_checkout` instead.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

#: Paths below a folder, each as a tuple of names.
Subtrees = frozenset[tuple[str, ...]]

#: The checkout these tests belong to.
ROOT = Path(__file__).resolve().parents[2]


def _copy_tree(source: Path, target: Path, leave_out: Subtrees = frozenset()) -> None:
    """``target`` as a copy of ``source`` in hard links (plain copies where the file system refuses them), without
    the subtrees ``leave_out`` names (paths relative to ``source``, as tuples of names)."""
    if not leave_out:
        _link_or_copy([source], target, whole=True)
        return
    on_the_way = {path[:depth] for path in leave_out for depth in range(1, len(path))}

    def walk(relative: tuple[str, ...]) -> None:
        here = target.joinpath(*relative)
        here.mkdir(exist_ok=True)
        shutil.copystat(source.joinpath(*relative), here)
        whole = []
        for entry in sorted(source.joinpath(*relative).iterdir()):
            path = (*relative, entry.name)
            if path in leave_out:
                continue
            if path in on_the_way and entry.is_dir() and not entry.is_symlink():
                walk(path)
            else:
                whole.append(entry)
        _link_or_copy(whole, here, whole=False)

    walk(())


def _link_or_copy(entries: list[Path], target: Path, *, whole: bool) -> None:
    """``cp -al`` of ``entries`` to ``target`` itself (``whole``: one folder becomes ``target``) or into it."""
    if not entries:
        return
    command = ["cp", "-al", *map(str, entries), str(target)]
    if subprocess.run(command, capture_output=True, check=False).returncode == 0:
        return
    for entry in entries:
        destination = target if whole else target / entry.name
        if destination.is_dir() and not destination.is_symlink():
            shutil.rmtree(destination, ignore_errors=True)
        elif destination.exists() or destination.is_symlink():
            destination.unlink()
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, destination, symlinks=True)
        else:
            shutil.copy2(entry, destination, follow_symlinks=False)


def _unused_by_the_environment(venv: Path) -> tuple[Subtrees, Subtrees]:
    """What of the base interpreter and of the virtual environment a run never reads, left out of the copy.

    The base's own site-packages when this environment does not put it on ``sys.path`` (venv's default,
    ``include-system-site-packages = false``) and the standard library's test suite; in the environment, the
    environments nested in it (``make book``'s ``.venv/book``, test_packaging's ``.venv/packaging-check``): on
    the development machine 107,000 of the 161,000 entries a full copy linked, made and removed once per pytest run.
    """
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    from_base = {("lib", version, "test")}
    base_site = Path(sysconfig.get_path("purelib", vars={"base": sys.base_prefix})).resolve()
    if all(Path(entry).resolve() != base_site for entry in sys.path if entry):
        from_base.add(("lib", version, "site-packages"))
    nested = {(entry.name,) for entry in venv.iterdir() if entry.is_dir() and _holds_an_environment(entry)}
    return frozenset(from_base), frozenset(nested)


def _holds_an_environment(folder: Path) -> bool:
    """Whether ``folder`` is a virtual environment or holds one directly (``packaging-check/<key>/``)."""
    candidates = [folder, *(child for child in folder.iterdir() if child.is_dir() and not child.is_symlink())]
    return any((candidate / "pyvenv.cfg").is_file() for candidate in candidates)


def copied_checkout(python: Path | str) -> Path:
    """The copy of the checkout's ``dpcourse/`` and ``tests/`` beside a :func:`readable_copy`'s ``python``."""
    return Path(python).parents[2] / "checkout"


def _import_from_the_copy(prefix: Path, checkout: Path) -> None:
    """Make the copied environment at ``prefix`` import dpcourse from ``checkout``, not from the original checkout."""
    site = prefix / Path(sysconfig.get_path("purelib")).relative_to(sys.prefix)
    for editable in site.glob("__editable__*dpcourse*"):
        editable.unlink()  # a hard link: the original environment keeps its own
    (site / "dpcourse-readable-checkout.pth").write_text(f"{checkout}\n")


def _every_user_can_run(base: Path) -> bool:
    """Whether every user can already reach and run the base interpreter at ``base`` (its ``bin/`` and standard
    library searchable and readable by others, and every folder above them searchable): a system Python under
    ``/usr`` is; pyenv's under a 0700 ``/root`` is not. Copying ``/usr`` would copy the whole system instead."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for path in (base / "bin", base / "lib" / version):
        if not path.is_dir() or path.stat().st_mode & 0o005 != 0o005:
            return False
        if any(not folder.stat().st_mode & stat.S_IXOTH for folder in path.parents):
            return False
    return True


def _point_at_the_copied_base(venv_copy: Path, base: Path, base_copy: Path) -> None:
    """The copied environment's ``pyvenv.cfg`` and interpreter links pointed at ``base_copy`` instead of ``base``."""
    config = venv_copy / "pyvenv.cfg"
    lines = [
        f"home = {base_copy / 'bin'}" if line.startswith("home") else line for line in config.read_text().splitlines()
    ]
    config.unlink()  # a hard link: write a new file instead of changing the original's
    config.write_text("\n".join(lines) + "\n")
    for link in (venv_copy / "bin").iterdir():
        if link.is_symlink() and Path(os.readlink(link)).is_absolute() and str(base) in os.readlink(link):
            target = os.readlink(link).replace(str(base), str(base_copy))
            link.unlink()
            link.symlink_to(target)


def readable_copy(folder: Path) -> Path:
    """The ``python`` of a copy of this environment under ``folder`` that every user can read and run, importing a
    copy of this checkout's package (:func:`copied_checkout`)."""
    base = Path(sys.base_prefix).resolve()
    venv = Path(sys.prefix).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    if venv == base:
        _copy_tree(base, folder / "py")
        python = folder / "py" / "bin" / Path(sys.executable).name
    else:
        from_base, from_venv = _unused_by_the_environment(venv)
        _copy_tree(venv, folder / "venv", from_venv)
        if not _every_user_can_run(base):  # else the copy's interpreter stays the base's own (a system Python's /usr)
            _copy_tree(base, folder / "py", from_base)
            _point_at_the_copied_base(folder / "venv", base, folder / "py")
        python = folder / "venv" / "bin" / "python"
    checkout = copied_checkout(python)
    checkout.mkdir()
    for part in ("dpcourse", "tests"):
        _copy_tree(ROOT / part, checkout / part)
    _import_from_the_copy(python.parents[1], checkout)
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o555)
    return python


#: The environment variable naming a folder that every test process of one pytest run shares (set by
#: ``tests/conftest.py`` before pytest-xdist starts its workers): the first process to need a
#: :func:`readable_copy` makes it there, the others wait for it and use it.
SHARED_FOLDER_ENV = "DPCOURSE_TEST_READABLE_PYTHON_FOLDER"


def _shared_readable_copy(folder: Path) -> Path:
    """The ``python`` of the :func:`readable_copy` in ``folder``, made by whichever process asks first (under a lock
    on a file there: a process that dies while making it releases the lock, and the next starts afresh)."""
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = folder / "python"
        if made.exists():
            return Path(made.read_text())
        shutil.rmtree(folder / "copy", ignore_errors=True)  # what a process that died while making it left
        python = readable_copy(folder / "copy")
        made.write_text(str(python))
        return python


@functools.cache
def readable_environment() -> Path:
    """The ``python`` of one :func:`readable_copy` for this pytest run (all its workers: :data:`SHARED_FOLDER_ENV`),
    or, outside such a run, for this process; removed when the run (or the process) ends."""
    shared = os.environ.get(SHARED_FOLDER_ENV)
    if shared:
        return _shared_readable_copy(Path(shared))
    folder = Path(tempfile.mkdtemp(prefix="dpcourse-readable-python-"))  # pytest's own folders are root's 0700
    atexit.register(shutil.rmtree, folder, True)  # hard links and folders only: the originals stay
    return readable_copy(folder)


def shared_folder() -> Path:
    """A new folder for :data:`SHARED_FOLDER_ENV`, outside pytest's own (root's 0700) and open to every user."""
    folder = Path(tempfile.mkdtemp(prefix="dpcourse-readable-python-"))
    folder.chmod(0o755)
    return folder


def grade_command(argv: Sequence[str], *, timeout: float = 900) -> int:
    """``python -m dpcourse`` with ``argv`` as an instructor runs it; its exit status.

    In this process, except as root with ``--sandbox none`` when ``nobody`` cannot run this environment (pyenv's
    Python under a 0700 ``/root``, a checkout in a 0700 folder): ``grade`` then refuses to run students' code as
    root, as it should, so the command runs from :func:`readable_environment`, where the grader drops each
    submission to ``nobody`` as on an instructor's machine.
    """
    from dpcourse.classroom.cli import main
    from dpcourse.classroom.sandbox.runner import unconfined_user

    unconfined = any(a == "none" and b == "--sandbox" for b, a in zip(argv, argv[1:], strict=False))
    if not unconfined or os.geteuid() != 0 or unconfined_user() is not None:
        return main(list(argv))
    python = readable_environment()
    command = [str(python), "-m", "dpcourse", *argv]
    return subprocess.run(command, cwd=copied_checkout(python), timeout=timeout, check=False).returncode


@functools.cache
def venv_imports_another_checkout() -> str | None:
    """Why a run in bubblewrap would grade with another checkout's code, or None.

    The sandbox's worker imports dpcourse as this venv does, without PYTHONPATH, and only this checkout's
    package is mounted in it: where the venv's dpcourse is an editable install of another checkout (a git
    worktree beside the main one), the worker cannot import this checkout's and the run is not this code's.
    """
    code = "import importlib.util; print(importlib.util.find_spec('dpcourse').origin)"
    done = subprocess.run([sys.executable, "-I", "-c", code], cwd="/", capture_output=True, text=True, check=False)
    origin = Path(done.stdout.strip() or "/nonexistent")
    if ROOT in origin.parents:
        return None
    return f"this venv's dpcourse is {origin.parent}, not {ROOT}'s: bubblewrap's worker would run that one"
