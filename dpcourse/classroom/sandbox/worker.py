"""Run one built notebook top to bottom; the grader starts this inside the sandbox.

``python -m dpcourse.classroom.sandbox.worker [--detach]`` reads one job from standard input (JSON: the
notebook, the limits, which cells are answers and checks, and a key) and writes one signed result
to standard output. Nothing is read from or written to files: the submission's code can write
anything into its folder, and none of it is ever read back.

Why the result cannot be forged by the submission's code, which runs in the kernel this process starts:

- the kernel never holds this process's standard output: before it starts a kernel, the worker
  keeps a private duplicate of its output for the result and points file descriptors 1 and 2 at
  ``/dev/null``, which the kernel inherits;
- the worker makes itself non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``), so a process of the same
  user without ``CAP_SYS_PTRACE`` can neither open ``/proc/<worker>/fd/*`` nor read its memory
  (where the key is);
- the result is signed with HMAC-SHA256 under the key the grader sent on standard input, so bytes
  that reach the grader's pipe some other way are refused.

Every cell runs, errors included (``allow_errors``). A cell that times out or kills the kernel is
recorded in ``skipped`` (cell index → reason) and the notebook runs again from the top in a fresh
kernel without it, at most :data:`MAX_RESTARTS` times; cells not reached in the notebook's time are
recorded the same way. Output over ``output_limit`` bytes per cell is dropped.

``--detach`` (used without bubblewrap): the worker forks once and the first process exits, so the
worker's parent is no longer the grader: a submission that walks up ``os.getppid()`` does not reach it.
"""

from __future__ import annotations

import copy
import ctypes
import hashlib
import hmac
import json
import math
import os
import sys
import time
from typing import Any

from nbformat import NotebookNode
from traitlets.config import Config

__all__ = ["FRAME", "MAX_RESTARTS", "collect", "frame", "main", "run", "sign"]

MAX_RESTARTS = 3
#: how long a kernel may take to start: nbclient's 60 s is exceeded on a 2-core machine running two test
#: suites at once (load 10), and a kernel that does not start on the first try is the grader's failure
KERNEL_START_SECONDS = 240
#: the prefix of the private folder the grader makes for an unconfined run (its home and working folder)
PRIVATE_PREFIX = "dpcourse-grade-"
MAX_JOB_BYTES = 64_000_000
#: a check cell's evidence output larger than this is dropped (the judge then sees no result)
MAX_EVIDENCE_BYTES = 2_000_000
FRAME = b"DPCOURSE-RESULT"
_PR_SET_DUMPABLE = 4


def sign(key: bytes, body: bytes) -> str:
    """The HMAC-SHA256 of ``body`` under ``key``, in hex.

    Parameters
    ----------
    key : bytes
        The run's secret key (the grader draws 32 random bytes per run).
    body : bytes
        The bytes signed.

    Returns
    -------
    str
        64 lowercase hexadecimal digits.
    """
    return hmac.new(key, body, hashlib.sha256).hexdigest()


def frame(key: bytes, result: dict[str, Any]) -> bytes:
    """The bytes the worker writes: ``DPCOURSE-RESULT <length> <hmac>\\n<json>``.

    Parameters
    ----------
    key : bytes
        The run's secret key, from the job.
    result : dict
        The result, JSON-serialisable.

    Returns
    -------
    bytes
        :data:`FRAME`, the body's length in bytes and its :func:`sign` on one line, then the body (compact JSON).
    """
    body = json.dumps(result, separators=(",", ":")).encode()
    return FRAME + f" {len(body)} {sign(key, body)}\n".encode() + body


def _not_dumpable() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux; the grader says what an unconfined run protects
        pass


def _private_output() -> int:
    """A descriptor only this process holds for the result; 0, 1 and 2 become /dev/null for the kernel."""
    result = os.dup(1)  # os.dup makes non-inheritable descriptors: the kernel does not get it
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (1, 2):
        os.dup2(null, fd)
    os.close(null)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - rebinding the process's own streams
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    return result


def _output_size(cell: NotebookNode) -> int:
    return len(json.dumps(cell.get("outputs", []), default=str))


def _cap_outputs(cell: NotebookNode, limit: int) -> None:
    import nbformat

    size = _output_size(cell)
    if size > limit:
        cell.outputs = [
            nbformat.v4.new_output(
                "stream", name="stderr", text=f"[grader: {size:,} bytes of output removed; the limit is {limit:,}]\n"
            )
        ]


