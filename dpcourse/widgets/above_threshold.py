"""Panel of notebook 04: the exact output distribution of AboveThreshold on neighbours."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from .._validation import RngLike, as_generator, check_integer
from ..plotting import color_for, fast_log_axes
from ..svt import max_privacy_loss, sparse_accuracy_margins, sparse_vector_accuracy_bound, sparse_vector_scales
from ._panel import Panel, delta_slider, float_slider, format_delta, int_slider, log_slider

__all__ = [
    "ANSWER_SHAPES",
    "NEIGHBOUR_SHIFTS",
    "above_threshold_panel",
    "neighbouring_answers",
    "outcome_label",
    "sparse_delta_panel",
]

ANSWER_SHAPES = ("adversarial", "staircase", "random", "at threshold")
NEIGHBOUR_SHIFTS = ("+Δ early, −Δ last", "+Δ on all", "−Δ on all", "random ±Δ")


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def outcome_label(k: int, m: int) -> str:
    """``⊤``, ``⊥⊤``, ``⊥²⊤``, … for k < m, and ``⊥ᵐ`` (all ⊥) for k = m.

    Parameters
    ----------
    k : int
        The outcome: the number of ⊥ before the ⊤, 0 ≤ k ≤ m (k = m: no ⊤ at all). Not checked.
    m : int
        The number of queries.

    Returns
    -------
    str
        The label, with the count as a Unicode superscript (``⊥¹²⊤`` for k = 12).
    """
    if k == m:
        return "⊥" + str(m).translate(_SUPERSCRIPT)
    return ("⊥" + (str(k).translate(_SUPERSCRIPT) if k > 1 else "") if k else "") + "⊤"


def neighbouring_answers(
    shape: str, shift: str, *, m: int, sensitivity: float, threshold: float, rng: RngLike = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Query answers on D of the given ``shape`` and on D′ = D + a shift of at most Δ per query.

    ``"adversarial"`` with ``"+Δ early, −Δ last"`` is the notebook's own hard pair (not the lecture's)
    q(D) = (0, …, 0, Δ), q(D′) = (Δ, …, Δ, 0).

    Parameters
    ----------
    shape : str
        One of :data:`ANSWER_SHAPES`: ``"adversarial"`` (zeros, then Δ last), ``"staircase"`` (evenly
        from T − 2Δ to T + 2Δ), ``"random"`` (T + Δ·N(0, 2²) each) or ``"at threshold"`` (all T).
    shift : str
        One of :data:`NEIGHBOUR_SHIFTS`: q(D′) − q(D) is +Δ on all but the last query and −Δ on it,
        +Δ on all, −Δ on all, or uniform in [−Δ, Δ] on each.
    m : int
        The number of queries.
    sensitivity : float
        Δ, the largest change of a query between neighbours.
    threshold : float
        The threshold T the answers are placed around.
    rng : int, numpy.random.Generator or None, optional
        Seed or generator for the ``"random"`` shape and the ``"random ±Δ"`` shift (default 0).

    Returns
    -------
    answers_d : numpy.ndarray
        Shape (m,): the answers on D.
    answers_d_prime : numpy.ndarray
        Shape (m,): the answers on D′, within Δ of ``answers_d`` in every query.

    Raises
    ------
    ValueError
        If ``shape`` or ``shift`` is not one of its options, or ``rng`` is a negative seed.
    TypeError
        If ``rng`` is not a seed or a Generator.
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
    """Exact Pr[⊥ᵏ⊤] on D and D′ side by side, and the privacy loss of each outcome against ±ε.

    Controls: ε, the number of queries m, the threshold T in units of Δ, the answers on D and
    how D′ differs. There is no Δ control: answers, threshold and both noise scales (2Δ/ε,
    4Δ/ε) all scale with Δ, so the outcome distribution, and the picture, do not depend on it.
    Δ = 1 throughout.

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
    sensitivity = 1.0
    artists: dict[str, Any] = {}

    def build(fig: Figure) -> None:
        ax_pmf, ax_loss = fig.subplots(1, 2)
        ax_pmf.set_ylabel("exact probability")
        artists["title"] = ax_pmf.set_title(" ")
        artists["span"] = ax_loss.axhspan(-1, 1, color=color_for("bound"), alpha=0.08)
        artists["upper"] = ax_loss.axhline(1, color=color_for("bound"), ls="--", label="±ε")
        artists["lower"] = ax_loss.axhline(-1, color=color_for("bound"), ls="--")
        (artists["loss"],) = ax_loss.plot([], [], "o-", color=color_for("svt"), ms=4, label="ln(Pr[D]/Pr[D′])")
        (artists["worst"],) = ax_loss.plot(
            [], [], "o", ms=10, mfc="none", color=color_for("exact"), label="largest |loss|"
        )
        ax_loss.set_ylabel("privacy loss")
        ax_loss.set_title("privacy loss of each outcome")
        ax_loss.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncols=3)
        for ax in (ax_pmf, ax_loss):
            ax.set_xlabel("outcome")
        artists["axes"] = (ax_pmf, ax_loss)
        artists["m"] = None

    def set_outcomes(m: int) -> None:
        """New bars and tick labels when the number of outcomes changes."""
        ax_pmf, ax_loss = artists["axes"]
        for bars in artists.get("bars", ()):
            bars.remove()
        outcomes = np.arange(m + 1)
        width = 0.4
        artists["bars"] = (
            ax_pmf.bar(outcomes - width / 2, np.zeros(m + 1), width, color=color_for("svt"), label="D"),
            ax_pmf.bar(outcomes + width / 2, np.zeros(m + 1), width, color=color_for("laplace"), label="D′"),
        )
        if ax_pmf.get_legend() is None:
            ax_pmf.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncols=2)
        ticks = outcomes if m <= 8 else np.union1d(outcomes[:: -(-(m + 1) // 7)], [m])  # at most 8 labels, ⊥ᵐ included
        for ax in (ax_pmf, ax_loss):
            ax.set_xticks(ticks, [outcome_label(int(k), m) for k in ticks])
            ax.set_xlim(-0.6, m + 0.6)
        artists["m"] = m

    def draw(fig: Figure, *, epsilon: float, m: int, threshold: float, shape: str, shift: str) -> dict[str, Any]:
        if not artists:
            build(fig)
        m = int(m)
        if artists["m"] != m:
            set_outcomes(m)
        ax_pmf, ax_loss = artists["axes"]
        d, d_prime = neighbouring_answers(shape, shift, m=m, sensitivity=sensitivity, threshold=threshold * sensitivity)
        result = max_privacy_loss(
            d, d_prime, threshold=threshold * sensitivity, epsilon=epsilon, sensitivity=sensitivity
        )
        for bars, heights in zip(artists["bars"], (result.pmf_d, result.pmf_d_prime), strict=True):
            for patch, height in zip(bars.patches, heights, strict=True):
                patch.set_height(height)
        ax_pmf.set_ylim(0, 1.08 * max(result.pmf_d.max(), result.pmf_d_prime.max()))
        artists["title"].set_text(f"AboveThreshold on m = {m} queries, ε = {epsilon:.3g}")
        outcomes = np.arange(m + 1)
        loss = np.where(np.maximum(result.pmf_d, result.pmf_d_prime) > 1e-12, result.loss, np.nan)
        artists["span"].set_y(-epsilon)
        artists["span"].set_height(2 * epsilon)
        artists["upper"].set_ydata([epsilon, epsilon])
        artists["lower"].set_ydata([-epsilon, -epsilon])
        artists["loss"].set_data(outcomes, loss)
        artists["worst"].set_data([result.worst_outcome], [loss[result.worst_outcome]])
        top = 1.15 * max(epsilon, float(np.nanmax(np.abs(loss), initial=0.0)))
        ax_loss.set_ylim(-top, top)
        return {
            "max |privacy loss|": result.max_loss,
            "epsilon": epsilon,
            "loss / epsilon": result.max_loss / epsilon,
            "worst outcome": outcome_label(result.worst_outcome, m),
        }

    controls = {
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=0.7, step=0.05),
        "m": int_slider("m", value=8, min=1, max=40),
        "threshold": float_slider("T / Δ", value=0.5, min=-3.0, max=3.0, step=0.25),
        "shape": widgets.Dropdown(options=ANSWER_SHAPES, value="adversarial", description="q(D)"),
        "shift": widgets.Dropdown(options=NEIGHBOUR_SHIFTS, value="+Δ early, −Δ last", description="q(D′) − q(D)"),
    }
    return Panel(
        draw,
        controls,
        figsize=(10.5, 4.6),
        render=render,
        margins={"left": 0.075, "right": 0.985, "bottom": 0.27, "top": 0.92, "wspace": 0.22},
    )


def sparse_delta_panel(
    *,
    num_queries: int = 512,
    c_values: tuple[int, ...] = (1, 4, 16, 64, 256, 512),
    trials: int = 600,
    rng: RngLike = 2026,
    render: bool = True,
) -> Panel:
    """SparseVector's measured accuracy against c for δ = 0 and a chosen δ > 0, with Theorem 3.26's bounds.

    Controls: δ and β. ε = 1 (α scales as 1/ε for both calibrations, so ε would only relabel the
    axis). The hard case of :func:`dpcourse.svt.sparse_accuracy_margins` is drawn once per c with
    δ = 0; a trial's smallest correct α is linear in the noise (both noises scale together), so the
    δ > 0 calibration's margins are the same draws times σ(δ)/σ(0), the ratio of the two threshold
    scales: a redraw takes quantiles and rescales, it draws nothing.

    Parameters
    ----------
    num_queries : int, optional
        k ≥ 1, the number of queries of the hard case (default 512).
    c_values : tuple of int, optional
        The numbers of discoveries c on the axis, each in [1, k] (default 1, 4, 16, 64, 256, 512).
    trials : int, optional
        The number of runs ≥ 1 whose margins are measured for each c (default 600).
    rng : int, numpy.random.Generator or None, optional
        Seed or generator for those runs, all drawn when the panel is made (default 2026).
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
        If ``num_queries`` or ``trials`` < 1, ``c_values`` is empty, a c is not in [1, k], or ``rng`` is a
        negative seed (raised by :func:`dpcourse.svt.sparse_accuracy_margins`).
    TypeError
        If ``num_queries``, ``trials`` or a c is not an integer, or ``rng`` is not a seed or a Generator.
    """
    c_grid = np.array([check_integer(c, "c_values", minimum=1) for c in c_values], dtype=int)  # never truncated
    if c_grid.size == 0:
        raise ValueError("c_values must hold at least one whole number >= 1")
    gen = as_generator(rng)
    margins = [sparse_accuracy_margins(num_queries, c=int(c), epsilon=1.0, rng=gen, trials=trials) for c in c_grid]
    sigma_pure = np.array([sparse_vector_scales(epsilon=1.0, c=int(c))[0] for c in c_grid])
    artists: dict[str, Any] = {}

    def build(fig: Figure) -> None:
        ax = fig.subplots()
        (artists["pure"],) = ax.plot([], [], "o", color=color_for("svt"), label="δ = 0: measured")
        (artists["pure_bound"],) = ax.plot([], [], "--", color=color_for("svt"), label="δ = 0: Thm 3.26")
        (artists["approx"],) = ax.plot([], [], "^", color=color_for("gaussian"), label="δ > 0: measured")
        (artists["approx_bound"],) = ax.plot([], [], "--", color=color_for("gaussian"), label="δ > 0: Thm 3.26")
        artists["cross"] = ax.axvline(1.0, color=color_for("bound"), ls=":", label="c = 8 ln(1/δ)")
        fast_log_axes(ax)
        ax.set_xlim(0.7, 1.5 * c_grid.max())
        ax.set_xlabel("discoveries c")
        ax.set_ylabel("accuracy α (ε = 1)")
        artists["title"] = ax.set_title(" ")
        ax.grid(True, which="major", alpha=0.25)
        ax.legend(fontsize=8, loc="upper left")
        artists["ax"] = ax

    def draw(fig: Figure, *, delta: float, beta: float) -> dict[str, Any]:
        if not artists:
            build(fig)
        measured = np.array([np.quantile(m, 1 - beta) for m in margins])
        sigma = np.array([sparse_vector_scales(epsilon=1.0, c=int(c), delta=delta)[0] for c in c_grid])
        approx = measured * sigma / sigma_pure
        bound_pure, bound_approx = (
            np.array(
                [
                    sparse_vector_accuracy_bound(num_queries=num_queries, c=int(c), beta=beta, epsilon=1.0, delta=d)
                    for c in c_grid
                ]
            )
            for d in (0.0, delta)
        )
        crossover = 8 * np.log(1 / delta)
        for name, values in (
            ("pure", measured),
            ("pure_bound", bound_pure),
            ("approx", approx),
            ("approx_bound", bound_approx),
        ):
            artists[name].set_data(c_grid, values)
        artists["cross"].set_xdata([crossover, crossover])
        ax = artists["ax"]
        ax.set_ylim(0.5 * min(measured.min(), approx.min()), 2 * max(bound_pure.max(), bound_approx.max()))
        artists["title"].set_text(
            f"SparseVector on k = {num_queries} queries, δ = {format_delta(delta)}, β = {beta:.3g}"
        )
        better = c_grid[approx < measured]
        return {
            "delta": delta,
            "crossover 8 ln(1/δ)": crossover,
            "smallest c where δ > 0 is more accurate": int(better.min()) if better.size else "none up to 512",
            "measured α at c = 1, δ = 0 / δ > 0": f"{measured[0]:.4g} / {approx[0]:.4g}",
        }

    controls = {
        "delta": delta_slider("δ", value=1e-6, min_exp=-12, max_exp=-2),
        "beta": log_slider("β", value=0.05, min_exp=-3, max_exp=-0.7, step=0.1),
    }
    return Panel(draw, controls, figsize=(9.6, 4.2), render=render)
