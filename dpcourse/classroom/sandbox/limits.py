"""What a run may use: :class:`Limits` (time, memory, disk, processes, output), how they are applied to the
run's first process (:func:`_apply_limits`) and to its control group (:class:`_ControlGroup`: ``pids.max``, memory),
and how many runs fit side by side on this machine (:func:`max_parallel_runs`).
"""

from __future__ import annotations

import os
import pwd
import resource
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .users import _processes, _read, _stop_and_kill

__all__ = ["Limits", "MIN_MEMORY_BYTES"]


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
