"""Sphinx configuration: an API reference built from the package's numpy-style docstrings, and the instructors' guide.

The guide is Markdown (MyST), written once in ``book/instructors/`` for the course website. Each page of
``docs/instructors/`` is one ``{include}`` of the page of the same name there, so both builds read the same text.

``make docs`` builds it into ``docs/_build/html`` with ``-W`` (every warning is an error);
``tests/test_docs.py`` builds it the same way, so a docstring that numpydoc cannot read fails
``make test``.
"""

import importlib.metadata
import re

project = "dpcourse"
author = "the dpcourse authors"
copyright = "2026, the dpcourse authors"
release = importlib.metadata.version("dpcourse")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}

# The page of each floor lists its modules, each with ``:members:``. Many modules re-export names for
# the notebooks (``bounds``, ``pmw``, the packages' ``__init__``), and ``__all__`` lists them; with
# ``ignore-module-all`` autodoc documents only what a module defines, so each object is documented
# once, in the module that defines it, and a facade shows its docstring.
autodoc_default_options = {
    "members": True,
    "ignore-module-all": True,
    "show-inheritance": True,
    "member-order": "bysource",
}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
# The ``ArrayLike`` and ``RngLike`` aliases read better than their expansions.
autodoc_type_aliases = {"ArrayLike": "ArrayLike", "RngLike": "RngLike"}
# The package annotates its signatures and has no ``# type:`` comments; looking for them reads every function's
# and class's source once more (a class's by parsing its whole module), a tenth of the build.
autodoc_use_type_comments = False

# numpydoc renders the sections; without this it adds an autosummary table of every class's
# members, which needs stub pages for each of them.
numpydoc_show_class_members = False
numpydoc_xref_param_type = False

templates_path: list[str] = []
exclude_patterns = ["_build"]
html_theme = "alabaster"
# Wider than alabaster's default (940 px), so that long signatures wrap less.
html_theme_options = {"page_width": "1180px", "sidebar_width": "240px"}
html_static_path: list[str] = []
html_title = "dpcourse API reference and instructors' guide"


# The docstrings are written first for ``help()`` and Jupyter's Shift-Tab, in plain Unicode
# mathematics, where |Q| is the number of queries and |x| an absolute value. reStructuredText reads
# |Q| as a substitution, so bars are escaped before numpydoc and docutils see them, except in inline
# literals, doctests and literal blocks, where a backslash would be shown.
_INLINE_LITERAL = re.compile(r"(``.+?``)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def escape_bars(lines: list[str]) -> list[str]:
    """Escape ``|`` in docstring lines outside inline literals, doctests and literal blocks."""
    escaped = []
    literal_indent = None  # the indent of the paragraph that opened a literal block ("::")
    for line in lines:
        if literal_indent is not None and line.strip() and _indent(line) <= literal_indent:
            literal_indent = None
        if literal_indent is None and not line.lstrip().startswith((">>>", "...")):
            parts = _INLINE_LITERAL.split(line)
            line = "".join(part if part.startswith("``") else part.replace("|", r"\|") for part in parts)
        if literal_indent is None and line.rstrip().endswith("::"):
            literal_indent = _indent(line)
        escaped.append(line)
    return escaped


def _escape_docstring_bars(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = escape_bars(lines)


def _compile_numpydoc_template_once() -> None:
    """numpydoc (1.11) makes a new Jinja environment for every docstring it renders and compiles its one
    template, ``numpydoc_docstring.rst``, in it again: a sixth of the build's time. Kept once compiled, the
    template renders every docstring as before (the pages are byte for byte the same)."""
    from numpydoc import docscrape_sphinx

    compiled = {}

    class TemplatesKept(docscrape_sphinx.SandboxedEnvironment):
        def get_template(self, name, *args, **kwargs):
            if args or kwargs:  # not numpydoc's call
                return super().get_template(name, *args, **kwargs)
            if name not in compiled:
                compiled[name] = super().get_template(name)
            return compiled[name]

    docscrape_sphinx.SandboxedEnvironment = TemplatesKept


def setup(app):
    # Before numpydoc (priority 500) parses the sections.
    app.connect("autodoc-process-docstring", _escape_docstring_bars, priority=400)
    _compile_numpydoc_template_once()
