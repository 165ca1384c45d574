"""The measurements of notebook 03, each with its figure and table: the code a reader does not need to read.

Each function runs one study of the notebook (least squares on the tree, the four strategies over d, every
branching factor, the SVD bound, Gaussian against Laplace noise) and returns a small frozen result whose
methods draw its figure (a :class:`~matplotlib.figure.Figure` not registered with pyplot, which a notebook
shows with ``display``), build its :class:`~dpcourse.tables.Table` and print its key numbers. The sampling is
vectorised over trials (:func:`dpcourse.linear_queries.sampled_error`); the exact errors come from
:func:`dpcourse.linear_queries.expected_error`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from matplotlib.figure import Figure

from .. import linear_queries
from .._validation import RngLike, as_generator, check_epsilon, check_integer
from ..plotting import color_for, plot_empirical, plot_theory
from ..tables import Table

__all__ = [
    "STRATEGY_BUILDERS",
    "STRATEGY_METHODS",
    "BranchingStudy",
    "ConsistencyStudy",
    "StrategyComparison",
    "branching_study",
    "consistency_study",
    "gaussian_against_laplace",
    "interval_sensitivity_table",
    "strategy_comparison",
    "svd_bound_table",
]

#: The strategies notebook 03 compares, by the name its text, tables and legends use.
STRATEGY_BUILDERS: dict[str, Callable[[int], linear_queries.Strategy]] = {
    "histogram": linear_queries.identity_strategy,
    "prefix": linear_queries.prefix_strategy,
    "binary tree": linear_queries.hierarchical_strategy,
    "Haar wavelet": linear_queries.wavelet_strategy,
}
#: The colour (a method of :data:`dpcourse.plotting.METHOD_COLORS`) of each strategy, the same in the panel.
STRATEGY_METHODS = {
    "histogram": "laplace",
    "prefix": "laplace_histogram",
    "binary tree": "tree",
    "Haar wavelet": "matrix_mechanism",
}
_Z99 = 2.576  # the normal quantile of a two-sided 99% interval


def interval_sensitivity_table(domain_sizes: Sequence[int]) -> Table:
    """The L1 sensitivity of all interval queries at once (add/remove one record), the notes' d², the histogram's.

    Parameters
    ----------
    domain_sizes : sequence of int
        The d.

    Returns
    -------
    Table
        A row per d: the number of intervals, their exact Δ₁, the notes' bound d² and the histogram's Δ₁.
    """
    rows = []
    for d in domain_sizes:
        workload = linear_queries.all_range_workload(d)
        histogram = linear_queries.identity_strategy(d)
        rows.append([d, workload.num_queries, int(workload.l1_sensitivity), d * d, int(histogram.l1_sensitivity)])
    return Table(
        ["d", "intervals", "exact Δ₁", "notes: d²", "histogram Δ₁"],
        rows,
        caption="L1 sensitivity, add/remove one record",
    )


@dataclass(frozen=True)
class ConsistencyStudy:
    """One interval's squared error, summed from the tree's nodes against least squares (:func:`consistency_study`).

    Attributes
    ----------
    largest_difference_from_lsqr : float
        The largest difference between the two-pass estimate and scipy's ``lsqr`` on one noisy release.
    rows : tuple of tuple
        Per interval: its name ``"[s, t]"``, the nodes of its decomposition, the measured squared error of the
        sum of those nodes, its exact value (noise variance × nodes) and the measured error of least squares.
    trials : int
        The releases measured.
    epsilon : float
        The ε of the Laplace noise.
    """

    largest_difference_from_lsqr: float
    rows: tuple[tuple, ...]
    trials: int
    epsilon: float

    def table(self) -> Table:
        """The rows as a table.

        Returns
        -------
        Table
            One row per interval.
        """
        return Table(
            ["interval", "nodes", "sum of nodes: measured", "exact", "least squares: measured"],
            [list(row) for row in self.rows],
            caption=f"squared error of one interval's answer, {self.trials} releases, ε = {self.epsilon:g}",
        )


def consistency_study(
    tree: linear_queries.Strategy,
    histogram: np.ndarray,
    intervals: Sequence[tuple[int, int]],
    *,
    epsilon: float,
    trials: int,
    rng: RngLike,
) -> ConsistencyStudy:
    """Release a tree ``trials`` times; answer each interval from its nodes and by least squares.

    First one release is estimated by the two passes of :func:`~dpcourse.linear_queries.tree_least_squares`
    and by scipy's generic ``lsqr``, to compare them; then ``trials`` releases are drawn at once.

    Parameters
    ----------
    tree : Strategy
        A hierarchical strategy (:func:`~dpcourse.linear_queries.hierarchical_strategy`).
    histogram : numpy.ndarray
        The true histogram x over the tree's cells.
    intervals : sequence of (int, int)
        The intervals [s, t] to answer.
    epsilon : float
        The ε of the Laplace noise, calibrated to ‖A‖₁ (add/remove), > 0.
    trials : int
        The releases, ≥ 2.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    ConsistencyStudy
        The comparison with ``lsqr`` and one row per interval.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0 or ``trials`` < 2.
    TypeError
        If ``trials`` is not an integer.
    """
    from scipy.sparse import linalg as sparse_linalg

    epsilon = check_epsilon(epsilon)
    trials = check_integer(trials, "trials", minimum=2)
    gen = as_generator(rng)
    x = np.asarray(histogram, dtype=float)
    scale = tree.l1_sensitivity / epsilon
    noisy = tree.matrix @ x + gen.laplace(0, scale, size=tree.num_queries)
    two_pass = linear_queries.tree_least_squares(tree, noisy)
    generic = sparse_linalg.lsqr(tree.matrix, noisy, atol=1e-14, btol=1e-14, iter_lim=10_000)[0]
    answers = tree.matrix @ x + gen.laplace(0, scale, size=(trials, tree.num_queries))
    estimates = linear_queries.tree_least_squares(tree, answers)
    rows = []
    for s, t in intervals:
        truth = x[s : t + 1].sum()
        by_nodes = linear_queries.answer_by_decomposition(tree, answers, s, t) - truth
        by_least_squares = estimates[:, s : t + 1].sum(axis=1) - truth
        nodes = len(linear_queries.canonical_decomposition(tree, s, t))
        rows.append((f"[{s}, {t}]", nodes, np.mean(by_nodes**2), 2 * scale**2 * nodes, np.mean(by_least_squares**2)))
    return ConsistencyStudy(float(np.abs(two_pass - generic).max()), tuple(rows), trials, epsilon)


@dataclass(frozen=True)
class StrategyComparison:
    """Exact and measured error per interval query of each strategy over d (:func:`strategy_comparison`).

    Attributes
    ----------
    domain_sizes : tuple of int
        The d compared.
    exact : dict of str to tuple of float
        Per strategy, the exact mean squared error per interval query at each d (NaN where skipped).
    measured : dict of str to tuple
        Per strategy and d, (mean, low, high) of the measured error with its 99% interval, or None where skipped.
    epsilon : float
        The ε of the Laplace noise.
    """

    domain_sizes: tuple[int, ...]
    exact: dict[str, tuple[float, ...]]
    measured: dict[str, tuple[tuple[float, float, float] | None, ...]]
    epsilon: float

    def figure(self) -> Figure:
        """Exact error (lines) and measured error (points with 99% intervals) against d, log-log.

        Returns
        -------
        matplotlib.figure.Figure
            The figure.
        """
        fig = Figure(figsize=(6.8, 4.4))
        ax = fig.subplots()
        for name, method in STRATEGY_METHODS.items():
            kept = [i for i, m in enumerate(self.measured[name]) if m is not None]
            x = [self.domain_sizes[i] for i in kept]
            plot_theory(ax, x, [self.exact[name][i] for i in kept], method=method, label=f"{name}: exact")
            plot_empirical(ax, x, *zip(*[self.measured[name][i] for i in kept], strict=True), method=method, label="_")
        ax.plot([], [], "o", color="0.35", label="measured (99% interval)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.25)
        ax.set_xlabel("domain size d")
        ax.set_ylabel("mean squared error per interval query")
        ax.set_title(f"all-range workload, Laplace, ε = {self.epsilon:g}")
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
        return fig

    def table(self) -> Table:
        """Exact against measured error, a row per d and a column per strategy.

        Returns
        -------
        Table
            ``"exact vs measured"`` in each cell, ``"—"`` where a strategy was skipped.
        """

        def cell(name: str, i: int) -> str:
            shown = self.measured[name][i]
            return "—" if shown is None else f"{self.exact[name][i]:.4g} vs {shown[0]:.4g}"

        return Table(
            ["d", *STRATEGY_METHODS],
            [[d, *(cell(name, i) for name in STRATEGY_METHODS)] for i, d in enumerate(self.domain_sizes)],
            caption="mean squared error per interval query: exact vs measured",
        )

    def report(self) -> str:
        """How many exact errors lie inside their measured 99% interval, and each strategy's growth per step of d.

        Returns
        -------
        str
            One line for the intervals, then one per strategy.
        """
        inside = [
            low <= self.exact[name][i] <= high
            for name in STRATEGY_METHODS
            for i, shown in enumerate(self.measured[name])
            if shown is not None
            for _, low, high in [shown]
        ]
        lines = [f"exact error inside the measured 99% interval: {sum(inside)} of {len(inside)}"]
        for name, exact in self.exact.items():
            steps = [later / earlier for earlier, later in pairwise(exact) if np.isfinite(later)]
            lines.append(f"{name}: exact error grows by " + ", ".join(f"{s:.2f}" for s in steps) + " per fourfold d")
        return "\n".join(lines)


def strategy_comparison(
    domain_sizes: Sequence[int],
    *,
    epsilon: float,
    rng: RngLike,
    trials: int = 300,
    trials_at_4096: int = 60,
) -> StrategyComparison:
    """Every strategy of :data:`STRATEGY_BUILDERS` on the all-range workload: exact error and measured error.

    At each d a histogram of 10·d records drawn uniformly is released ``trials`` times per strategy (at
    d = 4096, ``trials_at_4096`` times, and prefix and wavelet are skipped to keep the notebook fast).

    Parameters
    ----------
    domain_sizes : sequence of int
        The d, powers of 2 up to 4096.
    epsilon : float
        The ε of the Laplace noise, > 0.
    rng : int, numpy.random.Generator or None
        Seed or generator.
    trials : int, optional
        Releases per strategy and d below 4096 (default 300), ≥ 2.
    trials_at_4096 : int, optional
        Releases at d = 4096 (default 60), ≥ 2.

    Returns
    -------
    StrategyComparison
        The exact and measured errors.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0, or ``trials`` or ``trials_at_4096`` is below 2.
    TypeError
        If ``trials`` or ``trials_at_4096`` is not an integer.
    """
    epsilon = check_epsilon(epsilon)
    trials = check_integer(trials, "trials", minimum=2)
    trials_at_4096 = check_integer(trials_at_4096, "trials_at_4096", minimum=2)
    gen = as_generator(rng)
    exact: dict[str, list[float]] = {name: [] for name in STRATEGY_BUILDERS}
    measured: dict[str, list] = {name: [] for name in STRATEGY_BUILDERS}
    for d in domain_sizes:
        workload = linear_queries.all_range_workload(d)
        histogram = np.bincount(gen.integers(0, d, size=10 * d), minlength=d).astype(float)
        for name, build in STRATEGY_BUILDERS.items():
            if d == 4096 and name in ("prefix", "Haar wavelet"):
                exact[name].append(np.nan)
                measured[name].append(None)
                continue
            strategy = build(d)
            exact[name].append(linear_queries.expected_error(workload, strategy, epsilon=epsilon))
            errors = linear_queries.sampled_error(
                workload, strategy, histogram, epsilon=epsilon, rng=gen, trials=trials if d < 4096 else trials_at_4096
            )
            mean, half = errors.mean(), _Z99 * errors.std(ddof=1) / np.sqrt(errors.size)
            measured[name].append((mean, mean - half, mean + half))
    return StrategyComparison(
        tuple(int(d) for d in domain_sizes),
        {name: tuple(values) for name, values in exact.items()},
        {name: tuple(values) for name, values in measured.items()},
        epsilon,
    )


def svd_bound_table(comparison: StrategyComparison, *, largest_d: int = 1024) -> Table:
    """Each strategy's exact error against Li & Miklau's SVD lower bound, up to ``largest_d``.

    The last column removes the factor ‖A‖₁²/‖A‖₂² that Laplace noise adds to the wavelet's error.

    Parameters
    ----------
    comparison : StrategyComparison
        The exact errors (:func:`strategy_comparison`).
    largest_d : int, optional
        The largest d to include (default 1024), ≥ 1.

    Returns
    -------
    Table
        A row per d: the bound, then histogram, binary tree and wavelet ÷ bound, and the wavelet's ratio without
        the factor.

    Raises
    ------
    ValueError
        If ``largest_d`` < 1.
    TypeError
        If ``largest_d`` is not an integer.
    """
    largest_d = check_integer(largest_d, "largest_d", minimum=1)
    rows = []
    for i, d in enumerate(comparison.domain_sizes):
        if d > largest_d:
            continue
        bound = linear_queries.svd_lower_bound(linear_queries.all_range_workload(d), epsilon=comparison.epsilon)
        ratios = [comparison.exact[name][i] / bound for name in ("histogram", "binary tree", "Haar wavelet")]
        wavelet = linear_queries.wavelet_strategy(d)
        rows.append([d, bound, *ratios, ratios[-1] * wavelet.l2_sensitivity**2 / wavelet.l1_sensitivity**2])
    return Table(
        [
            "d",
            "SVD bound",
            "histogram ÷ bound",
            "binary tree ÷ bound",
            "wavelet ÷ bound",
            "wavelet ÷ bound without ‖A‖₁²/‖A‖₂²",
        ],
        rows,
        caption=f"error per query against the SVD lower bound, Laplace, ε = {comparison.epsilon:g}",
    )


@dataclass(frozen=True)
class BranchingStudy:
    """The exact error of the tree of every branching factor b = 2, …, d (:func:`branching_study`).

    Attributes
    ----------
    errors : dict of int to dict of int to float
        Per d, the exact error per all-range query of the b-ary tree, by b.
    heights : dict of int to dict of int to int
        Per d, the tree's levels below the root, by b.
    grid : tuple of int
        The branching factors one would try first.
    epsilon : float
        The ε of the Laplace noise.
    """

    errors: dict[int, dict[int, float]]
    heights: dict[int, dict[int, int]]
    grid: tuple[int, ...]
    epsilon: float

    def figure(self) -> Figure:
        """Each d's error against b, relative to the binary tree.

        Returns
        -------
        matplotlib.figure.Figure
            The figure.
        """
        fig = Figure(figsize=(6.4, 4))
        ax = fig.subplots()
        for (d, errors), style, alpha in zip(self.errors.items(), [":", "--", "-"], [0.45, 0.7, 1.0], strict=False):
            relative = np.array(list(errors.values())) / errors[2]
            ax.plot(list(errors), relative, style, color=color_for("tree"), alpha=alpha, label=f"d = {d}")
        ax.axhline(1, color="0.5", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("branching factor b")
        ax.set_ylabel("error relative to the binary tree")
        ax.set_title(f"trees with least squares, all-range workload, ε = {self.epsilon:g}")
        ax.grid(True, which="both", alpha=0.25)
        ax.legend()
        return fig

    def table(self) -> Table:
        """Per d: the best b, its error ÷ binary, the best b of the grid, the cut of b = 4…16, the candidates.

        Returns
        -------
        Table
            A row per d.
        """
        rows = []
        for d, errors in self.errors.items():
            best = min(errors, key=errors.__getitem__)
            on_grid = min((b for b in self.grid if b <= d), key=errors.__getitem__)
            cuts = [1 - errors[b] / errors[2] for b in range(4, 17)]
            by_height = {h: b for b, h in sorted(self.heights[d].items(), reverse=True)}  # the smallest b wins
            rows.append(
                [
                    d,
                    best,
                    errors[best] / errors[2],
                    on_grid,
                    f"{100 * min(cuts):.0f}% to {100 * max(cuts):.0f}%",
                    ", ".join(map(str, sorted(by_height.values()))),
                ]
            )
        return Table(
            [
                "d",
                "best b of 2…d",
                "its error ÷ binary",
                "best of 2, 3, 4, 8, …, 64",
                "b = 4…16 cut binary's error by",
                "smallest b of each height",
            ],
            rows,
            caption="the exact error of every branching factor",
        )

    def report(self) -> str:
        """The pairs of equal height where the larger b has the larger error; with d = 256 and 1024 studied, three
        errors the notebook's text quotes.

        Returns
        -------
        str
            One or two lines.
        """
        rises = [
            errors[b] < errors[b + 1]
            for d, errors in self.errors.items()
            for b in range(2, d)
            if self.heights[d][b] == self.heights[d][b + 1]
        ]
        lines = [
            f"between two b of the same height, the larger b has the larger error: {sum(rises)} of {len(rises)} pairs"
        ]
        if {256, 1024} <= set(self.errors):
            at_256, at_1024 = self.errors[256], self.errors[1024]
            lines.append(
                f"b = 15 at d = 256: {100 * (1 - at_256[15] / at_256[2]):.0f}% below binary; "
                f"b = 6 at d = 1024: {at_1024[6]:.0f}, b = 4: {at_1024[4]:.0f}"
            )
        return "\n".join(lines)


def branching_study(
    domain_sizes: Sequence[int] = (64, 256, 1024), *, epsilon: float, grid: Sequence[int] = (2, 3, 4, 8, 16, 32, 64)
) -> BranchingStudy:
    """The exact error per all-range query of the tree of every b from 2 to d, with least squares.

    Parameters
    ----------
    domain_sizes : sequence of int, optional
        The d (default 64, 256 and 1024; :meth:`BranchingStudy.report` quotes d = 256 and 1024).
    epsilon : float
        The ε of the Laplace noise, > 0.
    grid : sequence of int, optional
        The branching factors one would try first (default the powers of 2 and 3 up to 64).

    Returns
    -------
    BranchingStudy
        The errors and heights.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0.
    """
    epsilon = check_epsilon(epsilon)
    errors, heights = {}, {}
    for d in domain_sizes:
        workload = linear_queries.all_range_workload(d)
        trees = {b: linear_queries.hierarchical_strategy(d, b) for b in range(2, d + 1)}
        errors[d] = {b: linear_queries.expected_error(workload, tree, epsilon=epsilon) for b, tree in trees.items()}
        heights[d] = {b: len(tree.level_sizes) - 1 for b, tree in trees.items()}
    return BranchingStudy(errors, heights, tuple(grid), epsilon)


def gaussian_against_laplace(
    d: int = 256, *, epsilon: float, delta: float = 1e-6, epsilons: Sequence[float] = (0.1, 1.0, 5.0)
) -> tuple[str, Table]:
    """Gaussian noise (calibrated to ‖A‖₂) against Laplace noise (to ‖A‖₁) for each strategy.

    Parameters
    ----------
    d : int, optional
        The domain size of the table (default 256), ≥ 1.
    epsilon : float
        The ε of the table, > 0.
    delta : float, optional
        The Gaussian mechanism's δ (default 10⁻⁶).
    epsilons : sequence of float, optional
        The ε at which the noise variance of sensitivity 1 is compared (default 0.1, 1 and 5).

    Returns
    -------
    lines : str
        Per ε of ``epsilons``, the Gaussian's noise variance at sensitivity 1 ÷ Laplace's.
    table : Table
        Per strategy, the error per interval query under both, their ratio and ‖A‖₁²/‖A‖₂².

    Raises
    ------
    ValueError
        If ``d`` < 1 or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``d`` is not an integer.
    """
    d = check_integer(d, "d", minimum=1)
    epsilon = check_epsilon(epsilon)
    workload = linear_queries.all_range_workload(d)
    one_cell = linear_queries.identity_strategy(1)
    lines = []
    for eps in epsilons:
        gaussian = linear_queries.noise_variance(one_cell, epsilon=eps, noise="gaussian", delta=delta)
        ratio = gaussian / linear_queries.noise_variance(one_cell, epsilon=eps)
        lines.append(f"noise variance at sensitivity 1, Gaussian ÷ Laplace, ε = {eps:g}: {ratio:.2f}")
    rows = []
    for name, build in STRATEGY_BUILDERS.items():
        strategy = build(d)
        laplace = linear_queries.expected_error(workload, strategy, epsilon=epsilon)
        gaussian = linear_queries.expected_error(workload, strategy, epsilon=epsilon, noise="gaussian", delta=delta)
        rows.append(
            [name, laplace, gaussian, laplace / gaussian, strategy.l1_sensitivity**2 / strategy.l2_sensitivity**2]
        )
    table = Table(
        [
            f"strategy (d = {d})",
            "Laplace",
            "Gaussian, δ = 10⁻⁶" if delta == 1e-6 else f"Gaussian, δ = {delta:g}",
            "Laplace ÷ Gaussian",
            "‖A‖₁²/‖A‖₂²",
        ],
        rows,
        caption=f"error per interval query at ε = {epsilon:g}",
    )
    return "\n".join(lines), table
