"""The linter and the type checker, as part of ``make test`` (issue 22).

Both read their settings from ``pyproject.toml``: ruff's rule set (pyflakes, pycodestyle errors, isort, bugbear,
pyupgrade) and its formatter, and mypy's strictness (every function annotated, bodies checked). Each runs as a
subprocess of the pinned tool in this environment, so a finding fails the test with the tool's own report.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name if (BIN / name).exists() else shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: `make test` installs it from requirements-test.txt")
    return str(path)


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)


def test_ruff_finds_nothing():
    result = _run(_tool("ruff"), "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_code_is_formatted_by_ruff():
    result = _run(_tool("ruff"), "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, "run `ruff format .`:\n" + result.stdout + result.stderr


def test_mypy_finds_nothing():
    result = _run(_tool("mypy"))  # files, strictness and the two untyped imports: [tool.mypy] in pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout
