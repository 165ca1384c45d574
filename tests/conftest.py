"""Shared fixtures: a fixed-seed generator and an Agg backend for widget tests."""

import os
import shutil

import matplotlib

# This process only: an MPLBACKEND environment variable would be inherited by the kernels nbval starts
# in the same pytest-xdist worker, and their figures would no longer be displayed.
matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tests.classroom.ordinary_python import SHARED_FOLDER_ENV, shared_folder  # noqa: E402


@pytest.fixture
def rng():
    """A fixed-seed generator: every statistical test here is reproducible."""
    return np.random.default_rng(20261122)


# `make test` hands out one test file or notebook at a time to each xdist worker, in collection order
# (--no-loadscope-reorder). The longest files go first, in the order of their time in a full run on this
# 2-core machine (the website's build and reading, the browser suite's notebook runs and read-through, the
# autograder, the API reference), then the notebooks, then the many short files, which fill in: a long file
# handed out last leaves the other workers idle at the end (test_read_through.py, left out of this list, ran
# last and alone for its 134 s).
LONGEST_FIRST = (
    "test_book_in_browser.py",
    "test_workbook_in_browser.py",
    "test_read_through.py",
    "test_autograder.py",
    "test_docs.py",
    "test_auditor.py",
    "test_grade.py",
    "test_semester.py",
    "test_grading_inputs.py",
    "test_resume.py",
    "test_canvas.py",
    "test_grade_unconfined.py",
    "test_grade_kernel_faults.py",
    "test_release.py",
    "test_deploy_run.py",
    "test_grade_written.py",
    "test_marking_in_browser.py",
    "test_student_copy_in_browser.py",
    "test_packaging.py",
    "test_run_cleanup.py",
    "test_marks_in_the_gradebook.py",
    "test_binder.py",
    "test_sandbox.py",
    "test_regrade.py",
)


def _start_rank(item) -> int:
    name = item.path.name
    if name in LONGEST_FIRST:
        return LONGEST_FIRST.index(name)
    return len(LONGEST_FIRST) + (0 if item.path.suffix == ".ipynb" else 1)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_start_rank)  # stable: within a file the order is unchanged


# One readable copy of the environment for the whole run (tests/classroom/ordinary_python.py): made in the
# main process's folder by the first worker that needs it, instead of once in each xdist worker (10 s and
# 100,000 hard links each on a loaded machine, and as long again to remove). The workers inherit the variable.
_SHARED_FOLDER = pytest.StashKey[str]()


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        return  # an xdist worker: its main process's folder (a pytest run started by a test has one of its own,
        # as it may test another checkout)
    folder = str(shared_folder())
    config.stash[_SHARED_FOLDER] = folder
    os.environ[SHARED_FOLDER_ENV] = folder


def pytest_unconfigure(config):
    folder = config.stash.get(_SHARED_FOLDER, None)
    if folder is not None:
        os.environ.pop(SHARED_FOLDER_ENV, None)
        shutil.rmtree(folder, ignore_errors=True)
