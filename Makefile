# Two commands do everything: `make lab` opens your copy of the workbook, `make test` runs every test.
# Both build .venv from the pinned requirements on first use and reuse it afterwards
# (the stamp is rebuilt only when requirements.txt or pyproject.toml change).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ARGS   ?=
NB     ?= notebooks
# JupyterLab refuses to start as root unless told; students are never root, containers often are.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg --nbval-cell-timeout=300

# Python's own default: each module compiled once into __pycache__ (ignored by git) and read from there afterwards.
# Container images often turn it off (PYTHONDONTWRITEBYTECODE=1, as the machine measured below does); then every
# process `make test` starts (a few hundred kernels, graders and CLIs) compiles the package again and every pytest
# worker rewrites every test module's asserts again. Measured there, bare make test: 252 s with it set, 213 s without
# (500 against 423 s of CPU). Grading is unchanged: Python reads a cached module with or without the variable, and
# the sandbox mounts the package and the environment read-only, so a submission can leave none there.
unexport PYTHONDONTWRITEBYTECODE

E2E_STAMP := $(VENV)/.e2e-installed
TEST_STAMP := $(VENV)/.test-installed
# Both cores (pytest-xdist), one test file or notebook per work unit (--dist loadfile): a notebook's
# cells share one kernel, and tests/classroom/test_grade.py shares one grading run across its tests.
# (Not --dist loadgroup: with pytest 9, xdist 3.8 cannot tag the grouped tests, so groups are ignored.)
# --no-loadscope-reorder keeps the order of tests/conftest.py: the longest files first.
# --max-worker-restart=0: a worker that dies fails the run with xdist's message instead of being replaced.
XDIST      ?= -n 2 --dist loadfile --no-loadscope-reorder --max-worker-restart=0
XDIST_E2E  ?= -n 2
# `make test` runs everything in one run on three workers: the browser tests spend most of their time waiting
# for JupyterLab and Chromium (a third of a core busy on average), and a third worker fills those waits with
# unit tests. Measured warm on this 2-core machine before the grading suites of issues 27–30: 206–222 s, against 240–254 s
# for the unit tests and notebooks on two workers followed by the browser suite on two; four workers: 218 s. Today: the README
XDIST_TEST ?= -n 3 --dist loadfile --no-loadscope-reorder --max-worker-restart=0
CHROMIUM  := $(shell command -v chromium 2>/dev/null)
NPM       := $(shell command -v npm 2>/dev/null)
# The course website's environment (make book, below); defined here because `test` names them as prerequisites.
BOOK_VENV  := $(VENV)/book
BOOK_STAMP := $(BOOK_VENV)/.installed
BOOK_NPM_STAMP := book/npm/node_modules/.installed

.PHONY: help venv lab lab-solutions test test-image unit nbval e2e nbtest execute bench release clean test-grading-unconfined docs book book-with-solutions

help:
	@echo "make lab      set up .venv and open JupyterLab on your own copy of the workbook, student/ (made on"
	@echo "              first use; later runs add new notebooks and never touch one you changed)"
	@echo "              (ARGS=\"--no-browser --port 8899\")"
	@echo "make lab-solutions   instructors: open JupyterLab on the solution notebooks, notebooks/"
	@echo "make test     set up .venv and run every test: unit tests (grading round trip included), every"
	@echo "              notebook through nbval, and the browser suite when Chromium is installed"
	@echo "make test-image   the Gradescope autograder's Debian image built and graded in (root, debootstrap and"
	@echo "              buildah; minutes, so CI runs it and make test does not)"
	@echo "make nbtest NB=notebooks/01_laplace_utility.ipynb   nbval on one notebook"
	@echo "make execute NB=notebooks/01_laplace_utility.ipynb  re-run a notebook, store its outputs (NB=notebooks/*.ipynb for all)"
	@echo "make bench    run the benchmarks and rewrite benchmarks/RESULTS.md"
	@echo "make docs     build the API reference and the instructors' guide into docs/_build/html (every warning an error)"
	@echo "make book     build the course website (the students' notebooks, no answer in them, with their stored outputs,"
	@echo "              and the API reference, readable offline) into book/_build/html; the first run installs"
	@echo "              .venv/book and book/npm"
	@echo "make book-with-solutions   instructors: the same site from the solution notebooks, every answer shown,"
	@echo "              into book/with-solutions/_build/html (never publish it to students)"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# JupyterLab's settings defaults for everyone using this environment: no news pop-up over the figures on first
