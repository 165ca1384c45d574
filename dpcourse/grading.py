"""Grading submissions: the instructor's notebooks decide, each submission runs in its own sandbox.

``python -m dpcourse grade SUBMISSION.ipynb … --report grades.csv [--source notebooks/] [--jobs N]
[--cell-timeout S] [--memory 2G]``, and ``--merge a.csv b.csv … --report all.csv``.

How one submission is graded
----------------------------
1. **Built from the source.** The notebook that runs is the instructor's source notebook (matched
   by file name, else by content). From the submission only the answer cells are taken, matched
   by exercise id, then by cell id, then by position among the instructor's cells (see
   :func:`match_answers`). Every other cell, the check cells above all, is the instructor's; what
   the student changed there is ignored and listed as an integrity note. An exercise whose answer
   cell is missing is ``not attempted``; cells a student invented do not count.
2. **Run in a sandbox.** Each check cell is wrapped so that it only *collects evidence*
   (:mod:`dpcourse.checks._grading`) under a fresh nonce. The notebook runs with nbclient (not
   nbval: nbval turns a timeout or a dead kernel into skipped cells, which must never read as a
   pass) in :mod:`dpcourse._grade_worker`, inside bubblewrap: a fresh folder holding only this
   copy, the environment and the package read-only, a private /tmp, no network, its own pid
   namespace, and limits on memory, file size, time per cell and per notebook. A cell that times
   out or kills the kernel is reported and the notebook runs again from the top without it.
3. **Judged outside.** The grader reads the evidence from the executed notebook and calls each
   exercise's judge (:mod:`dpcourse.checks`) in its own process: ``passed`` needs a check that ran
   to completion in this run and evidence the judge accepts.

Statuses: ``passed``, ``failed`` (the check's message and hint), ``not attempted`` (the stub is
untouched or the answer cell is gone), ``errored`` (the answer raised, timed out or stopped the
kernel), ``invalid`` (not a readable notebook of this workbook). The grader writes the report
itself, atomically, after all runs, and a totals file beside it.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import json
import os
import re
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .checks import all_exercises
from .checks._grading import MIME
from .student_copy import BEGIN, PROJECT, release_notebook

__all__ = ["COLUMNS", "STATUSES", "GradeRow", "Limits", "add_grade_command", "grade", "match_answers", "merge_reports",
           "read_report", "sandbox_command", "summary_table", "totals", "write_report"]

STATUSES = ("passed", "failed", "not attempted", "errored", "invalid")
COLUMNS = ("student", "notebook", "exercise", "status", "points", "max_points", "message", "integrity")
_MAX_NOTEBOOK_BYTES = 50_000_000
_MAX_EXTRA_CELLS = 500  # a submission may add this many cells to the source's before it is refused
_INFRASTRUCTURE = "the grader could not run this submission"


@dataclass(frozen=True)
class GradeRow:
    """One line of the grade report."""

    student: str
    notebook: str
    exercise: str
    status: str
    points: float = 0.0
    max_points: float = 0.0
    message: str = ""
    integrity: str = ""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission's run."""

    cell_timeout: float = 120.0
    notebook_timeout: float = 900.0
    memory_bytes: int = 2 * 1024**3
    output_bytes: int = 1_000_000
    file_bytes: int = 256 * 1024**2


@dataclass
class _Exercise:
    exercise: str
    solution: int  # cell index in the source
    check: int
    points: float


@dataclass
class _Plan:
    """What runs for one submission, and what is known before it runs."""

    student: str
    notebook: str
    built: object
    exercises: list[_Exercise]
    nonces: dict[str, str]
    answered: dict[str, int | None]  # exercise → index of the submission's answer cell (None: missing)
    untouched: set[str] = field(default_factory=set)
    integrity: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- reading and matching

