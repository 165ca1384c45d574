"""Where a submission runs: bubblewrap's sandbox, or (only when asked) an unconfined process, and the
channel its result comes back on.

**Fail closed.** :func:`choose_sandbox` runs bubblewrap once on ``true`` with the same namespaces a
submission gets, and raises :class:`SandboxUnavailable` with bwrap's own message when that fails
(missing, or refused by the kernel, e.g. in an unprivileged container). Only ``--sandbox none``
runs submissions without it.

**The sandbox** (bubblewrap): new user, pid, IPC, UTS, cgroup and network namespaces (no network),
all capabilities dropped, a new session (no terminal injection), the Python environment and the
package read-only, and nothing of the host writable: the only writable place is a tmpfs at
``/tmp`` of :attr:`Limits.disk_bytes`, which also holds the home folder. The notebook is not a file
there: the worker gets it on standard input and answers on standard output (:mod:`.worker`). The
worker is process 1 of the pid namespace (``--as-pid-1``): the kernel, its child, can neither signal
it (the kernel ignores signals to a namespace's init from inside it) nor open its pipes (it is not
dumpable).

**Limits**, set on the sandbox's first process and inherited: address space
(``--memory`` less the tmpfs, so that files count against it too), file size, processes, open files
and no core dumps; where the grader may create a control group (:class:`_ControlGroup`) also its
``pids.max`` and memory limit. A deadline for the whole run, after which the process group is killed
(with ``--die-with-parent`` and the pid namespace, everything inside dies with it).

**Unconfined** (``--sandbox none``): the worker runs in its own session and process group,
detached (its parent is not the grader), with the same resource limits; a stopped worker is
continued; when the grader runs as root and ``nobody`` can run this Python, it runs as ``nobody``.
It can read and write whatever its user can. Each submission's result still comes back signed over
a pipe, and the grader reads it with a size cap and a deadline.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .worker import FRAME, sign

__all__ = [
    "BWRAP_ENV",
    "Limits",
    "RunResult",
    "SandboxUnavailable",
    "bwrap_path",
    "choose_sandbox",
    "run_job",
    "sandbox_command",
]

#: Environment variable naming the bubblewrap executable; set it to a missing path to hide bubblewrap
#: (``.ci/run`` does, to run the grading tests as on a machine without it).
BWRAP_ENV = "DPCOURSE_BWRAP"
SCALE_SECTION = "Grading at scale"
_RESULT_CAP = 32_000_000
_STDERR_CAP = 20_000
_GRACE_SECONDS = 30  # beyond the notebook's own limit: kernel start-up and shut-down
_NOBODY = "nobody"


class SandboxUnavailable(RuntimeError):
    """No working sandbox, and the instructor did not pass ``--sandbox none``: nothing may run."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission's run."""

    cell_timeout: float = 120.0
    notebook_timeout: float = 900.0
    memory_bytes: int = 2 * 1024**3
    output_bytes: int = 1_000_000
    file_bytes: int = 256 * 1024**2
    disk_bytes: int = 256 * 1024**2
    processes: int = 256
    open_files: int = 1024

    @property
    def address_space(self) -> int:
        """RLIMIT_AS: what ``--memory`` leaves once the sandbox's tmpfs is full."""
        return self.memory_bytes - self.disk_bytes


@dataclass(frozen=True)
class RunResult:
    """A worker's verified result (``result``), or why there is none (``failure``)."""

    result: dict[str, Any] | None
    failure: str = ""


# --------------------------------------------------------------------------- choosing the sandbox


def bwrap_path() -> str | None:
    """The bubblewrap executable: ``$DPCOURSE_BWRAP`` if set (a missing path hides it), else ``bwrap`` on PATH."""
    chosen = os.environ.get(BWRAP_ENV)
    if chosen is not None:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap")


_REFUSED = re.compile(
    r"namespace|uid map|gid map|permission denied|operation not permitted|setting up|No permissions", re.IGNORECASE
)


def choose_sandbox(sandbox: str) -> str:
    """``"bwrap"`` or ``"none"``; raises :class:`SandboxUnavailable` (one line: cause and the ways on).

    ``sandbox``: ``"bwrap"`` (the default; ``"auto"`` means the same) or ``"none"``.
    """
    if sandbox == "none":
        return "none"
    if sandbox not in ("auto", "bwrap"):
        raise ValueError(f"sandbox must be 'bwrap' or 'none'; got {sandbox!r}")
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


