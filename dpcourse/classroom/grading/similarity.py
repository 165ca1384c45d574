"""Answers that are suspiciously alike: for each exercise, every pair of students' answer cells compared.

**What is compared.** The answer cells the grader graded (:func:`read_answers`: the same file of each student,
the same cell of each exercise, through :func:`~.plan.plan_submission`), without the released stub and its starter
code: every fingerprint the stub has is taken out of every answer, so an unchanged ``def f(W):`` line or the
given ``n_office, alpha, … = …`` line is never evidence. An answer left as the stub is not compared.

**How: an AST-normalised token n-gram method, written here on the standard library** (:mod:`ast`, :mod:`tokenize`).
Each answer is parsed; every name the cell binds (assigned, a parameter, a loop variable, a function it defines,
an import's alias) becomes ``V``, the names it only reads (``np``, ``sum``, an attribute, a keyword argument)
stay, every number becomes its float value after constant folding (``1e3``, ``1000.0``, ``1_000`` and
``10 ** 3`` are one literal), strings become ``STR``, ``x += 1`` reads as ``x = x + 1``; comments, docstrings,
layout and parentheses do not exist in the tree. Each statement (a compound statement's header, and each
statement of its body, separately) becomes a pre-order stream of node types and those leaves, and its runs of
:data:`NGRAM` tokens are the answer's fingerprints (a statement shorter than that is one). Because fingerprints
never span two statements, reordering independent statements changes nothing. A cell that does not parse (a
syntax error, an IPython magic) is read with :mod:`tokenize` instead, as far as it goes; it never breaks the
report.

Answers to one exercise are naturally alike: the textbook one-liner, a lone number, the lecture's loop. So, as
MOSS does, what many answers share counts little: each fingerprint weighs one over the number of answers holding
it, and a pair's score is the weighted Jaccard index of their fingerprints (the weight they share over the weight
either has), 1 for answers identical after normalisation. A fingerprint more than :func:`common_limit` answers hold
(5 % of the class, at least 5 and at most 50) is common; an answer with fewer than :data:`MIN_FINGERPRINTS`
uncommon fingerprints, or fewer than :data:`MIN_TOKENS` normalised tokens outside the stub's statements (about a
line and a half), is too short, or too like many others, to tell a copy from the same right answer: it is counted,
not compared. A pair at or above the course's threshold (``[similarity] threshold`` in ``course.toml``,
:data:`DEFAULT_THRESHOLD` without one) is listed, highest first, with both answers and why. It is a reason to look
at two answers, never a penalty by itself: nothing here reaches a grade, an LMS file or the feedback.

Measured on the tests' generated class (60 honest students writing five of notebook 1's exercises in their own
ways, five disguised copies; ``tests/classroom/test_similarity.py``) over 200 draws of the honest class: 999 of the
1,000 disguised copies were listed, scoring 0.91 to 1 (the one missed was a copy of an answer so like the class's
popular ones that only 4 of its runs were uncommon: not compared); one honest pair in the 200 classes reached 0.8
(0.89: two students who both wrote the lecture's loop with a named denominator and nothing of their own), every
other honest pair stayed under 0.72. Natural coincidences grow with the class: 5,000 students drawn from the same
generator give 420 honest pairs at 0.8 on that exercise (4.8 s).

**Why not copydetect.** copydetect (PyPI, 0.5) fingerprints files with winnowing over pygments tokens and
replaces names; it was weighed and not used: it is not installed in the workbook's environment and would bring
pygments with it, its defaults (a noise threshold of 25 tokens) are made for whole programs while an answer cell
is one to ten lines, it sees statements in order (a reordered copy loses its fingerprints across every moved
line) and literal spellings as different tokens, and it reads files from folders where we hold cells in memory.
Fingerprinting the parsed tree gives exactly the normalisation the exercises need in about 200 lines.

**Hostile input and scale.** An answer is compared on its first :data:`MAX_ANSWER_CHARS` characters and
:data:`MAX_FINGERPRINTS` fingerprints; parsing, folding and walking it cannot raise (too deep a tree, a literal
too large, a syntax error: the token fallback, and at worst no fingerprints). Pairs are found through an inverted
index of uncommon fingerprints, never by comparing every pair: a pair is scored only when the two share an
uncommon fingerprint, so the work is at most :data:`COMMON_CAP` times the class's fingerprints, linear in the
number of students (5,000 students are not 12.5 million comparisons per exercise), and the page lists at most
:data:`MAX_PAIRS_SHOWN` pairs, saying how many more there were.
"""