# start, no update check (jupyter/overrides.json; Binder's postBuild installs the same file).
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
$(LAB_OVERRIDES): jupyter/overrides.json $(STAMP)
	mkdir -p $(dir $@)
	cp jupyter/overrides.json $@

venv: $(STAMP) $(LAB_OVERRIDES)

# Students work in their own copy (git-ignored): exercises as stubs, no stored answers.
STUDENT ?= student

lab: $(STAMP) $(LAB_OVERRIDES)
	$(BIN)/python -m dpcourse release $(STUDENT) --keep-changed
	$(BIN)/jupyter lab --ServerApp.root_dir=$(STUDENT) $(ROOT_FLAG) $(ARGS)

lab-solutions: $(STAMP) $(LAB_OVERRIDES)
	$(BIN)/jupyter lab --ServerApp.root_dir=notebooks $(ROOT_FLAG) $(ARGS)

# Two test workers share two cores: one BLAS thread each (and in the kernels they start), or OpenBLAS's
# threads of one worker spin while the other holds the second core (an 800 × 200 pinv: 25 ms → 4–6 s).
test test-image unit nbval nbtest e2e test-grading-unconfined: export OPENBLAS_NUM_THREADS = 1
test test-image unit nbval nbtest e2e test-grading-unconfined: export OMP_NUM_THREADS = 1

# The unit tests, the notebooks and the browser suite in one run (the longest files first, tests/conftest.py).
# A worker that gets a browser test starts its own JupyterLab and Chromium. Without Chromium the browser tests
# are skipped, each with the reason, and Playwright is not installed.
# With Chromium and npm, the book's environment is set up too, so that the browser suite builds the course website
# offline and reads every page of it (tests/e2e/test_book_in_browser.py); without them that test is skipped.
test: $(STAMP) $(TEST_STAMP) $(LAB_OVERRIDES) $(if $(CHROMIUM),$(E2E_STAMP) $(if $(NPM),$(BOOK_STAMP) $(BOOK_NPM_STAMP)))
ifeq ($(CHROMIUM),)
	@echo "Chromium not found: browser tests skipped (apt-get install chromium to run them)"
endif
ifeq ($(NPM),)
	@echo "npm not found: the course website is not built and its browser test is skipped (apt-get install npm)"
endif
	@echo "The Gradescope image build is not part of make test: make test-image runs it (CI does)"
	$(BIN)/python -m pytest $(XDIST_TEST) $(NBVAL) -m "not image" tests notebooks

# The autograder's Debian image (tests/classroom/test_autograder_image.py): debootstrap and buildah build it, setup.sh
# runs in it and a submission is graded with only the loopback up. About five minutes and root only, so CI runs it
# (.ci/run) after make test; without root or the tools it is skipped with the reason.
test-image: $(STAMP) $(TEST_STAMP)
	$(BIN)/python -m pytest -p no:nbval -m image tests/classroom/test_autograder_image.py

$(TEST_STAMP): requirements-test.txt $(STAMP)
	$(BIN)/python -m pip install --quiet -r requirements-test.txt
	touch $(TEST_STAMP)

