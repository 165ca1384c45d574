"""A student's Markdown answer as inert HTML for the marking page.

Rendered by mistune with raw HTML escaped (a ``<script>``, ``<style>`` or ``<iframe>`` shows as text); links kept
only for ``http``, ``https`` and ``mailto`` (any other, ``javascript:`` among them, is shown as text); images never
loaded (an image becomes its alt text, as a link when its address is ``http(s)``), so the page asks no other host
for anything; ``$…$`` and ``$$…$$`` kept as TeX in ``<span class="math">``/``<div class="math">`` for MathJax.
The page's Content-Security-Policy is the second wall: it runs no inline script and loads nothing from elsewhere.
"""

from __future__ import annotations

import html
import re
from typing import Any

import mistune

from .written import Answer, read_answer

__all__ = ["ALLOWED_SCHEMES", "MAX_MARKDOWN_CHARS", "MAX_MATH_CHARS", "render_answer"]

#: The only link schemes rendered as links.
ALLOWED_SCHEMES = ("http", "https", "mailto")
#: The longest answer rendered as Markdown (characters); a longer one is shown as plain text. mistune's parsing
#: time grows faster than linearly on some inputs (60,000 ``[`` took 5 s on a busy two-core machine, 16,000 up to
#: 3 s), and a page must not hang on one student's answer.
MAX_MARKDOWN_CHARS = 10_000
#: The longest formula typeset; a longer one is shown as its TeX source.
MAX_MATH_CHARS = 4000
_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*):")


def _allowed(url: str) -> bool:
    found = _SCHEME.match(html.unescape(url))
    return found is not None and found.group(1).lower() in ALLOWED_SCHEMES and not re.search(r"[\x00-\x20]", url)


class _InertRenderer(mistune.HTMLRenderer):
    """mistune's HTML renderer with raw HTML escaped, links filtered by scheme and images never loaded."""

    def __init__(self) -> None:
        super().__init__(escape=True)

    def link(self, text: str, url: str, title: str | None = None) -> str:
        if not _allowed(url):
            return f'{text} <span class="refused-link">({html.escape(url)})</span>'
        title_attribute = f' title="{html.escape(title)}"' if title else ""
        return (
            f'<a href="{html.escape(url)}"{title_attribute} rel="noopener noreferrer nofollow" '
            f'referrerpolicy="no-referrer" target="_blank">{text}</a>'
        )

    def image(self, text: str, url: str, title: str | None = None) -> str:
        alt = text or "image"
        scheme = _SCHEME.match(html.unescape(url))
        if scheme and scheme.group(1).lower() in ("http", "https") and _allowed(url):
            return self.link(f"[image: {alt}]", url, title)
        return f'<span class="refused-image">[image: {alt}]</span>'

    def block_code(self, code: str, info: str | None = None) -> str:
        return f"<pre><code>{html.escape(code)}</code></pre>\n"  # no class from the info string: it is hers


def _math(text: str, *, display: bool) -> str:
    if len(text) > MAX_MATH_CHARS:  # typeset, it would hold the marker's page for seconds: shown as TeX source
        title = f"formula longer than {MAX_MATH_CHARS:,} characters"
        return f'<code class="math-too-long" title="{title}">{html.escape(text)}</code>'
    if display:
        return f'<div class="math">$$\n{html.escape(text)}\n$$</div>\n'
    return f'<span class="math">\\({html.escape(text)}\\)</span>'


_RENDERER = _InertRenderer()
_MARKDOWN = mistune.create_markdown(renderer=_RENDERER, plugins=["math", "strikethrough", "table"])
# The math plugin registers its own HTML for formulas; these replace it (same markup, plus the length cap).
_RENDERER.register("block_math", lambda renderer, text: _math(text, display=True))
_RENDERER.register("inline_math", lambda renderer, text: _math(text, display=False))


def render_answer(source: Any, *, cut_from: int | None = None) -> str:
    """The answer's Markdown as inert HTML.

    Parameters
    ----------
    source : str, list of str or bytes
        The answer; read by :func:`~.written.read_answer` (control characters removed, cut at
        :data:`~.written.MAX_ANSWER_BYTES` with a note at the end). An answer longer than
        :data:`MAX_MARKDOWN_CHARS` is shown as escaped plain text, with a note, instead of Markdown.
    cut_from : int or None, optional
        The original size of an answer cut before it was stored (:attr:`~.written.Answer.cut_from`): the same note.

    Returns
    -------
    str
        HTML with no element that runs, loads or styles anything: no ``<script>``, ``<style>``, ``<iframe>``,
        ``<img>``, no ``on…`` or ``style`` attribute, links only to ``http``, ``https`` and ``mailto``.

    Examples
    --------
    >>> render_answer("<b onclick=alert(1)>hi</b> $x$")
    '<p>&lt;b onclick=alert(1)&gt;hi&lt;/b&gt; <span class="math">\\\\(x\\\\)</span></p>\\n'
    """
    answer = read_answer(source)
    if answer.cut_from is None and cut_from is not None:
        answer = Answer(answer.text, cut_from)
    if len(answer.text) > MAX_MARKDOWN_CHARS:
        rendered = (
            f'<p class="cut-note">[longer than {MAX_MARKDOWN_CHARS:,} characters: shown as plain text]</p>\n'
            f'<pre class="plain-answer">{html.escape(answer.text)}</pre>\n'
        )
    else:
        rendered = str(_MARKDOWN(answer.text))
    if answer.cut_from is not None:
        rendered += f'<p class="cut-note">{html.escape(answer.note)}</p>\n'
    return rendered
