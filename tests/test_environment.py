"""The pip pins (requirements.txt) and the Binder pins (environment.yml) must agree (Binder itself: test_binder.py).

The conda-forge package `matplotlib-base` is matplotlib without a GUI toolkit; it pins the same
version as pip's `matplotlib`. `python` and `pip` are conda-only entries.
"""

from __future__ import annotations

import re
from pathlib import Path

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


def test_every_pin_is_exact_and_the_same_on_both_sides():
    assert conda_pins() == pip_pins()