from __future__ import annotations

import ast
import io
import keyword
import math
import os
import re
import tokenize
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, TypeVar

from ..._validation import check_positive
from ..validation import student_id
from .plan import (
    Plan,
    load_sources,
    pick_graded,
    plan_submission,
    read_submission,
    source_exercises,
    source_for,
    student_of,
)

__all__ = [
    "COMMON_CAP",
    "DEFAULT_THRESHOLD",
    "MAX_ANSWER_CHARS",
    "MAX_FINGERPRINTS",
    "MAX_PAIRS_SHOWN",
    "MIN_FINGERPRINTS",
    "NGRAM",
    "ClassAnswers",
    "ExerciseSimilarity",
    "SimilarPair",
    "SimilarityReport",
    "common_limit",
    "compare_exercise",
    "fingerprints",
    "graded_files",
    "normalised_statements",
    "read_answers",
    "shown_answer",
    "similarity_report",
]

DEFAULT_THRESHOLD = 0.8  # the course file's [similarity] threshold when it gives none
NGRAM = 5  # tokens per fingerprint
MIN_FINGERPRINTS = 6  # uncommon fingerprints an answer needs to be compared at all
MIN_TOKENS = 25  # and normalised tokens outside the stub's statements: about a line and a half
MAX_ANSWER_CHARS = 20_000  # of an answer cell, compared; the rest is ignored
MAX_FINGERPRINTS = 5_000  # of one answer
COMMON_SHARE, COMMON_FLOOR, COMMON_CAP = 0.05, 5, 50  # see common_limit
MAX_PAIRS_SHOWN = 100  # on the summary page, highest scores first
_SHOWN_CHARS = 4_000  # of each answer on the page
_MAGIC = re.compile(r"^[ \t]*[%!].*$", re.MULTILINE)  # IPython's %magic and !shell lines: never Python
_FOLDED = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_KEYWORDS = frozenset(keyword.kwlist)
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")  # where a compound statement keeps statements


# --------------------------------------------------------------------------- one answer's fingerprints


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the cell binds: assigned or deleted, parameters, functions and classes, imports, handlers."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _number(value: object) -> float | None:
    """A literal number as a float (``1e3``, ``1000`` and ``1_000`` alike), None for anything else or too large."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


class _Canonical(ast.NodeTransformer):
    """Folds arithmetic on number literals (in floats, so never slow) and writes ``x op= y`` as ``x = x op y``."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        left, right = node.left, node.right
        if isinstance(node.op, _FOLDED) and isinstance(left, ast.Constant) and isinstance(right, ast.Constant):
            a, b = _number(left.value), _number(right.value)
            if a is not None and b is not None:
                try:
                    value = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(node.op))
                    if value is None:
                        value = a / b if isinstance(node.op, ast.Div) else a**b
                except (ArithmeticError, ValueError):
                    return node
                if isinstance(value, float) and math.isfinite(value):
                    return ast.Constant(value)
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.USub | ast.UAdd) and isinstance(node.operand, ast.Constant):
            number = _number(node.operand.value)
            if number is not None:
                return ast.Constant(-number if isinstance(node.op, ast.USub) else number)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        read = ast.Name(node.target.id, ast.Load()) if isinstance(node.target, ast.Name) else node.target
        return ast.Assign([node.target], ast.BinOp(read, node.op, node.value))

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        self.generic_visit(node)
        return ast.Assign([node.target], node.value) if node.value is not None else node


def _literal(value: object) -> str:
    number = _number(value)
    if number is not None:
        return repr(number)
    if isinstance(value, str | bytes):
        return "STR"
    return "NUM" if isinstance(value, int | float | complex) and not isinstance(value, bool) else repr(value)


