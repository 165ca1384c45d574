"""The course website's recipe (make book), checked without building it: the table of contents against the
notebooks and the API pages, the pins (PyPI and npm), the settings that keep the site offline, the parts of
book/build.py and of the book's Sphinx extension, and the GitHub Pages workflow. The build itself and the site
in a browser: tests/e2e/test_book_in_browser.py."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
PAGES_WORKFLOW = ROOT / "deploy" / "github" / "pages.yml"


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"book_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = load(BOOK / "build.py")
extension = load(BOOK / "_ext" / "dpcourse_book.py")


def config() -> dict:
    return yaml.safe_load((BOOK / "_config.yml").read_text())


def toc_files() -> list[str]:
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries: list[dict]) -> None:
        for entry in entries:
            files.append(entry["file"])
            walk(entry.get("sections", []))

    for part in toc["parts"]:
        walk(part["chapters"])
    return files


def test_the_table_of_contents_lists_every_notebook_and_every_api_page():
    files = toc_files()
    assert len(files) == len(set(files))
    notebooks = [f.removeprefix("notebooks/") for f in files if f.startswith("notebooks/")]
    assert notebooks == sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    api_pages = {f.removeprefix("api/") for f in files if f.startswith("api/")}
    assert api_pages == {p.stem for p in (ROOT / "docs" / "api").glob("*.rst")}
    own = [f for f in files if "/" not in f]
    assert all((BOOK / f"{name}.md").is_file() for name in own), own
    guide = [f.removeprefix("instructors/") for f in files if f.startswith("instructors/")]
    assert sorted(guide) == sorted(p.stem for p in (BOOK / "instructors").glob("*.md"))
    assert guide[0] == "index"


def guide_part() -> list[str]:
    """The pages of the table of contents' part "For instructors", in order."""
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    (part,) = [part for part in toc["parts"] if part["caption"] == "For instructors"]
    return [chapter["file"] for chapter in part["chapters"]]


def test_the_instructors_guide_is_its_own_part_and_every_page_says_it_is_for_instructors():
    assert guide_part() == [f for f in toc_files() if f.startswith("instructors/")]
    for page in guide_part():
        lines = (BOOK / f"{page}.md").read_text().splitlines()
        assert lines[0].startswith("# ") and lines[1] == "", page
        assert lines[2].startswith("> **For instructors.** The course website is built for students"), page


def test_the_book_stages_the_instructors_guide(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "NOTEBOOKS", tmp_path / "no notebooks")
    build.stage(tmp_path / "source")
    staged = tmp_path / "source" / "instructors"
    assert sorted(p.name for p in staged.iterdir()) == sorted(p.name for p in (BOOK / "instructors").glob("*.md"))
    assert (staged / "scale.md").read_text() == (BOOK / "instructors" / "scale.md").read_text()


def pins(path: Path) -> dict[str, str]:
    lines = [line.strip() for line in path.read_text().splitlines()]
    found = {}
    for line in lines:
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9][0-9A-Za-z.]*)", line)
        assert match, f"{path.name}: not an exact pin: {line!r}"
        found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def test_the_book_requirements_are_exact_pins_of_jupyter_book_1_beside_the_workbooks():
    book = pins(ROOT / "requirements-book.txt")
    assert book["jupyter-book"].startswith("1.")
    assert book["sphinx"].startswith("7.")  # what jupyter-book 1.x needs; make docs has its own Sphinx
    # Nothing pinned twice: the Makefile installs both files together, so pip sees every pin once.
    assert set(book).isdisjoint(pins(ROOT / "requirements.txt"))


def test_the_npm_assets_are_pinned_exactly_from_the_npm_registry():
    package = json.loads((BOOK / "npm" / "package.json").read_text())
    lock = json.loads((BOOK / "npm" / "package-lock.json").read_text())
    wanted = package["dependencies"]
    assert set(wanted) == {name for name, _, _ in build.NPM_ASSETS}
    for name, version in wanted.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name}: {version} is not an exact version"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    for where, entry in lock["packages"].items():
        if where:  # every package's content fixed by its hash, from the npm registry where the lock names one
            assert entry["integrity"].startswith("sha512-"), where
            assert entry.get("resolved", "https://registry.npmjs.org/").startswith("https://registry.npmjs.org/")


def test_the_site_loads_its_scripts_from_its_own_folder_and_executes_nothing():
    settings = config()
    assert settings["execute"]["execute_notebooks"] == "off"
    assert settings["launch_buttons"]["thebe"] is False
    sphinx = settings["sphinx"]["config"]
    scripts = [sphinx["mathjax_path"], *sphinx["nb_ipywidgets_js"]]
    copied = {target: parts for _, parts, target in build.NPM_ASSETS}
    for script in scripts:
        assert "://" not in script and not script.startswith("/"), script
        folder, _, name = script.partition("/")
        assert folder in copied, f"{script}: book/build.py copies nothing to _static/{folder}"
        assert any(part == "es5" or Path(part).name == name for part in copied[folder]), script
    assert all(attributes == {} for attributes in sphinx["nb_ipywidgets_js"].values())  # no CDN attribute


