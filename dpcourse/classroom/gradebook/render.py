"""What the class got wrong, shown: the terminal summary, the class summary page and the jinja2 templates.

Every string that came from a submission is hostile: the terminal gets it through
:func:`~dpcourse.classroom.io.printable`, the templates (``dpcourse/classroom/templates/``) get it as data, never
as template source. The HTML page is autoescaped, and the Markdown templates escape every value with
:func:`markdown_text` (backslash escapes, never HTML entities) unless a filter made it Markdown already.
"""

from __future__ import annotations

import base64
import functools
import io
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..course import duration_text
from ..grading.reports import GradeRow, points_text
from ..grading.similarity import MAX_PAIRS_SHOWN, SimilarityReport, shown_answer
from ..io import atomic_text, printable

if TYPE_CHECKING:
    from jinja2 import Environment
from .totals import (
    HAND_IN_KINDS,
    NEEDS_MARKING,
    NOT_HANDED_IN,
    CourseTotals,
    HandInNote,
    _graded_notebooks,
    _latest,
    _percent,
    _when,
    unmarked_assignments,
)

__all__ = [
    "ExerciseSummary",
    "class_summary",
    "markdown_text",
    "summary_html",
    "terminal_summary",
    "write_summary_html",
]


OTHER_WRONG = "other wrong answers"

# What Markdown would read as markup: raw HTML and autolinks (<), links ([ ]), code (`), emphasis (*, _ at a
# word's edge, ~), an entity (&name;), the escape itself; and, at a line's start, headings, quotes, list markers,
# and the lines of = or - that underline a heading (a number like -1 is left alone).
_MD_INLINE = re.compile(r"[\\`*\[\]<~]|&(?=#?\w+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")

_MD_LINE_START = re.compile(r"^([ \t]*)([#>]|[+-](?=[ \t]|$)|[=-]+(?=[ \t]*$)|\d+(?=[.)]))", re.MULTILINE)


def markdown_text(text: str, *, inline: bool = False) -> str:
    """``text`` as Markdown shows it literally: backslash escapes where Markdown needs them, never HTML entities.

    Control and format characters are shown as their escapes first (:func:`printable`), so a student's
    text can neither run markup nor hide or reorder what the reader sees.

    Parameters
    ----------
    text : str
        Any text, typically from a submission.
    inline : bool, optional
        Whether newlines are escaped too (for a heading or a list item, where a newline would start a new
        block); otherwise line breaks stay and the start of every line is escaped.

    Returns
    -------
    str
        The escaped text: ``\\`` before each character Markdown would read as markup, no HTML entities.
    """
    text = printable(text.replace("\r\n", "\n"), keep_newlines=not inline)
    text = _MD_INLINE.sub(lambda m: "\\" + m.group(), text)

    def line_start(match: re.Match[str]) -> str:
        marker = match.group(2)
        return match.group(1) + (marker + "\\" if marker[0].isdigit() else "\\" + marker)

    return _MD_LINE_START.sub(line_start, text)


class _Markdown(str):
    """Text already written as Markdown (a number, a time, escaped text): a Markdown template prints it as it is."""


def _markdown_value(value: object) -> str:
    """What ``{{ value }}`` prints in a Markdown template: :func:`markdown_text` of it, inline, unless it is
    Markdown already or a number. The Markdown counterpart of HTML autoescaping."""
    if isinstance(value, _Markdown):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return markdown_text(str(value), inline=True)


