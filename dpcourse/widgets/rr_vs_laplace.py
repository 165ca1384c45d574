"""Panels of notebook 02: four ways to release linear queries, and the reconstruction attack."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import ipywidgets as widgets
import numpy as np
import traitlets
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from .. import linear_queries, mechanisms
from .._validation import RngLike, as_generator, check_choice, check_integer, check_size
from ..linear_queries import CrossoverSweep, MatrixWorkload, QueryCountSweep, TableSizeSweep
from ..mechanisms import ErrorSummary, gaussian_sigma, max_abs_error, mean_squared_error, summarize
from ..plotting import color_for, fast_log_axes, new_figure, plot_empirical, plot_theory
from ._panel import Panel, delta_slider, float_slider, log_slider

__all__ = [
    "CheckboxGroup",
    "METHOD_LABELS",
    "crossover_figure",
    "gaussian_vs_laplace_figure",
    "query_count_figure",
    "reconstruction_panel",
    "release_comparison_panel",
    "table_size_figure",
    "theory_lines",
]

METHOD_LABELS = {
    "randomized_response": "randomized response",
    "laplace": "Laplace per query",
    "laplace_histogram": "noisy table",
    "gaussian": "Gaussian (analytic)",
}
BETA = 0.05
#: The fixed noise levels E/√n of the reconstruction panel's curve.
RECONSTRUCTION_LEVELS = np.geomspace(0.01, 10, 10)


def theory_lines(
    method: str, population: linear_queries.Population, workload: MatrixWorkload, *, epsilon: float, delta: float
) -> tuple[float, float]:
    """(max-error bound at β = 0.05, exact mean squared error per query) of one method.

    Parameters
    ----------
    method : str
        One of the keys of :data:`METHOD_LABELS`: ``"randomized_response"``, ``"laplace"`` (ε/|Q| per
        query), ``"laplace_histogram"`` or ``"gaussian"``.
    population : Population
        The n people and their types.
    workload : MatrixWorkload
        The |Q| queries, one column per type.
    epsilon : float
        The privacy parameter ε > 0 of the whole release.
    delta : float
        δ ∈ (0, 1), used by ``"gaussian"`` only.

    Returns
    -------
    bound : float
        The level all |Q| normalised errors stay below with probability 0.95.
    mse : float
        The exact mean squared error of a normalised answer, averaged over the workload's queries.

    Raises
    ------
    ValueError
        If ``method`` is not one of the four, or ``epsilon`` (or, for ``"gaussian"``, ``delta``) is out of
        range (raised by the mechanisms' formulas).
    TypeError
        If ``epsilon`` or ``delta`` is not a real number.
    """
    check_choice(method, "method", tuple(METHOD_LABELS))
    n, k = population.n, workload.num_queries
    people = workload.answer(population.type_sizes)  # how many people each query counts
    if method == "randomized_response":
        mse = mechanisms.rr_answer_variance(people_in_query=float(np.mean(people)), n=n, epsilon=epsilon)
        return mechanisms.rr_max_error_bound(n=n, num_queries=k, beta=BETA, epsilon=epsilon), mse
    if method == "laplace":
        sensitivity = workload.l1_sensitivity / n
        return (
            mechanisms.laplace_max_error_bound(k=k, beta=BETA, sensitivity=sensitivity, epsilon=epsilon),
            mechanisms.laplace_variance(sensitivity=sensitivity, epsilon=epsilon),
        )
    if method == "laplace_histogram":
        cells = workload.answer(np.ones(population.num_types))  # |S| per query
        mse = np.mean(cells) * mechanisms.laplace_variance(sensitivity=1.0, epsilon=epsilon) / n**2
        return mechanisms.noisy_histogram_max_error_bound(
            domain_size=population.num_types, num_queries=k, beta=BETA, epsilon=epsilon, n=n
        ), mse
    sigma = gaussian_sigma(l2_sensitivity=workload.l2_sensitivity / n, epsilon=epsilon, delta=delta)
    return mechanisms.gaussian_max_error_bound(sigma=sigma, num_queries=k, beta=BETA), sigma**2


class CheckboxGroup(widgets.VBox, widgets.ValueWidget):
    """One checkbox per option, with readable labels; ``value`` is the tuple of checked keys, in option order.

    A value widget like a slider: ``Panel`` observes ``value``, and setting ``value`` ticks the boxes.

    Parameters
    ----------
    options : mapping of str to str
        Each option's key and the label shown beside its box, in display order.
    value : sequence of str, optional
        The keys checked at first (default none); keys that are not options are ignored.
    description : str, optional
        A label above the boxes (default none).

    Raises
    ------
    traitlets.TraitError
        When ``value`` is later set to a tuple holding a key that is not an option.
    """

    value = traitlets.Tuple()

    def __init__(self, options: Mapping[str, str], *, value: Sequence[str] = (), description: str = ""):
        self.options = dict(options)
        self._boxes = {
            key: widgets.Checkbox(
                value=key in value, description=label, indent=False, layout=widgets.Layout(width="auto")
            )
            for key, label in self.options.items()
        }
        children = ([widgets.Label(description)] if description else []) + list(self._boxes.values())
        super().__init__(
            children=children,
            value=tuple(k for k in self.options if k in value),
            layout=widgets.Layout(margin="0 0 0 12px"),
        )
        for box in self._boxes.values():
            box.observe(self._box_changed, names="value")

    @traitlets.validate("value")
    def _valid(self, proposal: Mapping[str, Any]) -> tuple[str, ...]:
        chosen = tuple(proposal["value"])
        unknown = [k for k in chosen if k not in self.options]
        if unknown:
            raise traitlets.TraitError(
                f"methods must be among {', '.join(map(repr, self.options))}; got {unknown[0]!r}"
            )
        return tuple(k for k in self.options if k in chosen)

    @traitlets.observe("value")
    def _value_changed(self, change: Mapping[str, Any]) -> None:
        for key, box in self._boxes.items():
            box.value = key in change["new"]

    def _box_changed(self, _change: Mapping[str, Any]) -> None:
        self.value = tuple(key for key, box in self._boxes.items() if box.value)


def release_comparison_panel(
    *, num_types: int = 64, max_queries: int = 1000, trials: int = 40, rng: RngLike = 2026, render: bool = True
) -> Panel:
    """Max error and mean squared error of the four releases against |Q|, measured and in theory.

    Controls: ε, n, the largest |Q|, δ (Gaussian only) and which methods to show. The query
    matrix (``max_queries`` random sets of types) is drawn once; the workload of size k is its
    first k rows, so moving |Q| adds queries rather than redrawing them. All four methods are
    measured (with one seeded generator, in a fixed order) once per (ε, n, |Q|, δ) and kept:
    ticking a method on or off only shows or hides its curves.

    ``num_types`` ≤ 4096, ``max_queries`` ≤ 10 000 and ``trials`` ≤ 1000 (as the sliders allow).

    Parameters
    ----------
    num_types : int, optional
        G, the number of types of person, in [2, 4096] (default 64).
    max_queries : int, optional
        The most queries the |Q| slider offers, in [2, 10 000] (default 1000).
    trials : int, optional
        Releases per point, in [2, 1000] (default 40).
    rng : int, numpy.random.Generator or None, optional
        Seed or generator; one seed is drawn from it for the queries, the populations and the noise
        (default 2026).
    render : bool, optional
        Render the figure to the panel's image on each redraw (default True; False times the
        computation alone).

    Returns
    -------
    Panel
        The panel, drawn once for the controls' starting values.

    Raises
    ------
    ValueError
        If ``num_types``, ``max_queries`` or ``trials`` is outside its range, the query matrix or the
        releases would need more than 1 GiB, or ``rng`` is a negative seed.
    TypeError
        If ``num_types``, ``max_queries`` or ``trials`` is not an integer, or ``rng`` is not a seed or a
        Generator.
    """
    g = check_integer(num_types, "num_types", minimum=2, maximum=4096)
    k_max = check_integer(max_queries, "max_queries", minimum=2, maximum=10_000)
    trials = check_integer(trials, "trials", minimum=2, maximum=1000)
    check_size(8 * k_max * g, "max_queries × num_types")
    check_size(8 * 4 * trials * k_max, "trials × max_queries")
    seed = int(as_generator(rng).integers(2**32))
    all_queries = linear_queries.random_type_queries(k_max, g, rng=seed).matrix()

    @lru_cache(maxsize=32)
    def population(n: int) -> linear_queries.Population:
        return linear_queries.make_population(n, g, rng=seed + 1)

    @lru_cache(maxsize=64)
    def workload(k: int) -> MatrixWorkload:  # the first k queries; built (and its sensitivities computed) once per k
        return MatrixWorkload(all_queries[:k])

    @lru_cache(maxsize=64)
    def measure(epsilon: float, n: int, max_q: int, delta: float) -> tuple[linear_queries.Population, dict[str, tuple]]:
        """Per method: the |Q| grid, max-error and MSE summaries, the bound and the exact MSE."""
        pop = population(n)
        grid = np.unique(np.geomspace(1, max_q, 6).astype(int))
        gen = np.random.default_rng(seed + 2)
        results = {}
        for method in METHOD_LABELS:
            rows = []
            for k in grid:
                w = workload(int(k))
                truth = pop.answers(w)
                released = linear_queries.release(method, pop, w, epsilon=epsilon, delta=delta, rng=gen, trials=trials)
                rows.append(
                    (
                        summarize(max_abs_error(released, truth)),
                        summarize(mean_squared_error(released, truth)),
                        *theory_lines(method, pop, w, epsilon=epsilon, delta=delta),
                    )
                )
            results[method] = (grid, *zip(*rows, strict=True))
        return pop, results

    artists: dict[str, Any] = {}

    def build(fig: Figure) -> None:
        ax_max, ax_mse = fig.subplots(1, 2)
        for method in METHOD_LABELS:
            c = color_for(method)
            artists[method] = [
                (
                    ax.plot([], [], "o", ms=5, color=c, label=METHOD_LABELS[method])[0],
                    ax.add_collection(LineCollection([], colors=c, linewidths=1.5)),
                    ax.plot([], [], style, color=c, lw=1.8)[0],
                )
                for ax, style in ((ax_max, "--"), (ax_mse, "-"))
            ]
        for ax, what in ((ax_max, "max error over the queries"), (ax_mse, "mean squared error per query")):
            fast_log_axes(ax)
            ax.set_xlabel("number of queries |Q|")
            ax.set_ylabel(f"normalised {what}")
        artists["title"] = ax_max.set_title(" ")
        ax_mse.set_title("points: measured; solid: exact")
        artists["axes"] = (ax_max, ax_mse)

    def draw(
        fig: Figure, *, epsilon: float, n: float, max_q: float, delta: float, methods: tuple[str, ...]
    ) -> dict[str, Any]:
        if not artists:
            build(fig)
        ax_max, ax_mse = artists["axes"]
        pop, results = measure(float(epsilon), int(round(n)), int(round(max_q)), float(delta))
        numbers = {}
        ranges: list[list[float]] = [[], []]  # every y value shown, per axis
        for method in METHOD_LABELS:
            shown = method in methods
            grid, max_err, mse, max_bound, mse_exact = results[method]
            for i, (summaries, theory) in enumerate(((max_err, max_bound), (mse, mse_exact))):
                points, bars, line = artists[method][i]
                mean = np.array([s.mean for s in summaries])
                low = np.array([s.low for s in summaries])
                high = np.array([s.high for s in summaries])
                points.set_data(grid, mean)
                bars.set_segments([[(x, max(lo, 1e-300)), (x, hi)] for x, lo, hi in zip(grid, low, high, strict=True)])
                line.set_data(grid, theory)
                for artist in (points, bars, line):
                    artist.set_visible(shown)
                if shown:
                    ranges[i] += [
                        np.min(low[low > 0], initial=np.min(mean)),
                        np.max(high),
                        np.min(theory),
                        np.max(theory),
                    ]
            if shown:
                numbers[f"{METHOD_LABELS[method]}: max error at |Q| = {grid[-1]}"] = max_err[-1].mean
                numbers[f"{METHOD_LABELS[method]}: bound"] = max_bound[-1]
        for ax, values in zip((ax_max, ax_mse), ranges, strict=True):
            ax.set_xlim(0.8, max_q * 1.25)
            if values:
                ax.set_ylim(min(values) / 1.6, max(values) * 1.6)
        artists["title"].set_text(f"n = {pop.n:,}, ε = {epsilon:.3g}; dashed: bound (β = {BETA})")
        if artists.get("legend_methods") != tuple(methods):
            if ax_max.get_legend() is not None:
                ax_max.get_legend().remove()
            if methods:
                ax_max.legend(
                    handles=[artists[m][0][0] for m in methods], loc="upper left", bbox_to_anchor=(0.0, -0.17), ncols=4
                )
            artists["legend_methods"] = tuple(methods)
        return numbers

    controls = {
        "epsilon": log_slider("ε", value=1.0, min_exp=-1.3, max_exp=0.7, step=0.05),
        "n": log_slider("n", value=10_000, min_exp=2, max_exp=5, step=0.25),
        "max_q": log_slider("largest |Q|", value=k_max, min_exp=0.5, max_exp=np.log10(k_max), step=0.25),
        "delta": delta_slider("δ", value=1e-6),
        "methods": CheckboxGroup(METHOD_LABELS, value=tuple(METHOD_LABELS), description="methods"),
    }
    return Panel(
        draw,
        controls,
        figsize=(10.5, 4.6),
        render=render,
        margins={"left": 0.08, "right": 0.985, "bottom": 0.25, "top": 0.92, "wspace": 0.3},
    )


def reconstruction_panel(*, n: int = 200, trials: int = 6, rng: RngLike = 2026, render: bool = True) -> Panel:
    """The reconstruction attack on subset sums (Dinur & Nissim's setting; least squares on O(n) random
    queries, as in the attacks of Dwork, McSherry & Talwar 2007 and Dwork & Yekhanin 2008): the
    fraction of secret bits recovered against the noise level E/√n.

    Controls: the noise level E/√n of the current point, the number of queries m/n, and ε, which
    places the Laplace noise Lap(m/ε) that makes the m answers ε-DP on the same axis. Per m, the
    queries, their pseudo-inverse, the standard noise and the curve over the fixed noise levels
    are computed once; moving E or ε only re-runs the attack at the current point.

    ``n`` ≤ 2000 and ``trials`` ≤ 100 (the attack needs an m × n query matrix with m up to 8n).

    Parameters
    ----------
    n : int, optional
        The number of people (secret bits), in [10, 2000] (default 200).
    trials : int, optional
        Noisy answer vectors per point, in [1, 100] (default 6).
    rng : int, numpy.random.Generator or None, optional
        Seed or generator for the secret bits and the seed of the queries and noise (default 2026).
    render : bool, optional
        Render the figure to the panel's image on each redraw (default True; False times the
        computation alone).

    Returns
    -------
    Panel
        The panel, drawn once for the controls' starting values.

    Raises
    ------
    ValueError
        If ``n`` or ``trials`` is outside its range, the attack's arrays would need more than 1 GiB, or
        ``rng`` is a negative seed.
    TypeError
        If ``n`` or ``trials`` is not an integer, or ``rng`` is not a seed or a Generator.
    """
    n = check_integer(n, "n", minimum=10, maximum=2000)
    trials = check_integer(trials, "trials", minimum=1, maximum=100)
    check_size(8 * 8 * n * (2 * n + (len(RECONSTRUCTION_LEVELS) + 2) * trials), "n × trials")
    gen = as_generator(rng)
    secret = gen.integers(0, 2, size=n)
    seed = int(gen.integers(2**32))
    levels = RECONSTRUCTION_LEVELS

    @lru_cache(maxsize=16)
    def at_m(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Queries, pseudo-inverse, exact answers, standard noise and the recovered fraction at each fixed level."""
        a = linear_queries.subset_sum_queries(m, n, rng=seed + m)
        pinv = linear_queries.pseudo_inverse(a)
        noise_gen = np.random.default_rng(seed)
        unit_uniform = noise_gen.uniform(-1, 1, size=(levels.size + 1, trials, m))
        unit_laplace = noise_gen.laplace(0, 1.0, size=(trials, m))
        exact = a @ secret
        errors = unit_uniform[:-1] * (levels * np.sqrt(n))[:, None, None]
        estimates = linear_queries.least_squares_estimate(a, (exact + errors).reshape(-1, m), pseudo_inverse=pinv)
        recovered = np.mean((estimates > 0.5) == secret, axis=1).reshape(levels.size, trials).mean(axis=1)
        # A⁺(y + s·u) = A⁺y + s·A⁺u: a redraw only scales and adds these (no matrix product)
        base = exact @ pinv.T
        return base, unit_uniform[-1] @ pinv.T, unit_laplace @ pinv.T, recovered

    artists: dict[str, Any] = {}
    bins = np.linspace(-1.0, 2.0, 61)

    def build(fig: Figure) -> None:
        ax_curve, ax_hist = fig.subplots(1, 2)
        fast_log_axes(ax_curve, y=False)
        (artists["curve"],) = ax_curve.plot(
            levels,
            np.full(levels.size, 0.5),
            "o-",
            color=color_for("laplace"),
            ms=4,
            label="answers within E (uniform error)",
        )
        (artists["current"],) = ax_curve.plot(
            [], [], "o", ms=10, mfc="none", color=color_for("exact"), label="current E"
        )
        (artists["dp"],) = ax_curve.plot([], [], "s", color=color_for("laplace_histogram"), label="ε-DP: Lap(m/ε)")
        ax_curve.axhline(0.5, color=color_for("bound"), ls=":", label="guessing")
        ax_curve.set_xlabel("noise level E / √n")
        ax_curve.set_ylabel("fraction of bits recovered")
        ax_curve.set_ylim(0.4, 1.02)
        artists["title"] = ax_curve.set_title(" ")
        artists["legend"] = ax_curve.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncols=2)
        artists["hists"] = [
            ax_hist.stairs(np.zeros(bins.size - 1), bins, fill=True, alpha=0.5, color=colour, label=f"true bit {bit}")
            for bit, colour in ((0, color_for("laplace")), (1, color_for("randomized_response")))
        ]
        ax_hist.axvline(0.5, color=color_for("bound"), ls="--", label="rounding at ½")
        ax_hist.set_xlabel("least-squares estimate of a bit")
        ax_hist.set_ylabel("people × trials")
        ax_hist.set_title("estimates at the current E")
        ax_hist.set_xlim(bins[0], bins[-1])
        ax_hist.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncols=3)
        artists["axes"] = (ax_curve, ax_hist)

    def draw(fig: Figure, *, noise: float, queries_per_person: int, epsilon: float) -> dict[str, Any]:
        if not artists:
            build(fig)
        ax_curve, ax_hist = artists["axes"]
        m = int(round(queries_per_person * n))
        base, uniform_part, laplace_part, recovered = at_m(m)
        estimates = base + (noise * np.sqrt(n)) * uniform_part
        current = float(np.mean((estimates > 0.5) == secret))
        dp_scale = m / epsilon
        dp_estimates = base + dp_scale * laplace_part
        dp_recovered = float(np.mean((dp_estimates > 0.5) == secret))
        artists["curve"].set_ydata(recovered)
        artists["current"].set_data([noise], [current])
        artists["dp"].set_data([dp_scale / np.sqrt(n)], [dp_recovered])
        artists["legend"].get_texts()[2].set_text(f"ε = {epsilon:.2g}-DP: Lap(m/ε)")
        ax_curve.set_xlim(
            min(levels[0], noise, dp_scale / np.sqrt(n)) / 1.5, max(levels[-1], noise, dp_scale / np.sqrt(n)) * 1.5
        )
        artists["title"].set_text(f"n = {n} people, m = {m} subset-sum queries")
        values = estimates.ravel()
        truth = np.tile(secret, trials)
        tallest = 1
        for bit, stairs in zip((0, 1), artists["hists"], strict=True):
            counts, _ = np.histogram(np.clip(values[truth == bit], -1, 2), bins=bins)
            stairs.set_data(counts)
            tallest = max(tallest, counts.max())
        ax_hist.set_ylim(0, 1.08 * tallest)
        return {
            "fraction recovered at current E": current,
            "E / √n": float(noise),
            "m": m,
            "fraction recovered under DP noise": dp_recovered,
        }

    controls = {
        "noise": log_slider("E / √n", value=0.1, min_exp=-2, max_exp=1, step=0.1),
        "queries_per_person": float_slider("m / n", value=4.0, min=1.0, max=8.0, step=0.5),
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=1, step=0.1),
    }
    return Panel(
        draw,
        controls,
        figsize=(10.5, 4.6),
        render=render,
        margins={"left": 0.075, "right": 0.985, "bottom": 0.27, "top": 0.92, "wspace": 0.22},
    )


