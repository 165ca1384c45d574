"""One source of truth for the pins: requirements.txt (Binder itself: test_binder.py).

`make` installs requirements.txt into .venv. Binder's environment.yml asks conda for Python and
pip only and has pip install `-r requirements.txt`, so the PyPI resolution test in test_binder.py
covers exactly what Binder installs. These tests fail as soon as environment.yml pins anything
itself or its pip section drifts from requirements.txt, when a pin falls outside the lower bound
pyproject.toml declares for the package, or when a test tool is pinned there and not in
requirements-test.txt.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"([A-Za-z0-9_.-]+)==([0-9][^=\s;]*)")


def requirement_lines(path: Path) -> list[str]:
    """The requirements a pip requirements file names, comments dropped and ``-r FILE`` followed."""
    lines = []
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith(("-r ", "--requirement ")):
            lines += requirement_lines(path.parent / line.split(None, 1)[1])
        elif line:
            lines.append(line)
    return lines


def pins(lines: list[str]) -> dict[str, str]:
    """Package name (lower case) → exact version; a line that is not ``name==version`` fails."""
    found = {}
    for line in lines:
        match = PIN.fullmatch(line)
        assert match, f"not an exact pin: {line!r}"
        found[match.group(1).lower()] = match.group(2)
    return found


def pip_pins() -> dict[str, str]:
    return pins(requirement_lines(ROOT / "requirements.txt"))


def conda_environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def binder_pip_section() -> list[str]:
    """The ``pip:`` entry of environment.yml, as written."""
    sections = [d["pip"] for d in conda_environment()["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, "environment.yml needs exactly one pip: section"
    return sections[0]


def binder_requirement_lines() -> list[str]:
    """Every requirement Binder's pip installs, with ``-r FILE`` followed from environment.yml's folder."""
    # conda and micromamba hand the pip section to pip as a file beside environment.yml, so a
    # `-r FILE` in it is read relative to environment.yml's folder (here the repository root)
    lines = []
    for line in binder_pip_section():
        if line.startswith(("-r ", "--requirement ")):
            lines += requirement_lines(ROOT / line.split(None, 1)[1])
        else:
            lines.append(line)
    return lines


def test_requirements_pin_every_package_exactly():
    assert len(pip_pins()) >= 10


def test_conda_installs_only_python_and_pip():
    conda = [d for d in conda_environment()["dependencies"] if not isinstance(d, dict)]
    assert sorted(d.split("=")[0] for d in conda) == ["pip", "python"], conda


def test_binder_pip_installs_requirements_txt_and_nothing_else():
    assert binder_pip_section() == ["-r requirements.txt"]
    assert pins(binder_requirement_lines()) == pip_pins()


def test_binder_python_satisfies_the_package():
    (python,) = [d for d in conda_environment()["dependencies"] if isinstance(d, str) and d.startswith("python")]
    minor = tuple(map(int, re.fullmatch(r"python=(3\.\d+)", python).group(1).split(".")))
    required = re.search(r'requires-python = ">=(3\.\d+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert minor >= tuple(map(int, required.split(".")))


TEST_TOOLS = {"pytest", "nbval", "pytest-xdist", "pytest-timeout"}


def test_requirements_txt_is_the_workbook_and_the_test_tools_are_apart():
    assert not TEST_TOOLS & set(pip_pins()), "test tools go to requirements-test.txt"
    assert TEST_TOOLS <= set(pins(requirement_lines(ROOT / "requirements-test.txt")))


def test_the_pins_satisfy_what_the_package_declares():
    # pyproject.toml gives lower bounds, requirements.txt exact versions: each pin must be allowed by the bound
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = {canonicalize_name(name): version for name, version in pip_pins().items()}
    refused = []
    for line in project["dependencies"]:
        requirement = Requirement(line)
        version = pinned.get(canonicalize_name(requirement.name))
        if version is not None and not requirement.specifier.contains(version, prereleases=True):
            refused.append(f"{requirement} does not allow the pin {version}")
    assert not refused, refused
    assert {"nbformat", "nbclient", "ipykernel", "jinja2", "pyyaml"} <= pinned.keys() & {
        canonicalize_name(Requirement(line).name) for line in project["dependencies"]
    }
