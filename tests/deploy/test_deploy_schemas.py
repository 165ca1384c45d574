"""The deploy/ recipes against the platforms' own schemas, offline: the Kubernetes Job with kubernetes-validate
(the schemas it ships, strict: no unknown field), the workflow with check-jsonschema's vendored GitHub
workflow schema. Both tools are pinned in requirements-test.txt and run from .venv/bin; where this process
may make a network namespace (root, as in CI) they run without any network, which proves they need none.
Each validator is also shown a broken copy, which it must refuse.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"
JOB = ROOT / "deploy" / "kubernetes" / "grade-job.yaml"
WORKFLOW = ROOT / "deploy" / "github" / "grade.yml"
# backoffLimitPerIndex: alpha in 1.28 (the oldest the Job supports), on by default from 1.29, GA in 1.33;
# 1.37 is the newest that kubernetes-validate 1.37.0 ships.
KUBERNETES_VERSIONS = ["1.28.0", "1.29.0", "1.33.0", "1.37.0"]


@functools.cache
def offline() -> list[str]:
    """A prefix that runs a command without any network, where this process may make a network namespace."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        return []
    probe = subprocess.run([unshare, "--net", "true"], capture_output=True, check=False, timeout=30)
    return [unshare, "--net"] if probe.returncode == 0 else []


def validate(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [*offline(), str(BIN / tool), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)


def kubernetes_validate(path: Path, version: str) -> subprocess.CompletedProcess[str]:
    return validate("kubernetes-validate", "--strict", "--kubernetes-version", version, str(path))


def check_workflow(path: Path) -> subprocess.CompletedProcess[str]:
    return validate("check-jsonschema", "--builtin-schema", "vendor.github-workflows", str(path))


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_the_kubernetes_recipe_is_valid_for_every_supported_version(version):
    done = kubernetes_validate(JOB, version)
    assert done.returncode == 0, done.stdout + done.stderr
    checked = [line for line in done.stdout.splitlines() if line.startswith("INFO") and "passed" in line]
    assert len(checked) == 3, done.stdout  # the two Jobs and the NetworkPolicy


def test_kubernetes_validate_refuses_an_unknown_field(tmp_path):
    broken = tmp_path / "grade-job.yaml"
    broken.write_text(JOB.read_text().replace("backoffLimitPerIndex:", "backoffLimitPerIdx:"))
    done = kubernetes_validate(broken, KUBERNETES_VERSIONS[0])
    assert done.returncode != 0 and "backoffLimitPerIdx" in done.stdout + done.stderr


@pytest.mark.parametrize("path", [WORKFLOW, WORKFLOW.with_name("pages.yml")], ids=lambda path: path.name)
def test_the_github_workflow_is_valid(path):
    done = check_workflow(path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_jsonschema_refuses_a_job_without_a_runner(tmp_path):
    broken = tmp_path / "grade.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on:", "runs-onn:"))
    done = check_workflow(broken)
    assert done.returncode != 0 and "runs-on" in done.stdout + done.stderr