def _clean_scratch(folders: list[str]) -> None:
    """Empty the writable folders (the sandbox's ``/tmp`` with the home inside it) before a kernel starts.

    A submission may leave an IPython startup file, a ``usercustomize`` or an ``ipykernel_launcher.py`` there
    that would exit or hang the next kernel. Only what lies on the folder's own file system is removed:
    the Python environment and the package may be read-only mounts below ``/tmp`` (a CI clone) and are
    not descended into.
    """
    for top in folders:
        try:
            device = os.stat(top, follow_symlinks=False).st_dev
        except OSError:
            continue
        _empty(top, device)


def _empty(folder: str, device: int) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_dev != device:  # another mount (read-only environment): leave it alone
            continue
        if entry.is_dir(follow_symlinks=False):
            _empty(entry.path, device)
            try:
                os.rmdir(entry.path)
            except OSError:  # a mount point below it, or not empty
                pass
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _scratch_folders() -> list[str]:
    """The writable folders a kernel reads at start-up and that belong to this run alone.

    In bubblewrap (this process is pid 1 of the sandbox) that is the sandbox's own ``/tmp``, the home
    inside it. Unconfined, it is the home only, and only when it is the private folder the grader made for
    this run (never the machine's ``/tmp``, which the grader's user shares with everything else).
    """
    if os.getpid() == 1:
        return ["/tmp"]
    home = os.environ.get("HOME", "")
    if os.path.basename(home).startswith(PRIVATE_PREFIX) and os.path.realpath(home) == os.path.realpath(os.getcwd()):
        return [home]
    return []


#: the longest path a Unix socket may have on Linux (``sun_path`` is 108 bytes with its final NUL), less the
#: ``-N`` jupyter_client appends for each channel
_MAX_SOCKET_PREFIX = 100


def _kernel_channels() -> Config:
    """The kernel's channels as Unix sockets in this run's own runtime folder, when it has one.

    Over TCP the client picks five free ports on the loopback, closes them and the kernel binds them a
    moment later; an unconfined run shares the loopback with every other process on the machine, and on a
    busy one another program can take a port in between, so that the client talks to someone else's socket
    and the honest student's kernel "does not respond" (seen in make test's unconfined kernel-faults batch on
    a loaded machine: an honest row errored after 240 s). Sockets in the run's private folder cannot be
    taken, nor reached by another user. In bubblewrap the loopback is the sandbox's own; the same sockets
    work there too.
    """
    config = Config()
    runtime = os.environ.get("JUPYTER_RUNTIME_DIR", "")
    prefix = os.path.join(runtime, "kernel")
    if os.path.isabs(runtime) and len(prefix.encode()) <= _MAX_SOCKET_PREFIX:
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = prefix
    return config


def _fresh_start(folders: list[str]) -> None:
    _clean_scratch(folders)
    for key in ("HOME", "IPYTHONDIR", "MPLCONFIGDIR", "JUPYTER_RUNTIME_DIR"):
        folder = os.environ.get(key)
        if folder:
            os.makedirs(folder, exist_ok=True)
    home = os.environ.get("HOME")
    if home and os.path.isdir(home):
        os.chdir(home)  # the kernel starts in the home, which was emptied (and perhaps removed) above


#: What a cell that made nbclient itself fail is recorded as (a malformed or duplicate kernel message, a
#: number JSON cannot read, a reply the client did not expect): the submission's problem, never the grader's.
PROTOCOL = "made the kernel send a message the grader could not read"


