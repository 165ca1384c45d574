"""dpcourse: the package behind a Jupyter workbook on differential privacy.

Modules, one idea each:

- :mod:`dpcourse.mechanisms`: Laplace, Gaussian (classic and analytic), randomized response,
  the exponential mechanism and report noisy max.
- :mod:`dpcourse.queries`: linear queries and workloads over a histogram (explicit, prefix,
  all-range), their sensitivities and Gram matrices.
- :mod:`dpcourse.bounds`: the theory lines (tail bounds, error rates, sample complexity, …).
- :mod:`dpcourse.experiments`: empirical error over many trials, with confidence intervals.
- :mod:`dpcourse.query_release`: randomized response vs Laplace vs Gaussian for many queries.
- :mod:`dpcourse.reconstruction`: reconstruction from noisy subset sums (Dinur & Nissim's setting; least squares).
- :mod:`dpcourse.factorization`: strategies, the matrix mechanism, exact error, tree least squares.
- :mod:`dpcourse.svt`: AboveThreshold, SparseVector, NumericSparse (batch and online).
- :mod:`dpcourse.svt_variants`: the published SVT variants of Lyu, Su & Li (2017), and SVT-S.
- :mod:`dpcourse.exact`: exact output probabilities of AboveThreshold and the SVT variants, the
  privacy loss they imply, and the AboveThreshold proof's steps.
- :mod:`dpcourse.audit`: the empirical auditor of any mechanism (StatDP's inputs, encoded outputs,
  events chosen on selection runs and tested on fresh ones, the p-value over test ε).
- :mod:`dpcourse.audit.peer_suites`: the SVT-family test suites of StatDP, DP-Sniper and CheckDP.
- :mod:`dpcourse.pmw`: Hedge, multiplicative weights and Private MW for query release.
- :mod:`dpcourse.exponential`: the exponential mechanism exactly (pmf, privacy loss, utility) and
  the lecture's pricing example.
- :mod:`dpcourse.plotting`: one colour per method, theory as lines, measurements as points.
- :mod:`dpcourse.tables`: tables shown as HTML that fits a laptop's width, with their numbers as plain text.
- :mod:`dpcourse.widgets`: ipywidgets panels that redraw a figure, testable without a browser.
- :mod:`dpcourse.checks`: the exercises' checks: a probe in the student's kernel, a pure judge.
- :mod:`dpcourse.classroom`: the instructor's operations, on top of the rest: the students' release
  (``python -m dpcourse release``), grading in a sandbox and judging outside it, the gradebook
  (``python -m dpcourse grade``). The old names :mod:`dpcourse.student_copy`, :mod:`dpcourse.grading`,
  :mod:`dpcourse.instructor` and :mod:`dpcourse._grade_worker` re-export from it for one release.
"""

__version__ = "0.1.0"
