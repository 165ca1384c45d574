"""Students' Markdown rendered inert: hostile answers leave no element that runs, loads or styles anything."""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser

import pytest

from dpcourse.classroom.marking.render import MAX_MARKDOWN_CHARS, MAX_MATH_CHARS, render_answer


class Elements(HTMLParser):
    """Every start tag and its attributes, parsed as a browser's tokenizer would."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


HOSTILE = {
    "script": "<script>alert(1)</script>",
    "script in a list": "- <script src=//evil.example/x.js></script>",
    "onerror": "<img src=x onerror=alert(1)>",
    "svg": "<svg onload=alert(1)><circle/></svg>",
    "style": "<style>body { display: none }</style>",
    "iframe": '<iframe src="http://evil.example/"></iframe>',
    "javascript link": "[x](javascript:alert(1))",
    "entity javascript link": "[x](jav&#x61;script:alert(1))",
    "data link": "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "vbscript autolink": "<vbscript:msgbox(1)>",
    "remote image": "![a cat](http://evil.example/cat.png)",
    "data image": "![dot](data:image/png;base64,iVBORw0KGgo=)",
    "relative image": "![local](/etc/passwd)",
    "link title": '[x](http://ok.example "a\\" onmouseover=\\"alert(1)")',
    "fence info": '```js" onclick="alert(1)\ncode\n```',
    "unbalanced fence": "```\n<script>alert(1)</script>\n",
    "html block": "<div onclick=alert(1)>\n\n*x*\n\n</div>",
    "comment": "<!-- <script>alert(1)</script> -->",
}


@pytest.mark.parametrize("answer", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_markdown_renders_inert(answer):
    html = render_answer(answer)
    for tag, attributes in Elements(html).found:
        assert tag in {"p", "a", "span", "pre", "code", "ul", "li", "div", "em", "strong"}, html
        assert not [name for name in attributes if name.startswith("on") or name in ("style", "src")], html
        if tag == "a":
            assert re.match(r"(https?|mailto):", attributes["href"]), html
    assert "<script" not in html and "<img" not in html and "<iframe" not in html


def test_allowed_links_stay_links_and_refused_ones_are_text():
    html = render_answer("[paper](https://arxiv.org/abs/1) [me](mailto:a@b.example) [bad](javascript:x) [f](file:///x)")
    links = [attrs["href"] for tag, attrs in Elements(html).found if tag == "a"]
    assert links == ["https://arxiv.org/abs/1", "mailto:a@b.example"]
    assert html.count('class="refused-link"') == 2 and "javascript:x" in html  # shown, as text


def test_an_image_is_its_alt_text_or_a_link_never_loaded():
    html = render_answer("![a cat](http://evil.example/cat.png) ![a dog](dog.png)")
    assert [tag for tag, _ in Elements(html).found].count("img") == 0
    assert "[image: a cat]" in html and "[image: a dog]" in html
    assert 'href="http://evil.example/cat.png"' in html and "dog.png" not in html


def test_math_is_kept_intact_for_mathjax():
    html = render_answer(r"Let $a_1 < b_*$ and $$\sum_i \varepsilon_i * 2$$ hold.")
    assert r'<span class="math">\(a_1 &lt; b_*\)</span>' in html  # no emphasis from _ or *
    assert '<div class="math">$$\n\\sum_i \\varepsilon_i * 2\n$$</div>' in html


def test_a_megabyte_of_math_is_cut_and_shown_as_source_quickly():
    start = time.monotonic()
    html = render_answer("$$" + "x^{2}+" * 200_000 + "$$")
    assert time.monotonic() - start < 5
    assert "answer cut: 1,200,004 bytes" in html and "<script" not in html
    long_formula = render_answer("$" + "y+" * MAX_MATH_CHARS + "$")
    assert 'class="math-too-long"' in long_formula and 'class="math"' not in long_formula


PATHOLOGICAL = ["[", "*a", "**a", "_a", "[a](", "> ", "`", "<"]


@pytest.mark.parametrize("unit", PATHOLOGICAL)
def test_pathological_markdown_renders_quickly(unit):
    for size in (MAX_MARKDOWN_CHARS, 60_000):  # the longest rendered as Markdown, and one shown as plain text
        start = time.monotonic()
        html = render_answer(unit * (size // len(unit)))
        assert time.monotonic() - start < 5  # about 1 s at the cap on a busy two-core machine
        assert ("shown as plain text" in html) == (size > MAX_MARKDOWN_CHARS)


def test_an_answer_cut_before_it_was_stored_says_so():
    assert "answer cut: 100,000 bytes" in render_answer("short", cut_from=100_000)
