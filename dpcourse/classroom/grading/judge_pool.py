"""The judges' own process: evidence in, verdicts out, with a budget the grader enforces.

A judge is pure, but the evidence it reads was shaped by a submission: an audit record that asks for a
million runs, six hundred copies of it, an answer that makes a reference computation slow. So judging
runs outside the grader's process, in ``python -P -m dpcourse.classroom.grading.judge_pool`` processes kept by a
:class:`JudgePool` for the whole batch (each imports the checks once): one request per exercise, a
deadline for each, at most :data:`MAX_RECORDS` records, and an address-space limit. A judge that runs
past its deadline is killed and replaced; that exercise is ``errored`` with a plain reason, and every
other exercise and submission is judged as usual.

The protocol is one JSON object per line: the grader sends ``{"exercise", "seed", "records"}`` and
reads back ``{"verdicts": [{"status", "message", "hint", "mistake", "score"}, …]}``.

Why not ``pebble.ProcessPool`` (a process pool with a timeout per task, which kills and replaces a worker that runs
past it): it was weighed for issue 41 and kept out, because what it adds over this module is the ~40 lines of
``_JudgeProcess.ask`` and ``_JudgeProcess.close``, and what it would change is unsafe here. Its results come
back pickled over :mod:`multiprocessing` pipes, so the grader would unpickle what a process that has just read a
submission's evidence sent: a judge subverted by that evidence could run code in the grader. Here the grader parses
one JSON line, capped at ``_MAX_LINE`` characters. Its workers are :mod:`multiprocessing` children (forked from a
grader that runs threads, or spawned with the parent's ``sys.path`` and ``__main__``), where a judge here is a fresh
``python -P`` that imports the installed package and nothing from the working folder, under its own address-space
limit. And it would be one more dependency in the Gradescope image for the same deadline-and-replace behaviour.
"""

from __future__ import annotations

import json
import os
import queue
import resource
import subprocess
import sys
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import IO, Any

__all__ = ["COMMAND", "JUDGE_SECONDS", "MAX_RECORDS", "JudgePool", "OverBudget", "main"]

#: a judge's wall-clock budget for one exercise of one submission (the slowest honest one takes about 3 s)
JUDGE_SECONDS = 60.0
#: check calls of one exercise judged in one run; an honest check cell makes one
MAX_RECORDS = 3
_ADDRESS_SPACE = 4 * 1024**3
_MAX_LINE = 16_000_000


def _judge(request: dict[str, Any]) -> dict[str, Any]:
    from ...checks import all_exercises

    exercise = all_exercises().get(str(request.get("exercise")))
    if exercise is None:
        return {"error": f"no judge for exercise {request.get('exercise')!r}"}
    seed = request.get("seed")
    verdicts = []
    for evidence in request.get("records", [])[:MAX_RECORDS]:
        verdict = exercise.verdict(evidence, seed=seed if isinstance(seed, int) else None)
        score = getattr(verdict, "score", 1.0 if verdict.passed else 0.0)
        verdicts.append(
            {
                "status": verdict.status,
                "message": verdict.message,
                "hint": verdict.hint,
                "mistake": verdict.mistake,
                "score": float(score),
            }
        )
    return {"verdicts": verdicts}


def main() -> int:
    """Serve judging requests on standard input until it closes.

    Each line is one request (``{"exercise", "seed", "records"}``); each answer is one line,
    ``{"verdicts": […]}`` or ``{"error": …}`` when the request could not be judged. The process limits its
    own address space to 4 GiB and its integers to 10,000 digits, and writes no core file.

    Returns
    -------
    int
        0, once standard input is closed.
    """
    if hasattr(sys, "set_int_max_str_digits"):  # 3.11.0 final and later (a release candidate lacks it)
        sys.set_int_max_str_digits(10_000)
    resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_SPACE, _ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    out = sys.stdout
    for line in sys.stdin:
        try:
            answer = _judge(json.loads(line))
        except Exception as err:  # noqa: BLE001 - reported to the grader as this exercise's problem
            answer = {"error": f"{type(err).__name__}: {str(err)[:200]}"}
        out.write(json.dumps(answer, default=str) + "\n")
        out.flush()
    return 0


#: the judge process's command line (``-P``: the working folder is not put on the import path)
COMMAND = (sys.executable, "-P", "-m", "dpcourse.classroom.grading.judge_pool")