def _normalise(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _meta_exercise(cell) -> str | None:
    return (cell.get("metadata", {}).get("dpcourse") or {}).get("exercise")


def _tags(cell) -> list:
    return list(cell.get("metadata", {}).get("tags") or [])


def source_exercises(nb) -> list[_Exercise]:
    """The instructor's exercises: each solution cell (BEGIN … END) and the check cell after it."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or BEGIN not in cell.source:
            continue
        exercise = _meta_exercise(cell) or f"exercise-{len(found) + 1}"
        check = next((j for j in range(index + 1, len(nb.cells)) if "check" in _tags(nb.cells[j])
                      and _meta_exercise(nb.cells[j]) in (exercise, None)), None)
        if check is None:
            raise ValueError(f"source notebook: exercise {exercise!r} (cell {index}) has no check cell after it")
        points = float((nb.cells[check].metadata.get("dpcourse") or {}).get("points", 1))
        found.append(_Exercise(exercise, index, check, points))
    return found


def match_answers(source, released, submission, exercises: list[_Exercise]) -> dict[str, int | None]:
    """For each exercise, the index of the submission's answer cell, or None when it is gone.

    In order: a code cell with the exercise id in its metadata that is not a check cell; the cell
    whose id is the source's solution cell id; else the code cell in the same place among the
    instructor's cells (a difflib alignment of the released notebook's cell sources with the
    submission's), the one most like the released stub when several sit there.
    """
    answers: dict[str, int | None] = {}
    instructor_sources = {_normalise(c.source) for i, c in enumerate(released.cells)
                          if i not in {e.solution for e in exercises}}
    by_id = {cell.get("id"): i for i, cell in enumerate(submission.cells) if cell.get("id")}
    taken: set[int] = set()
    for ex in exercises:
        candidates = [i for i, cell in enumerate(submission.cells)
                      if cell.cell_type == "code" and _meta_exercise(cell) == ex.exercise and "check" not in _tags(cell)
                      and _normalise(cell.source) != _normalise(source.cells[ex.check].source)]
        index = candidates[0] if candidates else None
        if index is None:
            same_id = by_id.get(source.cells[ex.solution].get("id"))
            if same_id is not None and submission.cells[same_id].cell_type == "code":
                index = same_id
        answers[ex.exercise] = index
        if index is not None:
            taken.add(index)
    missing = [ex for ex in exercises if answers[ex.exercise] is None]
    if missing:
        released_keys = [(c.cell_type, _normalise(c.source)) for c in released.cells]
        submitted_keys = [(c.cell_type, _normalise(c.source)) for c in submission.cells]
        matcher = difflib.SequenceMatcher(a=released_keys, b=submitted_keys, autojunk=False)
        anchor = {}  # released index → submission index, for identical cells
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                anchor[block.a + k] = block.b + k
        for ex in missing:
            before = max((anchor[i] for i in anchor if i < ex.solution), default=-1)
            after = min((anchor[i] for i in anchor if i > ex.solution), default=len(submission.cells))
            gap = [i for i in range(before + 1, after) if submission.cells[i].cell_type == "code" and i not in taken
                   and _normalise(submission.cells[i].source) not in instructor_sources]
            if gap:
                stub = released.cells[ex.solution].source
                best = max(gap, key=lambda i: difflib.SequenceMatcher(a=stub, b=submission.cells[i].source).ratio())
                answers[ex.exercise] = best
                taken.add(best)
    return answers


def _integrity_notes(released, submission, exercises, answers) -> list[str]:
    notes = []
    answer_cells = {i for i in answers.values() if i is not None}
    solution_cells = {e.solution for e in exercises}
    instructor = [(c.cell_type, _normalise(c.source)) for i, c in enumerate(released.cells) if i not in solution_cells]
    submitted = [(c.cell_type, _normalise(c.source)) for i, c in enumerate(submission.cells) if i not in answer_cells]
    matcher = difflib.SequenceMatcher(a=instructor, b=submitted, autojunk=False)
    changed = extra = removed = 0
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "replace":
            changed += min(a1 - a0, b1 - b0)
            extra += max(0, (b1 - b0) - (a1 - a0))
            removed += max(0, (a1 - a0) - (b1 - b0))
        elif tag == "insert":
            extra += b1 - b0
        elif tag == "delete":
            removed += a1 - a0
    if changed:
        notes.append(f"{changed} of the instructor's cells were changed (the originals ran)")
    if extra:
        notes.append(f"{extra} extra cells (not run)")
    if removed:
        notes.append(f"{removed} of the instructor's cells were missing (the originals ran)")
    return notes


def _wrap_check(source: str, exercise: str, nonce: str) -> str:
    body = textwrap.indent(source.strip() or "pass", "    ")
    return (f"import dpcourse.checks._grading as _dpcourse_grading\n"
            f"with _dpcourse_grading.collect({exercise!r}, {nonce!r}):\n{body}\n")


def _source_for(submission_path: Path, submission, sources: dict[str, object]) -> str | None:
    """The source notebook's stem: by file name, else the one sharing the most cell ids and exercise ids."""
    if submission_path.stem in sources:
        return submission_path.stem
    submitted_ids = {c.get("id") for c in submission.cells} | {_meta_exercise(c) for c in submission.cells}
    submitted_ids.discard(None)
    score = {stem: len(submitted_ids & ({c.get("id") for c in nb.cells} | {_meta_exercise(c) for c in nb.cells}))
             for stem, nb in sources.items()}
    best = max(score, key=score.get, default=None)
    return best if best is not None and score[best] > 0 else None


def plan_submission(path: Path, sources: dict[str, object], released: dict[str, object]) -> _Plan | GradeRow:
    """Read a submission and build the notebook that will run, or an ``invalid`` row."""
    student = path.parent.name or path.stem
    try:
        if path.stat().st_size > _MAX_NOTEBOOK_BYTES:
            raise ValueError(f"the file is larger than {_MAX_NOTEBOOK_BYTES // 1_000_000} MB")
        submission = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        if not isinstance(submission.get("cells"), list):
            raise ValueError("it has no cells")
        for cell in submission.cells:
            if not isinstance(cell.get("source", ""), str) or cell.get("cell_type") not in ("code", "markdown", "raw"):
                raise ValueError("a cell is malformed")
        if len(submission.cells) > max(len(nb.cells) for nb in sources.values()) + _MAX_EXTRA_CELLS:
            raise ValueError(f"it has {len(submission.cells):,} cells, far more than the workbook's")
    except Exception as err:  # noqa: BLE001 - any unreadable file is reported, never fatal
        return GradeRow(student, path.stem, "-", "invalid", message=f"not a readable notebook: {type(err).__name__}: {err}"[:300])
    stem = _source_for(path, submission, sources)
    if stem is None:
        return GradeRow(student, path.stem, "-", "invalid", message="not one of this workbook's notebooks")
    source, student_copy = sources[stem], released[stem]
    exercises = source_exercises(source)
    answers = match_answers(source, student_copy, submission, exercises)
    built = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                              "language": "python"}})
    nonces = {}
    untouched = set()
    for index, cell in enumerate(source.cells):
        new = nbformat.from_dict({k: v for k, v in cell.items() if k not in ("outputs", "execution_count")})
        if cell.cell_type == "code":
            new.outputs, new.execution_count = [], None
        ex = next((e for e in exercises if e.solution == index), None)
        if ex is not None:
            answer = answers[ex.exercise]
            stub = student_copy.cells[index].source
            new.source = stub if answer is None else submission.cells[answer].source
            if answer is None or _normalise(new.source) == _normalise(stub):
                untouched.add(ex.exercise)
        ex = next((e for e in exercises if e.check == index), None)
        if ex is not None:
            nonces[ex.exercise] = secrets.token_hex(16)
            new.source = _wrap_check(cell.source, ex.exercise, nonces[ex.exercise])
        built.cells.append(new)
    notes = _integrity_notes(student_copy, submission, exercises, answers)
    if path.stem != stem:
        notes.insert(0, f"graded as {stem}")
    return _Plan(student, stem, built, exercises, nonces, answers, untouched, notes)


