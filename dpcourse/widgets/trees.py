"""Panel of notebook 03: the error of interval queries under each strategy, and a tree decomposition.

The panel's curves (the mean, over all intervals of each length, of qᵀ(AᵀA)⁻¹q) are exact and
cost up to a second each at d = 1024, so they are shipped precomputed for every choice the
panel offers, in ``dpcourse/data/interval_errors.npz``. Regenerate that file with
``python -m dpcourse.data`` after changing a strategy; ``tests/widgets/test_trees.py``
recomputes entries and compares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .. import linear_queries
from .._validation import check_choice, check_integer
from ..data import DIRECTORY, load_table
from ..plotting import color_for, fast_log_axes
from ._panel import Panel, log_slider

__all__ = [
    "BRANCHINGS",
    "DOMAIN_SIZES",
    "STRATEGIES",
    "TABLE",
    "interval_error_by_length",
    "strategy_by_name",
    "tree_panel",
    "write_table",
]

STRATEGIES = ("histogram", "prefix", "tree", "wavelet")
DOMAIN_SIZES = (16, 64, 256, 1024)
BRANCHINGS = (2, 3, 4, 8, 16, 32)
TABLE = DIRECTORY / "interval_errors.npz"
#: The same colour for a strategy here as in notebook 03's table of strategies.
STRATEGY_COLORS = {"histogram": "laplace", "prefix": "laplace_histogram", "tree": "tree", "wavelet": "matrix_mechanism"}


def strategy_by_name(name: str, d: int, branching: int = 2) -> linear_queries.Strategy:
    """One of :data:`STRATEGIES` over d cells (``branching`` is used by the tree only).

    Parameters
    ----------
    name : str
        ``"histogram"`` (the identity strategy), ``"prefix"``, ``"tree"`` (hierarchical) or ``"wavelet"``.
    d : int
        The number of cells, ≥ 1.
    branching : int, optional
        The tree's branching factor b ≥ 2 (default 2).

    Returns
    -------
    Strategy
        The strategy matrix A and its sensitivity, from :mod:`dpcourse.linear_queries`.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`STRATEGIES`, or ``d`` or ``branching`` is out of the chosen
        strategy's range (raised by its builder).
    TypeError
        If ``d`` or ``branching`` is not an integer (raised by the builder).
    """
    builders = {
        "histogram": linear_queries.identity_strategy,
        "prefix": linear_queries.prefix_strategy,
        "wavelet": linear_queries.wavelet_strategy,
        "tree": lambda d: linear_queries.hierarchical_strategy(d, branching),
    }
    if not isinstance(name, str) or name not in builders:
        raise ValueError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}; got {name!r}")
    return builders[name](d)


def _key(name: str, d: int, branching: int) -> str:
    return f"{name}-{d}-{branching if name == 'tree' else 0}"


def _least_squares_curve(name: str, d: int, branching: int) -> tuple[np.ndarray, float]:
    strategy = strategy_by_name(name, d, branching)
    import scipy.linalg

    inverse = scipy.linalg.inv(strategy.gram(), assume_a="pos")
    prefix = np.zeros((d + 1, d + 1))
    prefix[1:, 1:] = inverse.cumsum(axis=0).cumsum(axis=1)
    s, t = np.triu_indices(d)
    var = prefix[t + 1, t + 1] - prefix[s, t + 1] - prefix[t + 1, s] + prefix[s, s]
    length = t - s + 1
    mean = np.bincount(length, weights=var, minlength=d + 1)[1:] / np.bincount(length, minlength=d + 1)[1:]
    return mean, strategy.l1_sensitivity


def _table() -> dict:
    return load_table(TABLE.name)


@lru_cache(maxsize=64)
def interval_error_by_length(
    name: str, d: int, branching: int, consistent: bool
) -> tuple[np.ndarray, np.ndarray, float]:
    """Mean, over all intervals of each length, of qᵀ(AᵀA)⁻¹q (least squares) or of the node count
    (canonical decomposition, no consistency) — the error per unit of noise variance.

    With least squares, Var(q·x̂) = v·qᵀ(AᵀA)⁻¹q for noise variance v; the sums over all intervals
    come from a 2-D prefix sum of (AᵀA)⁻¹. For the panel's choices of d and b the values come from the
    shipped table (the same numbers). Without consistency, the node counts are averaged over 8
    random intervals at each of about 40 lengths (seeded by d and b).

    Parameters
    ----------
    name : str
        One of :data:`STRATEGIES`.
    d : int
        The number of cells, in [1, 4096].
    branching : int
        The tree's branching factor b, in [2, max(d, 2)] (checked for every strategy, used by the tree).
    consistent : bool
        True for least squares; False counts the nodes of the tree's canonical decomposition (the
        other strategies are always least squares).

    Returns
    -------
    lengths : numpy.ndarray
        The interval lengths: 1 … d, or the sampled lengths without consistency.
    values : numpy.ndarray
        The mean error per unit of noise variance at each length.
    sensitivity : float
        The strategy's L1 sensitivity ‖A‖₁.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`STRATEGIES`, or ``d`` or ``branching`` is out of its range.
    TypeError
        If ``d`` or ``branching`` is not an integer.
    """
    check_choice(name, "name", STRATEGIES)
    d = check_integer(d, "d", minimum=1, maximum=4096)
    branching = check_integer(branching, "branching", minimum=2, maximum=d if d >= 2 else 2)
    lengths = np.arange(1, d + 1)
    if name == "tree" and not consistent:
        # sum the noisy nodes of each interval's canonical decomposition: variance v·(number of nodes)
        strategy = strategy_by_name(name, d, branching)
        gen = np.random.default_rng(d * 31 + branching)
        sampled = np.unique(np.geomspace(1, d, 40).astype(int))
        counts = []
        for length in sampled:
            starts = gen.integers(0, d - length + 1, size=8)
            counts.append(
                np.mean([len(linear_queries.canonical_decomposition(strategy, s, s + length - 1)) for s in starts])
            )
        return sampled, np.array(counts), strategy.l1_sensitivity
    stored = _table().get(_key(name, d, branching))
    if stored is not None:
        return lengths, stored[1:], float(stored[0])
    mean, sensitivity = _least_squares_curve(name, d, branching)
    return lengths, mean, sensitivity


def write_table(path: Path = TABLE, domain_sizes: Sequence[int] = DOMAIN_SIZES) -> Path:
    """Compute every curve the panel offers and store them (sensitivity first, then the d values).

    One entry per strategy, d and (for the tree) branching b ≤ d, named ``"<strategy>-<d>-<b>"``
    (b = 0 for the other strategies), in a compressed ``.npz``; ``python -m dpcourse.data`` calls it.

    Parameters
    ----------
    path : pathlib.Path, optional
        Where to write (default :data:`TABLE`, the shipped table); its folder is made if missing.
    domain_sizes : sequence of int, optional
        The d to compute (default :data:`DOMAIN_SIZES`).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    entries = {}
    for d in domain_sizes:
        for name in STRATEGIES:
            for branching in BRANCHINGS if name == "tree" else (2,):
                if branching > d:
                    continue
                mean, sensitivity = _least_squares_curve(name, d, branching)
                entries[_key(name, d, branching)] = np.concatenate([[sensitivity], mean])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, allow_pickle=False, **entries)
    return path