def _page_value(value: object) -> object:
    """What ``{{ value }}`` prints in the HTML page before autoescaping: text with its control and format
    characters shown (:func:`printable`: an escape sequence or a bidi override in a student id cannot reorder
    the page), everything else as it is. Markup (what the template itself made safe) is left alone."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return printable(value, keep_newlines=True)
    return value


@dataclass(frozen=True)
class _Templates:
    page: Environment  # HTML, autoescaped
    text: Environment  # Markdown, every value through markdown_text


@functools.cache
def _templates() -> _Templates:
    """The two jinja2 environments over ``templates/`` (imported on first use: a grading run needs neither)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    settings: dict[str, Any] = {
        "loader": PackageLoader("dpcourse.classroom", "templates"),
        "undefined": StrictUndefined,  # a misspelt name fails, instead of printing nothing
        "trim_blocks": True,
        "lstrip_blocks": True,
    }
    page = Environment(
        autoescape=select_autoescape(["html.j2"], default_for_string=True, default=True),
        finalize=_page_value,
        **settings,
    )
    page.filters["points"] = points_text
    text = Environment(autoescape=False, finalize=_markdown_value, **settings)
    text.filters.update(
        points=lambda value: _Markdown(points_text(value)),
        percent=lambda fraction: _Markdown(_percent(fraction)),
        when=lambda moment, zone=None: _Markdown(_when(moment, zone)),
        duration=lambda span: _Markdown(duration_text(span)),
        block=lambda message: _Markdown(markdown_text(message)),  # line breaks kept, each line's start escaped
    )
    return _Templates(page, text)


def _markdown(template: str, **context: object) -> str:
    """A Markdown template rendered, ending in exactly one newline."""
    return _templates().text.get_template(template).render(**context).rstrip("\n") + "\n"


@dataclass(frozen=True)
class ExerciseSummary:
    """One exercise over the class: counts per status (``not handed in`` included) and per named mistake.

    Attributes
    ----------
    notebook : str
        The course notebook.
    exercise : str
        The exercise id.
    students : int
        The number of students of the class (the counts add up to it).
    statuses : dict
        Status (a report status, or ``not handed in``) → number of students.
    mistakes : list of tuple
        ``(mistake, count)`` for the failed rows, most common first; ``other wrong answers`` for those whose
        check named no mistake.
    """

    notebook: str
    exercise: str
    students: int
    statuses: dict[str, int]
    mistakes: list[tuple[str, int]]

    @property
    def pass_rate(self) -> float:
        """The share of the class that passed, 0 to 1 (0 for an empty class)."""
        return self.statuses.get("passed", 0) / self.students if self.students else 0.0


def class_summary(rows: Iterable[GradeRow], totals: CourseTotals) -> list[ExerciseSummary]:
    """Per exercise of the assignments graded in this run: how many students passed, failed (by named
    mistake), did not attempt it, did not hand its notebook in, or errored.

    Parameters
    ----------
    rows : iterable of GradeRow
        The report's rows (of two rows for the same exercise, the later counts).
    totals : CourseTotals
        The course's scores: which assignments were graded, who is in the class, who handed in what.

    Returns
    -------
    list of ExerciseSummary
        One per exercise, in course order.
    """
    latest = _latest(rows)
    summaries = []
    for key in totals.graded:
        assignment = totals.course.assignment(key)
        for notebook, exercise in assignment.points:
            statuses: Counter[str] = Counter()
            mistakes: Counter[str] = Counter()
            for student in totals.students:
                row = latest.get((student, notebook, exercise))
                if row is None:
                    status = NOT_HANDED_IN if (student, notebook) not in totals.handed_in else "not attempted"
                else:
                    status = row.status
                statuses[status] += 1
                if row is not None and status == "failed":
                    mistakes[row.mistake or OTHER_WRONG] += 1
            summaries.append(
                ExerciseSummary(notebook, exercise, len(totals.students), dict(statuses), mistakes.most_common())
            )
    return summaries


