"""The package as the ecosystem expects it: its metadata declares what it imports, a ``dpcourse`` command with
``--version``, a licence file, and a clean install from the source tree that runs the command.

The dependencies are checked offline, by reading every import of the package with ``ast``; the install (once
against PyPI) goes into an empty virtual environment, so what ``pyproject.toml`` declares must be enough.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import dpcourse
from dpcourse.__main__ import main

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dpcourse"


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def declared() -> set[str]:
    """The distributions ``[project.dependencies]`` and the ``canvas`` extra name, canonicalised (``PyYAML`` →
    ``pyyaml``). The extra's are imported only inside ``dpcourse canvas``'s functions, which name the extra when
    they are missing (the clean install below imports every module without them)."""
    lines = [*project()["dependencies"], *project()["optional-dependencies"]["canvas"]]
    return {canonicalize_name(Requirement(line).name) for line in lines}


def imported_modules(package: Path = PACKAGE) -> dict[str, str]:
    """Every top-level module the package imports from outside itself and the standard library → one place.

    Absolute imports anywhere in a file count, inside functions and ``try`` blocks too: a guarded import is
    still what that code needs.
    """
    found: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != package.name and top not in sys.stdlib_module_names:
                    found.setdefault(top, f"{path.relative_to(package.parent)}:{node.lineno}")
    return found


def undeclared(modules: dict[str, str], dependencies: set[str], distributions: dict[str, list[str]]) -> list[str]:
    """The imported modules that no declared distribution provides, each with where it is imported."""
    missing = []
    for module, where in sorted(modules.items()):
        providers = {canonicalize_name(d) for d in distributions.get(module, [])}
        if not providers & dependencies:
            names = ", ".join(sorted(providers)) or "no installed distribution"
            missing.append(f"{module} ({where}; from {names})")
    return missing


def test_every_third_party_import_is_a_declared_dependency():
    missing = undeclared(imported_modules(), declared(), packages_distributions())
    assert not missing, "add to [project.dependencies] in pyproject.toml: " + "; ".join(missing)


def test_the_import_check_catches_a_missing_dependency():
    modules = imported_modules()
    assert {"numpy", "nbformat", "yaml"} <= set(modules) and "argparse" not in modules and "dpcourse" not in modules
    without = declared() - {"nbformat", "pyyaml"}
    missing = undeclared(modules, without, packages_distributions())
    assert [m.split(" ")[0] for m in missing] == ["nbformat", "yaml"]
    assert "dpcourse/classroom/" in missing[0] and "from pyyaml" in missing[1]


def test_the_version_is_written_once_in_pyproject_and_the_package_agrees():
    assert dpcourse.__version__ == project()["version"]


def test_the_command_is_a_console_script_with_a_version(capsys):
    assert project()["scripts"] == {"dpcourse": "dpcourse.__main__:main"}
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"dpcourse {project()['version']}\n"


def test_the_licence_file_is_the_licence_the_metadata_names():
    assert project()["license"] == "MIT" and project()["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the dpcourse authors\n\nPermission is hereby granted")
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


# --- a clean install ------------------------------------------------------------------------------------------


def _build_inputs(into: Path) -> Path:
    """A copy of what the build reads (pyproject.toml, the readme, the licence, the package), so that the
    build's own ``build/`` and ``*.egg-info`` land in the copy and not in the checkout other tests read."""
    into.mkdir()
    for name in ("pyproject.toml", project()["readme"], *project()["license-files"]):
        shutil.copy2(ROOT / name, into / name)
    shutil.copytree(PACKAGE, into / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return into


def _run(command: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    # nothing of this environment leaks in: no PYTHONPATH, and a working folder without the package in it
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return subprocess.run(
        command, cwd=cwd, env={**env, "MPLBACKEND": "Agg"}, capture_output=True, text=True, timeout=timeout
    )


def _dependency_key() -> str:
    """What decides the environment's contents besides the package itself: the declared dependencies, the build
    requirements and this Python."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared_now = sorted(pyproject["project"]["dependencies"]) + sorted(pyproject["build-system"]["requires"])
    return hashlib.sha256(json.dumps([declared_now, sys.version]).encode()).hexdigest()[:16]


@contextlib.contextmanager
def _environment_with_the_declared_dependencies(scratch: Path) -> Iterator[Path]:
    """A virtual environment that holds the declared dependencies and nothing else, locked while it is used.

    Made from nothing (``venv``, then ``pip install`` of the source tree with its dependencies) the first time for
    a given :func:`_dependency_key`, and kept beside ``.venv`` so that a warm ``make test`` does not download and
    unpack NumPy, SciPy and Matplotlib again: a change to the declared dependencies, or another Python, makes a new
    one. It never holds anything the declarations did not bring in, so an undeclared import still fails in it.
    Without ``.venv`` (tests run from another environment) it is made in ``scratch`` and thrown away.
    """
    home = ROOT / ".venv" / "packaging-check"
    if not (ROOT / ".venv").is_dir():
        home = scratch / "packaging-check"
    home.mkdir(parents=True, exist_ok=True)
    with open(home / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second make test here waits for a half-made one
        venv = home / _dependency_key()
        if not (venv / "complete").exists():
            for stale in home.iterdir():
                if stale.is_dir():
                    shutil.rmtree(stale)
            made = _run([sys.executable, "-m", "venv", str(venv)], scratch, 300)
            assert made.returncode == 0, made.stderr[-2000:]
        yield venv


# A fresh environment, a wheel built from the source tree and every dependency from PyPI (or pip's cache): about
# 40 s with the cache warm, 2 minutes without it, more on a busy machine; a few seconds when the environment with the
# declared dependencies is kept from an earlier run (only the package is installed again, and `pip check` confirms
# that what it declares is there).
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(os.environ.get("DPCOURSE_OFFLINE") == "1", reason="needs PyPI (set DPCOURSE_OFFLINE=1 to skip)")
def test_a_clean_install_has_the_command_and_what_the_package_imports(tmp_path):
    source = _build_inputs(tmp_path / "source")
    with _environment_with_the_declared_dependencies(tmp_path) as venv:
        _check_a_clean_install(source, venv, tmp_path)


def _check_a_clean_install(source: Path, venv: Path, tmp_path: Path) -> None:
    python, script = str(venv / "bin" / "python"), str(venv / "bin" / "dpcourse")
    kept = (venv / "complete").exists()
    again = ["--no-deps", "--force-reinstall"] if kept else []
    installed = _run([python, "-m", "pip", "install", "--quiet", "--no-input", *again, str(source)], tmp_path, 780)
    assert installed.returncode == 0, installed.stderr[-3000:]
    checked = _run([python, "-m", "pip", "check"], tmp_path, 120)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # every declared dependency is installed
    (venv / "complete").touch()

    for command in ([script, "--help"], [python, "-m", "dpcourse", "--help"]):
        helped = _run(command, tmp_path, 120)
        assert helped.returncode == 0 and "{release,collect,grade,gradescope,feedback,canvas,mark}" in helped.stdout, (
            helped.stderr
        )
    version = _run([script, "--version"], tmp_path, 120)
    assert (version.returncode, version.stdout) == (0, f"dpcourse {project()['version']}\n"), version.stderr

    # every module of the library and the classroom imports with only the declared dependencies installed
    imports = _run(
        [
            python,
            "-c",
            "import pkgutil, dpcourse; "
            "names = [m.name for m in pkgutil.walk_packages(dpcourse.__path__, 'dpcourse.') "
            "if not m.name.endswith('__main__')]; "
            "[__import__(n) for n in names]; print(dpcourse.__file__, len(names))",
        ],
        tmp_path,
        300,
    )
    assert imports.returncode == 0, imports.stderr[-3000:]
    where, count = imports.stdout.split()
    assert Path(where).is_relative_to(venv) and int(count) > 50

    # a course file's time zone is found with the system's time-zone database hidden, as on Windows or a slim image
    zone = _run(
        [
            python,
            "-c",
            "import zoneinfo; zoneinfo.reset_tzpath([]); "
            "from dpcourse.classroom.validation import time_zone; print(time_zone('America/New_York').key)",
        ],
        tmp_path,
        120,
    )
    assert (zone.returncode, zone.stdout) == (0, "America/New_York\n"), zone.stderr[-2000:]

    # an installed package has no notebooks/ beside it: the command says which option to pass, in one line
    graded = _run([script, "grade", "submission.ipynb", "--report", "grades.csv"], tmp_path, 120)
    assert graded.returncode == 2 and graded.stdout == "", graded.stderr
    assert graded.stderr.count("\n") == 1 and "pass --source PATH/TO/notebooks" in graded.stderr, graded.stderr