def _draw_decomposition(ax: Axes, d: int, branching: int, interval: tuple[int, int], artists: dict[str, Any]) -> int:
    """The tree's levels as grey bands (node borders when there are few), the interval's nodes filled."""
    tree = linear_queries.hierarchical_strategy(d, branching)
    s, t = interval
    chosen = linear_queries.canonical_decomposition(tree, s, t)
    key = (d, branching)
    if artists.get("tree_key") != key:
        for artist in artists.pop("tree_artists", []):
            artist.remove()
        made = []
        for level, size in enumerate(tree.level_sizes):
            count = -(-d // size)
            spans = [(j * size, min(size, d - j * size)) for j in range(count)] if count <= 128 else [(0, d)]
            made.append(
                ax.broken_barh(
                    spans, (level - 0.4, 0.8), facecolors="white", edgecolors=color_for("bound"), linewidth=0.5
                )
            )
        ax.set_xlim(0, d)
        ax.set_ylim(-0.6, len(tree.level_sizes) - 0.4)
        artists["tree_artists"] = made
        artists["tree_key"] = key
    boxes = []
    for level, j in chosen:
        size = tree.level_sizes[level]
        boxes.append(
            [
                (j * size, level - 0.4),
                (j * size, level + 0.4),
                (min((j + 1) * size, d), level + 0.4),
                (min((j + 1) * size, d), level - 0.4),
            ]
        )
    artists["picked"].set_verts(boxes)
    artists["interval"].set_x(s)
    artists["interval"].set_width(t + 1 - s)
    artists["tree_title"].set_text(
        f"[{s}, {t}] = {len(chosen)} nodes of the {branching}-ary tree "
        f"(at most {2 * (branching - 1) * (len(tree.level_sizes) - 1)})"
    )
    return len(chosen)


def tree_panel(*, render: bool = True) -> Panel:
    """Per-query error of interval queries against their length, for a strategy; and a drawn decomposition.

    Controls: d, ε, the branching b, the strategy, consistency (least squares) on or off, and
    an interval of [0, d − 1] to decompose (its range follows d). The per-length curves depend
    on ε only through the noise variance 2(‖A‖₁/ε)², so they are looked up once per
    (strategy, d, b) and rescaled.

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
    from matplotlib.collections import PolyCollection

    artists: dict[str, Any] = {}

    def build(fig: Figure) -> None:
        ax_err, ax_tree = fig.subplots(1, 2, width_ratios=[1.0, 1.2])
        (artists["histogram"],) = ax_err.plot(
            [], [], ":", color=color_for(STRATEGY_COLORS["histogram"]), alpha=0.8, label="histogram"
        )
        (artists["strategy"],) = ax_err.plot([], [], "-", label="strategy")
        fast_log_axes(ax_err)
        ax_err.set_xlabel("interval length")
        ax_err.set_ylabel("expected squared error of the answer")
        artists["err_title"] = ax_err.set_title(" ")
        artists["legend"] = ax_err.legend(loc="upper left", bbox_to_anchor=(0.0, -0.17), ncols=2)
        artists["interval"] = ax_tree.axvspan(0, 1, color=color_for("svt"), alpha=0.15, zorder=2.5)
        artists["picked"] = PolyCollection(
            [], facecolors=color_for("tree"), edgecolors="black", linewidths=0.8, zorder=3
        )
        ax_tree.add_collection(artists["picked"])
        ax_tree.set_xlabel("cell")
        ax_tree.set_ylabel("tree level (0 = leaves)")
        ax_tree.grid(False)
        artists["tree_title"] = ax_tree.set_title(" ")
        artists["axes"] = (ax_err, ax_tree)

    def draw(
        fig: Figure,
        *,
        d: int,
        epsilon: float,
        branching: int,
        strategy: str,
        consistency: bool,
        interval: tuple[int, int],
    ) -> dict[str, Any]:
        if not artists:
            build(fig)
        ax_err, ax_tree = artists["axes"]
        d, branching = int(d), int(branching)
        s, t = (min(interval[0], d - 1), min(interval[1], d - 1))
        numbers = {}
        ranges = []
        for name, line in (("histogram", artists["histogram"]), (strategy, artists["strategy"])):
            consistent = consistency or name != "tree"
            lengths, unit, sensitivity = interval_error_by_length(name, d, branching, consistent)
            curve = 2 * (sensitivity / epsilon) ** 2 * unit
            label = name + (f", b = {branching}" if name == "tree" else "") + ("" if consistent else ", no consistency")
            line.set_data(lengths, curve)
            line.set_label(label)
            if name == strategy:
                line.set_color(color_for(STRATEGY_COLORS[name]))
            ranges.append((curve.min(), curve.max()))
            numbers[f"{name}: error at length 1"] = float(curve[0])
            numbers[f"{name}: error at length d"] = float(curve[-1])
        legend_texts = artists["legend"].get_texts()
        legend_texts[1].set_text(artists["strategy"].get_label())
        artists["legend"].legend_handles[1].set_color(artists["strategy"].get_color())
        low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
        ax_err.set_xlim(0.8, d * 1.25)
        ax_err.set_ylim(low / 1.5, high * 1.5)
        artists["err_title"].set_text(f"Laplace, d = {d}, ε = {epsilon:.3g}")
        numbers["nodes in the decomposition"] = _draw_decomposition(ax_tree, d, branching, (s, t), artists)
        return numbers

    interval = widgets.IntRangeSlider(
        value=(37, 200),
        min=0,
        max=255,
        description="interval",
        continuous_update=False,
        style={"description_width": "initial"},
    )
    d_control = widgets.Dropdown(options=list(DOMAIN_SIZES), value=256, description="d")

    def follow_d(change: Mapping[str, Any]) -> None:
        """Keep the interval inside [0, d − 1], scaled to the new d, before the panel redraws."""
        old, new = change["old"], change["new"]
        s, t = interval.value
        scaled = (min(new - 1, s * new // old), min(new - 1, max(s * new // old, (t + 1) * new // old - 1)))
        with interval.hold_trait_notifications():
            if new - 1 > interval.max:
                interval.max = new - 1
                interval.value = scaled
            else:
                interval.value = scaled
                interval.max = new - 1

    d_control.observe(follow_d, names="value")  # registered before the panel's own observer
    controls = {
        "d": d_control,
        "epsilon": log_slider("ε", value=1.0, min_exp=-1, max_exp=1, step=0.1),
        "branching": widgets.Dropdown(options=list(BRANCHINGS), value=2, description="b"),
        "strategy": widgets.Dropdown(options=STRATEGIES, value="tree", description="strategy"),
        "consistency": widgets.Checkbox(value=True, description="consistency (least squares)"),
        "interval": interval,
    }
    return Panel(
        draw,
        controls,
        figsize=(10.5, 4.6),
        render=render,
        margins={"left": 0.075, "right": 0.985, "bottom": 0.25, "top": 0.92, "wspace": 0.2},
    )