def _leaves(node: ast.AST, bound: set[str]) -> Iterator[str]:
    """One statement's tokens: its node types and normalised leaves in pre-order, without nested statements."""
    if isinstance(node, ast.Name):
        yield "V" if node.id in bound else node.id
    elif isinstance(node, ast.arg):
        yield "V"
    elif isinstance(node, ast.Constant):
        yield _literal(node.value)
    elif isinstance(node, ast.Attribute):
        yield from _leaves(node.value, bound)
        yield "." + node.attr
    elif isinstance(node, ast.keyword):
        yield f"{node.arg or '**'}="
        yield from _leaves(node.value, bound)
    else:
        yield type(node).__name__
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt | ast.expr_context):
                yield from _leaves(child, bound)


def _statements(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, a compound one's body after it; docstrings and ``pass`` left out."""
    for node in body:
        if isinstance(node, ast.Pass):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        yield node
        for name in _BODIES:
            for inner in getattr(node, name, None) or ():
                if isinstance(inner, ast.stmt):
                    yield from _statements([inner])
                elif isinstance(inner, ast.ExceptHandler | ast.match_case):  # `except E as e:`, `case …:`
                    yield from _statements(inner.body)


def _parsed_statements(source: str) -> list[tuple[str, ...]]:
    tree = ast.parse(_MAGIC.sub("", source))
    bound = _bound_names(tree)
    tree = _Canonical().visit(tree)
    return [tuple(_leaves(node, bound)) for node in _statements(tree.body)]


def _token_statements(source: str) -> list[tuple[str, ...]]:
    """The fallback for a cell that does not parse: :mod:`tokenize`'s tokens as far as they go, a line a statement."""
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    statements: list[tuple[str, ...]] = []
    current: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in skipped:
                continue
            if token.type == tokenize.NEWLINE:
                statements.append(tuple(current))
                current = []
            elif token.type == tokenize.NAME:
                current.append(token.string if token.string in _KEYWORDS else "V")
            elif token.type == tokenize.NUMBER:
                try:
                    current.append(_literal(ast.literal_eval(token.string)))
                except (ValueError, SyntaxError):
                    current.append("NUM")
            elif token.type == tokenize.STRING:
                current.append("STR")
            else:
                current.append(token.string)
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # as far as it went
    if current:
        statements.append(tuple(current))
    return [s for s in statements if s]


def normalised_statements(source: str) -> list[tuple[str, ...]]:
    """The answer as normalised statements, each a tuple of tokens (see the module's docstring).

    Parameters
    ----------
    source : str
        An answer cell's source, hostile: only its first :data:`MAX_ANSWER_CHARS` characters are read.

    Returns
    -------
    list of tuple of str
        One token tuple per statement, in the cell's order; from :mod:`tokenize` when the cell does not parse.
        Never raises.

    Examples
    --------
    >>> normalised_statements("total = 1e3  # comment") == normalised_statements("s=1000.0")
    True
    >>> normalised_statements("x += 2") == normalised_statements("x = x + 2")
    True
    """
    source = source[:MAX_ANSWER_CHARS]
    try:
        return _parsed_statements(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _token_statements(source)


def fingerprints(source: str) -> frozenset[str]:
    """The answer's fingerprints: each run of :data:`NGRAM` tokens within one normalised statement.

    Parameters
    ----------
    source : str
        An answer cell's source.

    Returns
    -------
    frozenset of str
        At most :data:`MAX_FINGERPRINTS` of them; a statement shorter than :data:`NGRAM` tokens is one.
    """
    return _runs(normalised_statements(source))


def _runs(statements: Iterable[tuple[str, ...]]) -> frozenset[str]:
    found: set[str] = set()
    for tokens in statements:
        for start in range(max(1, len(tokens) - NGRAM + 1)):
            found.add(" ".join(tokens[start : start + NGRAM]))
            if len(found) >= MAX_FINGERPRINTS:
                return frozenset(found)
    return frozenset(found)


# --------------------------------------------------------------------------- one exercise over the class


_Kept = TypeVar("_Kept")  # what graded_files keeps of each file


@dataclass(frozen=True)
class SimilarPair:
    """Two students whose answers to one exercise are alike, at or above the threshold.

    Attributes
    ----------
    notebook : str
        The course notebook.
    exercise : str
        The exercise.
    first : str
        One student (the first in sorted order).
    second : str
        The other.
    score : float
        The weighted Jaccard index of their fingerprints (each weighs one over the number of answers holding it),
        0 to 1.
    shared : int
        How many fingerprints the two answers share (the stub's left out).
    either : int
        How many the two have between them.
    first_answer : str
        The first student's answer cell as handed in (cut to :data:`MAX_ANSWER_CHARS`).
    second_answer : str
        The second student's.
    explanation : str
        One sentence on what is alike.
    """

    notebook: str
    exercise: str
    first: str
    second: str
    score: float
    shared: int
    either: int
    first_answer: str
    second_answer: str
    explanation: str


@dataclass(frozen=True)
class ExerciseSimilarity:
    """One exercise's comparison over the class.

    Attributes
    ----------
    notebook : str
        The course notebook.
    exercise : str
        The exercise.
    answers : int
        Answers other than the stub.
    compared : int
        Those with at least :data:`MIN_FINGERPRINTS` uncommon fingerprints and :data:`MIN_TOKENS` tokens (the others
        are too short, or too common, to tell a copy from the same right answer).
    common : int
        The limit: a fingerprint in more answers than this is common.
    pairs : list of SimilarPair
        The pairs at or above the threshold, highest score first.
    """

    notebook: str
    exercise: str
    answers: int
    compared: int
    common: int
    pairs: list[SimilarPair] = field(default_factory=list)


def common_limit(answers: int) -> int:
    """How many answers may share a fingerprint before it is common: 5 % of them, at least 5, at most 50.

    Parameters
    ----------
    answers : int
        The number of answers to the exercise (other than the stub).

    Returns
    -------
    int
        A fingerprint held by more answers than this is common.

    Examples
    --------
    >>> common_limit(60), common_limit(400), common_limit(5_000)
    (5, 20, 50)
    """
    return min(COMMON_CAP, max(COMMON_FLOOR, math.ceil(COMMON_SHARE * answers)))


def _explanation(
    first: str, second: str, a: list[tuple[str, ...]], b: list[tuple[str, ...]], shared: int, either: int
) -> str:
    said = [f"{shared} of the {either} normalised {NGRAM}-token runs in their answers are the same"]
    if " ".join(first.split()) == " ".join(second.split()):
        said.append("the text is the same but for spacing")
    elif a == b:
        said.append("the same code once names, numbers' spelling, comments and layout are set aside")
    elif sorted(a) == sorted(b):
        said.append("the same statements in another order, once names and layout are set aside")
    return "; ".join(said)


def compare_exercise(
    answers: Mapping[str, str],
    stub: str = "",
    *,
    threshold: float = DEFAULT_THRESHOLD,
    notebook: str = "",
    exercise: str = "",
) -> ExerciseSimilarity:
    """Every pair of ``answers`` to one exercise alike at or above ``threshold`` (see the module's docstring).

    Parameters
    ----------
    answers : Mapping
        Student → their answer cell's source.
    stub : str, optional
        The released answer cell (stub and starter code): its fingerprints are taken out of every answer.
    threshold : float, optional
        The lowest score listed, more than 0 and at most 1.
    notebook, exercise : str, optional
        Named in the result.

    Returns
    -------
    ExerciseSimilarity
        The counts, and the pairs at or above ``threshold``, highest score first (then by students).

    Raises
    ------
    ValueError
        If ``threshold`` is not more than 0 and at most 1.
    TypeError
        If ``threshold`` is not a real number.
    """
    if check_positive(threshold, "threshold") > 1:
        raise ValueError(f"threshold must be more than 0 and at most 1; got {threshold!r}")
    statements = {s: normalised_statements(text) for s, text in answers.items()}
    stub_statements = normalised_statements(stub)
    excluded, given = _runs(stub_statements), set(stub_statements)
    prints = {s: p for s, st in statements.items() if (p := _runs(st) - excluded)}
    limit = common_limit(len(prints))
    counts = Counter(g for p in prints.values() for g in p)
    weight = {gram: 1 / count for gram, count in counts.items()}
    mass = {s: sum(weight[g] for g in p) for s, p in prints.items()}
    compared = sorted(
        s
        for s, p in prints.items()
        if sum(counts[g] <= limit for g in p) >= MIN_FINGERPRINTS
        and sum(len(t) for t in statements[s] if t not in given) >= MIN_TOKENS
    )
    holders: defaultdict[str, list[str]] = defaultdict(list)
    for student in compared:
        for gram in prints[student]:
            if counts[gram] <= limit:
                holders[gram].append(student)
    candidates = {pair for students in holders.values() for pair in combinations(students, 2)}
    pairs = []
    for a, b in candidates:  # each shares an uncommon fingerprint; at most `limit` students hold one
        both = prints[a] & prints[b]
        overlap = sum(weight[g] for g in both)
        score = overlap / (mass[a] + mass[b] - overlap)
        if score >= threshold:
            first, second = answers[a][:MAX_ANSWER_CHARS], answers[b][:MAX_ANSWER_CHARS]
            either = len(prints[a] | prints[b])
            explanation = _explanation(first, second, statements[a], statements[b], len(both), either)
            pairs.append(SimilarPair(notebook, exercise, a, b, score, len(both), either, first, second, explanation))
    pairs.sort(key=lambda p: (-p.score, p.first, p.second))
    return ExerciseSimilarity(notebook, exercise, len(prints), len(compared), limit, pairs)


def shown_answer(text: str) -> str:
    """An answer as the summary page shows it: tabs as spaces, cut to 4,000 characters, saying how many more.

    Parameters
    ----------
    text : str
        An answer cell's source.

    Returns
    -------
    str
        The text to show; the page escapes it (HTML, control characters), this only keeps it short.
    """
    text = text.expandtabs(4)
    if len(text) <= _SHOWN_CHARS:
        return text
    return f"{text[:_SHOWN_CHARS]}\n… ({len(text) - _SHOWN_CHARS:,} more characters)"


# --------------------------------------------------------------------------- the class


@dataclass(frozen=True)
class ClassAnswers:
    """The answer cells of a run: what :func:`similarity_report` compares.

    Attributes
    ----------
    answers : dict
        ``(notebook, exercise)`` → {student: answer cell source}, only answers that are not the stub.
    stubs : dict
        ``(notebook, exercise)`` → the released notebook's answer cell (the stub, with its starter code).
    """

    answers: dict[tuple[str, str], dict[str, str]]
    stubs: dict[tuple[str, str], str]


@dataclass(frozen=True)
class SimilarityReport:
    """Every exercise's comparison, and the pairs to show.

    Attributes
    ----------
    threshold : float
        The lowest score listed.
    exercises : list of ExerciseSimilarity
        One per exercise with answers, in course order.
    """

    threshold: float
    exercises: list[ExerciseSimilarity]

    @property
    def pairs(self) -> list[SimilarPair]:
        """All pairs at or above the threshold, highest score first."""
        every = [p for e in self.exercises for p in e.pairs]
        return sorted(every, key=lambda p: (-p.score, p.notebook, p.exercise, p.first, p.second))

    def shown(self) -> list[SimilarPair]:
        """The pairs the page shows.

        Returns
        -------
        list of SimilarPair
            The :data:`MAX_PAIRS_SHOWN` highest of :attr:`pairs`.
        """
        return self.pairs[:MAX_PAIRS_SHOWN]


def similarity_report(
    answers: ClassAnswers, *, threshold: float = DEFAULT_THRESHOLD, order: Sequence[tuple[str, str]] = ()
) -> SimilarityReport:
    """:func:`compare_exercise` for each exercise of ``answers``.

    Parameters
    ----------
    answers : ClassAnswers
        :func:`read_answers`'s.
    threshold : float, optional
        The lowest score listed (the course file's ``[similarity] threshold``).
    order : sequence of tuple, optional
        ``(notebook, exercise)`` in course order; exercises not in it follow, sorted.

    Returns
    -------
    SimilarityReport
    """
    place = {key: i for i, key in enumerate(order)}
    keys = sorted(answers.answers, key=lambda k: (place.get(k, len(place)), k))
    return SimilarityReport(
        threshold,
        [
            compare_exercise(
                answers.answers[k], answers.stubs.get(k, ""), threshold=threshold, notebook=k[0], exercise=k[1]
            )
            for k in keys
        ],
    )


def _owner(path: Path, root: Path) -> tuple[str, Path]:
    """The student and their folder, as the grader finds them (the top folder under the submissions' root)."""
    relative = Path(os.path.abspath(path)).relative_to(root).parts
    if len(relative) < 2:
        return student_of(path), path.parent
    return student_id(relative[0]), root / relative[0]


def _modified(path: Path) -> float:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def graded_files(
    submissions: Sequence[Path | str],
    sources: Mapping[str, Any],
    released: Mapping[str, Any],
    extract: Callable[[Plan, Any], _Kept],
) -> dict[tuple[str, str], _Kept]:
    """What ``extract`` takes from each file the grader graded, read as the grader reads it.

    Every file is hostile and read with :func:`~.plan.read_submission` and planned with
    :func:`~.plan.plan_submission`; a file the grader could not read, or that is not one of the workbook's
    notebooks, is left out (its rows already say why); of one student's files for one notebook the one graded
    (:func:`~.plan.pick_graded`) is kept.

    Parameters
    ----------
    submissions : sequence of str or pathlib.Path
        The submitted notebooks, ``<root>/<student>/<file>.ipynb`` (as :func:`~.run.grade` takes them).
    sources, released : Mapping
        Stem → the instructor's notebook and its student version (:func:`~.plan.load_sources`).
    extract : callable
        ``extract(plan, submission)``: what to keep of a file (small: it is kept for every file until the
        graded one of each student and notebook is known).

    Returns
    -------
    dict
        ``(student, notebook stem)`` → what ``extract`` returned for the graded file.
    """
    from .run import submissions_root  # grade imports the sandbox; only this reader needs its root

    paths = [Path(p) for p in submissions]
    root = submissions_root(paths)
    files: defaultdict[tuple[str, str], dict[Path, _Kept]] = defaultdict(dict)
    for path in paths:
        try:
            student, folder = _owner(path, root)
            submission = read_submission(path, folder)
            stem = source_for(path, submission, sources)
            if stem is None:
                continue
            plan = plan_submission(path, submission, stem, sources, released, student)
            files[(student, stem)][path] = extract(plan, submission)
        except Exception:  # noqa: BLE001 - whatever the file does, it is left out here and its rows say why
            continue
    return {
        key: found[pick_graded(list(found), key[1], {p: _modified(p) for p in found})] for key, found in files.items()
    }


def read_answers(submissions: Sequence[Path | str], *, source: Path | str) -> ClassAnswers:
    """Each student's answer cells, read as the grader reads them: the graded file, the matched answer cell.

    Every file is hostile and read with :func:`~.plan.read_submission`; a file the grader could not read, or
    that is not one of the workbook's notebooks, is left out (its rows already say why); of one student's files
    for one notebook the one graded (:func:`~.plan.pick_graded`) is read. Only answers that are not the stub
    are kept, each cut to :data:`MAX_ANSWER_CHARS` characters.

    Parameters
    ----------
    submissions : sequence of str or pathlib.Path
        The submitted notebooks, ``<root>/<student>/<file>.ipynb`` (as :func:`~.run.grade` takes them).
    source : str or pathlib.Path
        The instructor's notebooks.

    Returns
    -------
    ClassAnswers

    Raises
    ------
    FileNotFoundError, ValueError
        If ``source`` cannot be read (:func:`~.plan.load_sources`); never for a submission.
    """
    sources, released = load_sources(source)

    def answered(plan: Plan, submission: Any) -> dict[str, str]:
        return {
            ex: submission.cells[index].source[:MAX_ANSWER_CHARS]
            for ex, index in plan.answered.items()
            if index is not None and ex not in plan.untouched
        }

    answers: defaultdict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for (student, stem), found in graded_files(submissions, sources, released, answered).items():
        for exercise, text in found.items():
            answers[(stem, exercise)][student] = text
    stubs = {
        (stem, ex.exercise): released[stem].cells[ex.solution].source
        for stem, nb in sources.items()
        for ex in source_exercises(nb)
    }
    return ClassAnswers(dict(answers), stubs)