class OverBudget(str):
    """Why there is no verdict when the judge ran past its budget: the submission's doing, not the grader's."""


class _JudgeProcess:
    """One judge process and a thread that reads its answers."""

    def __init__(self, command: Sequence[str]) -> None:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
        self.process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
            encoding="utf-8",
        )
        self.answers: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stream: IO[str] | None) -> None:
        try:
            for line in stream or ():
                self.answers.put(line[:_MAX_LINE])
        except (OSError, ValueError):
            pass
        self.answers.put(None)

    def ask(self, request: str, timeout: float) -> dict[str, Any] | str:  # a str: why there is no answer
        """The answer to ``request``, or why there is none (the process died, or ran past ``timeout``: killed)."""
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(request + "\n")
            self.process.stdin.flush()
            line = self.answers.get(timeout=timeout)
        except queue.Empty:
            self.close()
            return OverBudget(f"judging your answer ran past its budget of {timeout:g} s (the grader stopped it)")
        except (OSError, ValueError):
            line = None
        if line is None:
            self.close()
            return "the judge's process ended without an answer"
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        return answer if isinstance(answer, dict) else "the judge's answer could not be read"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        if self.alive:
            self.process.kill()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
            pass


class JudgePool:
    """Judge processes shared by a batch's threads; use as a context manager.

    :meth:`judge` returns the verdicts of one exercise's records, or a sentence saying why there are none:
    an :class:`OverBudget` when the judge ran past its budget (the evidence asked for too much), a plain
    ``str`` when the judge failed (the grader's problem).

    Parameters
    ----------
    size : int
        The most judge processes at once (one per grading thread); at least 1 whatever is given. Each is
        started on first use and replaced when it dies or is killed.
    seconds : float, optional
        The wall-clock budget of one request (:data:`JUDGE_SECONDS`).
    command : sequence of str, optional
        The judge process's command line (:data:`COMMAND`).
    """

    def __init__(self, size: int, seconds: float = JUDGE_SECONDS, command: Sequence[str] = COMMAND):
        self.seconds, self.command = seconds, command
        self._idle: queue.LifoQueue[_JudgeProcess | None] = queue.LifoQueue()
        for _ in range(max(1, size)):
            self._idle.put(None)  # started on first use
        self._all: list[_JudgeProcess] = []
        self._lock = threading.Lock()

    def __enter__(self) -> JudgePool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def judge(self, exercise: str, seed: int, records: Sequence[object]) -> list[dict[str, Any]] | str:
        """Judge one exercise's evidence in an idle judge process, within the pool's budget.

        Blocks until a process is free. Never raises for what the evidence does: a judge that runs past
        ``seconds`` is killed (and replaced on the next request).

        Parameters
        ----------
        exercise : str
            The exercise id (its judge is looked up in :func:`dpcourse.checks.all_exercises`).
        seed : int
            The seed the grading inputs of a function exercise were drawn from.
        records : sequence
            The evidence of the check's calls, JSON-serialisable; only the first :data:`MAX_RECORDS` are sent.

        Returns
        -------
        list of dict or str
            One verdict per record sent (``status``, ``message``, ``hint``, ``mistake``, ``score``); else an
            :class:`OverBudget` when the judge ran past its budget, or a plain ``str`` saying why the judge
            failed (it could not start, died, answered what could not be read, or had no judge).
        """
        request = json.dumps({"exercise": exercise, "seed": seed, "records": list(records)[:MAX_RECORDS]})
        process = self._idle.get()
        try:
            if process is None or not process.alive:
                process = _JudgeProcess(self.command)
                with self._lock:
                    self._all.append(process)
            answer = process.ask(request, self.seconds)
        except OSError as err:
            return f"the judge could not be started ({err.strerror})"
        finally:
            self._idle.put(process if process is not None and process.alive else None)
        if isinstance(answer, str):
            return answer
        verdicts = answer.get("verdicts")
        if not isinstance(verdicts, list) or not all(isinstance(v, dict) for v in verdicts):
            return f"the judge failed ({str(answer.get('error', 'no verdict'))[:200]})"
        return verdicts

    def close(self) -> None:
        """End every judge process the pool started (their input closed, then killed if still running)."""
        with self._lock:
            for process in self._all:
                try:
                    if process.process.stdin is not None:
                        process.process.stdin.close()
                except OSError:
                    pass
                process.close()
            self._all.clear()


if __name__ == "__main__":
    sys.exit(main())
