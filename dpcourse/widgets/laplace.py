"""Panels of notebook 01 (Laplace utility)."""

from __future__ import annotations

import numpy as np

from .._validation import as_generator, check_integer
from ..bounds import laplace_max_error_bound, laplace_max_error_quantile, laplace_max_error_tail
from ..experiments import empirical_tail
from ..plotting import color_for, fast_log_axes, plot_theory
from ._panel import Panel, int_slider, log_slider

__all__ = ["laplace_tail_panel"]


def laplace_tail_panel(*, trials: int = 4000, max_k: int = 1000, rng=2026, render: bool = True) -> Panel:
    """Theorem 3.8 live: the tail of ‖f(x) − y‖∞ for k Laplace coordinates, against the bound.

    Controls: ε, k, β and Δf. The ``trials × max_k`` standard Laplace noise is drawn once;
    since Lap(b) = b·Lap(1) and the error of the first k coordinates is a running maximum,
    every redraw only rescales one column of the running maximum (O(trials) work).

    Left: P[‖Z‖∞ ≥ t] measured (points with Clopper–Pearson intervals), exact
    (1 − (1 − e^{−t/b})ᵏ) and the level ln(k/β)·Δf/ε. Right: the histogram of the error.
    """
    trials = check_integer(trials, "trials", minimum=100)
    max_k = check_integer(max_k, "max_k", minimum=1)
    abs_noise = np.abs(as_generator(rng).laplace(0.0, 1.0, size=(trials, max_k)))
    running_max = np.maximum.accumulate(abs_noise, axis=1)
    del abs_noise

    def draw(fig, *, epsilon, k, beta, sensitivity):
        b = sensitivity / epsilon
        errors = b * running_max[:, k - 1]
        bound = laplace_max_error_bound(k=k, beta=beta, sensitivity=sensitivity, epsilon=epsilon)
        quantile = laplace_max_error_quantile(k=k, beta=beta, sensitivity=sensitivity, epsilon=epsilon)
        levels = np.linspace(0.0, max(1.25 * bound, float(errors.max())), 200)
        tail = empirical_tail(errors, levels)
        at_bound = empirical_tail(errors, [bound])

        ax_tail, ax_hist = fig.subplots(1, 2)
        shown = tail.probability > 0
        ax_tail.fill_between(levels[shown], tail.low[shown], tail.high[shown], color=color_for("laplace"),
                             alpha=0.25, lw=0, label="95% interval")
        ax_tail.plot(levels[shown], tail.probability[shown], ".", ms=3, color=color_for("laplace"),
                         label=f"measured ({trials} trials)")
        plot_theory(ax_tail, levels, laplace_max_error_tail(levels, k=k, sensitivity=sensitivity, epsilon=epsilon),
                    method="exact", label="exact 1 − (1 − e^(−t/b))^k")
        ax_tail.axvline(bound, color=color_for("bound"), ls="--", label="Thm 3.8: ln(k/β)·Δf/ε")
        ax_tail.axhline(beta, color=color_for("bound"), ls=":", label="β")
        fast_log_axes(ax_tail, x=False)
        ax_tail.set_ylim(max(0.5 / trials, 1e-5), 1.5)
        ax_tail.set_xlabel("error level t")
        ax_tail.set_ylabel("P[‖f(x) − y‖∞ ≥ t]")
        ax_tail.set_title(f"k = {k}, b = Δf/ε = {b:.3g}")
        ax_tail.legend(fontsize=8, loc="upper right")
        ax_tail.grid(True, which="both", alpha=0.25)

        ax_hist.hist(errors, bins=60, histtype="stepfilled", color=color_for("laplace"), alpha=0.7)
        ax_hist.axvline(quantile, color=color_for("exact"), label=f"exact {1 - beta:.3g}-quantile")
        ax_hist.axvline(bound, color=color_for("bound"), ls="--", label="Thm 3.8 level")
        ax_hist.set_xlabel("‖f(x) − y‖∞")
        ax_hist.set_ylabel("trials")
        ax_hist.legend(fontsize=8)
        return {
            "theorem 3.8 level": bound,
            "exact quantile": quantile,
            "measured P[error >= level]": float(at_bound.probability[0]),
            "95% interval": [float(at_bound.low[0]), float(at_bound.high[0])],
            "beta": beta,
            "mean max error": float(errors.mean()),
        }

    controls = {
        "epsilon": log_slider("ε", value=1.0, min_exp=-2, max_exp=1),
        "k": int_slider("k", value=100, min=1, max=max_k),
        "beta": log_slider("β", value=0.05, min_exp=-3, max_exp=-0.31, step=0.01),
        "sensitivity": log_slider("Δf", value=1.0, min_exp=0, max_exp=2),
    }
    return Panel(draw, controls, figsize=(10.5, 3.9), render=render)
