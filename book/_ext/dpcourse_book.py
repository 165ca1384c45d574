"""The course website's Sphinx extension (book/_config.yml loads it): what jupyter-book cannot be told.

1. The API reference pages are ``docs/api/*.rst``, written for ``docs/conf.py`` (``make docs``). Their autodoc
   and numpydoc settings, and the hook that escapes ``|`` in docstrings before docutils reads them, are taken from
   that file, so that the book renders the docstrings as ``make docs`` does and nothing is said twice.
2. The pages' scripts: jupyter-book always loads sphinx-thebe, whose script names a CDN for the live-code
   bundle; this site has no live code (``launch_buttons.thebe: false``), so its pages drop it and name no other
   host to load anything from. Pages with panels get two lines the widget manager needs: where its own files
   are (for require.js), and MathJax 2's ``Hub.Queue`` on top of MathJax 3.
3. One style sheet (``static/dpcourse-book.css``): the notebooks' tables (``dpcourse.tables.Table``) laid out as
   JupyterLab lays them out, the panels' snapshot notes, and the right column's long module names wrapped: the
   page's contents are given a line break opportunity after each dot of a name (:func:`breakable_names`), so
   ``dpcourse.mechanisms.calibration`` wraps at its dots instead of running past the column at 1280 px.
4. The Binder button of a notebook's page opens that notebook of the **student copy**: postBuild makes it in
   ``student/`` when Binder builds the image, and README's badge opens ``student/01_laplace_utility.ipynb`` the
   same way (``labpath=student%2F<name>.ipynb``). sphinx-book-theme would open the solution notebook at the
   page's own path.
5. Each panel (a stored view of a widget with the class ``dpcourse-panel``) is introduced by a line saying that
   it is a snapshot, whose controls redraw nothing here, with a link to the same live notebook on Binder
   (:func:`label_panels`).
6. A site built with the solutions (``make book-with-solutions``: book/build.py sets :data:`WITH_SOLUTIONS_VARIABLE`)
   says so on every page, in the theme's announcement banner.
"""

from __future__ import annotations

import html
import json
import os
import re
import runpy
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sphinx.application import Sphinx
from sphinx.config import Config

ROOT = Path(__file__).resolve().parents[2]
STATIC = Path(__file__).resolve().parent / "static"
DOCS_CONF = ROOT / "docs" / "conf.py"
STUDENT_FOLDER = "student"
# docs/conf.py's settings that shape how a docstring is rendered.
_SETTING_PREFIXES = ("autodoc_", "numpydoc_")
#: Set (to ``1``) in jupyter-book's environment by ``book/build.py --with-solutions``.
WITH_SOLUTIONS_VARIABLE = "DPCOURSE_BOOK_WITH_SOLUTIONS"
WITH_SOLUTIONS_BANNER = "Instructors' edition: every solution and check result is shown. Never publish it to students."


def _docs_conf() -> dict[str, Any]:
    return runpy.run_path(str(DOCS_CONF))


def binder_url(theme_url: str, notebook: str) -> str:
    """The theme's Binder URL (repository and branch) with the path of ``notebook`` in the student copy."""
    base = theme_url.split("?", 1)[0]
    return f"{base}?labpath={quote(f'{STUDENT_FOLDER}/{notebook}.ipynb', safe='')}"


def _take_docs_settings(docs: dict[str, Any]):
    def take(app: Sphinx, config: Config) -> None:
        for name, value in docs.items():
            if name.startswith(_SETTING_PREFIXES) and name in config:
                setattr(config, name, value)
        config.html_static_path = [*config.html_static_path, str(STATIC)]
        if os.environ.get(WITH_SOLUTIONS_VARIABLE) == "1":
            config.html_theme_options = {**config.html_theme_options, "announcement": WITH_SOLUTIONS_BANNER}

    return take


