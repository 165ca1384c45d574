"""Notebook 06's comparison of Private MW with the Laplace baselines as n, |Q| and |X| grow.

:func:`baseline_sweeps` measures the three ε-DP releases (Private MW with Theorem 4.3's α, Laplace per query,
the noisy histogram) on the notebook's seeded data, :meth:`BaselineSweeps.show` draws them beside their bounds,
and :func:`bound_crossing` and :func:`bound_slopes` say where PMW's bound overtakes a baseline's and how each
bound grows. Every bound is at ε = 1 and β = 0.05, as in the notebook.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import LogLocator

from .. import mechanisms, pmw
from .._validation import check_choice, check_positive
from ..plotting import color_for, fast_log_axes
from ..tables import Table

__all__ = [
    "METHOD_LABELS",
    "BaselineSweeps",
    "Sweep",
    "baseline_sweeps",
    "bound_crossing",
    "bound_lines",
    "bound_slopes",
]

METHOD_LABELS = {"pmw": "Private MW", "laplace": "Laplace per query", "laplace_histogram": "noisy histogram"}
"""The three releases compared, by their key in :func:`bound_lines` and :func:`~dpcourse.plotting.color_for`."""

_FIELDS = {"pmw": "pmw", "laplace": "laplace", "laplace_histogram": "histogram"}  # ReleaseErrors' attribute
_VARIES = ("n", "num_queries", "domain_size")
_SYMBOL = {"n": "n", "num_queries": "|Q|", "domain_size": "|X|"}
_SLOPE_RANGES: dict[
    str, tuple[float, float, dict[str, float]]
] = {  # far out, where each bound's leading term dominates; the other two sizes as in the sweeps
    "n": (1e12, 1e14, {"num_queries": 400, "domain_size": 2**10}),
    "num_queries": (1e5, 1e6, {"n": 1e6, "domain_size": 2**10}),
    "domain_size": (2.0**30, 2.0**40, {"n": 1e7, "num_queries": 300}),
}


def bound_lines(n: float, num_queries: int, domain_size: int) -> dict[str, float]:
    """Each release's max-error bound at ε = 1, β = 0.05 (normalised answers).

    Parameters
    ----------
    n : float
        The number of records (> 0).
    num_queries : int
        |Q| (≥ 1).
    domain_size : int
        |X| (≥ 2).

    Returns
    -------
    dict of str to float
        ``"pmw"`` (Theorem 4.3's 11α/8), ``"pmw_slides"`` (the slides' 3α, δ = 0), ``"laplace"`` (ε/|Q| per
        query) and ``"laplace_histogram"`` (Lap(2/ε) per cell).

    Raises
    ------
    ValueError
        If a size is out of its range (the bounds' own checks).
    TypeError
        If a size has the wrong type.
    """
    d, k = domain_size, num_queries
    return {
        "pmw": pmw.pmw_notes_error_bound(n=n, epsilon=1.0, domain_size=d, num_queries=k, beta=0.05),
        "pmw_slides": pmw.pmw_dwork_roth_error_bound(n=n, epsilon=1.0, domain_size=d, num_queries=k, beta=0.05),
        "laplace": mechanisms.composed_laplace_max_error_bound(num_queries=num_queries, beta=0.05, epsilon=1.0, n=n),
        "laplace_histogram": pmw.replace_one_histogram_max_error_bound(
            domain_size=domain_size, num_queries=num_queries, beta=0.05, epsilon=1.0, n=n
        ),
    }


def _lines_along(varies: str, fixed: dict[str, float]) -> Callable[[float], dict[str, float]]:
    """``v ↦ bound_lines`` with ``varies`` set to v (an integer for |Q| and |X|) and the others ``fixed``."""

    def lines(value: float) -> dict[str, float]:
        sizes = {**fixed, varies: value if varies == "n" else int(value)}
        return bound_lines(sizes["n"], int(sizes["num_queries"]), int(sizes["domain_size"]))

    return lines


def bound_crossing(varies: str, against: str, *, lo: float, hi: float, **fixed: float) -> float:
    """The first size on a fine log grid of [lo, hi] where PMW's bound is below ``against``'s.

    Bisection over 4000 grid points (about 12 evaluations): PMW's bound is above the baseline's up to the
    crossing and below it after, on the ranges the notebook asks about.

    Parameters
    ----------
    varies : {"n", "num_queries", "domain_size"}
        The size that grows.
    against : {"laplace", "laplace_histogram"}
        The baseline.
    lo, hi : float
        The grid's ends (0 < lo < hi).
    **fixed : float
        The other two sizes, by name.

    Returns
    -------
    float
        The crossing, or NaN if PMW's bound is above the baseline's on the whole grid.

    Raises
    ------
    ValueError
        If ``varies`` or ``against`` is not one of the names above, or ``lo``, ``hi`` are not 0 < lo < hi.
    TypeError
        If ``lo`` or ``hi`` is not a number.
    """
    varies = check_choice(varies, "varies", _VARIES)
    against = check_choice(against, "against", ("laplace", "laplace_histogram"))
    lo, hi = check_positive(lo, "lo"), check_positive(hi, "hi")
    if not lo < hi:
        raise ValueError(f"lo must be below hi; got lo = {lo}, hi = {hi}")
    lines = _lines_along(varies, fixed)
    grid = np.geomspace(lo, hi, 4000)
    first = bisect.bisect_left(grid, True, key=lambda v: lines(v)["pmw"] < lines(v)[against])
    return float(grid[first]) if first < grid.size else float("nan")


def bound_slopes(method: str) -> dict[str, float]:
    """The log-log slope of ``method``'s bound in n, |Q| and |X|, each far out (five points a decade apart or so).

    Parameters
    ----------
    method : {"pmw", "laplace", "laplace_histogram"}
        The release.

    Returns
    -------
    dict of str to float
        The slope by the size's symbol: ``"n"``, ``"|Q|"``, ``"|X|"``.

    Raises
    ------
    ValueError
        If ``method`` is not one of the names above.
    """
    method = check_choice(method, "method", tuple(METHOD_LABELS))
    slopes = {}
    for varies, (lo, hi, fixed) in _SLOPE_RANGES.items():
        sizes, lines = np.geomspace(lo, hi, 5), _lines_along(varies, fixed)
        slopes[_SYMBOL[varies]] = mechanisms.log_log_slope(sizes, [lines(v)[method] for v in sizes])
    return slopes


@dataclass(frozen=True)
class Sweep:
    """The three releases' measured max errors along one size.

    Attributes
    ----------
    varies : str
        The size that grows: ``"n"``, ``"num_queries"`` or ``"domain_size"``.
    grid : numpy.ndarray
        Its values.
    results : tuple of ReleaseErrors
        One :class:`~dpcourse.pmw.ReleaseErrors` per value.
    fixed : dict of str to float
        The other two sizes.
    """

    varies: str
    grid: np.ndarray
    results: tuple[pmw.ReleaseErrors, ...]
    fixed: dict[str, float]

    @property
    def label(self) -> str:
        """The size's name in the table's first column: ``n``, ``|Q|`` or ``log2|X|``."""
        return {"n": "n", "num_queries": "|Q|", "domain_size": "log2|X|"}[self.varies]

    def table(self) -> Table:
        """Max |error| of each release, PMW's α and the queries it answered, one row per value.

        Returns
        -------
        Table
            Captioned "max |error| as <size> grows"; |X| is shown as log2|X|.
        """
        shown = np.log2(self.grid) if self.varies == "domain_size" else self.grid
        rows = [
            [f"{g:.3g}", r.pmw, r.laplace, r.histogram, r.alpha, r.pmw_answered]
            for g, r in zip(shown, self.results, strict=True)
        ]
        return Table(
            [self.label, "PMW", "Laplace per query", "noisy histogram", "α", "answered"],
            rows,
            caption=f"max |error| as {self.label} grows",
        )


@dataclass(frozen=True)
class BaselineSweeps:
    """The three sweeps of the notebook: along n, |Q| and |X|.

    Attributes
    ----------
    sweeps : tuple of Sweep
        Along n, then |Q|, then |X|.
    """

    sweeps: tuple[Sweep, Sweep, Sweep]

    def tables(self) -> tuple[Table, ...]:
        """One table per sweep.

        Returns
        -------
        tuple of Table
            Along n, |Q| and |X| (:meth:`Sweep.table`).
        """
        return tuple(s.table() for s in self.sweeps)

    def show(self) -> None:
        """Measured max errors (points) and bounds (lines) along each size; the legend in the fourth panel."""
        _, axes = plt.subplots(2, 2, figsize=(11, 7.2), gridspec_kw={"wspace": 0.25, "hspace": 0.42})
        fine_ends = {"n": (1e4, 1e14), "num_queries": (10, 1e6), "domain_size": (16, 2.0**40)}
        for ax, sweep in zip(axes.flat, self.sweeps, strict=False):
            fine = np.geomspace(*fine_ends[sweep.varies], 30)
            theory = [_lines_along(sweep.varies, sweep.fixed)(v) for v in fine]
            for method, name in METHOD_LABELS.items():
                measured = [getattr(r, _FIELDS[method]) for r in sweep.results]
                ax.plot(sweep.grid, measured, "o", color=color_for(method), label=f"{name} (measured)")
                ax.plot(
                    fine, [t[method] for t in theory], "-", lw=1.4, color=color_for(method), label=f"{name} (bound)"
                )
            ax.plot(
                fine,
                [t["pmw_slides"] for t in theory],
                "--",
                lw=1.2,
                color=color_for("pmw"),
                label="PMW, slides' 3α (δ = 0)",
            )
            fast_log_axes(ax)
            for axis in (ax.xaxis, ax.yaxis):
                axis.set_major_locator(LogLocator(numticks=5))  # a label every few decades is enough to read
            symbol = _SYMBOL[sweep.varies]
            others = ", ".join(f"{_SYMBOL[k]} = {_power(v)}" for k, v in sweep.fixed.items())
            ax.set(
                xlabel=f"{symbol} ({others})",
                ylabel="max |error| over the stream",
                ylim=(1e-9, 1e2),
                title=f"error as {symbol} grows",
            )
        axes[1, 1].axis("off")
        axes[1, 1].legend(*axes[0, 0].get_legend_handles_labels(), loc="center")
        plt.show()


def _power(value: float) -> str:
    """10⁶ or 2¹⁰ for a power of ten or two, else the number."""
    superscript = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
    for base in (10, 2):
        exponent = round(float(np.log(value) / np.log(base)))
        if exponent > 1 and base**exponent == value:
            return f"{base}{str(exponent).translate(superscript)}"
    return f"{value:g}"


def baseline_sweeps() -> BaselineSweeps:
    """Measure the three releases as n, |Q| and |X| grow, on the notebook's seeded data (ε = 1).

    Along n: 400 two-way marginals over |X| = 2¹⁰, n from 10⁴ to 10¹⁰. Along |Q|: n = 10⁶, |X| = 2¹⁰, |Q| from
    10 to 3000. Along |X|: n = 10⁷, 300 queries, |X| from 2⁴ to 2¹⁶. Each release is scored on every query
    (:func:`~dpcourse.pmw.release_errors`).

    Returns
    -------
    BaselineSweeps
        The three sweeps.
    """
    base = pmw.product_histogram(10**9, 10, rng=5) / 10**9
    small_stream = pmw.conjunction_workload(400, 10, width=2, rng=6)
    small_truth = small_stream.answers(base)
    n_grid = np.geomspace(1e4, 1e10, 7)
    by_n = tuple(pmw.release_errors(base * n, small_stream, epsilon=1.0, rng=7, truth=small_truth) for n in n_grid)
    k_grid = np.array([10, 30, 100, 300, 1000, 3000])
    by_k = tuple(
        pmw.release_errors(base * 1e6, pmw.conjunction_workload(int(k), 10, width=2, rng=8), epsilon=1.0, rng=9)
        for k in k_grid
    )
    bits = np.array([4, 6, 8, 10, 12, 14, 16])
    by_d = tuple(
        pmw.release_errors(
            pmw.product_histogram(10**7, int(b), rng=10),
            pmw.conjunction_workload(300, int(b), rng=11),
            epsilon=1.0,
            rng=12,
        )
        for b in bits
    )
    return BaselineSweeps(
        (
            Sweep("n", n_grid, by_n, {"num_queries": 400, "domain_size": 2**10}),
            Sweep("num_queries", k_grid, by_k, {"n": 1e6, "domain_size": 2**10}),
            Sweep("domain_size", 2.0**bits, by_d, {"n": 1e7, "num_queries": 300}),
        )
    )