# The grading tests as on a machine without bubblewrap (DPCOURSE_BWRAP names a bwrap that does not exist):
# the sandboxed tests skip with the reason, the refusal and the unconfined run are tested (.ci/run runs this).
test-grading-unconfined: $(STAMP) $(TEST_STAMP)
	DPCOURSE_BWRAP=/nonexistent/bwrap $(BIN)/python -m pytest -p no:nbval $(XDIST) tests/classroom/test_grade.py tests/classroom/test_grade_unconfined.py

unit: $(STAMP) $(TEST_STAMP)
	$(BIN)/python -m pytest -p no:nbval $(XDIST) -m "not e2e" tests

nbval: $(STAMP) $(TEST_STAMP)
	$(BIN)/python -m pytest $(XDIST) $(NBVAL) notebooks

$(E2E_STAMP): requirements-e2e.txt $(STAMP)
	$(BIN)/python -m pip install --quiet -r requirements-e2e.txt
	touch $(E2E_STAMP)

# The browser suite needs Debian's Chromium (apt-get install chromium); without it, it is skipped.
e2e: $(STAMP) $(TEST_STAMP) $(LAB_OVERRIDES)
ifeq ($(CHROMIUM),)
	@echo "Chromium not found: browser tests skipped (apt-get install chromium to run them)"
else
	$(MAKE) --no-print-directory $(E2E_STAMP)
	$(BIN)/python -m pytest $(XDIST_E2E) -m e2e tests/e2e
endif

release: $(STAMP)
	$(BIN)/python -m dpcourse release $(or $(OUT),release)

nbtest: $(STAMP) $(TEST_STAMP)
	$(BIN)/python -m pytest $(NBVAL) $(NB)

execute: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.timeout=600 $(NB)

# The API reference (Sphinx, autodoc and numpydoc; docs/conf.py) and the instructors' guide (myst-parser reads
# book/instructors/*.md). -W: a docstring or page docutils, numpydoc or MyST cannot read fails the build;
# tests/test_docs.py builds it the same way in make test.
docs: $(STAMP) $(TEST_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
	@echo "open docs/_build/html/index.html"

# $(TEST_STAMP): the browser benchmark runs the browser suite with pytest.
bench: $(STAMP) $(TEST_STAMP)
	$(BIN)/python -m benchmarks

# The course website (issue 31): the student release of the notebooks (python -m dpcourse release: no solution, no
# check's verdict; issue 39) with their stored outputs (nothing is executed) and the API reference, built by
# jupyter-book 1.x into book/_build/html. book/build.py refuses a site that shows a solution line or a check's ✓.
# jupyter-book 1.x needs Sphinx 7 and `make docs` Sphinx 9, so the book has its own environment, .venv/book
# (requirements.txt + requirements-book.txt); the scripts the site serves itself (MathJax, require.js, the widget
# manager) come from npm, pinned by book/npm/package-lock.json. Both are installed on first use, like .venv.

$(BOOK_STAMP): requirements.txt requirements-book.txt pyproject.toml
	$(PYTHON) -m venv $(BOOK_VENV)
	$(BOOK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BOOK_VENV)/bin/python -m pip install --quiet -r requirements.txt -r requirements-book.txt
	$(BOOK_VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $(BOOK_STAMP)

$(BOOK_NPM_STAMP): book/npm/package.json book/npm/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "make book needs npm (apt-get install npm)" >&2; exit 1; }
	cd book/npm && npm ci --ignore-scripts --no-audit --no-fund
	touch $(BOOK_NPM_STAMP)

book: $(BOOK_STAMP) $(BOOK_NPM_STAMP)
	$(BOOK_VENV)/bin/python book/build.py

# The same site from the instructor's notebooks, every solution and check's verdict on its pages: built only on
# purpose, into a folder of its own (book/with-solutions/_build/html), never by make book or the Pages workflow.
book-with-solutions: $(BOOK_STAMP) $(BOOK_NPM_STAMP)
	$(BOOK_VENV)/bin/python book/build.py --with-solutions

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info test-artifacts docs/_build book/_build book/with-solutions book/npm/node_modules