# --------------------------------------------------------------------------- the sandbox

def _bwrap() -> str | None:
    return shutil.which("bwrap")


def sandbox_command(workdir: Path, inner: list[str]) -> list[str]:
    """``inner`` run inside bubblewrap, seeing only the environment and the package (read-only) and ``workdir``."""
    import dpcourse

    package = Path(dpcourse.__file__).resolve().parent
    readonly = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(sys.executable).resolve().parent.parent,
                package}
    # Order matters: a later mount hides what an earlier one put below it, so the private /tmp comes first
    # (the environment or the package may live under /tmp, e.g. in a CI clone).
    command = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all", "--uid", "1000", "--gid", "1000",
               "--cap-drop", "ALL", "--clearenv", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
               "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib32", "lib64", "sbin"):
        top = Path("/") / name
        if top.is_symlink():
            command += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            command += ["--ro-bind", str(top), str(top)]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts", "mime.types", "passwd", "group",
                 "nsswitch.conf", "alternatives"):
        if (Path("/etc") / name).exists():
            command += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for path in sorted(readonly):
        if not str(path).startswith("/usr/"):
            command += ["--ro-bind", str(path), str(path)]
    home = "/grading"
    command += ["--bind", str(workdir), home, "--chdir", home]
    for key, value in _sandbox_environment(home).items():
        command += ["--setenv", key, value]
    return command + inner


