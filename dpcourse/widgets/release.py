"""Panels of notebook 02: four ways to release linear queries, and the reconstruction attack."""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import numpy as np

from .. import bounds, query_release, reconstruction
from .._validation import as_generator, check_integer
from ..experiments import max_abs_error, mean_squared_error, summarize
from ..mechanisms import gaussian_sigma
from ..plotting import color_for, fast_log_axes, plot_empirical, plot_theory
from ..queries import MatrixWorkload
from ._panel import Panel, float_slider, log_slider

__all__ = ["METHOD_LABELS", "reconstruction_panel", "release_comparison_panel", "theory_lines"]

METHOD_LABELS = {
    "randomized_response": "randomized response",
    "laplace": "Laplace, ε/|Q| per query",
    "laplace_histogram": "Laplace histogram",
    "gaussian": "Gaussian (analytic)",
}
BETA = 0.05


def theory_lines(method: str, population, workload: MatrixWorkload, *, epsilon: float, delta: float):
    """(max-error bound at β = 0.05, exact mean squared error per query) of one method."""
    n, k = population.n, workload.num_queries
    people = workload.answer(population.type_sizes)  # how many people each query counts
    if method == "randomized_response":
        mse = bounds.rr_answer_variance(people_in_query=float(np.mean(people)), n=n, epsilon=epsilon)
        return bounds.rr_max_error_bound(n=n, num_queries=k, beta=BETA, epsilon=epsilon), mse
    if method == "laplace":
        sensitivity = workload.l1_sensitivity / n
        return (bounds.laplace_max_error_bound(k=k, beta=BETA, sensitivity=sensitivity, epsilon=epsilon),
                bounds.laplace_variance(sensitivity=sensitivity, epsilon=epsilon))
    if method == "laplace_histogram":
        cells = workload.answer(np.ones(population.num_types))  # |S| per query
        mse = np.mean(cells) * bounds.laplace_variance(sensitivity=1.0, epsilon=epsilon) / n**2
        return bounds.noisy_histogram_max_error_bound(domain_size=population.num_types, num_queries=k, beta=BETA,
                                                      epsilon=epsilon, n=n), mse
    sigma = gaussian_sigma(l2_sensitivity=workload.l2_sensitivity / n, epsilon=epsilon, delta=delta)
    return bounds.gaussian_max_error_bound(sigma=sigma, num_queries=k, beta=BETA), sigma**2


def release_comparison_panel(*, num_types: int = 64, max_queries: int = 1000, trials: int = 40, rng=2026,
                             render: bool = True) -> Panel:
    """Max error and mean squared error of the four releases against |Q|, measured and in theory.

    Controls: ε, n, the largest |Q|, δ (Gaussian only) and which methods to show. The query
    matrix (``max_queries`` random sets of types) is drawn once; the workload of size k is its
    first k rows, so moving |Q| adds queries rather than redrawing them.
    """
    g = check_integer(num_types, "num_types", minimum=2)
    k_max = check_integer(max_queries, "max_queries", minimum=2)
    seed = as_generator(rng).integers(2**32)
    all_queries = query_release.random_type_queries(k_max, g, rng=seed).matrix()

    @lru_cache(maxsize=32)
    def population(n):
        return query_release.make_population(n, g, rng=seed + 1)

    @lru_cache(maxsize=64)
    def workload(k):  # the first k queries; built (and its sensitivities computed) once per k
        return MatrixWorkload(all_queries[:k])

    def draw(fig, *, epsilon, n, max_q, delta, methods):
        pop = population(int(round(n)))
        grid = np.unique(np.geomspace(1, int(round(max_q)), 6).astype(int))
        ax_max, ax_mse = fig.subplots(1, 2)
        numbers = {}
        gen = np.random.default_rng(seed + 2)
        for method in methods:
            rows = []
            for k in grid:
                w = workload(int(k))
                truth = pop.answers(w)
                released = query_release.release(method, pop, w, epsilon=epsilon, delta=delta, rng=gen, trials=trials)
                rows.append((summarize(max_abs_error(released, truth)), summarize(mean_squared_error(released, truth)),
                             *theory_lines(method, pop, w, epsilon=epsilon, delta=delta)))
            max_err, mse, max_bound, mse_exact = zip(*rows)
            label = METHOD_LABELS[method]
            plot_empirical(ax_max, grid, [s.mean for s in max_err], [s.low for s in max_err], [s.high for s in max_err],
                           method=method, label=label, capsize=0)
            plot_theory(ax_max, grid, max_bound, method=method, style="--", label="_")
            plot_empirical(ax_mse, grid, [s.mean for s in mse], [s.low for s in mse], [s.high for s in mse],
                           method=method, label=label, capsize=0)
            plot_theory(ax_mse, grid, mse_exact, method=method, style="-", label="_")
            numbers[f"{method}: max error at |Q| = {grid[-1]}"] = max_err[-1].mean
            numbers[f"{method}: bound"] = max_bound[-1]
        for ax, what in ((ax_max, "max error over the queries"), (ax_mse, "mean squared error per query")):
            fast_log_axes(ax)
            ax.set_xlabel("number of queries |Q|")
            ax.set_ylabel(f"normalised {what}")
            ax.grid(True, which="major", alpha=0.25)
        ax_max.set_title(f"n = {pop.n:,}, ε = {epsilon:.3g}: dashed = bound (β = {BETA})", fontsize=10)
        ax_mse.set_title("solid = exact", fontsize=10)
        if methods:
            ax_max.legend(fontsize=7, loc="upper left")
        return numbers

    controls = {
        "epsilon": log_slider("ε", value=1.0, min_exp=-1.3, max_exp=0.7, step=0.05),
        "n": log_slider("n", value=10_000, min_exp=2, max_exp=5, step=0.25),
        "max_q": log_slider("largest |Q|", value=k_max, min_exp=0.5, max_exp=np.log10(k_max), step=0.25),
        "delta": log_slider("δ", value=1e-6, min_exp=-10, max_exp=-2, step=0.5),
        "methods": widgets.SelectMultiple(options=list(METHOD_LABELS), value=tuple(METHOD_LABELS), rows=4,
                                          description="methods"),
    }
    return Panel(draw, controls, figsize=(11.0, 4.2), render=render, clear=True)