def run(
    nb: NotebookNode, *, cell_timeout: float, notebook_timeout: float, output_limit: int
) -> tuple[NotebookNode, dict[int, str]]:
    """Execute ``nb`` (a copy is returned) with restarts after timeouts, kernel deaths and protocol errors.

    Every kernel starts with the writable folders emptied (:func:`_clean_scratch`), so nothing an earlier
    run left there reaches it. Nothing the kernel sends makes this raise: a cell whose messages nbclient
    cannot handle is skipped like one that timed out, and a kernel that does not start once the
    submission's code has run ends the run with the cells not reached recorded as such.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The built notebook (:attr:`~.plan.Plan.built`); not changed.
    cell_timeout : float
        Seconds one cell may run (whole seconds, at least 1, and never past the notebook's time left).
    notebook_timeout : float
        Seconds for the whole notebook, restarts included; cells not reached by then are recorded.
    output_limit : int
        The most bytes of output (as JSON) one cell keeps; more is replaced by a note.

    Returns
    -------
    executed : nbformat.NotebookNode
        The last run's notebook, with its outputs; cells skipped in an earlier run have the source ``pass``
        there.
    skipped : dict
        Cell index → why it did not run to its end (timed out, stopped the kernel, a message nbclient could
        not read, not reached in time, too many restarts).

    Raises
    ------
    Exception
        Whatever nbclient raised when the first kernel did not start, before any of the submission's code
        ran: the grader's own failure, which :func:`main` reports as the result's ``error``.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    skipped: dict[int, str] = {}
    started = time.monotonic()
    scratch = _scratch_folders()
    work = nb
    for attempt in range(MAX_RESTARTS + 1):
        work = copy.deepcopy(nb)
        for index in skipped:
            if work.cells[index].cell_type == "code":
                work.cells[index].source = "pass  # not run by the grader"
        _fresh_start(scratch)
        client = NotebookClient(
            work,
            timeout=cell_timeout,
            startup_timeout=KERNEL_START_SECONDS,
            allow_errors=True,
            kernel_name="python3",
            record_timing=False,
            config=_kernel_channels(),
        )
        interrupted = False
        current = -1
        try:
            with client.setup_kernel():
                for index, cell in enumerate(work.cells):
                    if cell.cell_type != "code" or index in skipped:
                        continue
                    remaining = notebook_timeout - (time.monotonic() - started)
                    if remaining <= 0:
                        _skip_rest(
                            work,
                            skipped,
                            index,
                            f"not run: the notebook's time limit of {notebook_timeout:g} s ran out",
                        )
                        break
                    # nbclient's timeout is a traitlets Integer: the float time left raised TraitError
                    client.timeout = max(1, math.ceil(min(cell_timeout, remaining)))
                    current = index
                    try:
                        client.execute_cell(cell, index)
                    except CellTimeoutError:
                        skipped[index] = f"timed out after {client.timeout:g} s"
                        interrupted = True
                    except DeadKernelError:
                        skipped[index] = "stopped the Python kernel (it exited, crashed or ran out of memory)"
                        interrupted = True
                    except Exception as err:  # noqa: BLE001 - whatever the kernel sent is this cell's problem
                        skipped[index] = f"{PROTOCOL} ({type(err).__name__})"
                        interrupted = True
                    current = -1
                    _cap_outputs(cell, output_limit)
                    if interrupted:
                        break
        except Exception as err:  # noqa: BLE001 - the kernel did not start, or did not shut down cleanly
            if current >= 0:  # raised while a cell ran, outside execute_cell's own handling
                skipped[current] = f"{PROTOCOL} ({type(err).__name__})"
                interrupted = True
            elif not interrupted and not _all_ran(work, skipped):
                if attempt == 0 and _first_unrun(work, skipped) == _first_code(work):
                    raise  # the first kernel, before any of the submission's code ran: the grader's own problem
                reason = f"not run: the Python kernel did not start ({type(err).__name__}: {str(err)[:120]})"
                _skip_rest(work, skipped, _first_unrun(work, skipped), reason)
                break
        if not interrupted:
            break
    else:
        _skip_rest(work, skipped, 0, "not run: too many timeouts or kernel deaths in this notebook")
    return work, skipped


def _first_code(work: NotebookNode) -> int:
    return next((i for i, c in enumerate(work.cells) if c.cell_type == "code"), len(work.cells))


def _has_run(cell: NotebookNode) -> bool:
    return cell.get("execution_count") is not None or bool(cell.get("outputs"))


def _all_ran(work: NotebookNode, skipped: dict[int, str]) -> bool:
    return all(c.cell_type != "code" or i in skipped or _has_run(c) for i, c in enumerate(work.cells))


def _first_unrun(work: NotebookNode, skipped: dict[int, str]) -> int:
    return next(
        (i for i, c in enumerate(work.cells) if c.cell_type == "code" and i not in skipped and not _has_run(c)),
        len(work.cells),
    )


def _skip_rest(work: NotebookNode, skipped: dict[int, str], start: int, reason: str) -> None:
    """Record every code cell from ``start`` on that has not run in ``work`` as not run, for ``reason``."""
    for index in range(start, len(work.cells)):
        cell = work.cells[index]
        if cell.cell_type == "code" and index not in skipped and not _has_run(cell):
            skipped[index] = reason


def _first_error(cell: NotebookNode) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            value = str(output.get("evalue", "")).strip().splitlines()
            return f"{output.get('ename', 'Error')}: {value[0][:200] if value else ''}".rstrip(": ")
    return None


def _evidence_outputs(cell: NotebookNode, mime: str) -> list[str]:
    found = []
    for output in cell.get("outputs", []):
        if output.get("output_type") not in ("display_data", "execute_result"):
            continue
        data = output.get("data", {}).get(mime)
        if data is None:
            continue
        text = data if isinstance(data, str) else json.dumps(data)
        found.append(text if len(text) <= MAX_EVIDENCE_BYTES else "")
    return found


def collect(
    executed: NotebookNode, skipped: dict[int, str], cells: dict[str, dict[str, int]], mime: str
) -> dict[str, Any]:
    """What the grader needs from a run: per exercise, its evidence outputs and errors; the skipped cells.

    Parameters
    ----------
    executed : nbformat.NotebookNode
        The notebook :func:`run` returned.
    skipped : dict
        Cell index → why it did not run to its end, as :func:`run` returned it.
    cells : dict
        Exercise id → {"solution": cell index, "check": cell index}.
    mime : str
        The MIME type of the checks' evidence outputs.

    Returns
    -------
    dict
        ``{"skipped": {str(index): reason}, "exercises": {id: {"evidence", "solution_error", "check_error"}}}``:
        ``evidence`` the check cell's outputs of type ``mime`` as text (one over :data:`MAX_EVIDENCE_BYTES`
        becomes ``""``), the errors each cell's first error as ``"Name: message"`` or None.
    """
    exercises = {}
    for exercise, where in cells.items():
        solution, check = executed.cells[where["solution"]], executed.cells[where["check"]]
        exercises[exercise] = {
            "evidence": _evidence_outputs(check, mime),
            "solution_error": _first_error(solution),
            "check_error": _first_error(check),
        }
    return {"skipped": {str(k): v for k, v in sorted(skipped.items())}, "exercises": exercises}


def _job() -> dict[str, Any]:
    raw = sys.stdin.buffer.read(MAX_JOB_BYTES + 1)
    if len(raw) > MAX_JOB_BYTES:
        raise ValueError("the job is too large")
    return json.loads(raw)


def main(argv: list[str] | None = None) -> int:
    """``python -m dpcourse.classroom.sandbox.worker [--detach]``: read one job on standard input, write its result.

    The result is signed (:func:`sign`).

    The job is JSON of at most :data:`MAX_JOB_BYTES` with the notebook, ``cell_timeout``, ``notebook_timeout``,
    ``output_limit``, ``cells`` (exercise id → its answer and check cells) and ``key`` (hex). The result,
    :func:`collect`'s or ``{"error": …}`` when running failed, goes out through :func:`frame` on a descriptor
    only this process holds, after standard output and error were pointed at ``/dev/null``.

    Parameters
    ----------
    argv : list of str or None, optional
        The arguments (default: ``sys.argv[1:]``); ``--detach`` forks once and the parent exits at once.

    Returns
    -------
    int
        0 (a detached parent exits with 0 without returning).

    Raises
    ------
    ValueError
        If the job is larger than :data:`MAX_JOB_BYTES`, not JSON, or its ``key`` not hexadecimal (a
        ``KeyError`` or ``TypeError`` when there is no ``key`` string): no result is written then, and the
        grader reports it as missing.
    """
    argv = sys.argv[1:] if argv is None else argv
    # ``-m`` put the working folder (the submission's writable home) first on the path: a module the
    # submission writes there must never be imported by this process, which holds the key.
    here = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", here)]
    os.environ["PYTHONNOUSERSITE"] = "1"  # the kernels ignore a user site (and its usercustomize) in the home
    if "--detach" in argv and os.fork() > 0:
        os._exit(0)  # the grader reads our pipes to their end; it does not wait for this process
    _not_dumpable()
    result_fd = _private_output()
    job = _job()
    key = bytes.fromhex(job["key"])
    try:
        import nbformat

        from ...checks._grading import MIME

        nb = nbformat.from_dict(job["notebook"])
        executed, skipped = run(
            nb,
            cell_timeout=job["cell_timeout"],
            notebook_timeout=job["notebook_timeout"],
            output_limit=job["output_limit"],
        )
        result = collect(executed, skipped, job["cells"], MIME)
    except Exception as err:  # noqa: BLE001 - reported to the grader, which turns it into this submission's rows
        result = {"error": f"{type(err).__name__}: {str(err)[:300]}"}
    with os.fdopen(result_fd, "wb") as out:
        out.write(frame(key, result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