def _sandbox_environment(home: str) -> dict[str, str]:
    return {"HOME": home, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "LANG": "C.UTF-8",
            "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/matplotlib", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "JUPYTER_PLATFORM_DIRS": "1"}


def _limit(limits: Limits):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def _execute(plan: _Plan, limits: Limits, sandboxed: bool) -> tuple[object | None, str]:
    """Run the built notebook; (executed notebook or None, why not)."""
    with tempfile.TemporaryDirectory(prefix="dpcourse-grade-") as tmp:
        workdir = Path(tmp)
        os.chmod(workdir, 0o777)  # the sandbox's user must be able to write its own folder
        nbformat.write(plan.built, workdir / "notebook.ipynb")
        inner = [sys.executable, "-m", "dpcourse._grade_worker", "notebook.ipynb", "executed.ipynb",
                 f"--cell-timeout={limits.cell_timeout:g}", f"--notebook-timeout={limits.notebook_timeout:g}",
                 f"--output-limit={limits.output_bytes}"]
        if sandboxed:
            command, env, cwd = sandbox_command(workdir, inner), {"PATH": os.environ.get("PATH", "/usr/bin")}, None
        else:
            command, cwd = inner, workdir
            env = {**_sandbox_environment(str(workdir)), "MPLCONFIGDIR": str(workdir / ".matplotlib"),
                   "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        try:
            completed = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, errors="replace",
                                       timeout=limits.notebook_timeout + 120, preexec_fn=_limit(limits),
                                       start_new_session=True)
        except subprocess.TimeoutExpired:
            return None, f"the notebook ran longer than {limits.notebook_timeout:g} s in total"
        output = workdir / "executed.ipynb"
        if sandboxed and completed.returncode != 0 and completed.stderr.startswith("bwrap:"):
            return None, f"{_INFRASTRUCTURE}: {completed.stderr.strip()[:200]}"
        if not output.exists() or output.stat().st_size > _MAX_NOTEBOOK_BYTES:
            tail = completed.stderr.strip().splitlines()[-1:] if completed.stderr.strip() else []
            reason = "MemoryError" if "MemoryError" in completed.stderr else (tail[0][:160] if tail else f"exit {completed.returncode}")
            return None, f"the run stopped before the end (the notebook used too much memory or output, or ended the grader's process: {reason})"
        try:
            return nbformat.read(output, as_version=4), ""
        except Exception as err:  # noqa: BLE001 - the file was in the student's reach
            return None, f"the run's result could not be read ({type(err).__name__})"


# --------------------------------------------------------------------------- judging

def _evidence(cell, nonce: str) -> dict | None:
    for output in cell.get("outputs", []):
        data = output.get("data", {}).get(MIME) if output.get("output_type") in ("display_data", "execute_result") else None
        if data is None:
            continue
        try:
            payload = json.loads(data if isinstance(data, str) else "".join(data))
        except (TypeError, ValueError):
            continue
        if isinstance(payload, dict) and payload.get("nonce") == nonce:
            return payload
    return None


