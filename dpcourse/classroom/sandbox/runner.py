"""Where a submission runs: bubblewrap's sandbox, or (only when asked) an unconfined process, and the
channel its result comes back on.

**Fail closed.** :func:`choose_sandbox` runs bubblewrap once on ``true`` with the same namespaces a
submission gets, and raises :class:`SandboxUnavailable` with bwrap's own message when that fails
(missing, or refused by the kernel, e.g. in an unprivileged container). Only ``--sandbox none``
runs submissions without it.

**The sandbox** (bubblewrap): new user, pid, IPC, UTS, cgroup and network namespaces (no network),
all capabilities dropped, a new session (no terminal injection), the Python environment and the
package read-only, and nothing of the host writable. The sandbox's own root and ``/dev`` are
remounted read-only once everything is mounted, so the only writable places are two size-capped
tmpfs mounts: ``/tmp`` of :attr:`Limits.disk_bytes`, which also holds the home folder, and
``/dev/shm`` of :attr:`Limits.shm_bytes` (POSIX shared memory, semaphores). The notebook is not a file
there: the worker gets it on standard input and answers on standard output (:mod:`.worker`). The
worker is process 1 of the pid namespace (``--as-pid-1``): the kernel, its child, can neither signal
it (the kernel ignores signals to a namespace's init from inside it) nor open its pipes (it is not
dumpable).

**Limits**, set on the sandbox's first process and inherited: address space
(``--memory`` less both tmpfs mounts, so that files count against it too), file size, open files
and no core dumps; where the grader may create a control group (:class:`_ControlGroup`) also its
``pids.max`` and memory limit. Calls that would store memory outside all of these (``memfd_create``,
SysV shared memory, message queues and semaphores) are refused by a seccomp filter
(:func:`storage_filter`). **Processes**: each run has its own budget. As an ordinary user,
``RLIMIT_NPROC`` is set inside the sandbox's user namespace (:data:`_SET_PROCESS_LIMIT`, the first
program bubblewrap starts): the kernel counts a user's processes per user namespace and checks every
level up to the grader's, so the limit binds this run's processes only, while the level above checks
all runs together against the grader's own limit. As root, the kernel holds no process of root to
``RLIMIT_NPROC``, not even in a user namespace: the run's ``pids.max`` is its budget. A run that
hoards processes therefore fails its own forks, never a classmate's run nor the grader's, as long as
the runs together stay under the grader's own limit (:func:`max_parallel_runs`). A deadline for the
whole run, after which the process group is killed (with ``--die-with-parent`` and the pid
namespace, everything inside dies with it). **Nothing outlives its run** where it has a control group: when
the run ends, every process in the group is killed, one that left the process group (a double fork,
``setsid``) included, and the grader waits until the group is empty (:meth:`_ControlGroup.end_processes`).

**Unconfined** (``--sandbox none``): the worker runs in its own session and process group,
detached (its parent is not the grader), with the same resource limits; a stopped worker is
continued; when the grader runs as root and ``nobody`` can run this Python, it runs as ``nobody``.
It can read and write whatever its user can. Each submission's result still comes back signed over
a pipe, and the grader reads it with a size cap and a deadline. Its processes are ended with the run by its
control group (as root), and by its user id of its own (as root, dropped to ``nobody``); as an ordinary user
there is neither, and a process that left the session can outlive the run.
"""

from __future__ import annotations

import functools
import os
import pwd
import re
import resource
import secrets
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .worker import FRAME, sign

__all__ = [
    "BWRAP_ENV",
    "Limits",
    "RunResult",
    "SandboxUnavailable",
    "SurvivingProcesses",
    "UNCONFINED_UID_ENV",
    "UNCONFINED_USER_ENV",
    "bind_failure",
    "bwrap_path",
    "check_sandbox_name",
    "MIN_MEMORY_BYTES",
    "choose_sandbox",
    "kill_user_processes",
    "max_parallel_runs",
    "run_job",
    "sandbox_command",
    "storage_filter",
    "unconfined_user",
    "unused_user_id",
    "why_no_unconfined_user",
]

