"""The API reference (``make docs``): every public function documented, a page per package, no warning.

Documented means what numpydoc's own validation (``numpydoc.validate``) asks of a numpy-style docstring,
for every public function, class and method: a docstring (GL08), every parameter in Parameters and none
that does not exist (PR01, PR02), Returns for what returns a value (RT01), Yields for a generator (YD01).
A dataclass may document its fields under Attributes instead of Parameters. Raises is required where the
code raises: a ``raise`` in the body, or a call of a ``check_…`` validator of ``dpcourse._validation``
(they raise ``ValueError``/``TypeError`` naming the parameter); numpydoc parses the section.
"""

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc
from numpydoc.validate import validate

from tests.test_layout import modules

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
AUTOMODULE = re.compile(r"^\.\. automodule:: (\S+)$", re.M)


def load_conf():
    spec = importlib.util.spec_from_file_location("docs_conf", DOCS / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def public_modules() -> set[str]:
    """Every module a user may import: not private, not ``__main__``, not an old name kept for one release."""
    return {name for name in modules() if not any(part.startswith("_") for part in name.split("."))}


def documented_modules() -> list[str]:
    return [name for page in DOCS.rglob("*.rst") for name in AUTOMODULE.findall(page.read_text())]


def test_every_public_module_has_a_page_and_only_one():
    documented = documented_modules()
    assert sorted(set(documented)) == sorted(public_modules())
    assert len(documented) == len(set(documented)), "a module documented twice documents its objects twice"


PACKAGES = ("mechanisms", "linear_queries", "svt", "pmw", "audit", "widgets", "checks", "classroom")


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_has_its_own_page_with_all_its_modules(package):
    page = DOCS / "api" / f"{package}.rst"
    documented = AUTOMODULE.findall(page.read_text())
    own = {
        name for name in public_modules() if name == f"dpcourse.{package}" or name.startswith(f"dpcourse.{package}.")
    }
    assert set(documented) == own


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["The error grows like ln|Q|."], [r"The error grows like ln\|Q\|."]),
        (["Absolute: |x| and ``np.abs(x) | y``."], [r"Absolute: \|x\| and ``np.abs(x) | y``."]),
        ([">>> a | b", "... | c"], [">>> a | b", "... | c"]),
        (
            ["Shown as is::", "", "    |Q| = k", "", "Back to prose, |Q|."],
            ["Shown as is::", "", "    |Q| = k", "", r"Back to prose, \|Q\|."],
        ),
    ],
)
def test_bars_are_escaped_only_in_prose(lines, expected):
    assert load_conf().escape_bars(lines) == expected


def test_numpydoc_compiles_its_template_once_and_renders_the_same(monkeypatch):
    # numpydoc compiles its template for every docstring; the build keeps the first compiled (docs/conf.py)
    from numpydoc import docscrape_sphinx

    obj = _resolve(PUBLIC_OBJECTS[0])

    def rendered():
        config = {}
        return str(docscrape_sphinx.get_doc_object(obj, config=config)), config["template"]

    text, template = rendered()
    assert rendered()[1] is not template  # numpydoc's own way: a new one each time
    monkeypatch.setattr(docscrape_sphinx, "SandboxedEnvironment", docscrape_sphinx.SandboxedEnvironment)  # restored
    load_conf()._compile_numpydoc_template_once()
    (first, kept), (second, again) = rendered(), rendered()
    assert kept is again and first == second == text


# About 50 s alone on the 2-core machine; beside a second `make test` (six workers on two cores) it passed 300 s, so
# the limits are sized for that: a hung build still fails, within 15 minutes.
@pytest.mark.timeout(900)
def test_api_reference_builds_without_warnings(tmp_path):
    # -E: read every docstring afresh; -W: any warning (docutils, numpydoc, autodoc) fails the build.
    command = [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(tmp_path)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=840)
    assert result.returncode == 0, result.stderr[-4000:]
    page = (tmp_path / "api" / "mechanisms.html").read_text()
    # A formula with bars survives as text, and the Notes section a mechanism's privacy argument lives in.
    assert "ln|Q|" in page or "ln|𝒳|" in page
    assert "Privacy." in page


# numpydoc's codes that make "documented": no docstring, an undocumented or unknown parameter, a missing
# Returns or Yields section.
REQUIRED = {"GL08", "PR01", "PR02", "RT01", "YD01"}