def _plot_summaries(ax: Axes, x: np.ndarray, summaries: Sequence[ErrorSummary], *, method: str, label: str) -> None:
    """Measured means with their intervals, as points in the method's colour."""
    means, lows, highs = ([getattr(s, field) for s in summaries] for field in ("mean", "low", "high"))
    plot_empirical(ax, x, means, lows, highs, method=method, label=label)


def query_count_figure(sweep: QueryCountSweep) -> Figure:
    """Randomized response's largest error against |Q|: one report per person, or |Q| bits with ε/|Q| each.

    Parameters
    ----------
    sweep : QueryCountSweep
        What :func:`~dpcourse.linear_queries.rr_query_count_sweep` measured.

    Returns
    -------
    matplotlib.figure.Figure
        Measured points with 95% intervals and Hoeffding's bound (dashed), on log axes.
    """
    fig, (ax,) = new_figure(width=6.6, height=4.2)
    k, method = sweep.query_counts, "randomized_response"
    _plot_summaries(ax, k, sweep.one_report, method=method, label="one report per person: measured")
    plot_theory(ax, k, sweep.bound, method=method, style="--", label="Hoeffding + union bound")
    split = [s.mean for s in sweep.split_budget]
    ax.plot(k, split, "s", color=color_for(method), mfc="none", label="|Q| unrelated bits, ε/|Q| each: measured")
    plot_theory(ax, k, sweep.bound_split, method=method, style=":", label="its bound")
    fast_log_axes(ax)
    ax.grid(True, which="both", alpha=0.25)
    ax.set_xlabel("number of queries |Q|")
    ax.set_ylabel("max normalised error")
    ax.set_title(f"randomized response, n = {sweep.n:,}, ε = {sweep.epsilon:g}")
    ax.legend(fontsize=9)
    return fig


