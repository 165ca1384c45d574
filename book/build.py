"""Build the course website (``make book``): the students' notebooks with their stored outputs and the API reference.

Run with the book's environment (``.venv/book``, made by ``make book``)::

    .venv/book/bin/python book/build.py [--out DIR] [--with-solutions]

1. Stage the sources in ``DIR/_build/source``: ``book/*.md``, the instructors' guide (``book/instructors/*.md``), the
   **student release** of ``notebooks/*.ipynb``
   (:func:`dpcourse.classroom.release.release_notebook`: every solution region a stub; the outputs of solution,
   check and hand-in cells and of every cell that reads an answer cleared; the other cells' outputs and the
   widget state as stored: nothing is executed; only bars inside formulas on table rows are escaped, see
   :func:`escape_bars_in_table_math`) and ``docs/api/*.rst``. Copies keep their sources' modification times, so
   Sphinx rebuilds only the pages whose source changed. ``--with-solutions`` stages the instructor's notebooks
   as they are instead (``make book-with-solutions``, into ``book/with-solutions`` by default): a site that
   publishes every answer, built only on purpose.
2. ``jupyter-book build`` with ``book/_config.yml`` and ``book/_toc.yml`` into ``DIR/_build/html``.
3. Copy the pinned npm assets (``book/npm/node_modules``: MathJax, require.js, the widget manager) into the
   site's ``_static/``, where the configuration points.
4. Check the site: every script, style sheet, image and frame of every page comes from the site itself (a
   relative address of a file that exists), so that it works offline and behind a firewall; and, unless built
   with solutions, no page, search index, source or downloadable notebook shows a line of a solution region or
   a check's ✓ or a phrase of a written exercise's model answer or rubric (:func:`answers_shown`; the browser test
   also looks for every exercise's accepted value).

``DIR`` is ``book`` by default (the site in ``book/_build/html``); the browser test builds into a folder of
its own.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import html.parser
import inspect
import json
import keyword
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import nbformat

from dpcourse.checks._written import read_written_exercises
from dpcourse.classroom.release import BEGIN, END, exercises, release_notebook

BOOK = Path(__file__).resolve().parent
ROOT = BOOK.parent
NODE_MODULES = BOOK / "npm" / "node_modules"
NOTEBOOKS = ROOT / "notebooks"
#: The instructors' guide (the part "For instructors"), staged as ``instructors/``; ``make docs`` reads the same files.
INSTRUCTORS = BOOK / "instructors"
#: Where ``--with-solutions`` builds by default (its site in ``book/with-solutions/_build/html``), apart from the
#: students' site so that neither build overwrites the other's pages.
WITH_SOLUTIONS = BOOK / "with-solutions"
#: What tells the book's extension (``_ext/dpcourse_book.py``, the same name there) to say so on every page.
WITH_SOLUTIONS_VARIABLE = "DPCOURSE_BOOK_WITH_SOLUTIONS"

#: What each npm package puts under the site's ``_static/``: (package, files or folders under it, target folder).
NPM_ASSETS: list[tuple[str, list[str], str]] = [
    ("mathjax", ["es5", "LICENSE"], "mathjax"),
    ("requirejs", ["require.js"], "requirejs"),
    ("@jupyter-widgets/html-manager", ["dist/embed-amd.js"], "html-manager"),
]
# The widget manager's fonts (Font Awesome, for icons), found beside embed-amd.js by their suffix.
WIDGET_FONT_SUFFIXES = (".woff", ".woff2", ".ttf", ".eot", ".svg")

#: The tags and attributes whose address the browser loads without a click.
_LOADED = {"script": "src", "link": "href", "img": "src", "iframe": "src", "source": "src", "video": "src"}


def stage(source: Path, *, with_solutions: bool = False) -> None:
    """Copy the book's pages, the instructors' guide, the notebooks (their student release unless
    ``with_solutions``) and the API reference's pages into ``source``."""
    if source.exists():
        shutil.rmtree(source)
    (source / "notebooks").mkdir(parents=True)
    (source / "api").mkdir()
    for page in BOOK.glob("*.md"):
        shutil.copy2(page, source / page.name)
    shutil.copytree(INSTRUCTORS, source / INSTRUCTORS.name)
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        staged = source / "notebooks" / notebook.name
        if with_solutions:
            shutil.copy2(notebook, staged)
        else:
            student = release_notebook(nbformat.read(notebook, as_version=4), name=str(notebook))
            nbformat.write(student, staged)
            shutil.copystat(notebook, staged)
        _protect_math_in_tables(staged)
    for page in sorted((ROOT / "docs" / "api").glob("*.rst")):
        shutil.copy2(page, source / "api" / page.name)


