"""The README a newcomer reads in five minutes, and the instructors' guide it points to (book/instructors/).

The README is short, names the two commands (``make lab``, ``make test``), and CI (``.ci/run``) runs its test
command. Every link of the README and the guide leads to a file that exists, and every ``dpcourse`` command they
show is one the command line accepts (test_deploy.py checks the shard commands of "Grading at scale").
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from dpcourse.__main__ import main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GUIDE = ROOT / "book" / "instructors"
#: "At most about 200 lines": a page a newcomer reads in five minutes (issue 41).
README_MAX_LINES = 200
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)
_COMMAND = re.compile(r"^(?:\.venv/bin/)?dpcourse\s")


def guide_pages() -> list[Path]:
    return sorted(GUIDE.glob("*.md"))


def documents() -> list[Path]:
    return [README, *guide_pages()]


def local_links(path: Path) -> list[str]:
    """The links of a Markdown file that are not to another site, nor to a place in the same page."""
    return [link for link in _LINK.findall(path.read_text()) if not re.match(r"[a-z]+:|#", link)]


def commands(path: Path) -> list[str]:
    """Each ``dpcourse`` command line in the file's bash blocks, continuation lines joined, comments dropped."""
    found = []
    for block in _BASH_BLOCK.findall(path.read_text()):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if _COMMAND.match(line):
                found.append(line)
    return found


class Parsed(Exception):
    """Raised instead of running a command, once its arguments are parsed."""


def parses(command: str, monkeypatch: pytest.MonkeyPatch) -> argparse.Namespace:
    """The namespace ``dpcourse`` parses from ``command``, without running it (argparse exits 2 on a bad one)."""
    parse = argparse.ArgumentParser.parse_args

    def parse_only(self, args=None, namespace=None):
        raise Parsed(parse(self, args, namespace))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_only)
    with pytest.raises(Parsed) as parsed:
        main(shlex.split(command)[1:])
    return parsed.value.args[0]


def test_the_readme_is_short_and_starts_with_the_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    first_block = _BASH_BLOCK.search(text).group(1)
    assert [line.split("#")[0].strip() for line in first_block.splitlines()] == ["make lab", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^lab:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    # The speed figures: one short paragraph, with the benchmarks' tables and the guide's page behind it.
    (speed,) = [paragraph for paragraph in text.split("\n\n") if paragraph.startswith("**Speed:**")]
    assert len(speed.splitlines()) <= 2
    assert "(benchmarks/RESULTS.md)" in speed and "(book/instructors/speed.md)" in speed


def test_ci_runs_the_readmes_test_command_in_both_fresh_clones():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.findall(r"^(?:bash \.ci/bare )?make -C \"\$(\w+)\" test$", ci, re.M) == ["bare", "full"]


def test_the_readme_points_to_every_page_of_the_guide():
    linked = {(README.parent / link).resolve() for link in local_links(README)}
    assert set(guide_pages()) <= linked


@pytest.mark.parametrize("path", documents(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_leads_to_a_file(path):
    for link in local_links(path):
        target = link.split("#")[0]
        # A guide page links to the API reference where both builds put it: api/ beside instructors/.
        where = ROOT / "docs" / target.removeprefix("../") if target.startswith("../api/") else path.parent / target
        assert where.is_file(), f"{path.name}: {link}"


@pytest.mark.parametrize("path", documents(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_dpcourse_command_shown_is_one_the_command_line_accepts(path, monkeypatch):
    shown = commands(path)
    for command in shown:
        assert parses(command, monkeypatch).command


def test_the_commands_are_found_and_a_wrong_one_is_refused(monkeypatch):
    assert len(commands(GUIDE / "grading.md")) == 2
    assert parses("dpcourse grade a.ipynb --report r.csv --jobs 2", monkeypatch).jobs == 2
    with pytest.raises(SystemExit):
        parses("dpcourse grade a.ipynb --report r.csv --gradebook moodle", monkeypatch)


def test_the_course_file_on_its_page_is_one_the_grader_accepts(tmp_path):
    text = (GUIDE / "course-file.md").read_text()
    course = tmp_path / "course.toml"
    course.write_text(re.search(r"^```toml\n(.*?)^```", text, re.M | re.S).group(1))
    out = tmp_path / "week1.zip"
    assert main(["gradescope", "build", "--out", str(out), "--course", str(course), "--assignment", "week1"]) == 0
    assert out.is_file()
