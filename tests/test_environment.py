"""The pip pins (requirements.txt) and the Binder pins (environment.yml) must agree, and Binder must work.

The conda-forge package `matplotlib-base` is matplotlib without a GUI toolkit; it pins the same
version as pip's `matplotlib`. `python` and `pip` are conda-only entries.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CONDA_TO_PIP = {"matplotlib-base": "matplotlib"}


def pip_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


def conda_environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def conda_pins() -> dict[str, str]:
    pins = {}
    for spec in conda_environment()["dependencies"]:
        if not isinstance(spec, str) or spec.split("=")[0] in ("python", "pip"):
            continue
        name, version = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9][^=\s]*)", spec).groups()
        pins[CONDA_TO_PIP.get(name, name).lower()] = version
    return pins


def test_environment_yml_parses_and_uses_conda_forge():
    env = conda_environment()
    assert set(env) <= {"name", "channels", "dependencies", "variables", "prefix"}
    assert env["channels"] == ["conda-forge"]


def test_python_minor_version_is_pinned():
    (python,) = [d for d in conda_environment()["dependencies"] if isinstance(d, str) and d.startswith("python")]
    assert re.fullmatch(r"python=3\.\d+", python)


def test_every_pin_is_exact_and_the_same_on_both_sides():
    assert conda_pins() == pip_pins()


def test_postbuild_installs_the_package():
    post_build = ROOT / "postBuild"
    assert post_build.stat().st_mode & stat.S_IXUSR
    text = post_build.read_text()
    assert text.startswith("#!/bin/bash") and "set -euo pipefail" in text
    assert re.search(r"pip install .*-e \.", text)
    subprocess.run(["bash", "-n", str(post_build)], check=True)


def test_readme_binder_badge_points_at_a_notebook_that_exists():
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"mybinder\.org/v2/gh/[^)\s]+\?labpath=([^)\s]+)", readme)
    assert match, "the README has no Binder link"
    path = match.group(1).replace("%2F", "/")
    assert (ROOT / path).is_file(), path


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("DPCOURSE_OFFLINE") == "1", reason="needs PyPI (set DPCOURSE_OFFLINE=1 to skip)")
def test_binder_pins_resolve_together_on_pypi(tmp_path):
    # one resolver run over every pin of environment.yml, as pip specifiers
    pins = tmp_path / "binder-pins.txt"
    pins.write_text("\n".join(f"{name}=={version}" for name, version in conda_pins().items()))
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                             "--disable-pip-version-check", "-r", str(pins)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
