"""Panel of notebook 06: Private MW against the Laplace baselines over one stream of queries."""

from __future__ import annotations

import numpy as np

from .. import bounds
from ..pmw import PrivateMW, conjunction_workload, product_histogram, run_stream
from ..plotting import color_for, fast_log_axes
from ._panel import Panel, float_slider, int_slider, log_slider

__all__ = ["pmw_panel"]


def pmw_panel(*, num_queries: int = 200, seed: int = 2026, render: bool = True) -> Panel:
    """ε, n, α, |X| → running max error of PMW, Laplace per query and the noisy histogram; PMW's updates.

    Precomputed per universe size (once, on first use): the data proportions, the workload
    of 2-way conjunctions, the exact answers, and standard Laplace noise for both baselines
    (scaled by the controls on each redraw). PMW itself is re-run (seeded) on every redraw:
    its path depends on every control. Queries PMW refuses are scored with its synthetic
    data's free answer, so all three methods are scored on the same queries.

    ``epsilon spent`` is PMW's after-the-fact, data-dependent account for this one run
    (:attr:`PrivateMW.privacy_spent`); the privacy guarantee is the calibrated ε.
    """
    cache: dict[int, tuple] = {}

    def universe(bits):
        if bits not in cache:
            gen = np.random.default_rng([seed, bits])
            probs = product_histogram(10**9, bits, rng=gen) / 10**9
            work = conjunction_workload(num_queries, bits, width=2, rng=gen)
            truth = work.answers(probs)
            laplace_unit = gen.laplace(0.0, 1.0, size=num_queries)  # × k/(nε)
            histogram_unit = work.answers(gen.laplace(0.0, 1.0, size=2**bits))  # × 1/(nε)
            cache[bits] = (probs, work, truth, laplace_unit, histogram_unit)
        return cache[bits]

    def draw(fig, *, epsilon, n, alpha, bits):
        probs, work, truth, laplace_unit, histogram_unit = universe(bits)
        k, d = num_queries, 2**bits
        curator = PrivateMW(probs * n, epsilon=epsilon, alpha=alpha, max_queries=k, rng=seed)
        answers = run_stream(curator, work)
        for i in range(curator.answered, k):  # refused: scored with the synthetic data's free answer, like with like
            answers[i] = curator.synthetic_answer(work[i])
        t = np.arange(1, k + 1)
        err_pmw = np.maximum.accumulate(np.abs(answers - truth))
        err_lap = np.maximum.accumulate(np.abs(laplace_unit) * k / (n * epsilon))
        err_hist = np.maximum.accumulate(np.abs(histogram_unit) / (n * epsilon))
        ax_err, ax_upd = fig.subplots(1, 2)
        ax_err.plot(t, err_pmw, color=color_for("pmw"), lw=1.8, label="PMW")
        ax_err.plot(t, err_lap, color=color_for("laplace"), lw=1.5, label="Laplace, ε/k each")
        ax_err.plot(t, err_hist, color=color_for("laplace_histogram"), lw=1.5, label="noisy histogram")
        theorem = bounds.pmw_notes_error_bound(n=n, epsilon=epsilon, domain_size=d, num_queries=k, beta=0.05)
        ax_err.axhline(11 * alpha / 8, color=color_for("pmw"), ls=":", lw=1.2, label="11α/8")
        ax_err.axhline(theorem, color=color_for("bound"), ls="--", lw=1.2, label="Thm 4.3")
        fast_log_axes(ax_err, x=False)
        ax_err.set_xlabel("queries answered")
        ax_err.set_ylabel("max |error| so far")
        ax_err.set_title(f"|X| = 2^{bits}, n = {n:.3g}, ε = {epsilon:.3g}", fontsize=10)
        ax_err.legend(fontsize=7, loc="lower right")
        cumulative = np.cumsum(curator.history.updated).astype(float)
        cumulative[cumulative == 0] = np.nan  # log axis: the curve starts at the first update
        ax_upd.step(t, cumulative, where="post", color=color_for("pmw"), label="updates")
        ax_upd.axhline(curator.max_updates, color=color_for("bound"), ls="--", label="N")
        ax_upd.axhline(bounds.mw_update_count_bound(domain_size=d, alpha=alpha), color=color_for("bound"), ls=":",
                       label="4 ln|X|/α²")
        fast_log_axes(ax_upd, x=False)
        ax_upd.set_ylim(0.8, None)
        ax_upd.set_xlabel("queries answered")
        ax_upd.set_ylabel("updates")
        ax_upd.set_title(f"after-the-fact ε of this run {curator.privacy_spent:.3g}; guarantee ε = {epsilon:.3g}",
                         fontsize=10)
        ax_upd.legend(fontsize=7, loc="lower right")
        for ax in (ax_err, ax_upd):
            ax.grid(True, alpha=0.25)
        return {
            "PMW max error": float(err_pmw[-1]),
            "Laplace per query max error": float(err_lap[-1]),
            "noisy histogram max error": float(err_hist[-1]),
            "Theorem 4.3 bound": float(theorem),
            "updates": curator.updates,
            "N": curator.max_updates,
            "epsilon guaranteed (PMW's calibration)": float(epsilon),
            "epsilon spent": float(curator.privacy_spent),
        }

    controls = {
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=1),
        "n": log_slider("n", value=1e8, min_exp=4, max_exp=10, step=0.5),
        "alpha": float_slider("α", value=0.1, min=0.02, max=0.5, step=0.01),
        "bits": int_slider("log₂|X|", value=10, min=4, max=16),
    }
    return Panel(draw, controls, figsize=(11.0, 3.9), render=render,
                 margins={"left": 0.07, "right": 0.98, "bottom": 0.14, "top": 0.9, "wspace": 0.22}, clear=True)