#: Environment variable naming the bubblewrap executable; set it to a missing path to hide bubblewrap
#: (``.ci/run`` does, to run the grading tests as on a machine without it).
#: The folder that holds the ``dpcourse`` package (``dpcourse/classroom/sandbox/runner.py``, three up).
_CHECKOUT = Path(__file__).resolve().parents[3]
BWRAP_ENV = "DPCOURSE_BWRAP"
SCALE_SECTION = "Grading at scale"
_RESULT_CAP = 32_000_000
_STDERR_CAP = 20_000
_GRACE_SECONDS = 30  # beyond the notebook's own limit: kernel start-up and shut-down
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
_MiB = 1024**2
#: The smallest ``--memory`` a run can be given. Measured (bubblewrap 0.8, Python 3.11, x86_64; as root
#: with a control group and as an ordinary user without one) by grading the solutions of notebooks 01
#: (numpy, matplotlib, ipywidgets, dpcourse; scipy.sparse on the way) and 06 through ``grade`` with the
#: command line's split (``/tmp`` a quarter of it, ``/dev/shm`` 64 MiB, the rest address space): 512,
#: 576 and 608 MiB fail (imports cannot map their libraries, a kernel that does not start; 576 passed
#: once of two), 640 MiB passes every time (01 both ways, 06 as root). 768 MiB leaves the kernel
#: 512 MiB of address space, 96 MiB over the 416 MiB that sufficed.
MIN_MEMORY_BYTES = 768 * _MiB
#: Processes the grader keeps for itself (its threads, bubblewrap's monitors) in :func:`max_parallel_runs`.
_GRADER_RESERVE = 64
#: The first program in the sandbox (``-I -S``: nothing of the environment runs first). It lowers
#: RLIMIT_NPROC inside the run's own user namespace, where the count covers this run alone; loads the
#: seccomp program of :func:`storage_filter` (given in hex; none when empty); then becomes ``inner``.
#: Failing either, it stops with a line starting ``sandbox:`` and nothing of the submission runs.
_SET_PROCESS_LIMIT = """\
import ctypes, os, resource, sys
limit, program = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
if program:
    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    loaded = libc.prctl(38, 1, None, 0, 0) == 0 and libc.prctl(
        22, 2, ctypes.cast(ctypes.pointer(Program(len(program) // 8, program)), ctypes.c_void_p), 0, 0) == 0
    if not loaded:
        sys.exit("sandbox: could not load the seccomp filter: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[3], sys.argv[3:])
"""
#: Calls that store memory no limit here counts (RLIMIT_AS misses a memfd written with write(2) and a
#: detached SysV segment; the tmpfs sizes do not cover them; only a memory control group would): per
#: machine, its seccomp audit architecture and the numbers of memfd_create, memfd_secret, shmget,
#: msgget and semget. The kernel and the worker use none of them.
_STORAGE_SYSCALLS = {
    "x86_64": (0xC000003E, (319, 447, 29, 68, 64)),
    "aarch64": (0xC00000B7, (279, 447, 194, 186, 190)),
}
_X32_BIT = 0x40000000
_BPF_LD_ABS_W, _BPF_JEQ_K, _BPF_JGE_K, _BPF_RET_K = 0x20, 0x15, 0x35, 0x06
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000


class SandboxUnavailable(RuntimeError):
    """No working sandbox, and the instructor did not pass ``--sandbox none``: nothing may run."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission's run.

    Attributes
    ----------
    cell_timeout : float
        Seconds one cell may run before it is recorded as timed out (and the notebook restarted without it).
    notebook_timeout : float
        Seconds the whole notebook may run; the grader ends the run 30 s after it (kernel start and stop).
    memory_bytes : int
        Everything the run may store, ≥ 1: the address space (``RLIMIT_AS``) is this less ``disk_bytes``
        and ``shm_bytes`` (:attr:`address_space`), and a control group's memory limit where one is made.
    output_bytes : int
        The most output one cell keeps (as JSON); more is replaced by a note.
    file_bytes : int
        The largest file the run may write (``RLIMIT_FSIZE``).
    disk_bytes : int
        The size of the sandbox's ``/tmp`` (with the home in it), ≥ 1.
    processes : int
        Processes and threads the run may have at once, ≥ 1 (``RLIMIT_NPROC`` or a control group's ``pids.max``).
    open_files : int
        Open file descriptors per process (``RLIMIT_NOFILE``).
    shm_bytes : int
        The size of the sandbox's ``/dev/shm``, ≥ 1.

    Raises
    ------
    ValueError
        If ``memory_bytes``, ``disk_bytes``, ``shm_bytes`` or ``processes`` is not a positive int, or
        ``memory_bytes`` does not exceed ``disk_bytes + shm_bytes``.
    """

    cell_timeout: float = 120.0
    notebook_timeout: float = 900.0
    memory_bytes: int = 2 * 1024**3
    output_bytes: int = 1_000_000
    file_bytes: int = 256 * 1024**2
    disk_bytes: int = 256 * 1024**2
    processes: int = 256
    open_files: int = 1024
    shm_bytes: int = 64 * 1024**2

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "disk_bytes", "shm_bytes", "processes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{name} must be a positive int; got {value!r}")
        if self.address_space < 1:
            raise ValueError(
                f"Limits.memory_bytes ({self.memory_bytes}) must exceed disk_bytes + shm_bytes "
                f"({self.disk_bytes + self.shm_bytes}): both tmpfs mounts count against it"
            )

    @property
    def address_space(self) -> int:
        """RLIMIT_AS: what ``--memory`` leaves once the sandbox's ``/tmp`` and ``/dev/shm`` are full."""
        return self.memory_bytes - self.disk_bytes - self.shm_bytes


