"""Bubblewrap's command line for one run: namespaces, read-only binds, sized tmpfs mounts and the seccomp filter.

:func:`sandbox_command` puts the worker inside bubblewrap with new user, pid, IPC, UTS, cgroup and network
namespaces, the Python environment and the package read-only, and the only writable places two size-capped tmpfs
mounts; it starts under :data:`_SET_PROCESS_LIMIT`, which sets the run's own ``RLIMIT_NPROC`` and loads
:func:`storage_filter`, a seccomp filter refusing the calls that would store memory outside every limit
(``memfd_create``, SysV shared memory, message queues, semaphores). :func:`bind_failure` explains bubblewrap's
refusal to bind the Python environment.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import sys
from pathlib import Path

from .limits import Limits

__all__ = ["BWRAP_ENV", "bind_failure", "bwrap_path", "sandbox_command", "storage_filter"]


BWRAP_ENV = "DPCOURSE_BWRAP"

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
