"""The user ids runs go by, and ending every process of one: what lets runs as root not see each other.

As root, each unconfined run gets a user id of its own that nobody uses (:func:`unused_user_id`), or the one
``$DPCOURSE_UNCONFINED_UID`` names; after the run, every process of that id is stopped and killed
(:func:`kill_user_processes`: SIGSTOP all, then SIGKILL each, from ``/proc``, so that none can fork away) and
its files in the shared temporary folders are removed.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import time
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

__all__ = [
    "SurvivingProcesses",
    "UNCONFINED_UID_ENV",
    "UNCONFINED_USER_ENV",
    "kill_user_processes",
    "unused_user_id",
]


#: Environment variable naming the bubblewrap executable; set it to a missing path to hide bubblewrap
#: (``.ci/run`` does, to run the grading tests as on a machine without it).
#: The folder that holds the ``dpcourse`` package (``dpcourse/classroom/sandbox/runner.py``, three up).
_CHECKOUT = Path(__file__).resolve().parents[3]

_NOBODY = "nobody"

#: Environment variable naming the user an unconfined run drops to when the grader is root (default ``nobody``).
#: The Gradescope autograder (:mod:`.autograder`) sets it to the user its ``setup.sh`` creates, whose every
#: process it can then kill after grading without touching anyone else's.
UNCONFINED_USER_ENV = "DPCOURSE_UNCONFINED_USER"

#: Environment variable fixing the user id of every unconfined run (for a test that looks at it afterwards);
#: without it each run as root gets an id of its own (:func:`unused_user_id`). The kernel counts RLIMIT_NPROC
#: per user id across the whole machine, and a container that shares the host's processes (buildah's chroot
#: isolation) sees, and would kill after grading, every process of its user's id: other containers of the
#: same image, or the host's own user of that id.
UNCONFINED_UID_ENV = "DPCOURSE_UNCONFINED_UID"

#: Seconds the check that the unconfined user can import the worker may take: importing numpy, nbclient and
#: the package from a cold disk while other containers copy their images (minutes of I/O at a load of 5).
_USER_CHECK_SECONDS = 300


def unused_user_id() -> int:
    """A user id that no account and no process has, mapped in this user namespace: a run's own.

    Drawn at random above 2^20 where the namespace maps that far (the machine's own), else from the
    ids it maps (a rootless container's 65,536), never 0; the few ids taken are left out.

    Returns
    -------
    int
        The id, for one run (:func:`run_job` draws one per unconfined run as root).

    Raises
    ------
    OSError
        If this namespace maps no id beyond root's and those in use.
    """
    taken = {entry.pw_uid for entry in pwd.getpwall()} | {owner for _, owner in _processes()}
    ranges = []
    for line in _read(Path("/proc/self/uid_map")).splitlines() or ["0 0 4294967295"]:
        first, _, count = (int(field) for field in line.split())
        low, high = max(first, 1), min(first + count, 2**31)  # ids inside the namespace, high excluded
        if high > 2**21:  # room enough above the ids accounts are given
            low = max(low, 2**20)
        if low < high:
            ranges.append((low, high))
    for _ in range(1000 if ranges else 0):
        low, high = ranges[secrets.randbelow(len(ranges))]
        uid = low + secrets.randbelow(high - low)
        if uid not in taken:
            return uid
    raise OSError("this user namespace maps no user id that is free for a run of its own")


class SurvivingProcesses(RuntimeError):
    """Processes of a run's user id were still alive after being killed again and again."""


def _processes() -> Iterator[tuple[os.DirEntry[str], int]]:
    """``(/proc entry, owner's user id)`` of every process this pid namespace shows (one that ends meanwhile is
    left out)."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                yield entry, entry.stat(follow_symlinks=False).st_uid
            except OSError:
                continue


def _user_pids(uid: int) -> list[int]:
    """The live processes of ``uid`` (zombies left out: they run nothing and only their parent can reap them)."""
    pids = []
    for entry, owner in _processes():
        if owner == uid:
            try:
                state = Path(entry.path, "stat").read_text().rpartition(")")[2].split()[0]
            except (OSError, IndexError):
                continue
            if state not in ("Z", "X"):
                pids.append(int(entry.name))
    return pids


def _stop_and_kill(pids: Collection[int]) -> None:
    """SIGSTOP every one of ``pids`` first (none of them can fork again meanwhile), then SIGKILL each; a process
    already gone, or no longer ours to signal, is passed over."""
    for signum in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, signum)
            except (ProcessLookupError, PermissionError):
                continue


def kill_user_processes(uid: int, *, rounds: int = 200) -> int:
    """Stop, then kill, every process of ``uid`` until none is left; returns how many were killed.

    Stopping first keeps a process from forking replacements while the others are being killed. Only an id
    whose processes are all the submission's (:func:`unused_user_id`) may be emptied this way. Zombies are not
    counted.

    Parameters
    ----------
    uid : int
        The unprivileged user the submission ran as.
    rounds : int, optional
        How many times to look for processes of ``uid`` and signal them, 20 ms apart.

    Returns
    -------
    int
        How many distinct processes of ``uid`` were found (and signalled).

    Raises
    ------
    ValueError
        If ``uid`` is 0 or the caller's real or effective user.
    SurvivingProcesses
        If processes of ``uid`` are still alive after ``rounds`` rounds.
    """
    if uid in (0, os.getuid(), os.geteuid()):
        raise ValueError(f"uid must be an unprivileged user other than the grader's; got {uid}")
    killed: set[int] = set()
    for _ in range(rounds):
        pids = _user_pids(uid)
        if not pids:
            return len(killed)
        _stop_and_kill(pids)
        killed.update(pids)
        time.sleep(0.02)
    remaining = _user_pids(uid)
    if remaining:
        raise SurvivingProcesses(f"{len(remaining)} processes of uid {uid} survived being killed")
    return len(killed)


def _remove_user_files(uid: int, places: Sequence[str] = ("/tmp", "/var/tmp", "/dev/shm")) -> int:
    """Delete what ``uid`` left at the top of the shared scratch folders (its processes are dead by now), so that
    a submission that filled the disk cannot keep the next run or ``results.json`` from being written, nor leave
    files for a classmate's run to read; returns how many."""
    removed = 0
    for place in places:
        try:
            entries = list(os.scandir(place))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)  # fd-based on Linux: never follows a link out
                else:
                    os.unlink(entry.path)
                removed += 1
            except OSError:
                continue
    return removed


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _with_uid(user: pwd.struct_passwd, uid: int) -> pwd.struct_passwd:
    """``user`` under the id ``uid``: its name, group, home and shell kept."""
    fields = list(user)
    fields[2] = uid
    return pwd.struct_passwd(fields)