@dataclass(frozen=True)
class RunResult:
    """A worker's verified result (``result``), or why there is none (``failure``).

    Attributes
    ----------
    result : dict or None
        The worker's result (:func:`~.worker.collect`'s, or ``{"error": …}``), its signature checked; None
        when there is none.
    failure : str
        Why there is no result, a sentence for the report; empty when there is one.
    """

    result: dict[str, Any] | None
    failure: str = ""


# --------------------------------------------------------------------------- choosing the sandbox


def bwrap_path() -> str | None:
    """The bubblewrap executable: ``$DPCOURSE_BWRAP`` if set (a missing path hides it), else ``bwrap`` on PATH.

    Returns
    -------
    str or None
        The executable's path; None when :data:`BWRAP_ENV` names no executable file, or, without it, no
        ``bwrap`` is on PATH.
    """
    chosen = os.environ.get(BWRAP_ENV)
    if chosen is not None:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap")


_REFUSED = re.compile(
    r"namespace|uid map|gid map|permission denied|operation not permitted|setting up|No permissions", re.IGNORECASE
)


def check_sandbox_name(sandbox: str) -> str:
    """``sandbox`` if it names a way to run submissions (``"bwrap"``, ``"auto"`` or ``"none"``), checked before
    anything else is read, so that a typo is refused on any machine and never runs a submission unconfined.

    Parameters
    ----------
    sandbox : str
        The name given (``grade``'s ``sandbox``, the command's ``--sandbox``).

    Returns
    -------
    str
        ``sandbox``, unchanged.

    Raises
    ------
    ValueError
        If ``sandbox`` is none of those names.
    """
    if sandbox not in ("auto", "bwrap", "none"):
        raise ValueError(f"sandbox must be 'bwrap' or 'none'; got {sandbox!r}")
    return sandbox


def choose_sandbox(sandbox: str) -> str:
    """The sandbox submissions will run in, after trying bubblewrap once on ``true`` (fail closed).

    Parameters
    ----------
    sandbox : str
        ``"bwrap"`` (the default; ``"auto"`` means the same) or ``"none"`` (unconfined; nothing is tried).

    Returns
    -------
    str
        ``"bwrap"`` when bubblewrap works here, ``"none"`` when ``sandbox`` is ``"none"``.

    Raises
    ------
    SandboxUnavailable
        If bubblewrap is asked for and is missing or fails (one line: the cause, bwrap's own message, and
        the ways on).
    ValueError
        If ``sandbox`` is not ``"bwrap"``, ``"auto"`` or ``"none"``.
    """
    if check_sandbox_name(sandbox) == "none":
        return "none"
    ways = (
        "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), or, when each submission already runs "
        "in its own container or VM, pass --sandbox none"
    )
    executable = bwrap_path()
    if executable is None:
        raise SandboxUnavailable(f"no sandbox: bubblewrap (bwrap) is not installed, so nothing was graded. {ways}.")
    message = _probe(executable)
    if message is None:
        return "bwrap"
    unbindable = bind_failure(message)
    if unbindable is not None:
        raise SandboxUnavailable(f"no sandbox: {unbindable}. Nothing was graded.")
    if _REFUSED.search(message):
        raise SandboxUnavailable(
            f"no sandbox: the kernel refused bubblewrap's namespaces (bwrap said: {message}); this happens in "
            f"unprivileged containers. {ways}: see the README's section '{SCALE_SECTION}' (one container per shard "
            f"with --sandbox none, then --merge). Nothing was graded."
        )
    raise SandboxUnavailable(
        f"no sandbox: bubblewrap does not work here (bwrap said: {message}). {ways}. Nothing was graded."
    )


_UNBINDABLE = re.compile(r"Can't (?:find source path|bind mount) (?P<path>/\S*?)(?: on \S+)?: (?P<reason>[^\n]+)")


def bind_failure(message: str) -> str | None:
    """What to tell the instructor when bubblewrap's ``message`` says it could not bind a path; else None.

    bubblewrap binds the Python environment, its base installation and the package into the sandbox
    as the user running the grader, so a folder that user cannot search (a 0700 home folder of
    another user, say) fails here, which is not the kernel refusing namespaces.

    Parameters
    ----------
    message : str
        What bubblewrap wrote on its standard error (its first line is enough).

    Returns
    -------
    str or None
        A sentence naming the path, bwrap's reason and what to change; None when ``message`` is not about
        binding a path.
    """
    found = _UNBINDABLE.search(message)
    if found is None:
        return None
    return (
        f"bubblewrap could not bind {found['path']}: {found['reason'].strip()} (bwrap said: {message.strip()}). "
        f"The sandbox shows the Python environment ({sys.prefix}, based on {sys.base_prefix}) and the dpcourse "
        "package read-only at their own paths: make the Python environment readable by the user running the "
        "grader (every folder above it searchable), or install it where that user can read it"
    )


def _probe(executable: str) -> str | None:
    """Run ``true`` in the sandbox a submission gets; None if it worked, else bwrap's first line."""
    command = sandbox_command(executable, Limits(), ["true"])
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{type(err).__name__}: {err}"
    if done.returncode == 0:
        return None
    text = done.stderr.decode(errors="replace").strip().splitlines()
    return (text[0] if text else f"exit status {done.returncode}")[:300]


