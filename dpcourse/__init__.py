"""dpcourse: the package behind a Jupyter workbook on differential privacy.

The folder tree is the course's table of contents: a package per lecture topic, each module one idea.

- :mod:`dpcourse.mechanisms`: noise mechanisms and their calibration (Laplace, Gaussian, randomized
  response, the exponential mechanism, report noisy max), composition, the theory of their error, and
  measuring a mechanism over many trials (notebooks 01, 02, 06);
- :mod:`dpcourse.linear_queries`: linear queries and workloads, randomized response against Laplace,
  the reconstruction attack, strategies and the matrix mechanism (notebooks 01, 02, 03);
- :mod:`dpcourse.svt`: AboveThreshold, SparseVector and NumericSparse (batch and online), their exact
  output probabilities and proof steps, the published variants and their exact losses (notebooks 04, 05);
- :mod:`dpcourse.pmw`: Hedge, multiplicative weights, Private MW and its baselines (notebook 06);
- :mod:`dpcourse.audit`: the empirical auditor of any mechanism (notebook 05);
- :mod:`dpcourse.widgets` and :mod:`dpcourse.checks`: each notebook's panels and exercise checks, one
  module per notebook;
- :mod:`dpcourse.classroom`: the instructor's operations on top of the rest: the student copy
  (``python -m dpcourse release``), collecting, grading in a sandbox and the gradebook.

At the top sit only what every floor shares: :mod:`dpcourse.plotting` and :mod:`dpcourse.tables` (how a
figure and a table look), ``_validation`` (parameter checks), ``data`` (shipped tables) and the command
(``python -m dpcourse``).
"""

__version__ = "0.1.0"
