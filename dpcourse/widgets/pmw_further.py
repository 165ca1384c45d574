"""Figures and studies of notebook 06's *Going further* part: Hedge against any distribution, an η tuned for
the wrong number of rounds, and advanced composition against the exact composition of randomized response.

As in :mod:`dpcourse.widgets.pmw_figures`, each ``show`` draws one figure with pyplot, shows it and returns
nothing; each study holds what it measured and gives its table.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from .. import mechanisms, pmw, svt
from .._validation import check_array, check_epsilon, check_integer, check_probability
from ..plotting import color_for, fast_log_axes, few_ticks, plot_theory
from ..tables import Table

__all__ = [
    "DworkRothRuns",
    "LaplaceBaselines",
    "CompositionStudy",
    "EtaStudy",
    "composition_by_k",
    "dwork_roth_runs",
    "laplace_baselines",
    "eta_for_the_wrong_horizon",
    "show_regret_against_distributions",
]


def show_regret_against_distributions(regret: np.ndarray, *, best: float, bound: float) -> None:
    """A histogram of Hedge's regret against many distributions p, beside the best expert's and Corollary 4.2's.

    Parameters
    ----------
    regret : numpy.ndarray
        Σₜ xₜ·ℓₜ − Σₜ p·ℓₜ for each p (:meth:`~dpcourse.pmw.HedgeResult.regret_against`).
    best : float
        The regret against the best expert.
    bound : float
        2√(T ln N).

    Raises
    ------
    ValueError
        If ``regret`` is empty or holds a value that is not finite.
    TypeError
        If ``regret`` is not an array of numbers.
    """
    regret = check_array(regret, "regret", ndim=1)
    _, ax = plt.subplots(figsize=(7, 3.4))
    ax.hist(
        regret, bins=60, histtype="stepfilled", color=color_for("pmw"), alpha=0.7, label="regret against each random p"
    )
    ax.axvline(best, color=color_for("exact"), label=f"against the best expert: {best:.4g}")
    ax.axvline(bound, color=color_for("bound"), ls="--", label=f"2√(T ln N) = {bound:.4g} (Corollary 4.2)")
    ax.set(xlabel="Σₜ xₜ·ℓₜ − Σₜ p·ℓₜ", ylabel="distributions p", title="Competing with any distribution p")
    ax.legend(loc="upper left")
    few_ticks(ax, 4)
    plt.show()


@dataclass(frozen=True)
class EtaStudy:
    """Hedge's regret on two experts, one always right, with η tuned for the true T and for a fixed T₀.

    Attributes
    ----------
    horizons : numpy.ndarray of int
        The numbers of rounds T.
    tuned : numpy.ndarray
        The regret with η = √(ln 2/T).
    fixed : numpy.ndarray
        The regret with η = √(ln 2/T₀).
    bound : numpy.ndarray
        2√(T ln 2).
    tuned_for : int
        T₀.
    """

    horizons: np.ndarray
    tuned: np.ndarray
    fixed: np.ndarray
    bound: np.ndarray
    tuned_for: int

    def show(self) -> None:
        """Both regrets against T, with 2√(T ln N), on log axes."""
        _, ax = plt.subplots(figsize=(7, 3.6))
        t0 = _power_of_ten(self.tuned_for)
        ax.plot(self.horizons, self.tuned, "o-", color=color_for("pmw"), label="η tuned for the true T")
        ax.plot(self.horizons, self.fixed, "s-", color=color_for("laplace"), label=f"η tuned for T₀ = {t0}")
        plot_theory(ax, self.horizons, self.bound, label="2√(T ln N)")
        fast_log_axes(ax)
        ax.set(xlabel="rounds T", ylabel="regret", title="2√(T ln N) needs η chosen for the right T")
        ax.legend()
        plt.show()

    def table(self) -> Table:
        """T, both regrets and 2√(T ln N).

        Returns
        -------
        Table
            One row per T, captioned "Two experts, one always right".
        """
        t0 = _power_of_ten(self.tuned_for)
        return Table(
            ["T", "regret, η for the true T", f"regret, η for T₀ = {t0}", "2√(T ln N)"],
            list(zip(self.horizons, self.tuned, self.fixed, self.bound, strict=True)),
            caption="Two experts, one always right",
        )


def _power_of_ten(value: int) -> str:
    """10⁴ for 10000; any other number as it is."""
    exponent = round(float(np.log10(value)))
    if 10**exponent != value:
        return str(value)
    return "10" + str(exponent).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def eta_for_the_wrong_horizon(horizons: np.ndarray, *, tuned_for: int) -> EtaStudy:
    """Run Hedge on two experts (expert 1 always right) for each T, with η tuned for T and for ``tuned_for``.

    Parameters
    ----------
    horizons : numpy.ndarray of int
        The numbers of rounds, each ≥ 1.
    tuned_for : int
        T₀, the horizon the fixed η is tuned for (≥ 1).

    Returns
    -------
    EtaStudy
        Both regrets and 2√(T ln 2) at each T.

    Raises
    ------
    ValueError
        If a horizon or ``tuned_for`` is below 1.
    TypeError
        If they are not integers.
    """
    horizons = np.array([check_integer(h, "horizons", minimum=1) for h in np.asarray(horizons).ravel()])
    tuned_for = check_integer(tuned_for, "tuned_for", minimum=1)
    two_experts = np.tile([1.0, 0.0], (horizons.max(), 1))  # expert 1 is always right
    tuned = [pmw.hedge(two_experts[:h], eta=np.sqrt(np.log(2) / h)).regret for h in horizons]
    fixed = [pmw.hedge(two_experts[:h], eta=np.sqrt(np.log(2) / tuned_for)).regret for h in horizons]
    return EtaStudy(horizons, np.array(tuned), np.array(fixed), 2 * np.sqrt(horizons * np.log(2)), tuned_for)


@dataclass(frozen=True)
class CompositionStudy:
    """k mechanisms, each ε₀-DP: the total ε at one δ by basic composition, advanced composition and exactly.

    Attributes
    ----------
    k : numpy.ndarray of int
        The numbers of mechanisms.
    basic : numpy.ndarray
        kε₀.
    advanced : numpy.ndarray
        ε₀√(2k ln(1/δ)) + kε₀(e^ε₀ − 1) (Dwork & Roth, Theorem 3.20).
    exact : numpy.ndarray
        The least ε at which the k-fold composition of ε₀-randomized response is (ε, δ)-DP (the worst case).
    delta_at_advanced : numpy.ndarray
        The exact δ at the advanced ε (at most δ where the theorem holds).
    epsilon0 : float
        ε₀.
    delta : float
        δ.
    """

    k: np.ndarray
    basic: np.ndarray
    advanced: np.ndarray
    exact: np.ndarray
    delta_at_advanced: np.ndarray
    epsilon0: float
    delta: float

    def looseness(self, *, from_k: int) -> np.ndarray:
        """advanced/exact − 1 for every k ≥ ``from_k``.

        Parameters
        ----------
        from_k : int
            The least k to report.

        Returns
        -------
        numpy.ndarray
            How much looser advanced composition is than the exact total, for each k ≥ ``from_k``.
        """
        at = self.k >= from_k
        return self.advanced[at] / self.exact[at] - 1

    def show(self) -> None:
        """The three totals against k, on log axes."""
        _, ax = plt.subplots(figsize=(7, 3.6))
        plot_theory(ax, self.k, self.basic, label="basic: kε₀", style=":")
        plot_theory(ax, self.k, self.advanced, label="advanced: ε₀√(2k ln(1/δ)) + kε₀(e^ε₀ − 1)")
        ax.plot(
            self.k, self.exact, "o", color=color_for("exact"), label="exact, worst case (k-fold randomized response)"
        )
        fast_log_axes(ax)
        ax.set(
            xlabel=f"k mechanisms, each ε₀ = {self.epsilon0:g}",
            ylabel=f"total ε at δ = {self.delta:g}",
            title="Advanced composition, checked",
        )
        ax.legend()
        plt.show()

    def table(self) -> Table:
        """k, the three totals and the exact δ at the advanced ε.

        Returns
        -------
        Table
            One row per k, captioned with δ.
        """
        rows = [
            [k, b, a, e, f"{d:.1e}"]
            for k, b, a, e, d in zip(self.k, self.basic, self.advanced, self.exact, self.delta_at_advanced, strict=True)
        ]
        return Table(
            ["k", "basic", "advanced", "exact", "exact δ at the advanced ε"],
            rows,
            caption=f"total ε at δ = {self.delta:g}",
        )


def composition_by_k(k: np.ndarray, *, epsilon0: float, delta: float) -> CompositionStudy:
    """Compose k ε₀-DP mechanisms for each k: basic, advanced and exact (Kairouz, Oh & Viswanath 2015).

    Parameters
    ----------
    k : numpy.ndarray of int
        The numbers of mechanisms, each ≥ 1.
    epsilon0 : float
        Each mechanism's ε₀ (> 0).
    delta : float
        The δ of the total, in (0, 1).

    Returns
    -------
    CompositionStudy
        The three totals and the exact δ at the advanced ε.

    Raises
    ------
    ValueError
        If a k is below 1, ``epsilon0`` is not > 0 or ``delta`` is not in (0, 1).
    TypeError
        If a parameter has the wrong type.
    """
    k = np.array([check_integer(kk, "k", minimum=1) for kk in np.asarray(k).ravel()])
    epsilon0, delta = check_epsilon(epsilon0, "epsilon0"), check_probability(delta, "delta")
    advanced = np.array(
        [mechanisms.advanced_composition_epsilon(epsilon0=epsilon0, k=int(kk), delta=delta) for kk in k]
    )
    exact = np.array([mechanisms.optimal_composition_epsilon(delta, epsilon0=epsilon0, k=int(kk)) for kk in k])
    delta_at = np.array(
        [
            mechanisms.optimal_composition_delta(a, epsilon0=epsilon0, k=int(kk))
            for a, kk in zip(advanced, k, strict=True)
        ]
    )
    return CompositionStudy(k, k * epsilon0, advanced, exact, delta_at, epsilon0, delta)


@dataclass(frozen=True)
class DworkRothRuns:
    """The slides' Private MW (``calibration="dwork_roth"``) on one stream, at each δ.

    Attributes
    ----------
    deltas : tuple of float
        The δ of each run.
    alphas : tuple of float
        The least α of Theorem 4.14 (δ = 0) or 4.15 (δ > 0) at each δ.
    max_errors : tuple of float
        Each run's max |error| over the stream.
    guaranteed : tuple of float
        3α.
    updates : tuple of int
        The updates each run made.
    caps : tuple of int
        c, the updates NumericSparse pays for.
    release_ratio : tuple of float
        The released values' Laplace noise at its β-level, over α (above 1: Theorem 4.15's update count is not
        covered as stated).
    """

    deltas: tuple[float, ...]
    alphas: tuple[float, ...]
    max_errors: tuple[float, ...]
    guaranteed: tuple[float, ...]
    updates: tuple[int, ...]
    caps: tuple[int, ...]
    release_ratio: tuple[float, ...]

    def max_error(self, delta: float) -> float:
        """The max |error| of the run at ``delta``.

        Parameters
        ----------
        delta : float
            One of :attr:`deltas`.

        Returns
        -------
        float
            That run's max |error|.

        Raises
        ------
        ValueError
            If no run had that δ.
        """
        if delta not in self.deltas:
            raise ValueError(f"delta must be one of {self.deltas}; got {delta!r}")
        return self.max_errors[self.deltas.index(delta)]

    def table(self) -> Table:
        """δ, α, max error, 3α, updates, c and the release-noise level over α, one row per δ.

        Returns
        -------
        Table
            Captioned with the guarantee of the whole run.
        """
        rows = [
            [f"{d:g}", a, e, g, u, c, r]
            for d, a, e, g, u, c, r in zip(
                self.deltas,
                self.alphas,
                self.max_errors,
                self.guaranteed,
                self.updates,
                self.caps,
                self.release_ratio,
                strict=True,
            )
        ]
        return Table(
            ["δ", "α", "max error", "3α", "updates", "c", "release-noise level / α"],
            rows,
            caption="Dwork & Roth's OnlineMW on the stream of §3; the guarantee is (ε, δ) = (1, δ) for the whole run",
        )


def dwork_roth_runs(
    histogram: np.ndarray,
    stream: pmw.ConjunctionWorkload,
    truth: np.ndarray,
    *,
    epsilon: float,
    beta: float,
    deltas: tuple[float, ...],
    rng: int,
) -> DworkRothRuns:
    """Run the slides' Private MW on ``stream`` at each δ, with the least α its theorem admits.

    Parameters
    ----------
    histogram : numpy.ndarray
        The data's counts over the universe.
    stream : ConjunctionWorkload
        The queries, in order.
    truth : numpy.ndarray
        Their true (normalised) answers.
    epsilon : float
        ε (> 0).
    beta : float
        β, in (0, 1).
    deltas : tuple of float
        The δ of each run (0 or in (0, 1)).
    rng : int
        The seed of every run.

    Returns
    -------
    DworkRothRuns
        What each run did.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``beta`` is out of range, or as :class:`~dpcourse.pmw.PrivateMW` raises.
    """
    epsilon, beta = check_epsilon(epsilon), check_probability(beta, "beta")
    n, k, d = float(histogram.sum()), len(stream), histogram.size
    columns: list[list] = [[] for _ in range(6)]
    for delta in deltas:
        alpha = pmw.pmw_dwork_roth_alpha(n=n, epsilon=epsilon, domain_size=d, num_queries=k, beta=beta, delta=delta)
        run = pmw.PrivateMW(
            histogram,
            epsilon=epsilon,
            alpha=alpha,
            beta=beta,
            delta=delta,
            max_queries=k,
            calibration="dwork_roth",
            rng=rng,
        )
        error = float(np.abs(pmw.run_stream(run, stream) - truth).max())
        release = svt.numeric_sparse_accuracy_bound(
            num_queries=2 * k,
            c=run.max_updates,
            beta=beta,
            epsilon=epsilon,
            delta=delta,
            sensitivity=1 / n,
            part="values",
        )
        for column, value in zip(
            columns, (alpha, error, run.guaranteed_error, run.updates, run.max_updates, release / alpha), strict=True
        ):
            column.append(value)
    return DworkRothRuns(tuple(deltas), *(tuple(column) for column in columns))


@dataclass(frozen=True)
class LaplaceBaselines:
    """Laplace per query on one stream by basic and by advanced composition, with their bounds and PMW's.

    Attributes
    ----------
    epsilon_per_query : tuple of float
        ε₀ by basic composition (ε/|Q|), then by advanced composition at δ.
    max_errors : tuple of float
        Their max |error| over the stream (the same standard noise, rescaled).
    bounds : dict of str to float
        At β: ``"basic"``, ``"advanced"`` and ``"pmw"`` (the slides' 3α at δ).
    crossing : float
        The first |Q| on a log grid of [10³, 10¹⁴] where PMW's bound is below the advanced-composition one.
    delta : float
        δ.
    """

    epsilon_per_query: tuple[float, float]
    max_errors: tuple[float, float]
    bounds: dict[str, float]
    crossing: float
    delta: float


def laplace_baselines(
    histogram: np.ndarray,
    stream: pmw.ConjunctionWorkload,
    truth: np.ndarray,
    *,
    epsilon: float,
    beta: float,
    delta: float,
    rng: int,
) -> LaplaceBaselines:
    """Answer ``stream`` with Laplace per query (basic, then advanced composition) and compare the bounds.

    Parameters
    ----------
    histogram : numpy.ndarray
        The data's counts over the universe.
    stream : ConjunctionWorkload
        The queries, in order.
    truth : numpy.ndarray
        Their true (normalised) answers.
    epsilon : float
        ε (> 0).
    beta : float
        β of the bounds, in (0, 1).
    delta : float
        δ of advanced composition and of PMW's bound, in (0, 1).
    rng : int
        The seed of both baselines (the same standard noise).

    Returns
    -------
    LaplaceBaselines
        Both baselines' ε₀ and max errors, the three bounds, and where PMW's overtakes advanced composition's.

    Raises
    ------
    ValueError
        If ``epsilon``, ``beta`` or ``delta`` is out of range.
    """
    epsilon, beta = check_epsilon(epsilon), check_probability(beta, "beta")
    delta = check_probability(delta, "delta")
    n, k, d = float(histogram.sum()), len(stream), histogram.size
    baselines = [
        pmw.LaplacePerQuery(histogram, epsilon=epsilon, num_queries=k, delta=dd, rng=rng) for dd in (0.0, delta)
    ]
    errors = [float(np.abs(pmw.run_stream(b, stream) - truth).max()) for b in baselines]

    def pmw_bound(queries: int) -> float:
        return pmw.pmw_dwork_roth_error_bound(
            n=n, epsilon=epsilon, domain_size=d, num_queries=queries, beta=beta, delta=delta
        )

    def advanced_bound(queries: int) -> float:
        return mechanisms.laplace_advanced_composition_max_error_bound(
            num_queries=queries, beta=beta, epsilon=epsilon, delta=delta, n=n
        )

    bounds = {
        "basic": mechanisms.composed_laplace_max_error_bound(num_queries=k, beta=beta, epsilon=epsilon, n=n),
        "advanced": advanced_bound(k),
        "pmw": pmw_bound(k),
    }
    many = np.geomspace(1e3, 1e14, 45)
    wins = np.array([pmw_bound(int(q)) < advanced_bound(int(q)) for q in many])
    crossing = float(many[np.argmax(wins)]) if wins.any() else float("nan")
    return LaplaceBaselines(
        (baselines[0].epsilon_per_query, baselines[1].epsilon_per_query),
        (errors[0], errors[1]),
        bounds,
        crossing,
        delta,
    )