def unconfined_user() -> pwd.struct_passwd | None:
    """The user an unconfined run drops to: ``nobody`` (or ``$DPCOURSE_UNCONFINED_USER``, with the user id
    ``$DPCOURSE_UNCONFINED_UID`` when that is set) when the grader is root and that user can run this Python and
    import the package; None (run as the grader's own user) otherwise (:func:`why_no_unconfined_user` says why).

    Returns
    -------
    pwd.struct_passwd or None
        The user, checked once per process.
    """
    return _unconfined()[0]


def why_no_unconfined_user() -> str:
    """Why :func:`unconfined_user` is None, in one line (``""`` when it is not).

    Returns
    -------
    str
        The reason: not root, no such user, or how the check that the user can import the worker failed.
    """
    return _unconfined()[1]


@functools.cache
def _unconfined() -> tuple[pwd.struct_passwd | None, str]:
    if os.geteuid() != 0:
        return None, "the grader is not root"
    name = os.environ.get(UNCONFINED_USER_ENV) or _NOBODY
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        return None, f"there is no user {name!r}"
    own = os.environ.get(UNCONFINED_UID_ENV, "")
    if own:
        if not own.isdigit() or int(own) in (0, os.getuid()):
            return None, f"{UNCONFINED_UID_ENV} must be a user id other than root's; got {own!r}"
        user = _with_uid(user, int(own))
    check = [sys.executable, "-c", "import dpcourse.classroom.sandbox.worker"]
    env = {"PYTHONPATH": str(_CHECKOUT), "PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"}
    try:
        done = subprocess.run(
            check,
            env=env,
            cwd="/",
            capture_output=True,
            timeout=_USER_CHECK_SECONDS,
            check=False,
            preexec_fn=_apply_limits(Limits(), True, user),
        )
    except subprocess.TimeoutExpired:
        return None, f"{name} (uid {user.pw_uid}) took over {_USER_CHECK_SECONDS} s to import the grader's worker"
    except (OSError, subprocess.SubprocessError) as err:
        return None, f"{name} (uid {user.pw_uid}) cannot start this Python ({err})"
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        last = lines[-1][:200] if lines else f"exit status {done.returncode}"
        return None, f"{name} (uid {user.pw_uid}) cannot import the grader's worker ({last})"
    return user, ""


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


# --------------------------------------------------------------------------- bubblewrap's command line


def storage_filter(machine: str | None = None) -> bytes:
    """A classic-BPF seccomp program that refuses (``EPERM``) the calls in :data:`_STORAGE_SYSCALLS`.

    Calls of another architecture (a 32-bit ``int 0x80``, the x32 ABI) are refused too, so that the
    numbers cannot be sidestepped.

    Parameters
    ----------
    machine : str or None, optional
        The architecture as :func:`os.uname` names it (``"x86_64"``, ``"aarch64"``); default: this one.

    Returns
    -------
    bytes
        The program's instructions (8 bytes each, little-endian ``struct sock_filter``); ``b""`` for a
        machine without a table (no filter is loaded there).
    """
    known = _STORAGE_SYSCALLS.get(machine or os.uname().machine)
    if known is None:
        return b""
    arch, numbers = known
    checks = [(_BPF_JGE_K, _X32_BIT)] if arch == _STORAGE_SYSCALLS["x86_64"][0] else []
    checks += [(_BPF_JEQ_K, number) for number in numbers]
    # 0: load arch; 1: native? skip the refusal; 2: refuse; 3: load the number; checks; allow; refuse.
    program = [(_BPF_LD_ABS_W, 0, 0, 4), (_BPF_JEQ_K, 1, 0, arch), (_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | 1)]
    program.append((_BPF_LD_ABS_W, 0, 0, 0))
    for position, (code, value) in enumerate(checks):
        program.append((code, len(checks) - position, 0, value))  # jump past the later checks and the allow
    program += [(_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW), (_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | 1)]
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in program)


def _readonly_paths() -> list[Path]:
    import dpcourse

    package = Path(dpcourse.__file__).resolve().parent
    paths = {
        Path(sys.prefix).resolve(),
        Path(sys.base_prefix).resolve(),
        Path(sys.executable).resolve().parent.parent,
        package,
    }
    return sorted(p for p in paths if not str(p).startswith("/usr/"))


