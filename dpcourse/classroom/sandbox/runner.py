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
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .bubblewrap import _environment, bind_failure, bwrap_path, sandbox_command
from .limits import _GRADER_RESERVE, Limits, _apply_limits, _ControlGroup, _user_processes
from .users import (
    _CHECKOUT,
    _NOBODY,
    _USER_CHECK_SECONDS,
    UNCONFINED_UID_ENV,
    UNCONFINED_USER_ENV,
    SurvivingProcesses,
    _remove_user_files,
    _with_uid,
    kill_user_processes,
    unused_user_id,
)
from .worker import FRAME, sign

__all__ = [
    "RunResult",
    "SandboxUnavailable",
    "check_sandbox_name",
    "choose_sandbox",
    "max_parallel_runs",
    "run_job",
    "unconfined_user",
    "why_no_unconfined_user",
]


SCALE_SECTION = "Grading at scale"

_RESULT_CAP = 32_000_000

_STDERR_CAP = 20_000

_GRACE_SECONDS = 30  # beyond the notebook's own limit: kernel start-up and shut-down


class SandboxUnavailable(RuntimeError):
    """No working sandbox, and the instructor did not pass ``--sandbox none``: nothing may run."""


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