def terminal_summary(
    summaries: Sequence[ExerciseSummary], totals: CourseTotals, notes: Sequence[HandInNote] = (), top: int = 3
) -> str:
    """A few lines for the terminal: the class, its mean, hand-in counts, the most common named mistakes.

    Every string from a submission has its control characters escaped (:func:`printable`).

    Parameters
    ----------
    summaries : sequence of ExerciseSummary
        :func:`class_summary`'s.
    totals : CourseTotals
        The course's scores.
    notes : sequence of HandInNote, optional
        :func:`hand_in_notes`'s; counted per kind.
    top : int, optional
        How many of the most common named mistakes to list.

    Returns
    -------
    str
        The lines, joined by newlines (``class: no students`` for an empty class).
    """
    students = len(totals.students)
    if not students:
        return "class: no students"
    mean = sum(totals.total(s) for s in totals.students) / students
    lines = [f"class: {students} students, mean {mean:.3g} of {points_text(totals.course_maximum)} points"]
    graded = ", ".join(printable(totals.course.assignment(k).name) for k in totals.graded) or "nothing"
    lines.append(f"  graded in this run: {graded}")
    counts = Counter(n.kind for n in notes)
    if notes:
        lines.append("  " + ", ".join(f"{kind}: {counts[kind]}" for kind in HAND_IN_KINDS if counts[kind]))
    named = sorted(
        ((count, s.exercise, mistake) for s in summaries for mistake, count in s.mistakes if mistake != OTHER_WRONG),
        reverse=True,
    )[:top]
    for count, exercise, mistake in named:
        lines.append(f"  {count} of {students} on {printable(exercise)}: {printable(mistake)}")
    for key, (answers, points) in unmarked_assignments(totals).items():
        name = printable(totals.course.assignment(key).name)
        lines.append(f"  not marked yet: {answers} written answers of {name} ({points_text(points)} points, counted 0)")
    judged = [s for s in summaries if not {NEEDS_MARKING, "marked"} & s.statuses.keys()]  # a mark is no pass
    hardest = min(judged, key=lambda s: s.pass_rate, default=None)
    if hardest is not None:
        lines.append(f"  hardest exercise: {printable(hardest.exercise)} ({hardest.pass_rate:.0%} passed)")
    return "\n".join(lines)