def public_objects() -> list[str]:
    """Import paths of every public function, class and method, each in the module that defines it."""
    found = []
    for name in sorted(public_modules()):
        if name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for attr in names:
            obj = getattr(module, attr, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != name:
                continue
            found.append(f"{name}.{attr}")
            if inspect.isclass(obj):
                found += [
                    f"{name}.{attr}.{method}"
                    for method, member in vars(obj).items()
                    if not method.startswith("_") and inspect.isfunction(member)
                ]
    return found


def _resolve(path: str):
    module_name, _, rest = path.partition(".")
    while True:
        try:
            obj = importlib.import_module(module_name)
            break
        except ModuleNotFoundError:
            head, _, rest = rest.partition(".")
            module_name = f"{module_name}.{head}"
    for part in [p for p in path[len(module_name) + 1 :].split(".") if p]:
        obj = getattr(obj, part)
    return obj


def _code_raises(obj) -> bool:
    """Whether the body raises: a ``raise`` statement or a call of a ``check_…`` validator."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    if inspect.isclass(obj) and (dataclasses.is_dataclass(obj) or "__init__" not in vars(obj)):
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
    except (OSError, TypeError):
        return False
    function = tree.body[0]
    nodes = [n for statement in function.body for n in ast.walk(statement)]
    calls = [n.func for n in nodes if isinstance(n, ast.Call)]
    named = {c.id for c in calls if isinstance(c, ast.Name)} | {c.attr for c in calls if isinstance(c, ast.Attribute)}
    return any(isinstance(n, ast.Raise) for n in nodes) or any(c.startswith("check_") for c in named)


def problems(path: str) -> list[str]:
    """What numpydoc finds missing in one object's docstring, and a missing Raises section."""
    obj = _resolve(path)
    found = [f"{code}: {message}" for code, message in validate(path)["errors"] if code in REQUIRED]
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj):
        doc = ClassDoc(obj)
        listed = {p.name.split(":")[0].strip() for p in doc["Parameters"]} | {
            p.name.split(":")[0].strip() for p in doc["Attributes"]
        }
        missing = [f.name for f in dataclasses.fields(obj) if f.init and f.name not in listed]
        found = [f for f in found if not f.startswith("PR01")] + (
            [f"PR01: fields {missing} are in neither Parameters nor Attributes"] if missing else []
        )
    if _code_raises(obj):
        doc = ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj)
        if not doc["Raises"]:
            found.append("Raises: the code raises (or calls a check_… validator) but the docstring has no Raises")
    return found


PUBLIC_OBJECTS = public_objects()


def test_public_objects_are_found():
    # every package contributes: a new package whose objects the walk misses would go unchecked
    packages = {path.split(".")[1] for path in PUBLIC_OBJECTS}
    assert {"mechanisms", "linear_queries", "svt", "pmw", "audit", "widgets", "checks", "classroom"} <= packages
    assert len(PUBLIC_OBJECTS) > 300


# numpydoc reads every member of a class: on an ipywidgets subclass (CheckboxGroup) that reads Widget's deprecated
# static properties, which warn however the class is documented.
@pytest.mark.filterwarnings(r"ignore:Widget\..* is deprecated:DeprecationWarning")
@pytest.mark.parametrize("path", PUBLIC_OBJECTS)
def test_every_public_object_is_documented_as_numpydoc_asks(path):
    assert problems(path) == []


def test_the_instructors_guide_is_the_books_pages_included_in_the_books_order():
    """docs/ shows the guide from book/instructors/: each page of docs/instructors/ is one include of its namesake,
    and docs/index.rst lists them in the order of book/_toc.yml's part "For instructors"."""
    from tests.test_book import guide_part

    book_pages = sorted((ROOT / "book" / "instructors").glob("*.md"))
    assert sorted(p.name for p in (DOCS / "instructors").iterdir()) == [p.name for p in book_pages]
    for page in book_pages:
        wrapper = (DOCS / "instructors" / page.name).read_text()
        assert wrapper == f"```{{include}} ../../book/instructors/{page.name}\n```\n", page.name
    index = (DOCS / "index.rst").read_text()
    listed = re.findall(r"^   (instructors/\S+)$", index, re.M)
    assert listed == guide_part()
    assert "myst_parser" in load_conf().extensions
