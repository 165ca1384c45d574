"""Panel of notebook 05: the exact privacy loss of each SVT variant's counterexample, against its claim."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..audit import exact_variant_loss
from ..plotting import color_for
from ..svt_variants import VARIANTS
from ._panel import Panel, int_slider, log_slider

__all__ = ["variant_loss_panel"]


def variant_loss_panel(*, render: bool = True) -> Panel:
    """Exact loss of the counterexample event against the number of queries m, for one variant.

    Controls: the variant, ε, c and the largest m. The claim (ε) and Lyu et al.'s true guarantee
    are drawn as lines; an infinite loss (an event impossible on D′) is drawn at the top edge.
    """

    def draw(fig, *, variant, epsilon, c, max_queries):
        v = VARIANTS[variant]
        ms = np.arange(max(1, c + (variant == "alg4")), max_queries + 1)
        losses = np.array([exact_variant_loss(variant, int(m), epsilon=epsilon, c=c)[0] for m in ms])
        ax = fig.subplots()
        finite = np.isfinite(losses)
        top = max(3 * epsilon, float(np.max(losses[finite], initial=0)) * 1.15, v.true_epsilon(epsilon, c) * 1.15
                  if np.isfinite(v.true_epsilon(epsilon, c)) else 0)
        ax.plot(ms[finite], losses[finite], "o-", color=color_for("svt"), ms=4, label="exact loss of the counterexample")
        if not finite.all():
            ax.plot(ms[~finite], np.full((~finite).sum(), top * 0.97), "^", color=color_for("randomized_response"), ms=8,
                    label="infinite loss (impossible on D′)")
        ax.axhline(epsilon, color=color_for("bound"), ls="--", label=f"claimed: ε = {epsilon:.3g}")
        truth = v.true_epsilon(epsilon, c)
        if np.isfinite(truth) and not np.isclose(truth, epsilon):
            ax.axhline(truth, color=color_for("exact"), ls=":", label=f"true guarantee: {v.truth} = {truth:.3g}")
        ax.set_ylim(0, top)
        ax.set_xlabel("number of queries m")
        ax.set_ylabel("privacy loss ln(Pr[D]/Pr[D′])")
        ax.set_title(f"{v.name}: {v.flaw or 'no flaw'}", fontsize=10)
        ax.grid(True, alpha=0.25)
        ax.legend(fontsize=8, loc="upper left")
        last = losses[-1]
        return {"variant": variant, "loss at largest m": float(last), "claimed epsilon": epsilon,
                "true guarantee": float(truth), "loss exceeds the claim": bool(last > epsilon * (1 + 1e-9))}

    controls = {
        "variant": widgets.Dropdown(options=list(VARIANTS), value="alg4", description="variant"),
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=0.5, step=0.05),
        "c": int_slider("c", value=2, min=1, max=5),
        "max_queries": int_slider("largest m", value=24, min=4, max=40),
    }
    return Panel(draw, controls, figsize=(8.0, 4.0), render=render,
                 margins={"left": 0.09, "right": 0.98, "bottom": 0.13, "top": 0.9}, clear=True)