def _point_binder_at_the_student_copy(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("text") == "Binder":
                button["url"] = binder_url(button["url"], pagename.rsplit("/", 1)[-1])


WIDGET_VIEW = re.compile(r'<script type="application/vnd\.jupyter\.widget-view\+json">(.*?)</script>', re.DOTALL)
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: The class :mod:`dpcourse.widgets` gives a panel's outer box (a plain box of figures is no panel: no sliders).
PANEL_CLASS = "dpcourse-panel"
SNAPSHOT_NOTE = (
    '<p class="dpcourse-snapshot">Snapshot: this panel as the notebook was last run. Its sliders and menus '
    'redraw nothing on this page: <a href="{url}">open this notebook live on Binder</a> to use them.</p>'
)


def panel_models(widget_state: dict[str, Any]) -> set[str]:
    """The ids of the models in a notebook's widget state (``{"state": {id: model}}``) that are panels."""
    return {
        model_id
        for model_id, model in widget_state.get("state", {}).items()
        if PANEL_CLASS in model.get("state", {}).get("_dom_classes", [])
    }


def label_panels(body: str, binder: str, panels: set[str]) -> str:
    """``body`` (a page's HTML) with :data:`SNAPSHOT_NOTE`, linking to ``binder``, before each stored view of a
    model in ``panels``."""
    note = SNAPSHOT_NOTE.format(url=html.escape(binder, quote=True))

    def label(view: re.Match) -> str:
        try:
            model_id = json.loads(view.group(1)).get("model_id")
        except (ValueError, AttributeError):
            return view.group(0)
        return note + view.group(0) if model_id in panels else view.group(0)

    return WIDGET_VIEW.sub(label, body)


def _widget_state(context: dict[str, Any]) -> dict[str, Any]:
    """The page's widget state, which myst-nb adds as a script (its JSON with ``</`` escaped as ``<\\/``)."""
    for script in context.get("script_files", []):
        if getattr(script, "attributes", {}).get("type") == WIDGET_STATE:
            return dict(json.loads(_body(script)))
    return {}


def _binder_button(context: dict[str, Any]) -> str | None:
    for group in context.get("header_buttons", []):
        if group.get("label") == "launch-buttons":
            for button in group.get("buttons", []):
                if button.get("text") == "Binder":
                    return str(button["url"])
    return None


def _label_panels(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    binder = _binder_button(context)
    if binder is not None and "body" in context:
        context["body"] = label_panels(context["body"], binder, panel_models(_widget_state(context)))


_CODE_NAME = re.compile(r'(<span class="pre">)([^<]*)(</span>)')


def breakable_names(toc: str) -> str:
    """``toc`` (a page's contents, HTML) with ``<wbr>`` after each dot of the names in code, where a line may break."""
    return _CODE_NAME.sub(lambda name: name[1] + name[2].replace(".", ".<wbr>") + name[3], toc)


def _let_names_wrap(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    if isinstance(context.get("toc"), str):
        context["toc"] = breakable_names(context["toc"])


# ipywidgets typesets a widget's description with MathJax 2's ``MathJax.Hub.Queue``; MathJax 3, which Sphinx
# loads, has ``typesetPromise`` instead, and without this a page's panels throw "reading 'Queue'". Runs after
# Sphinx's ``window.MathJax = {...}`` settings and before MathJax (deferred) replaces that object, so the
# shim is put on the settings and again once MathJax is ready. Before that, MathJax's own first pass
# typesets whatever the widgets have drawn.
MATHJAX2_HUB_SHIM = """(() => {
  const hub = {
    Queue(command) {
      const element = command[command.length - 1];
      if (window.MathJax && window.MathJax.typesetPromise) window.MathJax.typesetPromise([element]);
    },
  };
  const settings = window.MathJax;
  settings.Hub = hub;
  settings.startup = Object.assign({}, settings.startup, {
    ready() {
      window.MathJax.startup.defaultReady();
      window.MathJax.Hub = hub;
    },
  });
})();"""

# The widget manager finds its fonts beside the module that require.js loads as
# "@jupyter-widgets/html-manager/dist/libembed-amd": this maps that name to the site's copy.
REQUIRE_PATHS = 'require.config({{paths: {{"@jupyter-widgets/html-manager/dist": "{folder}"}}}});'


def _filename(script: Any) -> str:
    return str(getattr(script, "filename", None) or "")


def _body(script: Any) -> str:
    return str(getattr(script, "attributes", {}).get("body", ""))


def _arrange_scripts(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Drop sphinx-thebe's scripts; add the MathJax 2 shim and the widget manager's path where they are needed."""
    if "script_files" not in context:
        return
    arranged = []
    for script in context["script_files"]:
        if _filename(script).endswith("sphinx-thebe.js") or "THEBE_JS_URL" in _body(script):
            continue
        arranged.append(script)
        inline = type(script)
        if _body(script).startswith("window.MathJax = "):
            arranged.append(inline("", body=MATHJAX2_HUB_SHIM, priority=script.priority))
        elif _filename(script).endswith("requirejs/require.js"):
            folder = context["pathto"]("_static/html-manager", 1)
            arranged.append(inline("", body=REQUIRE_PATHS.format(folder=folder), priority=script.priority))
    context["script_files"] = arranged


def setup(app: Sphinx) -> dict[str, Any]:
    docs = _docs_conf()
    # Before numpydoc reads its settings (its own config-inited handler, priority 500).
    app.connect("config-inited", _take_docs_settings(docs), priority=100)
    app.connect("autodoc-process-docstring", docs["_escape_docstring_bars"], priority=400)
    docs["_compile_numpydoc_template_once"]()  # as `make docs` does: the same pages in a sixth less time
    app.add_css_file("dpcourse-book.css")
    # After sphinx-book-theme adds its launch buttons (priority 501).
    app.connect("html-page-context", _point_binder_at_the_student_copy, priority=600)
    app.connect("html-page-context", _arrange_scripts, priority=600)
    # After the Binder button points at the student copy: each panel's note links where the button does.
    app.connect("html-page-context", _label_panels, priority=700)
    # Before the themes read the page's contents (pydata-sphinx-theme caches what it makes of them on first use).
    app.connect("html-page-context", _let_names_wrap, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
