"""Panel of notebook 05: the exact privacy loss of each SVT variant's counterexample, against its claim."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..plotting import color_for
from ..svt import VARIANTS, exact_variant_loss
from ._panel import Panel, int_slider, log_slider

__all__ = ["variant_loss_panel"]


def variant_loss_panel(*, render: bool = True) -> Panel:
    """Exact loss of the counterexample event against the number of queries m, for one variant.

    Controls: the variant, ε, c and the largest m. The claim (ε) and Lyu et al.'s true guarantee
    are drawn as lines; an infinite loss (an event impossible on D′) is drawn at the top edge.
    Each exact loss is computed once per (variant, ε, c, m): raising the largest m computes only
    the new points.

    Parameters
    ----------
    render : bool, optional
        Render the figure to the panel's image on each redraw (default True; False times the
        computation alone).

    Returns
    -------
    Panel
        The panel, drawn once for the controls' starting values.
    """

    @lru_cache(maxsize=4096)
    def loss(variant: str, m: int, epsilon: float, c: int) -> float:
        return float(exact_variant_loss(variant, m, epsilon=epsilon, c=c)[0])

    artists: dict[str, Any] = {}

    def build(fig: Figure) -> None:
        ax = fig.subplots()
        (artists["loss"],) = ax.plot(
            [], [], "o-", color=color_for("svt"), ms=4, label="exact loss of the counterexample"
        )
        (artists["infinite"],) = ax.plot(
            [], [], "^", color=color_for("randomized_response"), ms=8, label="infinite loss (impossible on D′)"
        )
        artists["claim"] = ax.axhline(1, color=color_for("bound"), ls="--", label="claimed: ε")
        artists["truth"] = ax.axhline(1, color=color_for("exact"), ls=":", label="true guarantee")
        ax.set_xlabel("number of queries m")
        ax.set_ylabel("privacy loss ln(Pr[D]/Pr[D′])")
        artists["title"] = ax.set_title(" ")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(nbins=6))
        artists["ax"] = ax

    def draw(fig: Figure, *, variant: str, epsilon: float, c: int, max_queries: int) -> dict[str, Any]:
        if not artists:
            build(fig)
        ax = artists["ax"]
        v = VARIANTS[variant]
        c, max_queries = int(c), int(max_queries)
        ms = np.arange(max(1, c + (variant == "alg4")), max_queries + 1)
        losses = np.array([loss(variant, int(m), float(epsilon), c) for m in ms])
        finite = np.isfinite(losses)
        truth = v.true_epsilon(epsilon, c)
        top = max(
            3 * epsilon, float(np.max(losses[finite], initial=0)) * 1.15, truth * 1.15 if np.isfinite(truth) else 0
        )
        artists["loss"].set_data(ms[finite], losses[finite])
        artists["infinite"].set_data(ms[~finite], np.full((~finite).sum(), top * 0.97))
        artists["claim"].set_ydata([epsilon, epsilon])
        artists["claim"].set_label(f"claimed: ε = {epsilon:.3g}")
        show_truth = bool(np.isfinite(truth) and not np.isclose(truth, epsilon))
        artists["truth"].set_visible(show_truth)
        if show_truth:
            artists["truth"].set_ydata([truth, truth])
            artists["truth"].set_label(f"true guarantee: {v.truth} = {truth:.3g}")
        handles = (
            [artists["loss"], artists["claim"]]
            + ([artists["infinite"]] if not finite.all() else [])
            + ([artists["truth"]] if show_truth else [])
        )
        if artists.get("handles") != handles:
            artists["legend"] = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.14), ncols=2)
            artists["handles"] = handles
        for text, handle in zip(artists["legend"].get_texts(), handles, strict=True):
            text.set_text(handle.get_label())
        ax.set_xlim(ms[0] - 0.5, ms[-1] + 0.5)
        ax.set_ylim(0, top)
        artists["title"].set_text(f"{v.name}: {v.flaw or 'no flaw'}")
        last = losses[-1]
        return {
            "variant": variant,
            "loss at largest m": float(last),
            "claimed epsilon": epsilon,
            "true guarantee": float(truth),
            "loss exceeds the claim": bool(last > epsilon * (1 + 1e-9)),
        }

    controls = {
        "variant": widgets.Dropdown(options=list(VARIANTS), value="alg4", description="variant"),
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=0.5, step=0.05),
        "c": int_slider("c", value=2, min=1, max=5),
        "max_queries": int_slider("largest m", value=24, min=4, max=40),
    }
    return Panel(
        draw,
        controls,
        figsize=(9.5, 4.2),
        render=render,
        margins={"left": 0.075, "right": 0.985, "bottom": 0.27, "top": 0.92},
    )
