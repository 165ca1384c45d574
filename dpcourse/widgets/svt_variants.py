"""Notebook 05's panel and instruments: the exact loss of each SVT variant's counterexample, audits, top-c studies.

:func:`variant_loss_panel` is the panel; the other functions are the bookkeeping behind the notebook's
tables and figures, so that a cell the student reads says only what is measured:
:func:`exact_against_simulation` (Section 2), :func:`draw_alg4_losses` (Section 3), :func:`verdict_table`
(Section 5), :func:`draw_p_value_scans` and :func:`draw_top_c_ncs` (*Going further*).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .._validation import ArrayLike, RngLike, as_generator, check_integer
from ..audit import AuditResult, ScanResult, pattern_frequency
from ..plotting import color_for, fast_log_axes
from ..svt import VARIANTS, TopCScores, exact_variant_loss, variant_pattern_probability
from ..tables import Table
from ._panel import Panel, int_slider, log_slider

__all__ = [
    "draw_alg4_losses",
    "draw_p_value_scans",
    "draw_top_c_ncs",
    "exact_against_simulation",
    "variant_loss_panel",
    "verdict_table",
]


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
            "claimed ε": epsilon,
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


def _pattern_text(pattern: Sequence[Any]) -> str:
    """``⊥ ⊤ ·`` for the codes −∞, +∞, NaN, and ``∈[a, b]`` for an interval of released values."""
    words = []
    for entry in pattern:
        if isinstance(entry, tuple):
            words.append(f"∈{list(entry)}")
        else:
            words.append("·" if np.isnan(entry) else "⊤" if entry > 0 else "⊥")
    return " ".join(words)


def exact_against_simulation(
    answers: ArrayLike,
    patterns: Mapping[str, Sequence[Any]],
    *,
    threshold: float,
    epsilon: float,
    c: int,
    trials: int,
    rng: RngLike = None,
) -> Table:
    """Each variant's exact probability of one output pattern beside its frequency in ``trials`` runs.

    For each variant in ``patterns`` (in order) the exact probability comes from
    :func:`~dpcourse.svt.variant_pattern_probability` and the frequency from ``trials`` runs of the
    variant (:func:`~dpcourse.audit.pattern_frequency`); |z| is their gap in standard errors of the
    frequency, so below 3 is ordinary sampling noise.

    Parameters
    ----------
    answers : array_like, shape (m,)
        The query answers q(D).
    patterns : mapping of str to sequence
        Variant key → output pattern: −∞ for ⊥, +∞ for ⊤, NaN for not answered, or a ``(low, high)``
        interval of a released value.
    threshold : float
        The threshold T.
    epsilon : float
        The ε each variant is run with, > 0.
    c : int
        The number of ⊤ after which a variant stops, ≥ 1.
    trials : int
        Runs per variant, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator; the variants run one after the other from it.

    Returns
    -------
    dpcourse.tables.Table
        Columns variant, pattern, exact, measured and |z|.

    Raises
    ------
    ValueError
        If ``trials`` is not an integer ≥ 2, or as the library functions it calls.
    TypeError
        As the library functions it calls.
    """
    trials, gen, rows = check_integer(trials, "trials", minimum=2), as_generator(rng), []
    answers = np.asarray(answers, dtype=float)
    for key, pattern in patterns.items():
        exact = variant_pattern_probability(key, answers, pattern, threshold=threshold, epsilon=epsilon, c=c)
        runs = VARIANTS[key].run(answers, threshold=threshold, epsilon=epsilon, c=c, trials=trials, rng=gen)
        measured = pattern_frequency(runs, pattern)
        z = abs(measured - exact) / np.sqrt(exact * (1 - exact) / trials)
        rows.append([key, _pattern_text(pattern), f"{exact:.5f}", f"{measured:.5f}", f"{z:.2f}"])
    shown = ", ".join(f"{a:g}" for a in answers)
    return Table(
        ["variant", f"pattern on q = ({shown})", "exact", "measured", "|z|"],
        rows,
        caption=f"ε = {epsilon:g}, c = {c}, threshold {threshold:g}, {trials:,} runs",
    )


def draw_alg4_losses(ax: Axes, cs: Sequence[int] = (1, 2, 3), *, epsilon: float = 1.0) -> dict[int, tuple[int, float]]:
    """Alg. 4's exact counterexample loss against the number of queries m, one line per c, with (1 + 6c)ε/4.

    The loss of ⊥^{m−c}⊤^c on (0^{m−c}, Δ^c) / (Δ^{m−c}, 0^c) (:func:`~dpcourse.svt.exact_variant_loss`) for
    m = c + 1, c + 3, …, c + 39; Lyu et al.'s bound (1 + 6c)ε/4 dotted, the claim ε dashed.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    cs : sequence of int, optional
        The values of c, each in [1, 3] (default 1, 2, 3).
    epsilon : float, optional
        The claimed ε, > 0 (default 1).

    Returns
    -------
    dict of int to (int, float)
        c → (the largest m drawn, its exact loss).

    Raises
    ------
    ValueError
        If a c is not in [1, 3] or ``epsilon`` is not > 0 (the shipped table holds c ≤ 3).
    TypeError
        If a c is not an integer or ``epsilon`` is not a number.
    """
    last = {}
    for c in cs:
        c = check_integer(c, "cs", minimum=1, maximum=3)
        ms = np.arange(c + 1, c + 40, 2)
        losses = [exact_variant_loss("alg4", int(m), epsilon=epsilon, c=c)[0] for m in ms]
        ax.plot(
            ms, losses, ["o-", "s-", "^-"][c - 1], ms=3, color=color_for("svt"), alpha=0.4 + 0.2 * c, label=f"c = {c}"
        )
        ax.axhline((1 + 6 * c) * epsilon / 4, color=color_for("exact"), ls=":", lw=1)
        last[c] = (int(ms[-1]), float(losses[-1]))
    ax.axhline(epsilon, color=color_for("bound"), ls="--", label=f"claim ε = {epsilon:g}")
    ax.set_xlabel("number of queries m")
    ax.set_ylabel("exact privacy loss")
    ax.set_title("Alg. 4 (dotted: (1 + 6c)ε/4)")
    ax.legend(fontsize=9, loc="center right")
    return last


def verdict_table(results: Mapping[str, AuditResult], pairs: Mapping[str, str]) -> Table:
    """One row per audit: the variant, the neighbouring pair, the p-value, the lower bound on ε and the verdict.

    Parameters
    ----------
    results : mapping of str to dpcourse.audit.AuditResult
        Variant key → its audit (all at the same claimed ε).
    pairs : mapping of str to str
        Variant key → the name of the pair it was audited on.

    Returns
    -------
    dpcourse.tables.Table
        Captioned with the claimed ε of the first audit.

    Raises
    ------
    ValueError
        If ``results`` is empty.
    """
    if not results:
        raise ValueError("results must hold at least one audit")
    claim = next(iter(results.values())).claimed_epsilon
    rows = [
        [
            key,
            pairs[key],
            f"{r.p_value:.2g}",
            f"{r.epsilon_lower_bound:.3f}",
            f"VIOLATES ε = {r.claimed_epsilon:g}" if r.flagged else f"consistent with ε = {r.claimed_epsilon:g}",
        ]
        for key, r in results.items()
    ]
    return Table(
        ["variant", "pair (D = all 1)", "p-value", "ε ≥", "verdict"], rows, caption=f"Audits at a claimed ε = {claim:g}"
    )


def draw_p_value_scans(
    ax: Axes,
    results: Mapping[str, AuditResult],
    test_epsilons: ArrayLike,
    *,
    true_epsilon: tuple[str, float] | None = None,
) -> dict[str, ScanResult]:
    """Each audit's p-value over the test ε, from its one set of test runs (:meth:`AuditResult.scan`).

    Draws the level and the claimed ε of the first audit as lines, and ``true_epsilon`` (a label and a value) when
    given.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    results : mapping of str to dpcourse.audit.AuditResult
        Label → audit.
    test_epsilons : array_like
        The test ε's, each ≥ 0.
    true_epsilon : (str, float) or None, optional
        A true guarantee to mark, as (label, ε).

    Returns
    -------
    dict of str to dpcourse.audit.ScanResult
        Label → its scan.

    Raises
    ------
    ValueError
        If ``results`` is empty, or as :meth:`AuditResult.scan`.
    """
    if not results:
        raise ValueError("results must hold at least one audit")
    scans = {}
    for (label, result), style in zip(results.items(), ["o-", "s--", "^:", "d-."], strict=False):
        scans[label] = result.scan(test_epsilons)
        ax.plot(
            scans[label].test_epsilons,
            scans[label].p_values,
            style,
            ms=3,
            label=f"{label}, claims ε = {result.claimed_epsilon:g}",
        )
    first = next(iter(results.values()))
    ax.axhline(first.level, color=color_for("bound"), ls=":", label=f"level {first.level:g}")
    ax.axvline(first.claimed_epsilon, color="grey", lw=0.8, label="claimed ε")
    if true_epsilon is not None:
        ax.axvline(true_epsilon[1], color=color_for("exact"), ls="-.", lw=1, label=true_epsilon[0])
    ax.set_xlabel("test ε")
    ax.set_ylabel("p-value")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=9)
    ax.grid(True, alpha=0.25)
    return scans


def draw_top_c_ncs(ax: Axes, scores: TopCScores) -> None:
    """NCS against ε (log axis): the exponential mechanism as points on a line, each SVT-ReTr as a line.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    scores : dpcourse.svt.TopCScores
        As :func:`dpcourse.svt.non_interactive_top_c` returns.
    """
    retraversals = [m for m in scores.methods if m.startswith("SVT-ReTr")]
    ax.plot(
        scores.epsilons,
        scores.mean("exponential mechanism", "NCS"),
        "o-",
        ms=4,
        color=color_for("exponential"),
        label="exponential mechanism (no threshold)",
    )
    for i, method in enumerate(retraversals):
        raised = float(method.split("+")[1].strip().rstrip("D"))  # "SVT-ReTr + 3D": the threshold raised by 3D
        ax.plot(
            scores.epsilons,
            scores.mean(method, "NCS"),
            ["-", ":", "--", "-."][i % 4],
            color=color_for("svt"),
            alpha=max(1.0 - 0.12 * raised, 0.3),
            label=method.replace("SVT-ReTr +", "SVT-ReTr, threshold +"),
        )
    fast_log_axes(ax, y=False)
    ax.set_xlabel("ε")
    ax.set_ylabel("NCS")
    ax.grid(True, alpha=0.25)
    ax.legend(fontsize=8)