@functools.cache
def unconfined_user() -> pwd.struct_passwd | None:
    """The user an unconfined run drops to: ``nobody`` when the grader is root and ``nobody`` can run this
    Python and import the package; None (run as the grader's own user) otherwise."""
    if os.geteuid() != 0:
        return None
    try:
        user = pwd.getpwnam(_NOBODY)
    except KeyError:
        return None
    check = [sys.executable, "-c", "import dpcourse.classroom.worker"]
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"}
    try:
        done = subprocess.run(
            check,
            env=env,
            cwd="/",
            capture_output=True,
            timeout=60,
            check=False,
            preexec_fn=_apply_limits(Limits(), True, user),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return user if done.returncode == 0 else None


# --------------------------------------------------------------------------- bubblewrap's command line


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
    """``inner`` inside bubblewrap: the system, the environment and the package read-only; a sized tmpfs."""
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
    command += ["--dir", home, "--chdir", home]
    for key, value in _environment(home).items():
        command += ["--setenv", key, value]
    return command + inner


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
    """How many processes ``uid`` has now (RLIMIT_NPROC counts them all when there is no user namespace)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat(follow_symlinks=False).st_uid == uid
            except OSError:
                continue
    return count


def _apply_limits(
    limits: Limits, sandboxed: bool, user: pwd.struct_passwd | None, group: _ControlGroup | None = None
) -> Callable[[], None]:
    # Inside bubblewrap's user namespace the count starts from zero; elsewhere (or for bwrap's own first
    # fork as an ordinary user) every process of the user counts, so the limit sits above what it has now.
    uid = user.pw_uid if user is not None else os.getuid()
    processes = limits.processes if sandboxed and uid == 0 else limits.processes + _user_processes(uid)

    def apply() -> None:
        if group is not None:
            group.enter()
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space, limits.address_space))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
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
    read-only cgroupfs in a container), the rlimits alone apply: RLIMIT_NPROC then binds.
    """

    def __init__(self, limits: Limits):
        self.paths: list[Path] = []
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

    def enter(self) -> None:
        """Move the calling process into the group (runs in the child, before exec)."""
        for path in self.paths:
            try:
                (path / "cgroup.procs").write_text(str(os.getpid()))
            except OSError:
                pass

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


def run_job(job: dict[str, Any], *, sandbox: str, limits: Limits) -> RunResult:
    """Run one worker job in the sandbox (``"bwrap"``) or unconfined (``"none"``); never raises for the submission.

    The job (without the key, which is added here) goes to the worker's standard input; the result
    is read from its standard output, at most 32 MB, and must carry the HMAC of a fresh key.
    """
    import json

    key = secrets.token_bytes(32)
    payload = json.dumps({**job, "key": key.hex()}).encode()
    inner = [sys.executable, "-m", "dpcourse.classroom.worker"]
    with tempfile.TemporaryDirectory(prefix="dpcourse-grade-", ignore_cleanup_errors=True) as tmp:
        user = None
        cwd: str | None
        if sandbox == "bwrap":
            executable = bwrap_path()
            if executable is None:
                return RunResult(None, "the grader could not run this submission: bubblewrap disappeared")
            command, env, cwd = sandbox_command(executable, limits, inner), {"PATH": os.environ.get("PATH", "")}, None
        else:
            command, cwd = [*inner, "--detach"], tmp
            env = {**_environment(tmp), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
            user = unconfined_user()
            if user is not None:
                os.chown(tmp, user.pw_uid, user.pw_gid)
        return _run(command, env, cwd, payload, key, limits, sandbox, user)


def _run(
    command: Sequence[str],
    env: dict[str, str],
    cwd: str | Path | None,
    payload: bytes,
    key: bytes,
    limits: Limits,
    sandbox: str,
    user: Any,
) -> RunResult:
    group = _ControlGroup(limits)
    try:
        return _run_in(group, command, env, cwd, payload, key, limits, sandbox, user)
    finally:
        group.remove()


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
    while out.is_alive() and time.monotonic() < deadline:
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
    if timed_out:
        return RunResult(
            None,
            f"the notebook ran longer than {limits.notebook_timeout:g} s in total, or its run was "
            "stopped (the grader ended it)",
        )
    if out.overflow:
        return RunResult(None, "the run wrote more than the grader reads")
    stderr = errors.data.decode(errors="replace").strip()
    if sandbox == "bwrap" and stderr.startswith("bwrap:"):
        return RunResult(None, f"the grader could not run this submission: {stderr.splitlines()[0][:200]}")
    verified = _verified(out.data, key)
    if isinstance(verified, str):
        return RunResult(
            None,
            f"the run stopped before the end ({verified}): the notebook used too much memory, "
            "or its code ended the grader's worker",
        )
    return RunResult(verified)