def table_size_figure(sweep: TableSizeSweep) -> Figure:
    """The noisy table's largest error against the table's size G, with its bound.

    Parameters
    ----------
    sweep : TableSizeSweep
        What :func:`~dpcourse.linear_queries.table_size_sweep` measured.

    Returns
    -------
    matplotlib.figure.Figure
        Measured points with 95% intervals and the bound at β = 0.05 (dashed); G on a base-2 log axis.
    """
    fig, (ax,) = new_figure(width=6.4, height=4.0)
    g, method = sweep.table_sizes, "laplace_histogram"
    _plot_summaries(ax, g, sweep.error, method=method, label=f"noisy table, |Q| = {sweep.num_queries}: measured")
    plot_theory(ax, g, sweep.bound, method=method, style="--", label=f"bound, β = {BETA}")
    fast_log_axes(ax, y=False, base=2)
    fast_log_axes(ax, x=False)
    ax.grid(True, which="both", alpha=0.25)
    ax.set_xlabel("table size G = |X|")
    ax.set_ylabel("max normalised error")
    ax.legend()
    return fig


def gaussian_vs_laplace_figure(*, n: int, epsilon: float, delta: float, max_queries: int = 1000) -> Figure:
    """The exact mean squared error per query of Laplace and of the Gaussian mechanism (classic and analytic σ).

    For k counting queries that one person can all be in: Δ₁ = k/n and Δ₂ = √k/n. σ is proportional
    to Δ₂, so it is calibrated once at Δ₂ = 1 and scaled: σ(√k/n)² = σ₁²·k/n².

    Parameters
    ----------
    n : int
        The number of people, ≥ 1.
    epsilon : float
        The privacy parameter ε > 0 of each release.
    delta : float
        The δ of the Gaussian mechanism, in (0, 1).
    max_queries : int, optional
        The largest k drawn, ≥ 2 (default 1000).

    Returns
    -------
    matplotlib.figure.Figure
        The three curves against k, on log axes.

    Raises
    ------
    ValueError
        If an argument is out of its range (the classic calibration also needs ε < 1).
    TypeError
        If an argument has the wrong type.
    """
    n = check_integer(n, "n", minimum=1)
    max_queries = check_integer(max_queries, "max_queries", minimum=2)
    k = np.unique(np.geomspace(1, max_queries, 30).astype(int))
    sigma_one = {
        cal: gaussian_sigma(l2_sensitivity=1.0, epsilon=epsilon, delta=delta, calibration=cal)
        for cal in ("classic", "analytic")
    }
    fig, (ax,) = new_figure(width=6.4, height=4.0)
    laplace_mse = [mechanisms.laplace_variance(sensitivity=kk / n, epsilon=epsilon) for kk in k]
    plot_theory(ax, k, laplace_mse, method="laplace", label="Laplace, 2k²/(ε²n²)")
    plot_theory(ax, k, sigma_one["classic"] ** 2 * k / n**2, method="gaussian", style="--", label="Gaussian, classic σ")
    plot_theory(ax, k, sigma_one["analytic"] ** 2 * k / n**2, method="gaussian", label="Gaussian, analytic σ")
    fast_log_axes(ax)
    ax.grid(True, which="both", alpha=0.25)
    ax.set_xlabel("number of queries k")
    ax.set_ylabel("mean squared error per query")
    ax.set_title(f"n = {n:,}, ε = {epsilon:g}, δ = {delta:g}")
    ax.legend()
    return fig