def sandbox_command(executable: str, limits: Limits, inner: list[str]) -> list[str]:
    """``inner`` inside bubblewrap: the system, the environment and the package read-only; a sized tmpfs.

    The sandbox's root and ``/dev`` are remounted read-only last, so only the two size-capped tmpfs
    mounts (``/tmp``, ``/dev/shm``) are writable; ``inner`` starts under :data:`_SET_PROCESS_LIMIT`,
    which gives the run its own ``RLIMIT_NPROC`` of ``limits.processes`` and loads :func:`storage_filter`.

    Parameters
    ----------
    executable : str
        The bubblewrap executable (:func:`bwrap_path`).
    limits : Limits
        The run's limits: the tmpfs sizes and the process limit are set here, the rest by the caller.
    inner : list of str
        The command to run inside (the worker's).

    Returns
    -------
    list of str
        The whole command line, bubblewrap's options first.
    """
    command = [
        executable,
        "--die-with-parent",
        "--new-session",
        "--unshare-all",
        "--as-pid-1",
        "--uid",
        "1000",
        "--gid",
        "1000",
        "--cap-drop",
        "ALL",
        "--clearenv",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(limits.shm_bytes),
        "--perms",
        "1777",
        "--tmpfs",
        "/dev/shm",
        "--size",
        str(limits.disk_bytes),
        "--tmpfs",
        "/tmp",
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    for name in ("bin", "lib", "lib32", "lib64", "sbin"):
        top = Path("/") / name
        if top.is_symlink():
            command += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            command += ["--ro-bind", str(top), str(top)]
    for name in (
        "ld.so.cache",
        "ld.so.conf",
        "ld.so.conf.d",
        "localtime",
        "fonts",
        "mime.types",
        "passwd",
        "group",
        "nsswitch.conf",
        "alternatives",
    ):
        if (Path("/etc") / name).exists():
            command += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    # Order matters: a later mount hides what an earlier one put below it, so the tmpfs comes first
    # (the environment or the package may live under /tmp, e.g. in a CI clone).
    for path in _readonly_paths():
        command += ["--ro-bind", str(path), str(path)]
    home = "/tmp/home"
    # bwrap's root and /dev are tmpfs mounts it made, outside any size: nothing may be stored there.
    command += ["--dir", home, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", home]
    for key, value in _environment(home).items():
        command += ["--setenv", key, value]
    starter = [sys.executable, "-I", "-S", "-c", _SET_PROCESS_LIMIT, str(limits.processes), storage_filter().hex()]
    return command + starter + inner


def _environment(home: str) -> dict[str, str]:
    """The kernel's whole environment: nothing of the instructor's (tokens, paths) leaks in."""
    return {
        "HOME": home,
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{home}/.matplotlib",
        "IPYTHONDIR": f"{home}/.ipython",
        "JUPYTER_RUNTIME_DIR": f"{home}/.runtime",
        "JUPYTER_PLATFORM_DIRS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
        "PYTHONDONTWRITEBYTECODE": "1",
        "TMPDIR": "/tmp",
    }


def _user_processes(uid: int) -> int:
    """How many tasks (processes and their threads: RLIMIT_NPROC counts both) ``uid`` has now."""
    count = 0
    for entry, owner in _processes():
        if owner == uid:
            try:
                count += len(os.listdir(Path(entry.path, "task")))
            except OSError:
                continue
    return count


def max_parallel_runs(sandbox: str, limits: Limits | None = None) -> tuple[int, str]:
    """How many runs may go at once with none able to starve another or the grader of processes.

    In bubblewrap each run has its own ``RLIMIT_NPROC`` (its own user namespace), but the kernel also
    counts every run's processes against the grader's own limit, so the runs together must fit under
    it. Unconfined runs (``"none"``) share one user's count: they get a budget of their own only
    from a per-run control group (``pids.max``), which needs root and a writable cgroup file system.

    Parameters
    ----------
    sandbox : str
        What :func:`choose_sandbox` returned: ``"bwrap"`` or ``"none"``.
    limits : Limits or None, optional
        The runs' limits (default :class:`Limits`); ``limits.processes`` is each run's share.

    Returns
    -------
    runs : int
        The most runs at once, ≥ 1; ``sys.maxsize`` when nothing bounds them.
    why : str
        One line saying what bounds ``runs``, or ``""`` when nothing does.

    Raises
    ------
    ValueError
        If ``sandbox`` is not ``"bwrap"`` or ``"none"``.
    """
    limits = limits or Limits()
    if sandbox not in ("bwrap", "none"):
        raise ValueError(f"sandbox must be 'bwrap' or 'none'; got {sandbox!r}")
    if sandbox == "none":
        if os.geteuid() == 0 and os.environ.get(UNCONFINED_UID_ENV):
            return 1, (
                f"{UNCONFINED_UID_ENV} gives every unconfined run the same user id, and each run's clean-up ends "
                "every process of its id: one run at a time (unset it for an id of each run's own)"
            )
        if not _ControlGroup.counts_processes():
            return 1, (
                "unconfined runs (--sandbox none) share one user's process limit and no per-run control group "
                "can be made here (that needs root and a writable /sys/fs/cgroup), so a submission that hoards "
                "processes would make the runs beside it fail: grade with --jobs 1 (one container per shard)"
            )
        user = unconfined_user()
        uid = user.pw_uid if user is not None else os.getuid()
    else:
        uid = os.getuid()
    if uid == 0:
        # The kernel never holds root's processes to RLIMIT_NPROC, not even in a user namespace: a pids
        # control group is then the only budget a run has.
        if _ControlGroup.counts_processes():
            return sys.maxsize, ""
        return 1, (
            "the grader runs as root and cannot make a pids control group here (a read-only /sys/fs/cgroup), "
            "and the kernel does not hold root's processes to RLIMIT_NPROC: nothing but --jobs 1 keeps one "
            "submission's processes from starving another's run (better: run the grader as an ordinary user)"
        )
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if soft == resource.RLIM_INFINITY:
        return sys.maxsize, ""
    spare = soft - _user_processes(uid) - _GRADER_RESERVE
    runs = max(1, spare // limits.processes)
    return runs, (
        f"each run may start {limits.processes} processes and threads, all counted against this user's limit of "
        f"{soft} (ulimit -u), of which {soft - spare - _GRADER_RESERVE} are in use: at most {runs} at once "
        f"leave the grader room to fork (raise ulimit -u for more)"
    )


def _apply_limits(
    limits: Limits, sandboxed: bool, user: pwd.struct_passwd | None, group: _ControlGroup | None = None
) -> Callable[[], None]:
    # In bubblewrap the run's own limit is set inside its user namespace (_SET_PROCESS_LIMIT): bwrap keeps
    # the grader's, which is what the kernel checks all runs together against. Unconfined, a pids control
    # group is the run's own budget; without one every process of the user counts, so the limit sits
    # above what the user has now (and the runs share it: max_parallel_runs says 1).
    uid = user.pw_uid if user is not None else os.getuid()
    own_budget = sandboxed or (group is not None and group.caps_processes)
    processes = None if own_budget else limits.processes + _user_processes(uid)

    def apply() -> None:
        if group is not None:
            group.enter()
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space, limits.address_space))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        if processes is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
        if user is not None:  # the grader is root: the unconfined worker runs as nobody
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)

    return apply