def reconstruction_panel(*, n: int = 200, trials: int = 6, rng=2026, render: bool = True) -> Panel:
    """The reconstruction attack on subset sums (Dinur & Nissim's setting; least squares on O(n) random
    queries, as in the attacks of Dwork, McSherry & Talwar 2007 and Dwork & Yekhanin 2008): the
    fraction of secret bits recovered against the noise level E/√n.

    Controls: the noise level E/√n of the current point, the number of queries m/n, and ε, which
    places the Laplace noise Lap(m/ε) that makes the m answers ε-DP on the same axis.
    """
    n = check_integer(n, "n", minimum=10)
    gen = as_generator(rng)
    secret = gen.integers(0, 2, size=n)
    seed = gen.integers(2**32)

    @lru_cache(maxsize=16)
    def queries(m):
        a = reconstruction.subset_sum_queries(m, n, rng=seed + m)
        return a, np.linalg.pinv(a)

    levels = np.geomspace(0.01, 10, 10)

    def draw(fig, *, noise, queries_per_person, epsilon):
        m = int(round(queries_per_person * n))
        a, pinv = queries(m)
        noise_gen = np.random.default_rng(seed)
        exact = a @ secret
        scales = np.append(levels, noise) * np.sqrt(n)
        errors = noise_gen.uniform(-1, 1, size=(scales.size, trials, m)) * scales[:, None, None]
        estimates = reconstruction.least_squares_estimate(a, (exact + errors).reshape(-1, m), pseudo_inverse=pinv)
        recovered = np.mean((estimates > 0.5) == secret, axis=1).reshape(scales.size, trials)
        dp_scale = m / epsilon
        dp_estimates = reconstruction.least_squares_estimate(
            a, exact + noise_gen.laplace(0, dp_scale, size=(trials, m)), pseudo_inverse=pinv)
        dp_recovered = np.mean((dp_estimates > 0.5) == secret, axis=1)

        ax_curve, ax_hist = fig.subplots(1, 2)
        mean = recovered.mean(axis=1)
        fast_log_axes(ax_curve, y=False)
        ax_curve.plot(levels, mean[:-1], "o-", color=color_for("laplace"), ms=4, label="answers within E (uniform error)")
        ax_curve.plot([noise], [mean[-1]], "o", ms=10, mfc="none", color=color_for("exact"), label="current E")
        ax_curve.plot([dp_scale / np.sqrt(n)], [dp_recovered.mean()], "s", color=color_for("laplace_histogram"),
                      label=f"ε = {epsilon:.2g}-DP: Lap(m/ε)")
        ax_curve.axhline(0.5, color=color_for("bound"), ls=":", label="guessing")
        ax_curve.set_xlabel("noise level E / √n")
        ax_curve.set_ylabel("fraction of bits recovered")
        ax_curve.set_ylim(0.4, 1.02)
        ax_curve.set_title(f"n = {n} people, m = {m} subset-sum queries", fontsize=10)
        ax_curve.legend(fontsize=7, loc="lower left")
        current = estimates.reshape(scales.size, trials, n)[-1].ravel()
        truth = np.tile(secret, trials)
        bins = np.linspace(-1.0, 2.0, 61)
        for bit, colour in ((0, color_for("laplace")), (1, color_for("randomized_response"))):
            ax_hist.hist(np.clip(current[truth == bit], -1, 2), bins=bins, histtype="stepfilled", alpha=0.5,
                         color=colour, label=f"true bit {bit}")
        ax_hist.axvline(0.5, color=color_for("bound"), ls="--", label="rounding at ½")
        ax_hist.set_xlabel("least-squares estimate of a bit")
        ax_hist.set_ylabel("people × trials")
        ax_hist.legend(fontsize=7)
        return {"fraction recovered at current E": float(mean[-1]), "E / sqrt(n)": float(noise),
                "m": m, "fraction recovered under DP noise": float(dp_recovered.mean())}

    controls = {
        "noise": log_slider("E / √n", value=0.1, min_exp=-2, max_exp=1, step=0.1),
        "queries_per_person": float_slider("m / n", value=4.0, min=1.0, max=8.0, step=0.5),
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=1, step=0.1),
    }
    return Panel(draw, controls, figsize=(11.0, 3.9), render=render, clear=True)
