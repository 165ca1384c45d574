"""Build the course website (``make book``): the notebooks with their stored outputs and the API reference.

Run with the book's environment (``.venv/book``, made by ``make book``)::

    .venv/book/bin/python book/build.py [--out DIR]

1. Stage the sources in ``DIR/_build/source``: ``book/*.md``, ``notebooks/*.ipynb`` (outputs and widget
   state as stored: nothing is executed; only bars inside formulas on table rows are escaped, see
   :func:`escape_bars_in_table_math`) and ``docs/api/*.rst``. Copies keep their modification times, so
   Sphinx rebuilds only the pages whose source changed.
2. ``jupyter-book build`` with ``book/_config.yml`` and ``book/_toc.yml`` into ``DIR/_build/html``.
3. Copy the pinned npm assets (``book/npm/node_modules``: MathJax, require.js, the widget manager) into the
   site's ``_static/``, where the configuration points.
4. Check the site: every script, style sheet, image and frame of every page comes from the site itself (a
   relative address of a file that exists), so that it works offline and behind a firewall.

``DIR`` is ``book`` by default (the site in ``book/_build/html``); the browser test builds into a folder of
its own.
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

BOOK = Path(__file__).resolve().parent
ROOT = BOOK.parent
NODE_MODULES = BOOK / "npm" / "node_modules"

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


def stage(source: Path) -> None:
    """Copy the book's pages, the notebooks and the API reference's pages into ``source``."""
    if source.exists():
        shutil.rmtree(source)
    (source / "notebooks").mkdir(parents=True)
    (source / "api").mkdir()
    for page in BOOK.glob("*.md"):
        shutil.copy2(page, source / page.name)
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        staged = source / "notebooks" / notebook.name
        shutil.copy2(notebook, staged)
        _protect_math_in_tables(staged)
    for page in sorted((ROOT / "docs" / "api").glob("*.rst")):
        shutil.copy2(page, source / "api" / page.name)


def _settings_fingerprint() -> str:
    """A digest of what Sphinx does not watch: the book's settings, its extension (and style sheet) and this
    script."""
    digest = hashlib.sha256()
    extension = [path for path in (BOOK / "_ext").rglob("*") if path.is_file() and "__pycache__" not in path.parts]
    for path in sorted([BOOK / "_config.yml", BOOK / "_toc.yml", Path(__file__), *extension]):
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


def jupyter_book(source: Path, out: Path) -> None:
    """Run jupyter-book; every page is rewritten when the settings changed since the last build, only the
    pages whose source changed otherwise (Sphinx's incremental build)."""
    stamp = out / "_build" / ".settings-fingerprint"
    fingerprint = _settings_fingerprint()
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
    subprocess.run(command, check=True)
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


def build(out: Path) -> Path:
    """Build the site into ``out/_build/html`` and return that folder."""
    source = out / "_build" / "source"
    stage(source)
    jupyter_book(source, out)
    site = out / "_build" / "html"
    copy_npm_assets(site / "_static")
    problems = foreign_or_missing(site)
    if problems:
        raise SystemExit("the site loads what it does not hold:\n  " + "\n  ".join(problems))
    return site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=BOOK, help="the site goes to OUT/_build/html (default: book)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    site = build(args.out.resolve())
    seconds = time.perf_counter() - start
    print(f"book: built in {seconds:.0f} s; open {os.path.relpath(site / 'index.html')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
