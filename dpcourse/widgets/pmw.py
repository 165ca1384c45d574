"""Panel of notebook 06: Private MW against the Laplace baselines over one stream of queries."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import LogLocator, MaxNLocator

from .. import pmw
from .._validation import check_integer
from ..plotting import color_for, fast_log_axes
from ..pmw import (
    REPLACE_ONE_HISTOGRAM_SENSITIVITY,
    PrivateMW,
    conjunction_workload,
    product_histogram,
    run_stream_then_synthetic,
)
from ._panel import Panel, float_slider, int_slider, log_slider

__all__ = ["pmw_panel"]


def pmw_panel(*, num_queries: int = 200, seed: int = 2026, render: bool = True) -> Panel:
    """ε, n, α, |X| → running max error of PMW, Laplace per query and the noisy histogram; PMW's updates.

    Precomputed per universe size (once, on first use): the data proportions, the workload
    of 2-way conjunctions, the exact answers, and standard Laplace noise for both baselines
    (scaled by the controls on each redraw). PMW itself is re-run (seeded) on every redraw:
    its path depends on every control. Queries PMW refuses are scored with its synthetic
    data's free answer, so all three methods are scored on the same queries.

    Neighbours replace one record, as everywhere in notebook 06: the noisy histogram adds
    Lap(2/ε) per cell (L1 sensitivity 2). The error plot shows 11α/8 for the α of the slider, which
    is Theorem 4.3's guarantee only when that α is at least the theorem's smallest admissible α
    (also drawn); below it the summary says there is no guarantee.

    ``epsilon spent`` is PMW's after-the-fact, data-dependent account for this one run
    (:attr:`PrivateMW.privacy_spent`: 2ε₀ per update, plus ε₀ for a round still open); the
    privacy guarantee is the calibrated ε.

    Parameters
    ----------
    num_queries : int, optional
        k, the length of the stream, in [1, 5000] (default 200).
    seed : int, optional
        A seed ≥ 0 for the data, the workload and the noise (default 2026); each universe size
        draws from its own stream, and PMW's run is seeded with it on every redraw.
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
        If ``num_queries`` is not in [1, 5000] or ``seed`` is negative.
    TypeError
        If ``num_queries`` or ``seed`` is not an integer.
    """
    num_queries = check_integer(num_queries, "num_queries", minimum=1, maximum=5000)
    seed = check_integer(seed, "seed", minimum=0)
    cache: dict[int, tuple] = {}

    def universe(bits: int) -> tuple:
        if bits not in cache:
            gen = np.random.default_rng([seed, bits])
            probs = product_histogram(10**9, bits, rng=gen) / 10**9
            work = conjunction_workload(num_queries, bits, width=2, rng=gen)
            truth = work.answers(probs)
            laplace_unit = gen.laplace(0.0, 1.0, size=num_queries)  # × k/(nε)
            histogram_unit = work.answers(gen.laplace(0.0, 1.0, size=2**bits))  # × 2/(nε): Lap(2/ε) per cell
            cache[bits] = (probs, work, truth, laplace_unit, histogram_unit)
        return cache[bits]

    artists: dict[str, Any] = {}

    def queries_axis(ax: Axes, ylabel: str) -> Text:
        """Log y, queries answered on x, legend below; returns the (updatable) title."""
        fast_log_axes(ax, x=False)
        ax.set_xlim(0, num_queries + 1)
        ax.set(xlabel="queries answered", ylabel=ylabel)
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncols=3)
        return ax.set_title(" ")

    def build(fig: Figure) -> None:
        ax_err, ax_upd = fig.subplots(1, 2)
        (artists["pmw"],) = ax_err.plot([], [], color=color_for("pmw"), lw=1.8, label="PMW")
        (artists["laplace"],) = ax_err.plot([], [], color=color_for("laplace"), lw=1.5, label="Laplace, ε/k each")
        (artists["histogram"],) = ax_err.plot(
            [], [], color=color_for("laplace_histogram"), lw=1.5, label="noisy histogram"
        )
        artists["level"] = ax_err.axhline(1, color=color_for("pmw"), ls=":", lw=1.2, label="11α/8 (this α)")
        artists["theorem"] = ax_err.axhline(1, color=color_for("bound"), ls="--", lw=1.2, label="Thm 4.3's least α")
        artists["err_title"] = queries_axis(ax_err, "max |error| so far")
        (artists["updates"],) = ax_upd.step([], [], where="post", color=color_for("pmw"), label="updates")
        artists["N"] = ax_upd.axhline(1, color=color_for("bound"), ls="--", label="N")
        artists["mw"] = ax_upd.axhline(1, color=color_for("bound"), ls=":", label="4 ln|X|/α²")
        artists["upd_title"] = queries_axis(ax_upd, "updates")
        for ax in (ax_err, ax_upd):  # fewer tick labels to typeset on each redraw
            ax.yaxis.set_major_locator(LogLocator(numticks=5))
            ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
        artists["axes"] = (ax_err, ax_upd)

    def draw(fig: Figure, *, epsilon: float, n: float, alpha: float, bits: int) -> dict[str, Any]:
        if not artists:
            build(fig)
        ax_err, ax_upd = artists["axes"]
        probs, work, truth, laplace_unit, histogram_unit = universe(bits)
        k, d = num_queries, 2**bits
        curator = PrivateMW(probs * n, epsilon=epsilon, alpha=alpha, max_queries=k, rng=seed)
        answers = run_stream_then_synthetic(curator, work)  # refused: scored from p̃, like with like
        t = np.arange(1, k + 1)
        err_pmw = np.maximum.accumulate(np.abs(answers - truth))
        err_lap = np.maximum.accumulate(np.abs(laplace_unit) * k / (n * epsilon))
        err_hist = np.maximum.accumulate(np.abs(histogram_unit) * REPLACE_ONE_HISTOGRAM_SENSITIVITY / (n * epsilon))
        least_alpha = pmw.pmw_notes_alpha(n=n, epsilon=epsilon, domain_size=d, num_queries=k, beta=0.05)
        guaranteed = curator.guaranteed_error  # 11α/8 if α ≥ least_alpha, else None
        artists["pmw"].set_data(t, err_pmw)
        artists["laplace"].set_data(t, err_lap)
        artists["histogram"].set_data(t, err_hist)
        artists["level"].set_ydata([11 * alpha / 8] * 2)
        artists["theorem"].set_ydata([least_alpha] * 2)
        shown = [
            v
            for v in (
                err_pmw[0],
                err_lap[0],
                err_hist[0],
                err_pmw[-1],
                err_lap[-1],
                err_hist[-1],
                11 * alpha / 8,
                least_alpha,
            )
            if np.isfinite(v) and v > 0
        ]
        ax_err.set_ylim(min(shown) / 1.5, max(shown) * 1.5)
        artists["err_title"].set_text(f"|X| = 2^{bits}, n = {n:.3g}, ε = {epsilon:.3g}")
        cumulative = np.cumsum(curator.history.updated).astype(float)
        cumulative[cumulative == 0] = np.nan  # log axis: the curve starts at the first update
        count_bound = pmw.mw_update_count_bound(domain_size=d, alpha=alpha)
        artists["updates"].set_data(t, cumulative)
        artists["N"].set_ydata([curator.max_updates] * 2)
        artists["mw"].set_ydata([count_bound] * 2)
        ax_upd.set_ylim(0.8, 1.5 * max(curator.max_updates, count_bound))
        artists["upd_title"].set_text(
            f"{curator.updates} updates of N = {curator.max_updates}; "
            + ("11α/8 guaranteed" if guaranteed is not None else "α below Thm 4.3's: no guarantee")
        )
        return {
            "PMW max error": float(err_pmw[-1]),
            "Laplace per query max error": float(err_lap[-1]),
            "noisy histogram max error": float(err_hist[-1]),
            "Theorem 4.3's least alpha": float(least_alpha),
            "guaranteed error (11 alpha/8)": "none (alpha below the least)"
            if guaranteed is None
            else float(guaranteed),
            "updates": curator.updates,
            "N": curator.max_updates,
            "epsilon guaranteed (PMW's calibration)": float(epsilon),
            "epsilon spent (after the fact)": float(curator.privacy_spent),
        }

    controls = {
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=1),
        "n": log_slider("n", value=1e8, min_exp=4, max_exp=10, step=0.5),
        "alpha": float_slider("α", value=0.1, min=0.02, max=0.5, step=0.01),
        "bits": int_slider("log₂|X|", value=10, min=4, max=16),
    }
    return Panel(
        draw,
        controls,
        figsize=(10.5, 4.6),
        render=render,
        slow=lambda values, changed: values["bits"] not in cache,
        margins={"left": 0.075, "right": 0.985, "bottom": 0.27, "top": 0.92, "wspace": 0.22},
    )