def _figure_png(totals: CourseTotals) -> str:
    """A histogram of course totals as a base64 PNG (matplotlib's Agg canvas, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(6.4, 3.0), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    # Only finite totals can be drawn: a course file's points are bounded (course.MAX_POINTS), but a notebook's
    # own points without a course file are not, and an infinite total would make the bins' arithmetic overflow.
    values = [v for v in (totals.total(s) for s in totals.students) if math.isfinite(v)]
    top = max(v for v in (totals.course_maximum, 1.0, *values) if math.isfinite(v))
    step = max(1, math.ceil(top / 20))  # bars centred on whole points, at most about 20 of them
    edges = [step * k - step / 2 for k in range(math.ceil(top / step) + 2)]
    axes.hist(values, bins=edges, color="#4c72b0", edgecolor="white")
    axes.set_xlabel(f"course total (of {points_text(totals.course_maximum)} points)")
    axes.set_ylabel("students")
    axes.set_xlim(edges[0], edges[-1])
    locator = axes.yaxis.get_major_locator()
    if isinstance(locator, MaxNLocator):  # the default AutoLocator is one
        locator.set_params(integer=True)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode()


def summary_html(
    summaries: Sequence[ExerciseSummary],
    totals: CourseTotals,
    notes: Sequence[HandInNote] = (),
    common: Iterable[str] = (),
    similarity: SimilarityReport | None = None,
    rubric: Sequence[Any] = (),
) -> str:
    """The class summary page: self-contained (inline CSS, the figure as a data URI), every string escaped.

    The page is the template ``templates/summary.html.j2``, rendered with autoescaping: every value is
    HTML-escaped, after its control and format characters are shown as escapes (:func:`printable`), and the
    student text it shows (ids, file names, the checks' named mistakes) is data, never template source.
    It has the class size and course maximum, a histogram of course totals, the mean per assignment, a
    table of who handed what in (and a line per note), and per exercise the pass rate, the named mistakes
    with their counts, and how many did not attempt it, did not hand it in, or errored; then the similar
    answers (:mod:`.similarity`): per exercise how many answers were compared, and the pairs at or above the
    threshold, highest first, each with both answers side by side and why they are alike; and, when some exercise
    is written (marked by hand), the answers still to mark per assignment and per student, and each rubric item's
    frequency (the class's common mistakes on written work).

    Parameters
    ----------
    summaries : sequence of ExerciseSummary
        :func:`class_summary`'s.
    totals : CourseTotals
        The course's scores.
    notes : sequence of HandInNote, optional
        :func:`hand_in_notes`'s: counted per notebook and kind, and listed.
    common : iterable of str, optional
        Integrity notes on every submission of the run, said once.
    similarity : SimilarityReport or None, optional
        :func:`~.similarity.similarity_report`'s; None when this run read no answers (``--merge``), and the page
        says so.
    rubric : sequence of ItemFrequency, optional
        :func:`dpcourse.classroom.marking.merge.fold_marks`'s item frequencies (objects with ``exercise``,
        ``item``, ``text``, ``points``, ``students`` and ``marked``; the marking floor sits above this one).

    Returns
    -------
    str
        The HTML page.
    """
    students = len(totals.students)
    means = [
        (a, sum(totals.points(s, a.key) for s in totals.students) / students if students else 0.0)
        for a in totals.course.assignments
    ]
    counts = Counter((n.notebook, n.kind) for n in notes)
    notebooks = _graded_notebooks(totals)
    shown = notebooks + sorted({n.notebook for n in notes} - set(notebooks))
    return (
        _templates()
        .page.get_template("summary.html.j2")
        .render(
            students=students,
            maximum=totals.course_maximum,
            graded=[totals.course.assignment(k).name for k in totals.graded],
            figure=_figure_png(totals),
            means=means,
            kinds=HAND_IN_KINDS,
            hand_in=[(notebook, [counts[(notebook, kind)] for kind in HAND_IN_KINDS]) for notebook in shown],
            common=sorted(set(common)),
            notes=notes,
            exercises=summaries,
            not_handed_in=NOT_HANDED_IN,
            similarity=similarity,
            pairs=[(p, shown_answer(p.first_answer), shown_answer(p.second_answer)) for p in similarity.shown()]
            if similarity is not None
            else [],
            more_pairs=max(0, len(similarity.pairs) - MAX_PAIRS_SHOWN) if similarity is not None else 0,
            unmarked=[(totals.course.assignment(k).name, *found) for k, found in unmarked_assignments(totals).items()],
            unmarked_students=[
                (s, sum(c.unmarked for c in totals.scores[s].values()))
                for s in totals.students
                if any(c.unmarked_answers for c in totals.scores[s].values())
            ],
            rubric=list(rubric),
        )
    )


def write_summary_html(
    summaries: Sequence[ExerciseSummary],
    totals: CourseTotals,
    path: Path | str,
    notes: Sequence[HandInNote] = (),
    common: Iterable[str] = (),
    similarity: SimilarityReport | None = None,
    rubric: Sequence[Any] = (),
) -> Path:
    """Write :func:`summary_html` atomically, with the umask's mode.

    Parameters
    ----------
    summaries : sequence of ExerciseSummary
        :func:`class_summary`'s.
    totals : CourseTotals
        The course's scores.
    path : pathlib.Path or str
        The HTML file to write.
    notes : sequence of HandInNote, optional
        :func:`hand_in_notes`'s.
    common : iterable of str, optional
        Integrity notes on every submission of the run.
    similarity : SimilarityReport or None, optional
        The similar answers (:func:`~.similarity.similarity_report`).
    rubric : sequence of ItemFrequency, optional
        The written exercises' rubric item frequencies (:func:`summary_html`).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    return atomic_text(path, summary_html(summaries, totals, notes, common, similarity, rubric))
