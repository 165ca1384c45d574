"""The sandbox's limits, each tried by a small program in bubblewrap, as the grader's own user and as an
ordinary user: what a run can write (only two size-capped tmpfs mounts, both inside ``--memory``),
what it can hoard (processes: its own budget, never a classmate's or the grader's), and what the
instructor is told when bubblewrap cannot bind the Python environment.

Skipped, with the reason in pytest's summary, without a working bubblewrap (``$DPCOURSE_BWRAP``
as in :mod:`dpcourse.classroom.sandbox.runner`). The ordinary-user cases need root (to create the user
``dpcourse-sandbox-test`` and run as it) and a Python environment that user can read: this one, or
the one ``$DPCOURSE_ORDINARY_PYTHON`` names; else they are skipped saying which is missing.
Nothing here waits for a fixed time: the runs synchronise on what they print, and every deadline
is minutes, for a loaded 2-core machine.
"""

from __future__ import annotations

import json
import os
import pwd
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from dpcourse.classroom.sandbox import bubblewrap, users
from dpcourse.classroom.sandbox import runner as sandbox
from dpcourse.classroom.sandbox.bubblewrap import (
    bind_failure,
    bwrap_path,
    sandbox_command,
    storage_filter,
)
from dpcourse.classroom.sandbox.limits import Limits, _apply_limits, _ControlGroup, _user_processes
from dpcourse.classroom.sandbox.runner import SandboxUnavailable, choose_sandbox, max_parallel_runs
from dpcourse.classroom.sandbox.users import UNCONFINED_UID_ENV, UNCONFINED_USER_ENV, unused_user_id
from tests.classroom.grading_scenarios import sandbox_problem
from tests.classroom.ordinary_python import copied_checkout, readable_environment

ROOT = Path(__file__).resolve().parents[2]
ORDINARY_USER = "dpcourse-sandbox-test"
ORDINARY_PYTHON_ENV = "DPCOURSE_ORDINARY_PYTHON"
DEADLINE = 300  # seconds for any one sandboxed program: minutes on a loaded 2-core machine
MiB = 1024**2
SMALL = Limits(memory_bytes=512 * MiB, disk_bytes=64 * MiB, shm_bytes=16 * MiB, file_bytes=64 * MiB, processes=96)

pytestmark = [pytest.mark.timeout(900)]


SANDBOX_PROBLEM = sandbox_problem()
needs_bwrap = pytest.mark.skipif(SANDBOX_PROBLEM is not None, reason=f"needs a working bubblewrap: {SANDBOX_PROBLEM}")


# --------------------------------------------------------------------------- running as the grader would


def _start(program: str, limits: Limits) -> tuple[subprocess.Popen[str], Any]:
    """``python -c program`` in the sandbox a submission gets, with its limits and (as root) its control group."""
    executable = bwrap_path()
    assert executable is not None
    group = _ControlGroup(limits)
    process = subprocess.Popen(
        sandbox_command(executable, limits, [sys.executable, "-c", program]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": os.environ.get("PATH", "")},
        start_new_session=True,
        preexec_fn=_apply_limits(limits, True, None, group),
    )
    return process, group


def _finish(process: subprocess.Popen[str], group: Any) -> dict[str, Any]:
    try:
        out, err = process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, 9)
            process.wait()
        group.remove()
    lines = out.strip().splitlines()
    assert lines, f"the sandboxed program printed nothing (exit {process.returncode}): {err[-1500:]}"
    return json.loads(lines[-1])


def _in_sandbox(program: str, limits: Limits) -> dict[str, Any]:
    return _finish(*_start(program, limits))


# --------------------------------------------------------------------------- the scenarios (JSON in, JSON out)

WRITABLE = """
import ctypes, errno, json, os, resource
found = {"address_space": resource.getrlimit(resource.RLIMIT_AS)[0]}
for path in ("/x", "/etc/x", "/usr/x", "/dev/x", "/dev/pts/x", "/proc/x"):
    try:
        open(path, "wb").write(b"1")
        found[path] = "written"
    except OSError as err:
        found[path] = errno.errorcode[err.errno]
for path in ("/d", "/dev/d"):
    try:
        os.mkdir(path)
        found[path] = "made"
    except OSError as err:
        found[path] = errno.errorcode[err.errno]
def fill(path):
    written = 0
    try:
        with open(path, "wb") as handle:
            while written < 2**31:
                handle.write(b"0" * 2**20)
                handle.flush()
                written += 2**20
    except OSError:
        pass
    return written
found["tmp_bytes"] = fill("/tmp/fill")
found["shm_bytes"] = fill("/dev/shm/fill")
try:
    os.memfd_create("hoard")
    found["memfd"] = "made"
except OSError as err:
    found["memfd"] = errno.errorcode[err.errno]
libc = ctypes.CDLL(None, use_errno=True)
for name, args in (("shmget", (0, 2**20, 0o1600)), ("msgget", (0, 0o1600)), ("semget", (0, 1, 0o1600))):
    made = getattr(libc, name)(*args)
    found[name] = "made" if made >= 0 else errno.errorcode[ctypes.get_errno()]
print(json.dumps(found))
"""


