"""Binder, checked offline (and once against PyPI): environment.yml, postBuild and the README's launch link.

Binder installs with pip from requirements.txt (test_environment.py), so resolving environment.yml's
pip section on PyPI, for the Python it names, checks what Binder installs.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest

from dpcourse.classroom import release as student_copy
from tests.test_environment import ROOT, binder_requirement_lines, conda_environment


def test_environment_yml_parses_and_uses_conda_forge():
    env = conda_environment()
    assert set(env) <= {"name", "channels", "dependencies", "variables", "prefix"}
    assert env["channels"] == ["conda-forge"]


def test_python_minor_version_is_pinned():
    (python,) = [d for d in conda_environment()["dependencies"] if isinstance(d, str) and d.startswith("python")]
    assert re.fullmatch(r"python=3\.\d+", python)


def _postbuild_release_folder() -> str:
    match = re.search(r"^python -m dpcourse release (\S+)\s*$", (ROOT / "postBuild").read_text(), re.MULTILINE)
    assert match, "postBuild does not build the student copy (python -m dpcourse release FOLDER)"
    return match.group(1)


def _python_minor() -> str:
    (python,) = [d for d in conda_environment()["dependencies"] if isinstance(d, str) and d.startswith("python")]
    return python.split("=")[1]


def test_postbuild_installs_the_package_and_builds_the_student_copy():
    post_build = ROOT / "postBuild"
    assert post_build.stat().st_mode & stat.S_IXUSR
    text = post_build.read_text()
    assert text.startswith("#!/bin/bash") and "set -euo pipefail" in text
    lines = [line for line in text.splitlines() if line and not line.startswith("#") and line != "set -euo pipefail"]
    assert re.fullmatch(r"python -m pip install --no-deps -e \.", lines[0])
    assert lines[1] == f"python -m dpcourse release {_postbuild_release_folder()}"  # after the install
    subprocess.run(["bash", "-n", str(post_build)], check=True)


def test_readme_binder_badge_opens_a_notebook_of_the_student_copy(tmp_path):
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"mybinder\.org/v2/gh/[^)\s]+\?labpath=([^)\s]+)", readme)
    assert match, "the README has no Binder link"
    folder, _, name = match.group(1).replace("%2F", "/").rpartition("/")
    built = _postbuild_release_folder()
    assert folder == built, f"the badge opens {folder}/, postBuild builds {built}/"
    written = student_copy.release(ROOT / "notebooks", tmp_path / built)  # what postBuild runs
    assert tmp_path / built / name in written


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("DPCOURSE_OFFLINE") == "1", reason="needs PyPI (set DPCOURSE_OFFLINE=1 to skip)")
def test_binder_requirements_resolve_together_on_pypi(tmp_path):
    # one resolver run over exactly what Binder's pip installs, for the Python environment.yml names
    requirements = tmp_path / "binder-requirements.txt"
    requirements.write_text("\n".join(binder_requirement_lines()))
    target = (
        []
        if _python_minor() == f"{sys.version_info.major}.{sys.version_info.minor}"
        else [
            "--python-version",
            _python_minor(),
            "--only-binary=:all:",
            "--platform",
            "manylinux_2_28_x86_64",
            "--platform",
            "manylinux2014_x86_64",
            "--target",
            str(tmp_path / "target"),
        ]
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--disable-pip-version-check",
            *target,
            "-r",
            str(requirements),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_jupyterlab_news_and_update_pop_ups_are_off_for_make_lab_and_binder():
    overrides = json.loads((ROOT / "jupyter" / "overrides.json").read_text())
    assert overrides["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}
    assert "cp jupyter/overrides.json" in (ROOT / "postBuild").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "cp jupyter/overrides.json $@" in makefile and re.search(r"^lab: .*\$\(LAB_OVERRIDES\)", makefile, re.M)
