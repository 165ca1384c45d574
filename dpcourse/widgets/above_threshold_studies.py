"""The measurements of notebook 04, each with its figure or table: the code a reader does not need to read.

Each function runs one study of the notebook (the exact outcome distribution against simulation, the privacy
loss of random and adversarial neighbours, what breaks when a noise is cut, the accuracy of AboveThreshold,
SparseVector and NumericSparse, and what SparseVector's δ > 0 calibration costs) and returns its key numbers as
text, a :class:`~dpcourse.tables.Table` or a frozen result whose ``figure`` method draws a
:class:`~matplotlib.figure.Figure` not registered with pyplot (a notebook shows it with ``display``). The
sampling is vectorised over trials in :mod:`dpcourse.svt`; the loops here run over a grid of settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from scipy import stats

from .. import svt
from .._validation import RngLike, as_generator, check_epsilon, check_integer, check_probability
from ..mechanisms import proportion_interval
from ..plotting import color_for, fast_log_axes, plot_empirical, plot_theory
from ..tables import Table
from .above_threshold import outcome_label

__all__ = [
    "AccuracyStudy",
    "AdversarialLosses",
    "ComposedEpsilon",
    "OutcomeDistribution",
    "accuracy_study",
    "adversarial_losses",
    "anomaly_search",
    "composed_epsilon",
    "cut_noise_losses",
    "delta_accuracy_table",
    "outcome_distribution",
    "random_pair_losses",
    "sparse_accuracy_study",
]


@dataclass(frozen=True)
class OutcomeDistribution:
    """AboveThreshold's exact outcome probabilities against simulated runs (:func:`outcome_distribution`).

    Attributes
    ----------
    exact : numpy.ndarray
        Pr[⊥ᵏ⊤] for k = 0, …, m − 1, then Pr[⊥ᵐ], by quadrature.
    counts : numpy.ndarray
        The simulated runs ending in each outcome.
    low : numpy.ndarray
        The lower end of the 99% Clopper–Pearson interval of each measured frequency.
    high : numpy.ndarray
        Its upper end.
    trials : int
        The simulated runs.
    title : str
        What was run, for the figure.
    """

    exact: np.ndarray
    counts: np.ndarray
    low: np.ndarray
    high: np.ndarray
    trials: int
    title: str

    def report(self) -> str:
        """A line per outcome (exact, measured, interval), then the sum and how many intervals hold the exact value.

        Returns
        -------
        str
            The lines.
        """
        m = self.exact.size - 1
        inside = (self.low <= self.exact) & (self.exact <= self.high)
        lines = [f"{'outcome':>8} {'exact':>9} {'measured':>9} {'99% interval':>22}"]
        for k in range(m + 1):
            lines.append(
                f"{outcome_label(k, m):>8} {self.exact[k]:9.5f} {self.counts[k] / self.trials:9.5f}   "
                f"[{self.low[k]:.5f}, {self.high[k]:.5f}]"
            )
        lines.append(
            f"sum of exact probabilities: {self.exact.sum():.12f}; exact inside the 99% interval for "
            f"{inside.sum()} of {inside.size} outcomes"
        )
        return "\n".join(lines)

    def figure(self) -> Figure:
        """Exact probabilities as bars, measured frequencies as points with 99% intervals, log scale.

        Returns
        -------
        matplotlib.figure.Figure
            The figure.
        """
        fig = Figure(figsize=(8, 3.6))
        ax = fig.subplots()
        k = np.arange(self.exact.size)
        ax.bar(k, self.exact, color=color_for("svt"), alpha=0.35, label="exact (quadrature)")
        plot_empirical(
            ax,
            k,
            self.counts / self.trials,
            self.low,
            self.high,
            method="svt",
            label=f"measured, {self.trials:,} runs (99% CI)",
        )
        fast_log_axes(ax, x=False)
        ax.set_xticks(k, [f"{i}" for i in k[:-1]] + ["all ⊥"])
        ax.set_xlabel("outcome: number of ⊥ before the ⊤")
        ax.set_ylabel("probability")
        ax.set_title(self.title)
        ax.grid(True, which="both", alpha=0.25)
        ax.legend()
        return fig


def outcome_distribution(
    answers: Sequence[float], *, threshold: float, epsilon: float, trials: int, rng: RngLike
) -> OutcomeDistribution:
    """Run AboveThreshold ``trials`` times and compare each outcome's frequency with its exact probability.

    Parameters
    ----------
    answers : sequence of float
        The query answers on D (sensitivity 1).
    threshold : float
        The threshold T.
    epsilon : float
        The privacy parameter ε > 0.
    trials : int
        The simulated runs, ≥ 1.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    OutcomeDistribution
        The exact probabilities, the counts and their 99% intervals.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0 or ``trials`` < 1.
    TypeError
        If ``trials`` is not an integer.
    """
    epsilon = check_epsilon(epsilon)
    trials = check_integer(trials, "trials", minimum=1)
    exact = svt.above_threshold_pmf(answers, threshold=threshold, epsilon=epsilon)
    counts = svt.above_threshold(answers, threshold=threshold, epsilon=epsilon, rng=rng, trials=trials).outcome_counts()
    low, high = proportion_interval(counts, trials, confidence=0.99)
    title = f"AboveThreshold, T = {threshold:g}, ε = {epsilon:g}"
    return OutcomeDistribution(exact, counts, low, high, trials, title)


def random_pair_losses(count: int, *, rng: RngLike, max_queries: int = 14) -> np.ndarray:
    """The largest privacy loss ÷ ε of AboveThreshold on ``count`` random neighbouring pairs.

    Each pair draws m in [1, ``max_queries``], Δ in [0.2, 3], ε in [0.1, 3] and T from N(0, 1); the answers on D
    are N(0, (3Δ)²) and those on D′ move each by a uniform amount in [−Δ, Δ]. Every draw is made at once; the
    exact loss (:func:`dpcourse.svt.max_privacy_loss`) is then computed pair by pair.

    Parameters
    ----------
    count : int
        The number of pairs, ≥ 1.
    rng : int, numpy.random.Generator or None
        Seed or generator.
    max_queries : int, optional
        The largest m (default 14), ≥ 1.

    Returns
    -------
    numpy.ndarray
        Shape (count,): each pair's largest loss ÷ its ε.

    Raises
    ------
    ValueError
        If ``count`` or ``max_queries`` < 1.
    TypeError
        If ``count`` or ``max_queries`` is not an integer.
    """
    count = check_integer(count, "count", minimum=1)
    max_queries = check_integer(max_queries, "max_queries", minimum=1)
    gen = as_generator(rng)
    m = gen.integers(1, max_queries + 1, size=count)
    sensitivity, eps = gen.uniform(0.2, 3, size=count), gen.uniform(0.1, 3, size=count)
    threshold = gen.normal(size=count)
    answers_d = gen.normal(0, 3, size=(count, max_queries)) * sensitivity[:, None]
    answers_d_prime = answers_d + sensitivity[:, None] * gen.uniform(-1, 1, size=(count, max_queries))
    losses = [
        svt.max_privacy_loss(
            answers_d[i, : m[i]],
            answers_d_prime[i, : m[i]],
            threshold=threshold[i],
            epsilon=eps[i],
            sensitivity=sensitivity[i],
        ).max_loss
        for i in range(count)
    ]
    return np.array(losses) / eps


@dataclass(frozen=True)
class AdversarialLosses:
    """The largest privacy loss ÷ ε of the adversarial pair, per ε and m (:func:`adversarial_losses`).

    Attributes
    ----------
    num_queries : numpy.ndarray
        The m.
    ratios : dict of float to numpy.ndarray
        Per ε, the loss ÷ ε at each m.
    """

    num_queries: np.ndarray
    ratios: dict[float, np.ndarray]

    @property
    def spread(self) -> float:
        """The largest difference between the ε at one m."""
        return float(np.ptp(np.array(list(self.ratios.values())), axis=0).max())

    def report(self) -> str:
        """A line per ε with its ratios, then the spread between the ε.

        Returns
        -------
        str
            The lines.
        """
        lines = [f"ε = {eps}: loss/ε = " + ", ".join(f"{r:.4f}" for r in ratio) for eps, ratio in self.ratios.items()]
        lines.append(f"largest difference between the three ε at one m: {self.spread:.4f}")
        return "\n".join(lines)

    def figure(self) -> Figure:
        """Loss ÷ ε against m for each ε, with the guarantee loss = ε.

        Returns
        -------
        matplotlib.figure.Figure
            The figure.
        """
        fig = Figure(figsize=(6.4, 4))
        ax = fig.subplots()
        for index, ((eps, ratio), style) in enumerate(zip(self.ratios.items(), ["o-", "s-", "^-"], strict=False)):
            ax.plot(self.num_queries, ratio, style, color=color_for("svt"), alpha=0.4 + 0.2 * index, label=f"ε = {eps}")
        ax.axhline(1.0, color=color_for("bound"), ls="--", label="the guarantee, loss = ε")
        fast_log_axes(ax, y=False, base=2)
        ax.set_xlabel("number of queries m")
        ax.set_ylabel("largest privacy loss / ε")
        ax.set_title("Adversarial neighbours: the loss approaches ε, never passes it")
        ax.text(
            0.98,
            0.05,
            f"the three ε lie within {self.spread:.3f} of each other:\nloss/ε depends on m, hardly on ε",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=9,
        )
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(loc="center right")
        return fig


def adversarial_losses(
    num_queries: Sequence[int] = (1, 2, 4, 8, 16, 32, 64), epsilons: Sequence[float] = (0.5, 1.0, 2.0)
) -> AdversarialLosses:
    """The exact largest privacy loss of :func:`dpcourse.svt.adversarial_pair` (T = 0.5), per m and ε.

    Parameters
    ----------
    num_queries : sequence of int, optional
        The m (default the powers of 2 up to 64).
    epsilons : sequence of float, optional
        The ε (default 0.5, 1 and 2).

    Returns
    -------
    AdversarialLosses
        The loss ÷ ε per ε and m.
    """
    m_grid = np.asarray(num_queries)
    ratios = {
        eps: np.array(
            [
                svt.max_privacy_loss(*svt.adversarial_pair(int(m)), threshold=0.5, epsilon=eps).max_loss / eps
                for m in m_grid
            ]
        )
        for eps in epsilons
    }
    return AdversarialLosses(m_grid, ratios)


def cut_noise_losses(num_queries: Sequence[int] = (2, 8, 32)) -> tuple[Table, str]:
    """The adversarial pair's exact largest loss (ε = 1) for AboveThreshold and for two variants with less noise.

    Parameters
    ----------
    num_queries : sequence of int, optional
        The m (default 2, 8 and 32; the line compares the last two).

    Returns
    -------
    table : Table
        A row per variant: published, query noise halved, no threshold noise.
    line : str
        What each extra ⊥ adds to the loss without threshold noise, beside ln(F(T)/F(T − Δ)) of Lap(4Δ/ε).
    """
    cases = {
        "AboveThreshold as published": {},
        "query noise halved, Lap(2Δ/ε)": {"query_noise": stats.laplace(scale=2.0)},
        "no threshold noise": {"threshold_noise": None},
    }
    m_values = [int(m) for m in num_queries]
    losses = {
        name: [
            svt.max_privacy_loss(*svt.adversarial_pair(m), threshold=0.5, epsilon=1.0, **noise).max_loss
            for m in m_values
        ]
        for name, noise in cases.items()
    }
    table = Table(
        ["ε = 1, adversarial pair", *(f"loss, m = {m}" for m in m_values)],
        [[name, *values] for name, values in losses.items()],
        caption="largest privacy loss, exact",
    )
    per_bottom = np.diff(losses["no threshold noise"])[-1] / (m_values[-1] - m_values[-2])
    query_noise = stats.laplace(scale=4.0)
    line = (
        f"no threshold noise: each extra ⊥ adds {per_bottom:.4f}; ln(F(T)/F(T − Δ)) of Lap(4Δ/ε) = "
        f"{np.log(query_noise.cdf(0.5) / query_noise.cdf(-0.5)):.4f} ≤ ε/4"
    )
    return table, line


def anomaly_search(
    answers: np.ndarray, anomalies: Sequence[int], *, threshold: float, epsilon: float, trials: int, rng: RngLike
) -> str:
    """SparseVector and NumericSparse with c = len(anomalies) on a series: how often they find exactly the anomalies.

    Parameters
    ----------
    answers : numpy.ndarray
        The series (sensitivity 1).
    anomalies : sequence of int
        The indices of the anomalies, c of them.
    threshold : float
        The threshold T.
    epsilon : float
        The total budget ε > 0.
    trials : int
        The runs of each algorithm, ≥ 1.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    str
        Two lines: the share of SparseVector's runs that found exactly the anomalies, and NumericSparse's mean
        absolute error on the values it released, beside the Laplace scale of those values.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0 or ``trials`` < 1.
    TypeError
        If ``trials`` is not an integer.
    """
    epsilon = check_epsilon(epsilon)
    trials = check_integer(trials, "trials", minimum=1)
    gen = as_generator(rng)
    marked = sorted(anomalies)
    c = len(marked)
    found = svt.sparse_vector(answers, threshold=threshold, epsilon=epsilon, c=c, rng=gen, trials=trials).outputs
    found = found == svt.TOP
    exactly = found[:, marked].all(axis=1) & (found.sum(axis=1) == c)
    numeric = svt.numeric_sparse(answers, threshold=threshold, epsilon=epsilon, c=c, rng=gen, trials=trials)
    released = numeric.values[:, marked]
    errors = (released - answers[marked])[~np.isnan(released)]
    _, _, value_scale = svt.numeric_sparse_scales(epsilon=epsilon, c=c)
    return (
        f"trials that found exactly the {c} anomalies: {exactly.mean():.3f}\n"
        f"released values: mean |error| = {np.abs(errors).mean():.2f} (the Laplace scale of the values is "
        f"{value_scale:.1f})"
    )


@dataclass(frozen=True)
class AccuracyStudy:
    """Measured accuracy against a theorem's bound, per number of queries (:func:`accuracy_study`,
    :func:`sparse_accuracy_study`).

    Attributes
    ----------
    num_queries : numpy.ndarray
        The k.
    measured : dict of str to numpy.ndarray
        Per algorithm, the (1 − β)-quantile of each trial's smallest correct α, at each k.
    bound : dict of str to numpy.ndarray
        Per algorithm, the theorem's α at each k.
    formula : dict of str to str
        Per algorithm, the bound as the legend writes it.
    trials : int
        Trials per k.
    beta : float
        The failure probability β: the measured α is the (1 − β)-quantile.
    title : str
        The figure's title ("" for none).
    """

    num_queries: np.ndarray
    measured: dict[str, np.ndarray]
    bound: dict[str, np.ndarray]
    formula: dict[str, str]
    trials: int
    beta: float
    title: str = ""

    def report(self) -> str:
        """For one algorithm, a line per k (measured, bound, ratio); for several, a line each and their ratio.

        Returns
        -------
        str
            The lines.
        """
        if len(self.measured) == 1:
            (measured,), (bound,) = self.measured.values(), self.bound.values()
            return "\n".join(
                f"k = {k:4d}: measured α = {a:6.2f}, bound {b:6.2f}, ratio {b / a:.2f}"
                for k, a, b in zip(self.num_queries, measured, bound, strict=True)
            )
        lines = []
        for name, measured in self.measured.items():
            ratio = self.bound[name] / measured
            lines.append(
                f"{name:>13}: measured α = "
                + ", ".join(f"{a:.0f}" for a in measured)
                + f"; bound / measured from {ratio.min():.2f} to {ratio.max():.2f}"
            )
        first, second = self.measured.values()
        lines.append(
            f"{list(self.measured)[1]} / {list(self.measured)[0]}, measured: "
            + ", ".join(f"{r:.2f}" for r in second / first)
        )
        return "\n".join(lines)

    def figure(self) -> Figure:
        """Measured α as points and the theorem's α as a dashed line, against k (log scale).

        Returns
        -------
        matplotlib.figure.Figure
            The figure.
        """
        fig = Figure(figsize=(6.4, 4))
        ax = fig.subplots()
        several = len(self.measured) > 1
        for (name, measured), marker, method in zip(self.measured.items(), "os", ("svt", "laplace"), strict=False):
            quantile = f"{1 - self.beta:g}-quantile of {self.trials}"
            shown = f"{name}: measured ({quantile})" if several else f"measured α ({quantile} trials)"
            ax.plot(self.num_queries, measured, marker, color=color_for(method), label=shown)
            prefix = f"{name}: " if several else ""
            plot_theory(
                ax,
                self.num_queries,
                self.bound[name],
                method=method if several else "bound",
                style="--",
                label=f"{prefix}{self.formula[name]}",
            )
        fast_log_axes(ax, y=False)
        ax.set_xlabel("number of queries k")
        ax.set_ylabel("accuracy α")
        if self.title:
            ax.set_title(self.title)
        ax.grid(True, which="both", alpha=0.25)
        if several:
            ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
        else:
            ax.legend()
        return fig


def accuracy_study(
    num_queries: Sequence[int], *, beta: float, epsilon: float, trials: int, rng: RngLike
) -> AccuracyStudy:
    """AboveThreshold's measured accuracy on the hard input against α = 8Δ(ln k + ln(2/β))/ε.

    Parameters
    ----------
    num_queries : sequence of int
        The k.
    beta : float
        The failure probability β in (0, 1).
    epsilon : float
        The privacy parameter ε > 0.
    trials : int
        Trials per k, ≥ 1.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    AccuracyStudy
        The measured and bounded α.

    Raises
    ------
    ValueError
        If ``beta`` is not in (0, 1), ``epsilon`` not a finite number > 0 or ``trials`` < 1.
    TypeError
        If ``trials`` is not an integer.
    """
    beta, epsilon = check_probability(beta, "beta"), check_epsilon(epsilon)
    trials = check_integer(trials, "trials", minimum=1)
    gen = as_generator(rng)
    k_grid = np.asarray(num_queries)
    measured = np.array(
        [np.quantile(svt.accuracy_margins(int(k), epsilon=epsilon, rng=gen, trials=trials), 1 - beta) for k in k_grid]
    )
    bound = np.array(
        [svt.above_threshold_accuracy_bound(num_queries=int(k), beta=beta, epsilon=epsilon) for k in k_grid]
    )
    name = "AboveThreshold"
    return AccuracyStudy(k_grid, {name: measured}, {name: bound}, {name: "α = 8(ln k + ln(2/β))/ε"}, trials, beta)


def sparse_accuracy_study(
    num_queries: Sequence[int], *, c: int, beta: float, epsilon: float, trials: int, rng: RngLike
) -> AccuracyStudy:
    """SparseVector's and NumericSparse's measured accuracy (δ = 0) against Theorems 3.26 and 3.28.

    Parameters
    ----------
    num_queries : sequence of int
        The k.
    c : int
        The discoveries, ≥ 1.
    beta : float
        The failure probability β in (0, 1).
    epsilon : float
        The privacy parameter ε > 0.
    trials : int
        Trials per k and algorithm, ≥ 1.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    AccuracyStudy
        The measured and bounded α of both.

    Raises
    ------
    ValueError
        If ``c`` or ``trials`` < 1, ``beta`` not in (0, 1) or ``epsilon`` not a finite number > 0.
    TypeError
        If ``c`` or ``trials`` is not an integer.
    """
    c, trials = check_integer(c, "c", minimum=1), check_integer(trials, "trials", minimum=1)
    beta, epsilon = check_probability(beta, "beta"), check_epsilon(epsilon)
    gen = as_generator(rng)
    k_grid = np.asarray(num_queries)
    measured, bound = {}, {}
    for name, numeric, theorem in (
        ("SparseVector", False, svt.sparse_vector_accuracy_bound),
        ("NumericSparse", True, svt.numeric_sparse_accuracy_bound),
    ):
        margins = [
            svt.sparse_accuracy_margins(int(k), c=c, epsilon=epsilon, numeric=numeric, rng=gen, trials=trials)
            for k in k_grid
        ]
        measured[name] = np.array([np.quantile(m, 1 - beta) for m in margins])
        bound[name] = np.array([theorem(num_queries=int(k), c=c, beta=beta, epsilon=epsilon) for k in k_grid])
    formula = {"SparseVector": "8c(ln k + ln(2c/β))/ε, Thm 3.26", "NumericSparse": "9c(ln k + ln(4c/β))/ε, Thm 3.28"}
    title = f"c = {c} discoveries, ε = {epsilon:g}, β = {beta:g}"
    return AccuracyStudy(k_grid, measured, bound, formula, trials, beta, title)


def delta_accuracy_table(
    num_queries: int,
    discoveries: Sequence[int],
    *,
    beta: float,
    epsilon: float,
    delta: float,
    trials: int,
    rng: RngLike,
) -> Table:
    """SparseVector's measured accuracy and Theorem 3.26's α, for δ = 0 and for ``delta``, per c.

    Parameters
    ----------
    num_queries : int
        The k, ≥ 1.
    discoveries : sequence of int
        The c.
    beta : float
        The failure probability β in (0, 1).
    epsilon : float
        The privacy parameter ε > 0.
    delta : float
        The δ in (0, 1) compared with δ = 0.
    trials : int
        Trials per c and δ, ≥ 1.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    Table
        A row per c: measured α and bound for each δ, and the ratio of the measured α.

    Raises
    ------
    ValueError
        If ``num_queries`` or ``trials`` < 1, ``beta`` or ``delta`` not in (0, 1), or ``epsilon`` not a finite
        number > 0.
    TypeError
        If ``num_queries`` or ``trials`` is not an integer.
    """
    k, trials = check_integer(num_queries, "num_queries", minimum=1), check_integer(trials, "trials", minimum=1)
    beta, delta, epsilon = check_probability(beta, "beta"), check_probability(delta, "delta"), check_epsilon(epsilon)
    gen = as_generator(rng)
    alpha, bound = {}, {}
    for d in (0.0, delta):
        alpha[d] = [
            np.quantile(
                svt.sparse_accuracy_margins(k, c=int(c), epsilon=epsilon, delta=d, rng=gen, trials=trials), 1 - beta
            )
            for c in discoveries
        ]
        bound[d] = [
            svt.sparse_vector_accuracy_bound(num_queries=k, c=int(c), beta=beta, epsilon=epsilon, delta=d)
            for c in discoveries
        ]
    rows = [
        [int(c), alpha[0.0][i], bound[0.0][i], alpha[delta][i], bound[delta][i], alpha[delta][i] / alpha[0.0][i]]
        for i, c in enumerate(discoveries)
    ]
    return Table(
        [
            "c",
            "measured α, δ = 0",
            "Thm 3.26, δ = 0",
            f"measured α, δ = {delta:g}",
            f"Thm 3.26, δ = {delta:g}",
            "ratio δ > 0 / δ = 0",
        ],
        rows,
        caption=f"SparseVector on k = {k} queries, ε = {epsilon:g}, β = {beta:g}: "
        f"{1 - beta:g}-quantile of {trials} trials",
    )


@dataclass(frozen=True)
class ComposedEpsilon:
    """What SparseVector's δ > 0 runs compose to by Theorem 3.20, ÷ ε, over ε (:func:`composed_epsilon`).

    Attributes
    ----------
    epsilons : numpy.ndarray
        The ε.
    ratios : dict of (float, int) to numpy.ndarray
        Per (δ, c), the composed ε ÷ ε at each ε.
    """

    epsilons: np.ndarray
    ratios: dict[tuple[float, int], np.ndarray]

    def report(self) -> str:
        """A line per (δ, c): the ratio at the smallest ε and the first ε where it passes 1.

        Returns
        -------
        str
            The lines.
        """
        lines = []
        for (d, c), ratio in self.ratios.items():
            over = self.epsilons[ratio > 1]
            passes = f"{over[0]:.3g}" if over.size else f"never up to {self.epsilons[-1]:g}"
            lines.append(
                f"δ = {d:g}, c = {c:3d}: composed/ε = {ratio[0]:.3f} at ε = {self.epsilons[0]:g}; "
                f"above 1 from ε ≈ {passes}"
            )
        return "\n".join(lines)

    def figure(self) -> Figure:
        """The composed ε ÷ ε against ε, per (δ, c), with Corollary 3.21's charge.

        Returns
        -------
        matplotlib.figure.Figure
            The figure.
        """
        fig = Figure(figsize=(6.4, 3.8))
        ax = fig.subplots()
        deltas = sorted({d for d, _ in self.ratios}, reverse=False)
        discoveries = sorted({c for _, c in self.ratios})
        for (d, c), ratio in self.ratios.items():
            style = "-" if d == deltas[0] else "--"
            shade = 0.5 if c == discoveries[0] else 1.0
            ax.plot(self.epsilons, ratio, style, color=color_for("svt"), alpha=shade, label=f"δ = {d:g}, c = {c}")
        ax.axhline(1.0, color=color_for("bound"), ls=":", label="Corollary 3.21's charge: ε")
        fast_log_axes(ax)
        ax.set_xlabel("ε")
        ax.set_ylabel("Theorem 3.20's ε / ε")
        ax.set_title("SparseVector's δ > 0 calibration: what the runs cost")
        ax.legend(fontsize=8, ncol=2)
        return fig


def composed_epsilon(
    epsilons: Sequence[float], *, deltas: Sequence[float] = (1e-6, 0.1), discoveries: Sequence[int] = (1, 512)
) -> ComposedEpsilon:
    """:func:`dpcourse.svt.sparse_vector_composed_epsilon` ÷ ε for each δ, c and ε.

    Parameters
    ----------
    epsilons : sequence of float
        The ε, each > 0.
    deltas : sequence of float, optional
        The δ (default 10⁻⁶ and 0.1).
    discoveries : sequence of int, optional
        The c (default 1 and 512).

    Returns
    -------
    ComposedEpsilon
        The ratios.
    """
    grid = np.asarray(epsilons, dtype=float)
    ratios = {
        (d, c): np.array([svt.sparse_vector_composed_epsilon(epsilon=e, c=c, delta=d) for e in grid]) / grid
        for d in deltas
        for c in discoveries
    }
    return ComposedEpsilon(grid, ratios)