def writable_places(memory: int, disk: int, shm: int) -> dict[str, Any]:
    """What a run can write, and how much, under these limits."""
    limits = Limits(memory_bytes=memory, disk_bytes=disk, shm_bytes=shm, file_bytes=disk)
    return _in_sandbox(WRITABLE, limits)


HOARDER = """
import json, os, threading, time
held = 0
try:
    while held < 100000:
        if held % 2:
            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
        elif os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
        held += 1
except (OSError, RuntimeError):
    pass
print(json.dumps({"held": held}), flush=True)
time.sleep(3600)  # hold everything until the test ends this run
"""

HONEST = """
import json, os, sys, threading
print(json.dumps({"ready": True}), flush=True)
sys.stdin.readline()  # started before the hoarders, it forks once they hold all they could get
failures = []
children = []
for _ in range(%(children)d):
    try:
        pid = os.fork()
    except OSError as err:
        failures.append(str(err))
        break
    if pid == 0:
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
threads = [threading.Thread(target=len, args=((),)) for _ in range(%(children)d)]
try:
    for thread in threads:
        thread.start()
except RuntimeError as err:
    failures.append(str(err))
print(json.dumps({"forked": len(children), "failures": failures}))
"""


def hoarder_beside_honest(processes: int) -> dict[str, Any]:
    """Two runs hoard every process they may; then an honest run forks and starts threads, and the grader forks.

    As an ordinary user the grader's own RLIMIT_NPROC is first lowered to what three runs and the
    grader need, as on a machine with a small ``ulimit -u``: a budget shared between runs fails here.
    """
    limits = Limits(processes=processes)
    if os.geteuid() != 0:
        in_use = _user_processes(os.getuid())
        _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        wanted = in_use + 3 * processes + 64
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (wanted, hard))
    honest = _start(HONEST % {"children": processes // 2}, limits)
    hoarders: list[tuple[subprocess.Popen[str], Any]] = []
    running = [honest]
    try:
        assert honest[0].stdout is not None and honest[0].stdin is not None
        assert json.loads(honest[0].stdout.readline()) == {"ready": True}
        for _ in range(2):
            hoarders.append(_start(HOARDER, limits))
            running.append(hoarders[-1])
        held = []
        for process, _ in hoarders:
            assert process.stdout is not None
            line = process.stdout.readline()  # printed once the run holds all it could get
            held.append(json.loads(line)["held"] if line else None)
        honest[0].stdin.write("go\n")
        honest[0].stdin.flush()
        running.remove(honest)  # _finish ends the honest run whatever happens
        honest_found = _finish(*honest)
        grader_forked = subprocess.run(["true"], check=False, timeout=DEADLINE).returncode == 0
    finally:
        for process, group in running:
            if process.poll() is None:
                os.killpg(process.pid, 9)
            process.communicate(timeout=DEADLINE)
            group.remove()
    return {"held": held, "honest": honest_found, "grader_forked": grader_forked}


def bind_message(unreadable: str) -> str:
    """What :func:`choose_sandbox` says when bubblewrap must also bind ``unreadable``."""
    paths = bubblewrap._readonly_paths
    bubblewrap._readonly_paths = lambda: [*paths(), Path(unreadable)]  # type: ignore[method-assign]
    try:
        choose_sandbox("bwrap")
    except SandboxUnavailable as err:
        return str(err)
    finally:
        bubblewrap._readonly_paths = paths  # type: ignore[method-assign]
    return ""


SCENARIOS = {"writable_places": writable_places, "hoarder_beside_honest": hoarder_beside_honest, "bind": bind_message}


# --------------------------------------------------------------------------- as the grader's user, or an ordinary one


def _checkout_for(python: str) -> Path:
    """Where ``python`` finds this checkout's ``tests``: the copy beside a readable environment, else the checkout."""
    copy = copied_checkout(python)
    return copy if (copy / "tests").is_dir() else ROOT


def _runs(user: str, python: str) -> subprocess.CompletedProcess[str]:
    check = ["runuser", "-u", user, "--", python, "-c", "import dpcourse.classroom.sandbox.runner, pytest"]
    return subprocess.run(check, cwd="/", capture_output=True, text=True, timeout=DEADLINE, check=False)


def _ordinary_python(user: str) -> str:
    """A Python the ordinary user can run this package with, or skip saying why there is none.

    ``$DPCOURSE_ORDINARY_PYTHON`` if set; else this interpreter when the user can run it; else a readable
    copy of this environment (as root, pyenv's Python under a 0700 ``/root`` is out of the user's reach).
    """
    python = os.environ.get(ORDINARY_PYTHON_ENV, sys.executable)
    done = _runs(user, python)
    if done.returncode != 0 and ORDINARY_PYTHON_ENV not in os.environ:
        python = str(readable_environment())
        done = _runs(user, python)
    if done.returncode != 0:
        pytest.skip(
            f"the user {user} cannot run {python} with this package ({done.stderr.strip()[-200:]}); set "
            f"${ORDINARY_PYTHON_ENV} to a Python environment with dpcourse that this user can read"
        )
    return python


def _ordinary_user() -> str:
    try:
        pwd.getpwnam(ORDINARY_USER)
    except KeyError:
        made = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ORDINARY_USER],
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            pytest.skip(f"could not create the user {ORDINARY_USER}: {made.stderr.strip()[:200]}")
    return ORDINARY_USER


def scenario(who: str, name: str, *args: Any) -> Any:
    """Run one of :data:`SCENARIOS` as the grader's own user (in this process) or as an ordinary user."""
    if who == "grader's user":
        return SCENARIOS[name](*args)
    if os.geteuid() != 0:
        pytest.skip("the tests already run as an ordinary user: the grader's-user case is this case")
    user = _ordinary_user()
    python = _ordinary_python(user)
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(_checkout_for(python))!r})\n"
        "from tests.classroom.test_sandbox import SCENARIOS\n"
        f"print(json.dumps(SCENARIOS[{name!r}](*{list(args)!r})))\n"
    )
    done = subprocess.run(
        ["runuser", "-u", user, "--", python, "-c", code],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=DEADLINE * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


WHO = ["grader's user", "ordinary user"]


# --------------------------------------------------------------------------- the tests


@needs_bwrap
@pytest.mark.parametrize("who", WHO)
def test_only_the_capped_tmpfs_mounts_are_writable_and_they_count_against_memory(who):
    memory, disk, shm = 512 * MiB, 48 * MiB, 16 * MiB
    found = scenario(who, "writable_places", memory, disk, shm)
    for path in ("/x", "/etc/x", "/usr/x", "/dev/x", "/d", "/dev/d"):
        assert found[path] == "EROFS", (path, found[path])
    assert found["/dev/pts/x"] != "written" and found["/proc/x"] != "written"
    assert 0 < found["tmp_bytes"] <= disk and 0 < found["shm_bytes"] <= shm
    # whatever the files hold, the address space is what is left of --memory
    assert found["address_space"] == memory - disk - shm
    assert found["tmp_bytes"] + found["shm_bytes"] + found["address_space"] <= memory
    for call in ("memfd", "shmget", "msgget", "semget"):  # memory no limit above would count
        assert found[call] == "EPERM", (call, found[call])


@needs_bwrap
@pytest.mark.parametrize("who", WHO)
def test_a_hoarding_run_starves_neither_a_concurrent_honest_run_nor_the_grader(who):
    processes = 96
    got = scenario(who, "hoarder_beside_honest", processes)
    for held in got["held"]:
        assert held is not None and processes // 2 < held < processes, got  # it hit its own limit
    assert got["honest"] == {"forked": processes // 2, "failures": []}, got
    assert got["grader_forked"]


@needs_bwrap
@pytest.mark.parametrize("who", WHO)
def test_a_path_bubblewrap_cannot_bind_is_named_with_what_to_do(who):
    if who == "grader's user":
        message = scenario(who, "bind", "/nonexistent-dpcourse-environment")
        unreadable, reason = "/nonexistent-dpcourse-environment", "No such file or directory"
    else:  # a folder the ordinary user may not enter, like a venv in another user's 0700 home
        with tempfile.TemporaryDirectory(prefix="dpcourse-bind-") as top:
            os.chmod(top, 0o755)
            private = Path(top) / "home"
            (private / "venv").mkdir(parents=True)
            private.chmod(0o700)
            unreadable, reason = str(private / "venv"), "Permission denied"
            message = scenario(who, "bind", unreadable)
    assert f"bubblewrap could not bind {unreadable}: {reason}" in message, message
    assert "make the Python environment readable" in message
    assert "refused" not in message


def test_bind_failure_reads_bubblewraps_messages_and_nothing_else():
    said = "bwrap: Can't find source path /home/ta/.venv: Permission denied"
    assert bind_failure(said).startswith("bubblewrap could not bind /home/ta/.venv: Permission denied")
    assert bind_failure("bwrap: setting up uid map: Permission denied") is None
    assert bind_failure("bwrap: No permissions to creating new namespace") is None


def test_the_storage_filter_is_whole_instructions_and_absent_where_unknown():
    program = storage_filter("x86_64")
    assert program and len(program) % 8 == 0
    assert storage_filter("aarch64") != program and len(storage_filter("aarch64")) % 8 == 0
    assert storage_filter("sparc64") == b""


def test_limits_refuse_a_memory_the_tmpfs_mounts_would_fill():
    with pytest.raises(ValueError, match="memory_bytes"):
        Limits(memory_bytes=300 * MiB, disk_bytes=256 * MiB, shm_bytes=64 * MiB)
    with pytest.raises(ValueError, match="processes"):
        Limits(processes=0)
    assert SMALL.address_space == 512 * MiB - 64 * MiB - 16 * MiB


def test_max_parallel_runs_says_why_when_it_bounds_the_runs():
    runs, why = max_parallel_runs("bwrap", Limits())
    assert runs >= 1 and (why == "" or "ulimit -u" in why or "root" in why)
    runs, why = max_parallel_runs("none", Limits())
    assert runs >= 1 and (runs > 1 or "--jobs 1" in why)
    with pytest.raises(ValueError, match="sandbox"):
        max_parallel_runs("docker")


# ------------------------------------------------------------- an unconfined run's own user id (the autograder's)


def test_an_unused_user_id_belongs_to_no_account_and_no_process():
    taken = {entry.pw_uid for entry in pwd.getpwall()}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            taken.add(os.stat(f"/proc/{pid}").st_uid)
        except FileNotFoundError:  # ended meanwhile
            continue
    drawn = {unused_user_id() for _ in range(50)}
    assert not drawn & taken and len(drawn) > 45  # drawn at random: two runs at once do not share one
    assert all(2**20 <= uid < 2**31 for uid in drawn)  # above the ids accounts get, below the 32-bit sign


def test_an_unused_user_id_is_one_the_user_namespace_maps(monkeypatch):
    # a rootless container maps root to the host's user and 65,536 ids above: only those can be set
    maps = {"/proc/self/uid_map": "         0       1000          1\n         1     100000      65536\n"}
    monkeypatch.setattr(users, "_read", lambda path: maps.get(str(path), ""))
    drawn = {unused_user_id() for _ in range(200)}
    assert all(1 <= uid <= 65536 for uid in drawn) and 0 not in drawn
    maps["/proc/self/uid_map"] = "0 0 1\n"  # root alone: no id for a run
    with pytest.raises(OSError, match="no user id"):
        unused_user_id()


def test_the_unconfined_user_takes_the_runs_own_id_or_says_why_not(monkeypatch):
    monkeypatch.setenv(UNCONFINED_USER_ENV, "nobody")
    try:
        monkeypatch.setenv(UNCONFINED_UID_ENV, "0")
        sandbox._unconfined.cache_clear()
        assert sandbox.unconfined_user() is None
        expected = "the grader is not root" if os.geteuid() != 0 else "must be a user id other than root's"
        assert expected in sandbox.why_no_unconfined_user()
        monkeypatch.setenv(UNCONFINED_USER_ENV, "no-such-user-dpcourse")
        sandbox._unconfined.cache_clear()
        assert sandbox.unconfined_user() is None
        assert (
            "no user 'no-such-user-dpcourse'" if os.geteuid() == 0 else "not root"
        ) in sandbox.why_no_unconfined_user()
    finally:
        sandbox._unconfined.cache_clear()


def test_runs_under_one_fixed_user_id_go_one_at_a_time(monkeypatch):
    # each run's clean-up ends every process of its id: with one id for all, a second run would lose its kernel
    monkeypatch.setenv(UNCONFINED_UID_ENV, str(unused_user_id()))
    runs, why = sandbox.max_parallel_runs("none")
    if os.geteuid() == 0:
        assert runs == 1 and UNCONFINED_UID_ENV in why