def _first_error(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            value = str(output.get("evalue", "")).strip().splitlines()
            return f"{output.get('ename', 'Error')}: {value[0][:200] if value else ''}".rstrip(": ")
    return None


def judge_plan(plan: _Plan, executed, failure: str) -> list[GradeRow]:
    """One row per exercise of the plan, from the executed notebook (or the reason it has none)."""
    known = all_exercises()
    skipped = {}
    if executed is not None:
        skipped = {int(k): v for k, v in (executed.metadata.get("dpcourse_grading") or {}).get("skipped", {}).items()}
    integrity = "; ".join(plan.integrity)
    rows = []
    for ex in plan.exercises:
        def row(status, message=""):
            points = ex.points if status == "passed" else 0.0
            return GradeRow(plan.student, plan.notebook, ex.exercise, status, points, ex.points, message, integrity)

        if plan.answered.get(ex.exercise) is None:
            rows.append(row("not attempted", "no answer cell for this exercise was found in the submission"))
            continue
        if executed is None:
            rows.append(row("errored", failure))
            continue
        if ex.solution in skipped:
            rows.append(row("errored", f"your answer cell {skipped[ex.solution]}"))
            continue
        payload = _evidence(executed.cells[ex.check], plan.nonces[ex.exercise])
        records = [r for r in (payload or {}).get("records", []) if isinstance(r, dict) and r.get("exercise") == ex.exercise]
        solution_error = _first_error(executed.cells[ex.solution])
        if not records:
            if ex.check in skipped:
                rows.append(row("errored", f"the check cell {skipped[ex.check]} while running your answer"))
            elif ex.exercise in plan.untouched:
                rows.append(row("not attempted", "the answer cell is the untouched stub"))
            elif solution_error:
                rows.append(row("errored", f"your answer cell raised {solution_error}"))
            elif payload and payload.get("error"):
                rows.append(row("errored", f"the check could not run: {payload['error']}"))
            else:
                rows.append(row("errored", "the check produced no result"))
            continue
        exercise = known.get(ex.exercise)
        if exercise is None:
            rows.append(row("errored", f"{_INFRASTRUCTURE}: no judge for exercise {ex.exercise!r}"))
            continue
        verdict = exercise.verdict(records[0].get("evidence"))
        if verdict.passed:
            rows.append(row("passed", verdict.message))
        elif solution_error and verdict.status != "failed":
            rows.append(row("errored", f"your answer cell raised {solution_error}"))
        elif verdict.status == "not attempted":
            rows.append(row("not attempted", "the answer is still the stub"))
        else:
            rows.append(row("failed", verdict.message + (f" Hint: {verdict.hint}" if verdict.hint else "")))
    return rows


def _grade_one(path: Path, sources, released, limits: Limits, sandboxed: bool) -> list[GradeRow]:
    plan = plan_submission(path, sources, released)
    if isinstance(plan, GradeRow):
        return [plan]
    executed, failure = _execute(plan, limits, sandboxed)
    return judge_plan(plan, executed, failure)


def load_sources(source_dir) -> tuple[dict, dict]:
    """The instructor's notebooks (stem → notebook) and their released versions."""
    folder = Path(source_dir)
    paths = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    if not paths:
        raise FileNotFoundError(f"--source {folder}: no notebooks there")
    sources = {p.stem: nbformat.read(p, as_version=4) for p in paths}
    for stem, nb in sources.items():
        try:
            source_exercises(nb)
        except ValueError as err:
            raise ValueError(f"{folder / stem}.ipynb: {err}") from None
    return sources, {stem: release_notebook(nb) for stem, nb in sources.items()}


def grade(submissions, *, source=PROJECT / "notebooks", jobs: int | None = None, limits: Limits = Limits(),
          sandbox: str = "auto", progress: bool = False) -> list[GradeRow]:
    """Grade every submission; rows in the order of ``submissions``, exercises in notebook order.

    ``sandbox``: ``"auto"`` (bubblewrap when installed, else a loud warning and resource limits
    only), ``"bwrap"`` (fail if it is missing) or ``"none"``.
    """
    sources, released = load_sources(source)
    if sandbox not in ("auto", "bwrap", "none"):
        raise ValueError(f"sandbox must be 'auto', 'bwrap' or 'none'; got {sandbox!r}")
    sandboxed = sandbox != "none" and _bwrap() is not None
    if sandbox == "bwrap" and not sandboxed:
        raise RuntimeError("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    if sandbox == "auto" and not sandboxed:
        print("WARNING: bubblewrap (bwrap) is not installed, so submissions run WITHOUT a sandbox: they can read and "
              "write your files. Only resource limits apply. Install it: apt-get install bubblewrap", file=sys.stderr)
    paths = [Path(p) for p in submissions]
    workers = max(1, jobs or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_grade_one, p, sources, released, limits, sandboxed) for p in paths]
        if progress:
            from tqdm.auto import tqdm
            from concurrent.futures import as_completed
            for _ in tqdm(as_completed(futures), total=len(futures), unit="submission", desc="grading", file=sys.stderr):
                pass
        results = [f.result() for f in futures]
    return [row for rows in results for row in rows]


# --------------------------------------------------------------------------- reports

_FORMULA = re.compile(r"^[=+\-@\t\r]")


def _safe(value) -> str:
    """A report cell a spreadsheet will not run as a formula (OWASP's advice: prefix a quote)."""
    text = str(value)
    return "'" + text if _FORMULA.match(text) else text


def _points(value: float) -> str:
    return f"{value:g}"


def write_report(rows: list[GradeRow], path) -> Path:
    """Write the report CSV atomically, and the per-student totals beside it (``<name>_totals.csv``)."""
    path = Path(path)
    _atomic_csv(path, COLUMNS, ([_safe(r.student), _safe(r.notebook), _safe(r.exercise), r.status, _points(r.points),
                                 _points(r.max_points), _safe(r.message), _safe(r.integrity)] for r in rows))
    totals_path = path.with_name(f"{path.stem}_totals{path.suffix or '.csv'}")
    _atomic_csv(totals_path, ("student", "points", "max_points", "passed", "exercises"),
                ([_safe(s), _points(t["points"]), _points(t["max_points"]), t["passed"], t["exercises"]]
                 for s, t in totals(rows).items()))
    return totals_path


def _atomic_csv(path: Path, header, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile("w", newline="", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.",
                                         delete=False)
    try:
        with handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def totals(rows: list[GradeRow]) -> dict[str, dict]:
    """Per student: points, max points, passed exercises, exercises."""
    result: dict[str, dict] = defaultdict(lambda: {"points": 0.0, "max_points": 0.0, "passed": 0, "exercises": 0})
    for r in rows:
        entry = result[r.student]
        entry["points"] += r.points
        entry["max_points"] += r.max_points
        entry["passed"] += r.status == "passed"
        entry["exercises"] += r.exercise != "-"
    return dict(sorted(result.items()))


def read_report(path) -> list[GradeRow]:
    """Rows of a report written by :func:`write_report` (the neutralising quote is removed again)."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("student", "notebook", "exercise", "status") if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a grade report (no column {', '.join(missing)})")
        rows = []
        for line in reader:
            unquote = {k: (v[1:] if isinstance(v, str) and v.startswith("'") and _FORMULA.match(v[1:]) else v)
                       for k, v in line.items()}
            if unquote["status"] not in STATUSES:
                raise ValueError(f"{path}: unknown status {unquote['status']!r}")
            rows.append(GradeRow(unquote["student"], unquote["notebook"], unquote["exercise"], unquote["status"],
                                 float(unquote.get("points") or 0), float(unquote.get("max_points") or 0),
                                 unquote.get("message") or "", unquote.get("integrity") or ""))
    return rows


def merge_reports(paths) -> list[GradeRow]:
    """The rows of several reports (e.g. one per shard of a batch job); a row graded twice is an error."""
    rows, seen = [], {}
    for path in paths:
        for row in read_report(path):
            key = (row.student, row.notebook, row.exercise)
            if key in seen:
                raise ValueError(f"{row.student}/{row.notebook}/{row.exercise} is in both {seen[key]} and {path}")
            seen[key] = path
            rows.append(row)
    return rows


def summary_table(rows: list[GradeRow]) -> str:
    """A plain-text table for the terminal, with per-student totals."""
    heads = ("student", "notebook", "exercise", "status", "points")
    values = [(r.student, r.notebook, r.exercise, r.status, f"{_points(r.points)}/{_points(r.max_points)}") for r in rows]
    widths = [max([len(h)] + [len(v[i]) for v in values]) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths)) + "  message"]
    lines.append("-" * len(lines[0]))
    for r, v in zip(rows, values):
        lines.append("  ".join(x.ljust(w) for x, w in zip(v, widths)) + "  " + r.message[:100])
    lines.append("")
    lines.append("totals: " + "; ".join(f"{s} {_points(t['points'])}/{_points(t['max_points'])}" for s, t in totals(rows).items()))
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(lines)


# --------------------------------------------------------------------------- command line

def _memory(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", str(text), flags=re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"--memory must look like 2G or 512M; got {text!r}")
    value = float(match.group(1)) * 1024 ** " KMGT".index(match.group(2).upper() or " ")
    if value < 256 * 1024**2:
        raise argparse.ArgumentTypeError("--memory must be at least 256M (a kernel with numpy needs that)")
    return int(value)


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
        return value
    return parse


def add_grade_command(commands) -> None:
    """Register ``grade`` on an argparse sub-command set."""
    parser = commands.add_parser("grade", help="grade submitted notebooks, each in its own sandbox",
                                 description="Grade submissions/<student>/<notebook>.ipynb against the instructor's notebooks.")
    parser.add_argument("submissions", nargs="*", type=Path, help="submitted notebooks (the student is the folder name)")
    parser.add_argument("--report", type=Path, required=True, help="the CSV report to write (totals go beside it)")
    parser.add_argument("--source", type=Path, default=PROJECT / "notebooks", help="the instructor's notebooks (default: notebooks/)")
    parser.add_argument("--jobs", type=_positive(int), default=None, help="submissions graded in parallel (default: the cores)")
    parser.add_argument("--cell-timeout", type=_positive(float), default=Limits.cell_timeout, help="seconds per cell")
    parser.add_argument("--notebook-timeout", type=_positive(float), default=Limits.notebook_timeout, help="seconds per notebook")
    parser.add_argument("--memory", type=_memory, default=Limits.memory_bytes, help="memory per submission (default 2G)")
    parser.add_argument("--sandbox", choices=("auto", "bwrap", "none"), default="auto",
                        help="bubblewrap when installed (auto), required (bwrap), or none")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="CSV", help="merge these reports into --report instead of grading")
    parser.set_defaults(run=_run_grade)


def _run_grade(args) -> int:
    try:
        if args.merge:
            if args.submissions:
                print("grade: give either submissions or --merge, not both", file=sys.stderr)
                return 2
            rows = merge_reports(args.merge)
        else:
            if not args.submissions:
                print("grade: no submissions given", file=sys.stderr)
                return 2
            absent = [str(p) for p in args.submissions if not p.is_file()]
            if absent:
                print(f"grade: no such file: {', '.join(absent[:5])}", file=sys.stderr)
                return 2
            limits = Limits(cell_timeout=args.cell_timeout, notebook_timeout=args.notebook_timeout, memory_bytes=args.memory)
            rows = grade(args.submissions, source=args.source, jobs=args.jobs, limits=limits, sandbox=args.sandbox,
                         progress=True)
        print(summary_table(rows))
        totals_path = write_report(rows, args.report)
    except (OSError, ValueError, RuntimeError) as err:
        print(f"grade: {err}", file=sys.stderr)
        return 2
    print(f"report written to {args.report}, totals to {totals_path}")
    broken = sum(r.message.startswith(_INFRASTRUCTURE) for r in rows)
    if broken:
        print(f"grade: {broken} rows could not be graded because of the grader itself (see their messages)", file=sys.stderr)
        return 1
    return 0