def _settings_fingerprint(with_solutions: bool = False) -> str:
    """A digest of what Sphinx does not watch: the book's settings, its extension (and style sheet), this
    script, and what the notebooks staged are made with: the solutions or their release, and the release's code
    (a staged copy keeps its source's time either way)."""
    digest = hashlib.sha256(b"with solutions" if with_solutions else b"student release")
    extension = [path for path in (BOOK / "_ext").rglob("*") if path.is_file() and "__pycache__" not in path.parts]
    release_code = Path(inspect.getfile(release_notebook))
    for path in sorted([BOOK / "_config.yml", BOOK / "_toc.yml", Path(__file__), release_code, *extension]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


_TABLE_ROW = re.compile(r"^\s*\|.*$", re.MULTILINE)
_INLINE_MATH = re.compile(r"\$[^$\n]+\$")
_BARE_BAR = re.compile(r"(?<!\\)\|")


def escape_bars_in_table_math(markdown: str) -> str:
    """Escape ``|`` inside ``$…$`` on the rows of Markdown tables (``$|Q|$`` → ``$\\|Q\\|$``).

    JupyterLab takes the formulas out of a Markdown cell before it parses the Markdown, so a notebook's table
    may hold ``$|Q|$``; MyST splits table rows at every bar first, formulas included. A bar escaped as GFM
    wants it (``\\|``) is a bar in the cell's text again, so the formula reaches MathJax as written.
    """

    def in_row(row: re.Match) -> str:
        return _INLINE_MATH.sub(lambda math: _BARE_BAR.sub(r"\\|", math.group(0)), row.group(0))

    return _TABLE_ROW.sub(in_row, markdown)


def _protect_math_in_tables(notebook: Path) -> None:
    """Apply :func:`escape_bars_in_table_math` to the staged copy's Markdown cells (modification time kept)."""
    stat = notebook.stat()
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    changed = False
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        escaped = escape_bars_in_table_math(text)
        if escaped != text:
            cell["source"] = escaped
            changed = True
    if changed:
        notebook.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        os.utime(notebook, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def jupyter_book(source: Path, out: Path, *, with_solutions: bool = False) -> None:
    """Run jupyter-book; every page is rewritten when the settings changed since the last build, only the
    pages whose source changed otherwise (Sphinx's incremental build)."""
    stamp = out / "_build" / ".settings-fingerprint"
    fingerprint = _settings_fingerprint(with_solutions)
    rebuild_all = not stamp.exists() or stamp.read_text() != fingerprint
    command = [
        str(Path(sys.executable).parent / "jupyter-book"),
        "build",
        str(source),
        "--path-output",
        str(out),
        "--config",
        str(BOOK / "_config.yml"),
        "--toc",
        str(BOOK / "_toc.yml"),
        "-W",
        "--keep-going",
        *(["--all"] if rebuild_all else []),
    ]
    stamp.unlink(missing_ok=True)
    environment = {**os.environ, WITH_SOLUTIONS_VARIABLE: "1" if with_solutions else ""}
    subprocess.run(command, check=True, env=environment)
    stamp.write_text(fingerprint)


def copy_npm_assets(static: Path) -> None:
    """Copy MathJax, require.js and the widget manager (with its fonts) into the site's ``_static/``."""
    if not NODE_MODULES.is_dir():
        raise SystemExit(f"{NODE_MODULES} is missing: `make book` installs it (npm ci in book/npm)")
    for package, parts, target in NPM_ASSETS:
        folder = static / target
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for part in parts:
            origin = NODE_MODULES / package / part
            if origin.is_dir():
                shutil.copytree(origin, folder, dirs_exist_ok=True)
            else:
                shutil.copy2(origin, folder / origin.name)
        license_file = NODE_MODULES / package / "LICENSE"
        if license_file.exists():
            shutil.copy2(license_file, folder / "LICENSE")
    for font in (NODE_MODULES / "@jupyter-widgets/html-manager/dist").iterdir():
        if font.suffix in WIDGET_FONT_SUFFIXES:
            shutil.copy2(font, static / "html-manager" / font.name)
    _let_the_widget_manager_find_its_fonts_from_a_folder(static / "html-manager" / "embed-amd.js")


# The widget manager computes where its fonts are as ``origin + folder`` of its own address. A page opened from a
# folder (file://) has the origin "null", so the fonts would be asked for at ".../null/<folder>/": the copy takes
# the folder's whole address instead (the same for http). The text is checked to occur once, so a new version of
# the package that computes it differently stops the build here instead of losing the fonts.
_ASSETS_FROM_ORIGIN = "__webpack_require__.p=`${url.origin}${url.pathname}`"
_ASSETS_FROM_ADDRESS = "__webpack_require__.p=url.href"


def _let_the_widget_manager_find_its_fonts_from_a_folder(script: Path) -> None:
    text = script.read_text(encoding="utf-8")
    if text.count(_ASSETS_FROM_ORIGIN) != 1:
        raise SystemExit(f"{script}: expected {_ASSETS_FROM_ORIGIN!r} once; the widget manager changed")
    script.write_text(text.replace(_ASSETS_FROM_ORIGIN, _ASSETS_FROM_ADDRESS), encoding="utf-8")


class _Addresses(html.parser.HTMLParser):
    """Collect the addresses a page loads by itself (scripts, style sheets, icons, images, frames)."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = _LOADED.get(tag)
        values = dict(attrs)
        if wanted is None or not values.get(wanted):
            return
        if tag == "link" and not set((values.get("rel") or "").split()) & {"stylesheet", "icon", "preload", "prefetch"}:
            return  # a plain link (rel="next", "search"): followed only by a click
        self.loaded.append((tag, str(values[wanted])))


def foreign_or_missing(site: Path) -> list[str]:
    """Every address a page of ``site`` loads that is not a file of the site (another host, or missing)."""
    problems = []
    for page in sorted(site.rglob("*.html")):
        if page.relative_to(site).parts[0] in ("_static", "_sources"):
            continue  # the themes' template fragments and the pages' sources, not pages
        parser = _Addresses()
        parser.feed(page.read_text(encoding="utf-8"))
        for tag, address in parser.loaded:
            parts = urlsplit(address)
            if parts.scheme == "data":
                continue
            where = f"{page.relative_to(site)}: <{tag}> {address}"
            if parts.scheme or parts.netloc:
                problems.append(f"{where} (another host)")
            elif not (page.parent / unquote(parts.path)).resolve().is_file():
                problems.append(f"{where} (no such file in the site)")
    return problems


# --- answers a site must not show ------------------------------------------------------------------------------

#: The files of a built site a reader (or a search engine) can read: its pages, its search index, the sources
#: Sphinx copies beside them (``_sources/``: the notebooks a page offers for download, the Markdown and
#: reStructuredText pages) and any text file.
READABLE_SUFFIXES = (".html", ".ipynb", ".md", ".rst", ".txt")
SEARCH_INDEX = "searchindex.js"
#: A solution line (or its comment) with fewer words than this, Python's keywords not counted, gives nothing away:
#: ``return i``, ``import math``, ``pass``, a lone bracket.
MIN_WORDS = 2
#: An accepted value is looked for where it is written with at least :data:`MIN_SIGNIFICANT` significant digits and
#: :data:`MIN_DIGITS` digits in all, a leading ``0`` not counted (``3.098``, ``0.0869``, ``13308``), or, an integer,
#: with all of its own (``538``); and only if it has more than two significant digits itself: ``10``, ``64`` or
#: ``0.5`` are on every page for other reasons. Three digits alone (``0.418``, ``3.10``, "Theorem 3.10") turn up
#: in the notebooks' tables by chance.
MIN_SIGNIFICANT, MIN_DIGITS = 3, 4
#: A phrase of a written exercise's model answer or rubric is looked for when it has at least this many words (as
#: :data:`MIN_WORDS` counts them): a page may well say "the threshold noise is shared", not a run of the proof.
MIN_PROSE_WORDS = 8

_WORD = re.compile(r"[^\W\d]\w*|\d[\d_.]*")
_KEYWORDS = frozenset(keyword.kwlist + keyword.softkwlist)
_COMMENT = re.compile(r"(?:^|\s)#")
_JSON_UNICODE = re.compile(r"(?:\\u[0-9a-fA-F]{4})+")
_JSON_ESCAPE = re.compile(r'\\([nrt"/\\])')
_TAG = re.compile(r"<[^<>]*>")
_BLOB = re.compile(r"[A-Za-z0-9+/=]{80,}")  # base64 images and the like: digits in them are no numbers
# What a page does not show as written: math ($…$, $$…$$, typeset by MathJax), Markdown's marks (emphasis, code,
# links, headings, quotes, tables) and quotes and dashes (which Sphinx's smartquotes turn into curly ones).
_NOT_PROSE = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|[*_`\[\]()#>|'\"]|--|\n\s*\n|\n\s*[-+]\s", re.DOTALL)
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w]|\.\d)")


def normalise(text: str) -> str:
    """``text`` with every run of white space one space, and none at either end."""
    return " ".join(text.split())


def _gives_something_away(code: str) -> bool:
    return sum(word not in _KEYWORDS for word in _WORD.findall(code)) >= MIN_WORDS


def solution_lines(notebooks: Iterable[Any]) -> list[str]:
    """Every line between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in the notebooks' code cells, normalised
    (:func:`normalise`), its code and its comment apart; trivial ones left out (fewer than :data:`MIN_WORDS`
    words: ``return None``, ``pass``, ``)``), each once, in order.

    Parameters
    ----------
    notebooks : iterable of nbformat.NotebookNode
        Solution notebooks.

    Returns
    -------
    list of str
        The texts a site built from the student release must not hold.
    """
    found: dict[str, None] = {}
    for nb in notebooks:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            inside = False
            for line in cell.source.splitlines():
                marker = line.strip()
                if marker in (BEGIN, END):
                    inside = marker == BEGIN
                    continue
                if inside:
                    for part in _COMMENT.split(line, maxsplit=1):
                        if _gives_something_away(part):
                            found[normalise(part)] = None
    return list(found)


def model_answer_phrases(notebooks: Iterable[Any]) -> list[str]:
    """The phrases of the written exercises' model answers and rubric items that a page shows as written: the runs
    of text between math and Markdown's marks (:data:`_NOT_PROSE`) with at least :data:`MIN_PROSE_WORDS` words,
    normalised, each once, in order.

    Parameters
    ----------
    notebooks : iterable of nbformat.NotebookNode
        Solution notebooks (each written exercise read by :func:`~dpcourse.checks._written.read_written_exercises`).

    Returns
    -------
    list of str
        The texts a site built from the student release must not hold.
    """
    found: dict[str, None] = {}
    for nb in notebooks:
        for written in read_written_exercises(nb):
            for text in [written.model_answer, *(item.text for item in written.rubric.items)]:
                for part in _NOT_PROSE.split(text):
                    phrase = normalise(part).strip(" .,;:")
                    if len(_WORD.findall(phrase)) >= MIN_PROSE_WORDS:
                        found[phrase] = None
    return list(found)


def _occurs(needle: str, text: str) -> bool:
    """Whether ``needle`` is in ``text`` with no letter, digit or ``_`` glued to either end (``K_max = 1`` is not
    in ``K_max = 10``)."""
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", text) is not None


def shown_to_students(lines: Iterable[str], student_notebooks: Iterable[Any]) -> list[str]:
    """The ``lines`` that a student's notebook holds anyway (outside any solution region): a cell that sets up the
    exercise, or the stub, may share a line with the solution; showing it gives nothing away."""
    cells = [normalise(cell.source) for nb in student_notebooks for cell in nb.cells]
    return [line for line in lines if any(line in cell and _occurs(line, cell) for cell in cells)]


def check_marks(notebooks: Iterable[Any]) -> list[str]:
    """The first words of a passing check's output for each exercise of the notebooks (``✓ <id>: correct``)."""
    return [f"✓ {exercise}: correct" for nb in notebooks for exercise in exercises(nb)]


def answer_numbers(answer: object) -> list[float]:
    """Every number in an exercise's answer (a number, or lists, tuples, dicts' values and arrays of them):
    booleans, strings, functions and other objects hold none.

    Parameters
    ----------
    answer : object
        The value (or the values) an exercise's check accepts.

    Returns
    -------
    list of float
        Its numbers, in order.
    """
    if isinstance(answer, bool):
        return []
    if isinstance(answer, int | float):
        return [float(answer)]
    if hasattr(answer, "tolist") and not isinstance(answer, str):  # numpy scalars and arrays
        return answer_numbers(answer.tolist())
    if isinstance(answer, dict):
        answer = list(answer.values())
    if isinstance(answer, list | tuple):
        return [number for item in answer for number in answer_numbers(item)]
    return []


def _distinctive(value: float) -> bool:
    """More than two significant digits: ``538``, ``6.3969``, ``2420``; not ``10``, ``0.5``."""
    return math.isfinite(value) and value != 0 and float(f"{abs(value):.2g}") != abs(value)


def _spells(written: re.Match, value: float) -> bool:
    """Whether a number as written in a page (``6.397``, ``15,202``) is ``value`` rounded to the digits shown,
    with enough of them (:data:`MIN_SIGNIFICANT`, :data:`MIN_DIGITS`)."""
    whole, fraction = written.group(1).replace(",", ""), written.group(2) or ""
    digits = whole.lstrip("0") + fraction
    needed = min(MIN_DIGITS, len(f"{abs(value):.0f}")) if float(value).is_integer() else MIN_DIGITS
    if len(digits) < needed or len(digits.lstrip("0")) < MIN_SIGNIFICANT:
        return False
    shown = float(f"{whole}.{fraction}" if fraction else whole)
    return abs(abs(value) - shown) <= 0.5 * 10.0 ** -len(fraction) * (1 + 1e-9)


def _json_unescaped(text: str) -> str:
    def characters(match: re.Match) -> str:
        units = match.group(0).encode("ascii").decode("unicode_escape")
        return units.encode("utf-16", "surrogatepass").decode("utf-16", "replace")

    return _JSON_ESCAPE.sub(lambda m: " " if m.group(1) in "nrt" else m.group(1), _JSON_UNICODE.sub(characters, text))


def readings(raw: str) -> tuple[str, str]:
    """A file's text as a reader would find a line in it: JSON's escapes undone (notebooks, widget state, the
    search index), white space normalised; and the same with HTML's tags taken out and its entities undone (a
    page's text, a highlighted code line, HTML inside JSON). Long runs of base64 (images) are taken out first: they
    hold no line of code, and their digits are no numbers."""
    text = _json_unescaped(_BLOB.sub(" ", raw))
    return normalise(text), normalise(html.unescape(_TAG.sub("", text)))


def _readable_files(site: Path) -> Iterator[Path]:
    for path in sorted(site.rglob("*")):
        if path.is_file() and (path.suffix in READABLE_SUFFIXES or path.name == SEARCH_INDEX):
            yield path


def _notebook_of(path: Path, notebooks: Iterable[str]) -> str | None:
    return next((name for name in notebooks if path.name.startswith(f"{name}.")), None)


def answers_shown(site: Path, texts: Iterable[str], numbers: Mapping[str, Iterable[float]] | None = None) -> list[str]:
    """Where a built site shows an answer: one of ``texts`` (solution lines, check marks) anywhere, or an accepted
    value of a notebook's exercises (``numbers``) in that notebook's page and files or in a file of no notebook.

    Every page (``.html``), notebook (``.ipynb``), source (``.md``, ``.rst``), text file (``.txt``) and the search
    index (``searchindex.js``) under ``site`` is read as :func:`readings` says; a text counts where it stands
    with nothing glued to either end, a number where it is the value rounded to the digits written, with enough
    of them (:data:`MIN_DIGITS`): ``3.098`` and ``3.0983`` spell 3.098321, ``3.10`` does not; ``0.0869`` spells
    0.086863, ``0.0005`` does not spell 0.000519. A value is not looked for in another notebook's files, where a
    table's figure matches one of the 30-odd values by chance.

    Parameters
    ----------
    site : pathlib.Path
        The built site's folder (``book/_build/html``).
    texts : iterable of str
        Normalised texts that must not occur (:func:`solution_lines`, :func:`check_marks`).
    numbers : mapping of str to iterable of float, optional
        A notebook's name (``05_flawed_svt_variants``) → the values its exercises accept (:func:`answer_numbers`).

    Returns
    -------
    list of str
        One line per (file, answer) found: the file relative to ``site`` and what it shows; empty when none.
    """
    texts = [text for text in dict.fromkeys(texts) if text]
    by_notebook = {
        name: [v for v in dict.fromkeys(values) if _distinctive(v)] for name, values in (numbers or {}).items()
    }
    found = []
    for path in _readable_files(site):
        notebook = _notebook_of(path, by_notebook)
        values = by_notebook[notebook] if notebook else [v for vs in by_notebook.values() for v in vs]
        shown: dict[str, None] = {}
        for reading in readings(path.read_text(encoding="utf-8", errors="replace")):
            for text in texts:
                if text in reading and _occurs(text, reading):
                    shown[f"text {text!r}"] = None
            for written in _NUMBER.finditer(reading):
                for value in values:
                    if _spells(written, value):
                        shown[f"the accepted value {value:g} as {written.group(0)!r}"] = None
        found += [f"{path.relative_to(site)}: {what}" for what in shown]
    return found


def answers_in(
    site: Path, notebooks: Path = NOTEBOOKS, numbers: Mapping[str, Iterable[float]] | None = None
) -> list[str]:
    """:func:`answers_shown` for the solution lines, check marks and written model answers' phrases of the solution
    notebooks in ``notebooks`` (those a student's notebook shows anyway left out) and the accepted values
    ``numbers``, if given."""
    solutions = [nbformat.read(path, as_version=4) for path in sorted(notebooks.glob("*.ipynb"))]
    students = [release_notebook(nb) for nb in solutions]
    lines = [*solution_lines(solutions), *model_answer_phrases(solutions)]
    anyway = set(shown_to_students(lines, students))
    return answers_shown(site, [*(line for line in lines if line not in anyway), *check_marks(solutions)], numbers)


def build(out: Path, *, with_solutions: bool = False) -> Path:
    """Build the site into ``out/_build/html`` and return that folder; unless ``with_solutions``, from the
    student release, and refused (``SystemExit``) if a page shows an answer all the same."""
    source = out / "_build" / "source"
    stage(source, with_solutions=with_solutions)
    jupyter_book(source, out, with_solutions=with_solutions)
    site = out / "_build" / "html"
    copy_npm_assets(site / "_static")
    problems = foreign_or_missing(site)
    if problems:
        raise SystemExit("the site loads what it does not hold:\n  " + "\n  ".join(problems))
    if not with_solutions:
        shown = answers_in(site)
        if shown:
            raise SystemExit(
                "the site shows answers (make book-with-solutions is the way to publish them):\n  " + "\n  ".join(shown)
            )
    return site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the site goes to OUT/_build/html (default: book, or book/with-solutions)",
    )
    parser.add_argument(
        "--with-solutions",
        action="store_true",
        help="build from the instructor's notebooks: every solution and check result is published",
    )
    args = parser.parse_args(argv)
    out = args.out or (WITH_SOLUTIONS if args.with_solutions else BOOK)
    start = time.perf_counter()
    site = build(out.resolve(), with_solutions=args.with_solutions)
    seconds = time.perf_counter() - start
    edition = (
        "WITH EVERY SOLUTION (do not publish it to students)" if args.with_solutions else "from the student release"
    )
    print(f"book: built {edition} in {seconds:.0f} s; open {os.path.relpath(site / 'index.html')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
