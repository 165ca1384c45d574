"""Panel of notebook 03: the error of interval queries under each strategy, and a tree decomposition."""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import numpy as np
import scipy.linalg

from .. import factorization
from ..plotting import color_for, fast_log_axes
from ._panel import Panel, log_slider

__all__ = ["STRATEGIES", "interval_error_by_length", "strategy_by_name", "tree_panel"]

STRATEGIES = ("identity", "prefix", "tree", "wavelet")


def strategy_by_name(name: str, d: int, branching: int = 2) -> factorization.Strategy:
    """One of :data:`STRATEGIES` over d cells (``branching`` is used by the tree only)."""
    builders = {"identity": factorization.identity_strategy, "prefix": factorization.prefix_strategy,
                "wavelet": factorization.wavelet_strategy,
                "tree": lambda d: factorization.hierarchical_strategy(d, branching)}
    if name not in builders:
        raise ValueError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}; got {name!r}")
    return builders[name](d)


@lru_cache(maxsize=64)
def interval_error_by_length(name: str, d: int, branching: int, consistent: bool):
    """Mean, over all intervals of each length, of qᵀ(AᵀA)⁻¹q (least squares) or of the node count
    (canonical decomposition, no consistency) — the error per unit of noise variance.

    Returns ``(lengths, values, sensitivity)``. With least squares, Var(q·x̂) = v·qᵀ(AᵀA)⁻¹q for
    noise variance v; the sums over all intervals come from a 2-D prefix sum of (AᵀA)⁻¹.
    """
    strategy = strategy_by_name(name, d, branching)
    lengths = np.arange(1, d + 1)
    if name == "tree" and not consistent:
        # sum the noisy nodes of each interval's canonical decomposition: variance v·(number of nodes)
        gen = np.random.default_rng(d * 31 + branching)
        sampled = np.unique(np.geomspace(1, d, 40).astype(int))
        counts = []
        for length in sampled:
            starts = gen.integers(0, d - length + 1, size=8)
            counts.append(np.mean([len(factorization.canonical_decomposition(strategy, s, s + length - 1))
                                   for s in starts]))
        return sampled, np.array(counts), strategy.l1_sensitivity
    inverse = scipy.linalg.inv(strategy.gram(), assume_a="pos")
    prefix = np.zeros((d + 1, d + 1))
    prefix[1:, 1:] = inverse.cumsum(axis=0).cumsum(axis=1)
    s, t = np.triu_indices(d)
    var = prefix[t + 1, t + 1] - prefix[s, t + 1] - prefix[t + 1, s] + prefix[s, s]
    length = t - s + 1
    mean = np.bincount(length, weights=var, minlength=d + 1)[1:] / np.bincount(length, minlength=d + 1)[1:]
    return lengths, mean, strategy.l1_sensitivity


def _draw_decomposition(ax, d, branching, interval):
    tree = factorization.hierarchical_strategy(d, branching)
    s, t = interval
    chosen = set(factorization.canonical_decomposition(tree, s, t))
    for level, size in enumerate(tree.level_sizes):
        count = -(-d // size)
        spans = [(j * size, min(size, d - j * size)) for j in range(count)]
        picked = [span for j, span in enumerate(spans) if (level, j) in chosen]
        ax.broken_barh(spans, (level - 0.4, 0.8), facecolors="white", edgecolors=color_for("bound"), linewidth=0.4)
        if picked:
            ax.broken_barh(picked, (level - 0.4, 0.8), facecolors=color_for("tree"), edgecolors="black", linewidth=0.8)
    ax.axvspan(s, t + 1, color=color_for("svt"), alpha=0.12)
    ax.set_xlim(0, d)
    ax.set_ylim(-0.6, len(tree.level_sizes) - 0.4)
    ax.set_xlabel("cell")
    ax.set_ylabel("tree level (0 = leaves)")
    ax.set_title(f"[{s}, {t}] = {len(chosen)} nodes of the {branching}-ary tree "
                 f"(at most {2 * (branching - 1) * (len(tree.level_sizes) - 1)})", fontsize=10)
    return len(chosen)


def tree_panel(*, render: bool = True) -> Panel:
    """Per-query error of interval queries against their length, for a strategy; and a drawn decomposition.

    Controls: d, ε, the branching b, the strategy, consistency (least squares) on or off, and
    an interval to decompose. The per-length curves depend on ε only through the noise variance
    2(‖A‖₁/ε)², so they are computed once per (strategy, d, b) and rescaled.
    """

    def draw(fig, *, d, epsilon, branching, strategy, consistency, interval):
        d = int(d)
        s, t = (min(interval[0], d - 1), min(interval[1], d - 1))
        ax_err, ax_tree = fig.subplots(1, 2, width_ratios=[1.0, 1.2])
        numbers = {}
        for name, style, alpha in (("identity", ":", 0.7), (strategy, "-", 1.0)):
            consistent = consistency or name != "tree"
            lengths, unit, sensitivity = interval_error_by_length(name, d, int(branching), consistent)
            curve = 2 * (sensitivity / epsilon) ** 2 * unit
            label = f"{name}{'' if name != 'tree' else f', b = {branching}'}" + ("" if consistent else ", no consistency")
            ax_err.plot(lengths, curve, style, color=color_for("tree" if name == "tree" else "laplace" if name == "identity"
                                                                else "matrix_mechanism"), alpha=alpha, label=label)
            numbers[f"{name}: error at length 1"] = float(curve[0])
            numbers[f"{name}: error at length d"] = float(curve[-1])
        fast_log_axes(ax_err)
        ax_err.set_xlabel("interval length")
        ax_err.set_ylabel("expected squared error of the answer")
        ax_err.set_title(f"Laplace, d = {d}, ε = {epsilon:.3g}", fontsize=10)
        ax_err.legend(fontsize=8)
        ax_err.grid(True, alpha=0.25)
        numbers["nodes in the decomposition"] = _draw_decomposition(ax_tree, min(d, 256), int(branching),
                                                                    (min(s, 255), min(t, 255)))
        return numbers

    controls = {
        "d": widgets.Dropdown(options=[16, 64, 256, 1024], value=256, description="d"),
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=1, step=0.1),
        "branching": widgets.Dropdown(options=[2, 3, 4, 8, 16, 32], value=2, description="b"),
        "strategy": widgets.Dropdown(options=STRATEGIES, value="tree", description="strategy"),
        "consistency": widgets.Checkbox(value=True, description="consistency (least squares)"),
        "interval": widgets.IntRangeSlider(value=(37, 200), min=0, max=255, description="interval",
                                           continuous_update=False),
    }
    return Panel(draw, controls, figsize=(11.5, 4.0), render=render,
                 margins={"left": 0.07, "right": 0.98, "bottom": 0.14, "top": 0.9, "wspace": 0.2})