# ------------------------------------------------------------- a control group, where the grader may make one


class _ControlGroup:
    """A pids (and memory) control group for one run, where the grader may create one (root, writable cgroupfs).

    RLIMIT_NPROC does not bind processes whose real user is root, which is what bubblewrap's user
    namespace maps the sandbox to when the grader runs as root; a cgroup's ``pids.max`` does, and its
    memory limit counts the tmpfs's pages too. Where no cgroup can be made (an ordinary user, a
    read-only cgroupfs in a container), the rlimits alone apply: RLIMIT_NPROC then binds. Every process the
    run starts stays in the group whatever it does (a double fork, ``setsid``), so :meth:`end_processes` ends
    them all; on cgroup v1 the group has a freezer too, for that.
    """

    def __init__(self, limits: Limits):
        self.paths: list[Path] = []
        self.caps_processes = False
        if os.geteuid() != 0:
            return
        name = f"dpcourse-grade-{secrets.token_hex(6)}"
        unified = Path("/sys/fs/cgroup")
        if "pids" in _read(unified / "cgroup.controllers").split():
            self._make(unified / name, {"pids.max": limits.processes, "memory.max": limits.memory_bytes})
            return
        for controller, settings in (
            ("pids", {"pids.max": limits.processes}),
            ("memory", {"memory.limit_in_bytes": limits.memory_bytes}),
            ("freezer", {}),  # v1 has no cgroup.kill: end_processes freezes the run while it kills it
        ):
            self._make(unified / controller / name, settings)

    def _make(self, path: Path, settings: dict[str, int]) -> None:
        try:
            path.mkdir()
        except OSError:
            return
        self.paths.append(path)
        for key, value in settings.items():
            try:
                (path / key).write_text(str(value))
            except OSError:
                continue
            self.caps_processes |= key == "pids.max"

    @classmethod
    def counts_processes(cls) -> bool:
        """Whether a run here gets a ``pids.max`` of its own (made and removed again to find out)."""
        group = cls(Limits())
        try:
            return group.caps_processes
        finally:
            group.remove()

    def enter(self) -> None:
        """Move the calling process into the group (runs in the child, before exec)."""
        for path in self.paths:
            try:
                (path / "cgroup.procs").write_text(str(os.getpid()))
            except OSError:
                pass

    def pids(self) -> set[int]:
        """The processes in the group now (every hierarchy's; a zombie is listed by none)."""
        found: set[int] = set()
        for path in self.paths:
            found.update(int(pid) for pid in _read(path / "cgroup.procs").split() if pid.isdigit())
        return found

    def _freeze(self, frozen: bool) -> None:
        for path in self.paths:
            states = (("cgroup.freeze", "1" if frozen else "0"), ("freezer.state", "FROZEN" if frozen else "THAWED"))
            for name, value in states:
                if (path / name).exists():
                    try:
                        (path / name).write_text(value)
                    except OSError:
                        pass

    def end_processes(self, *, rounds: int = 250) -> int:
        """Kill every process of the run, however it detached, until the group is empty; how many survived.

        ``cgroup.kill`` (cgroup v2, Linux 5.14) where there is one; else, round after round, the group is frozen
        (``cgroup.freeze``, or v1's ``freezer.state``), each process in ``cgroup.procs`` is stopped and sent
        SIGKILL, and the group is thawed so the kills take effect: nothing forks a replacement meanwhile, and
        ``pids.max`` bounds what there is to kill. Without a group (an ordinary user, no writable cgroupfs)
        there is nothing to do and 0 is returned.

        Parameters
        ----------
        rounds : int, optional
            How many times to look and kill, 20 ms apart.

        Returns
        -------
        int
            The processes still in the group after ``rounds`` rounds (0: none is left).
        """
        if not self.paths:
            return 0
        for path in self.paths:
            if (path / "cgroup.kill").exists():
                try:
                    (path / "cgroup.kill").write_text("1")
                except OSError:
                    pass
        for _ in range(rounds):
            pids = self.pids()
            if not pids:
                return 0
            self._freeze(True)
            _stop_and_kill(pids)
            self._freeze(False)
            time.sleep(0.02)
        return len(self.pids())

    def remove(self) -> None:
        for path in self.paths:
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


