"""Binder, checked offline (and once against PyPI): environment.yml, postBuild and the README's launch link."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys

import pytest

from .test_environment import ROOT, conda_environment, conda_pins


def test_environment_yml_parses_and_uses_conda_forge():
    env = conda_environment()
    assert set(env) <= {"name", "channels", "dependencies", "variables", "prefix"}
    assert env["channels"] == ["conda-forge"]


def test_python_minor_version_is_pinned():
    (python,) = [d for d in conda_environment()["dependencies"] if isinstance(d, str) and d.startswith("python")]
    assert re.fullmatch(r"python=3\.\d+", python)


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
