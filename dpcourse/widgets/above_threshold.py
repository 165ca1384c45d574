"""Panel of notebook 04: the exact output distribution of AboveThreshold on neighbours."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from .._validation import as_generator
from ..audit import max_privacy_loss
from ..plotting import color_for
from ._panel import Panel, float_slider, int_slider, log_slider

__all__ = ["ANSWER_SHAPES", "NEIGHBOUR_SHIFTS", "above_threshold_panel", "neighbouring_answers", "outcome_label"]

ANSWER_SHAPES = ("adversarial", "staircase", "random", "at threshold")
NEIGHBOUR_SHIFTS = ("+Δ early, −Δ last", "+Δ on all", "−Δ on all", "random ±Δ")


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def outcome_label(k: int, m: int) -> str:
    """``⊤``, ``⊥⊤``, ``⊥²⊤``, … for k < m, and ``⊥ᵐ`` (all ⊥) for k = m."""
    if k == m:
        return "⊥" + str(m).translate(_SUPERSCRIPT)
    return ("⊥" + (str(k).translate(_SUPERSCRIPT) if k > 1 else "") if k else "") + "⊤"


def neighbouring_answers(shape: str, shift: str, *, m: int, sensitivity: float, threshold: float, rng=0):
    """Query answers on D of the given ``shape`` and on D′ = D + a shift of at most Δ per query.

    ``"adversarial"`` with ``"+Δ early, −Δ last"`` is the lecture's q(D) = (0, …, 0, Δ),
    q(D′) = (Δ, …, Δ, 0).
    """
    gen = as_generator(rng)
    if shape == "adversarial":
        d = np.zeros(m)
        d[-1] = sensitivity
    elif shape == "staircase":
        d = np.linspace(threshold - 2 * sensitivity, threshold + 2 * sensitivity, m)
    elif shape == "random":
        d = threshold + sensitivity * gen.normal(0.0, 2.0, size=m)
    elif shape == "at threshold":
        d = np.full(m, float(threshold))
    else:
        raise ValueError(f"shape must be one of {', '.join(map(repr, ANSWER_SHAPES))}; got {shape!r}")
    if shift == "+Δ early, −Δ last":
        step = np.full(m, float(sensitivity))
        step[-1] = -sensitivity
    elif shift == "+Δ on all":
        step = np.full(m, float(sensitivity))
    elif shift == "−Δ on all":
        step = np.full(m, -float(sensitivity))
    elif shift == "random ±Δ":
        step = sensitivity * gen.uniform(-1.0, 1.0, size=m)
    else:
        raise ValueError(f"shift must be one of {', '.join(map(repr, NEIGHBOUR_SHIFTS))}; got {shift!r}")
    return d, d + step


def above_threshold_panel(*, render: bool = True) -> Panel:
    """Exact Pr[⊥ᵏ⊤] on D and D′ side by side, and the privacy loss of each outcome against ±ε."""

    def draw(fig, *, epsilon, sensitivity, m, threshold, shape, shift):
        d, d_prime = neighbouring_answers(shape, shift, m=m, sensitivity=sensitivity, threshold=threshold * sensitivity)
        result = max_privacy_loss(d, d_prime, threshold=threshold * sensitivity, epsilon=epsilon, sensitivity=sensitivity)
        outcomes = np.arange(m + 1)
        labels = [outcome_label(k, m) for k in range(m + 1)]
        ax_pmf, ax_loss = fig.subplots(1, 2)
        width = 0.4
        ax_pmf.bar(outcomes - width / 2, result.pmf_d, width, color=color_for("svt"), label="D")
        ax_pmf.bar(outcomes + width / 2, result.pmf_d_prime, width, color=color_for("laplace"), label="D′")
        ax_pmf.set_ylabel("exact probability")
        ax_pmf.set_title(f"AboveThreshold on m = {m} queries, ε = {epsilon:.3g}")
        ax_pmf.legend(fontsize=8)
        loss = np.where(np.maximum(result.pmf_d, result.pmf_d_prime) > 1e-12, result.loss, np.nan)
        ax_loss.axhspan(-epsilon, epsilon, color=color_for("bound"), alpha=0.08)
        ax_loss.axhline(epsilon, color=color_for("bound"), ls="--", label="±ε")
        ax_loss.axhline(-epsilon, color=color_for("bound"), ls="--")
        ax_loss.plot(outcomes, loss, "o-", color=color_for("svt"), ms=4, label="ln(Pr[D]/Pr[D′])")
        ax_loss.plot([result.worst_outcome], [loss[result.worst_outcome]], "o", ms=9, mfc="none",
                     color=color_for("exact"), label="largest |loss|")
        ax_loss.set_ylabel("privacy loss")
        ax_loss.legend(fontsize=8)
        for ax in (ax_pmf, ax_loss):
            ticks = outcomes if m <= 12 else outcomes[:: max(1, (m + 1) // 8)]
            ax.set_xticks(ticks, [labels[k] for k in ticks], fontsize=8)
            ax.set_xlabel("outcome")
            ax.grid(True, alpha=0.25)
        return {
            "max |privacy loss|": result.max_loss,
            "epsilon": epsilon,
            "loss / epsilon": result.max_loss / epsilon,
            "worst outcome": labels[result.worst_outcome],
        }

    controls = {
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=0.7, step=0.05),
        "sensitivity": log_slider("Δ", value=1.0, min_exp=-1, max_exp=1),
        "m": int_slider("m", value=8, min=1, max=40),
        "threshold": float_slider("T / Δ", value=0.5, min=-3.0, max=3.0, step=0.25),
        "shape": widgets.Dropdown(options=ANSWER_SHAPES, value="adversarial", description="q(D)"),
        "shift": widgets.Dropdown(options=NEIGHBOUR_SHIFTS, value="+Δ early, −Δ last", description="q(D′) − q(D)"),
    }
    return Panel(draw, controls, figsize=(11.0, 3.9), render=render, margins={"left": 0.07, "right": 0.98, "bottom": 0.17, "top": 0.9, "wspace": 0.22})