# --------------------------------------------------------------------------- running a job


class _CappedReader(threading.Thread):
    """Reads a pipe to its end, keeping at most ``cap`` bytes (the rest is drained and dropped)."""

    def __init__(self, stream: Any, cap: int):  # a BufferedReader: read1 returns what the pipe has
        super().__init__(daemon=True)
        self.stream, self.cap = stream, cap
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflow = False

    def run(self) -> None:
        try:
            while chunk := self.stream.read1(65536):
                if self.size + len(chunk) > self.cap:
                    self.overflow = True
                    continue
                self.chunks.append(chunk)
                self.size += len(chunk)
        except (OSError, ValueError):
            pass

    @property
    def data(self) -> bytes:
        return b"".join(self.chunks)


def _feed(stream: IO[bytes], data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except (OSError, ValueError):  # the worker died or closed its input: its result will say so
        pass


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _verified(data: bytes, key: bytes) -> dict[str, Any] | str:
    """The one signed result frame in ``data``, or the reason there is none."""
    import json

    if data.count(FRAME) != 1 or not data.startswith(FRAME):
        return "its result was missing or not in the worker's form"
    header, _, body = data.partition(b"\n")
    parts = header.split(b" ")
    if len(parts) != 3 or not parts[1].isdigit() or int(parts[1]) != len(body):
        return "its result was incomplete"
    if not secrets.compare_digest(parts[2].decode(errors="replace"), sign(key, body)):
        return "its result did not carry the worker's signature"
    try:
        result = json.loads(body)
    except (ValueError, RecursionError):
        return "its result could not be read"
    return result if isinstance(result, dict) else "its result could not be read"


def run_job(job: dict[str, Any], *, sandbox: str, limits: Limits, stop: threading.Event | None = None) -> RunResult:
    """Run one worker job in the sandbox (``"bwrap"``) or unconfined (``"none"``); never raises for the submission.

    The job (without the key, which is added here) goes to the worker's standard input; the result
    is read from its standard output, at most 32 MB, and must carry the HMAC of a fresh key. Unconfined,
    the run gets a private temporary folder as its home and working folder, removed afterwards.

    Parameters
    ----------
    job : dict
        What the worker reads (:func:`~.worker.main`): the built notebook, ``cell_timeout``,
        ``notebook_timeout``, ``output_limit`` and the answer and check cells of each exercise.
    sandbox : {"bwrap", "none"}
        ``"bwrap"`` runs it in bubblewrap, ``"none"`` unconfined (callers pass what :func:`choose_sandbox`
        returned).
    limits : Limits
        The run's limits; the whole run is ended ``notebook_timeout`` + 30 s after it starts.
    stop : threading.Event or None, optional
        Set by the caller to end the run early (the grader is being stopped); looked at every second.

    Returns
    -------
    RunResult
        The verified result, or a failure saying why there is none (timeout, too much output, bubblewrap
        failing, a missing, incomplete or unsigned result).

    Raises
    ------
    ValueError
        If ``sandbox`` is neither ``"bwrap"`` nor ``"none"``: a typo must never run a submission unconfined.
    """
    import json

    if sandbox not in ("bwrap", "none"):
        raise ValueError(f"sandbox must be 'bwrap' or 'none' (what choose_sandbox returns), got {sandbox!r}")

    key = secrets.token_bytes(32)
    payload = json.dumps({**job, "key": key.hex()}).encode()
    inner = [sys.executable, "-m", "dpcourse.classroom.sandbox.worker"]
    tmp = tempfile.mkdtemp(prefix="dpcourse-grade-")
    try:
        user = None
        cwd: str | None
        if sandbox == "bwrap":
            executable = bwrap_path()
            if executable is None:
                return RunResult(None, "the grader could not run this submission: bubblewrap disappeared")
            command, env, cwd = sandbox_command(executable, limits, inner), {"PATH": os.environ.get("PATH", "")}, None
        else:
            command, cwd = [*inner, "--detach"], tmp
            # the run's temporary files go to its own folder, which the worker empties before every kernel,
            # never to the machine's /tmp
            env = {**_environment(tmp), "TMPDIR": tmp, "PYTHONPATH": str(_CHECKOUT)}
            user = _with_an_id_of_its_own(unconfined_user())
            if user is not None:
                os.chown(tmp, user.pw_uid, user.pw_gid)
        outcome = _run(command, env, cwd, payload, key, limits, sandbox, user, stop)
        if user is not None:
            # the id is this run's alone (fixed ones run one at a time: max_parallel_runs): whatever still runs
            # under it (a daemon that left the process group) is the submission's, and so is what it left in
            # the shared scratch folders
            try:
                kill_user_processes(user.pw_uid)
            except SurvivingProcesses as err:
                return RunResult(None, f"the grader could not stop every process of this submission ({err})")
            _remove_user_files(user.pw_uid)
        return outcome
    finally:
        _remove_private(tmp)


def _with_an_id_of_its_own(user: pwd.struct_passwd | None) -> pwd.struct_passwd | None:
    """``user`` with a fresh id from :func:`unused_user_id`, unless the id is fixed by :data:`UNCONFINED_UID_ENV`
    or there is no user to drop to (the grader is not root)."""
    if user is None or os.environ.get(UNCONFINED_UID_ENV):
        return user
    return _with_uid(user, unused_user_id())


def _with_uid(user: pwd.struct_passwd, uid: int) -> pwd.struct_passwd:
    """``user`` under the id ``uid``: its name, group, home and shell kept."""
    fields = list(user)
    fields[2] = uid
    return pwd.struct_passwd(fields)


def _remove_private(folder: str) -> None:
    """Remove a run's private folder; what the submission left there (any mode, any owner) never raises.

    ``TemporaryDirectory``'s own clean-up resets modes with ``chmod``, which a grader without CAP_FOWNER (a
    container's root) may not do on the submission's files: it raised even with ``ignore_cleanup_errors``.
    """
    try:
        shutil.rmtree(folder, ignore_errors=True)
    except OSError:  # pragma: no cover - rmtree with ignore_errors does not raise
        pass


def _run(
    command: Sequence[str],
    env: dict[str, str],
    cwd: str | Path | None,
    payload: bytes,
    key: bytes,
    limits: Limits,
    sandbox: str,
    user: Any,
    stop: threading.Event | None = None,
) -> RunResult:
    group = _ControlGroup(limits)
    try:
        outcome = _run_in(group, command, env, cwd, payload, key, limits, sandbox, user, stop)
    finally:
        # whatever left the process group (a double fork, setsid) is still in the run's control group
        survivors = group.end_processes()
        group.remove()
    if survivors:
        return RunResult(None, f"the grader could not stop every process of this submission ({survivors} survived)")
    return outcome


def _run_in(
    group: Any,
    command: Sequence[str],
    env: dict[str, str],
    cwd: str | Path | None,
    payload: bytes,
    key: bytes,
    limits: Limits,
    sandbox: str,
    user: Any,
    stop: threading.Event | None = None,
) -> RunResult:
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
            preexec_fn=_apply_limits(limits, sandbox == "bwrap", user, group),
        )
    except OSError as err:
        return RunResult(None, f"the grader could not run this submission: {err}")
    out, errors = _CappedReader(process.stdout, _RESULT_CAP), _CappedReader(process.stderr, _STDERR_CAP)
    out.start()
    errors.start()
    threading.Thread(target=_feed, args=(process.stdin, payload), daemon=True).start()
    deadline = time.monotonic() + limits.notebook_timeout + _GRACE_SECONDS
    while out.is_alive() and time.monotonic() < deadline and not (stop is not None and stop.is_set()):
        out.join(1.0)
        if sandbox == "none":  # a submission that stopped its worker (SIGSTOP) only delays it
            _signal_group(process.pid, signal.SIGCONT)
    timed_out = out.is_alive()
    _signal_group(process.pid, signal.SIGKILL)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
        pass
    out.join(5)
    errors.join(5)
    if timed_out and stop is not None and stop.is_set():
        return RunResult(None, "the grader was stopped before this run finished")
    if timed_out:
        return RunResult(
            None,
            f"the notebook ran longer than {limits.notebook_timeout:g} s in total, or its run was "
            "stopped (the grader ended it)",
        )
    if out.overflow:
        return RunResult(None, "the run wrote more than the grader reads")
    stderr = errors.data.decode(errors="replace").strip()
    if sandbox == "bwrap" and stderr.startswith(("bwrap:", "sandbox:")):
        first = stderr.splitlines()[0][:300]
        return RunResult(None, f"the grader could not run this submission: {bind_failure(first) or first}")
    verified = _verified(out.data, key)
    if isinstance(verified, str):
        return RunResult(
            None,
            f"the run stopped before the end ({verified}): the notebook used too much memory, "
            "or its code ended the grader's worker",
        )
    return RunResult(verified)
