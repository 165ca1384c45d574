"""dpcourse: the package behind a Jupyter workbook on differential privacy.

Modules, one idea each:

- :mod:`dpcourse.mechanisms`: Laplace, Gaussian (classic and analytic), randomized response.
- :mod:`dpcourse.queries`: linear queries and workloads over a histogram, their sensitivities.
- :mod:`dpcourse.bounds`: the theory lines (tail bounds, error rates, sample complexity).
- :mod:`dpcourse.experiments`: empirical error over many trials, with confidence intervals.
- :mod:`dpcourse.plotting`: one colour per method, theory as lines, measurements as points.
- :mod:`dpcourse.widgets`: ipywidgets panels that redraw a figure, testable without a browser.
- :mod:`dpcourse.checks`: the check functions of the exercises.
"""

__version__ = "0.1.0"