@pytest.mark.skipif(not build.NODE_MODULES.is_dir(), reason="book/npm/node_modules not installed (make book)")
def test_the_scripts_the_settings_name_are_in_the_pinned_packages():
    sphinx = config()["sphinx"]["config"]
    assert (build.NODE_MODULES / "mathjax" / "es5" / Path(sphinx["mathjax_path"]).name).is_file()
    for package, parts, _ in build.NPM_ASSETS:
        for part in parts:
            assert (build.NODE_MODULES / package / part).exists(), (package, part)
    manager = (build.NODE_MODULES / "@jupyter-widgets/html-manager/dist/embed-amd.js").read_text(encoding="utf-8")
    assert manager.count(build._ASSETS_FROM_ORIGIN) == 1


def test_the_site_check_flags_other_hosts_and_missing_files_only(tmp_path):
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "here.js").write_text("")
    (tmp_path / "page.html").write_text(
        '<script src="_static/here.js?v=1"></script><img src="data:image/png;base64,AA==">'
        '<a href="https://mybinder.org/v2/gh/x/y/HEAD">Binder</a><link rel="next" href="https://example.org/">'
        '<script src="https://cdn.example.org/x.js"></script><link rel="stylesheet" href="//cdn.example.org/y.css">'
        '<img src="_images/gone.png">'
    )
    problems = build.foreign_or_missing(tmp_path)
    assert len(problems) == 3, problems
    assert sum("another host" in p for p in problems) == 2 and "_images/gone.png (no such file" in problems[2]


def test_bars_in_formulas_on_table_rows_are_escaped_and_nothing_else():
    cell = "| method | error |\n| --- | --- |\n| Laplace | $\\varepsilon/|Q|$, $a\\|b$ |\nprose $|x|$ stays\n"
    escaped = build.escape_bars_in_table_math(cell)
    assert "$\\varepsilon/\\|Q\\|$, $a\\|b$ |" in escaped
    assert escaped.endswith("prose $|x|$ stays\n") and escaped.startswith("| method | error |\n| --- | --- |\n")


def test_the_widget_manager_patch_refuses_a_version_it_does_not_know(tmp_path):
    script = tmp_path / "embed-amd.js"
    script.write_text("var p = somewhere_else;")
    with pytest.raises(SystemExit, match="the widget manager changed"):
        build._let_the_widget_manager_find_its_fonts_from_a_folder(script)
    script.write_text(f"a;{build._ASSETS_FROM_ORIGIN},b")
    build._let_the_widget_manager_find_its_fonts_from_a_folder(script)
    assert script.read_text() == f"a;{build._ASSETS_FROM_ADDRESS},b"


def test_the_binder_button_opens_the_notebook_of_the_student_copy_as_the_readme_badge_does():
    badge = re.search(r"\((https://mybinder\.org/v2/gh/[^)\s]+)\)", (ROOT / "README.md").read_text()).group(1)
    theme_url = "https://mybinder.org/v2/gh/dpcourse/dpcourse/HEAD?urlpath=lab/tree/notebooks/01_laplace_utility.ipynb"
    assert extension.binder_url(theme_url, "01_laplace_utility") == badge
    owner, name, branch = re.fullmatch(r"https://mybinder\.org/v2/gh/([^/]+)/([^/]+)/([^/?]+)\?.*", badge).groups()
    settings = config()
    assert settings["repository"]["url"] == f"https://github.com/{owner}/{name}"
    assert settings["repository"]["branch"] == branch


def test_the_book_reads_the_docstring_settings_of_the_api_reference():
    docs = extension._docs_conf()
    taken = [name for name in docs if name.startswith(extension._SETTING_PREFIXES)]
    assert {"autodoc_default_options", "numpydoc_show_class_members"} <= set(taken)
    assert callable(docs["_escape_docstring_bars"]) and callable(docs["_compile_numpydoc_template_once"])


def test_make_book_installs_both_requirement_files_together_and_runs_the_build():
    makefile = (ROOT / "Makefile").read_text()
    assert "-r requirements.txt -r requirements-book.txt" in makefile
    assert "npm ci --ignore-scripts" in makefile
    assert re.search(
        r"^book: \$\(BOOK_STAMP\) \$\(BOOK_NPM_STAMP\)\n\t\$\(BOOK_VENV\)/bin/python book/build.py$", makefile, re.M
    )


def pages_workflow() -> dict:
    return yaml.safe_load(PAGES_WORKFLOW.read_text())


def test_the_pages_workflow_builds_with_make_book_and_only_the_publisher_may_write():
    flow = pages_workflow()
    assert flow["permissions"] == {}
    build_job, deploy_job = flow["jobs"]["build"], flow["jobs"]["deploy"]
    assert build_job["permissions"] == {"contents": "read"}
    assert deploy_job["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy_job["needs"] == "build" and deploy_job["environment"]["name"] == "github-pages"
    assert {"run": "make book"} in build_job["steps"]
    upload = next(s for s in build_job["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "book/_build/html"