def crossover_figure(sweep: CrossoverSweep) -> Figure:
    """Randomized response and Laplace per query on every prefix of the workload, one shade per n.

    Parameters
    ----------
    sweep : CrossoverSweep
        What :func:`~dpcourse.linear_queries.crossover_sweep` measured.

    Returns
    -------
    matplotlib.figure.Figure
        Both mean largest errors against |Q| for each n (darker for larger n), a dot where randomized
        response starts to win.
    """
    fig, (ax,) = new_figure(width=6.6, height=4.2)
    k = np.arange(1, sweep.laplace.shape[1] + 1)
    shades = np.linspace(0.4, 1.0, sweep.sizes.size)
    for n, rr, lap, cross, shade in zip(
        sweep.sizes, sweep.randomized_response, sweep.laplace, sweep.crossover, shades, strict=True
    ):
        ax.plot(k, rr, color=color_for("randomized_response"), alpha=shade, label=f"randomized response, n = {n:,}")
        ax.plot(k, lap, color=color_for("laplace"), alpha=shade, label=f"Laplace per query, n = {n:,}")
        ax.plot([cross], [rr[cross - 1]], "o", color="black", ms=4)
    fast_log_axes(ax)
    ax.grid(True, which="both", alpha=0.25)
    ax.set_xlabel("number of queries |Q|")
    ax.set_ylabel("mean max normalised error")
    ax.set_title(f"ε = {sweep.epsilon:g}; dots: where randomized response starts to win")
    ax.legend(fontsize=8, ncol=2)
    return fig
