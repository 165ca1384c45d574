"""Events and their search: every candidate event of every feature, scored by how significantly it breaks
Pr[E | D] ≤ e^ε Pr[E | D′], either way round, in both halves of the selection runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from .encoding import _Encoder, _Feature
from .statistics import _too_rare, _z_scores


@dataclass(frozen=True)
class _Candidate:
    score: float
    feature: int
    members: np.ndarray  # boolean mask over the feature's values
    description: str
    reverse: bool  # True: the event is more likely on D′ (test D′ against D)


@cache
def _interval_ends(v: int) -> tuple[np.ndarray, np.ndarray]:
    """Ends (lo, hi) of the two-sided intervals 1 ≤ lo < hi ≤ v − 2 of a feature with v values."""
    lo, hi = np.triu_indices(v - 1, k=1)
    keep = lo >= 1
    return lo[keep], hi[keep]


#: A block of events: (their counts on D and D′ in the fitting half, or None), the same in the scoring half,
#: and ``make(i)``, event i's membership mask over the feature's values and its text.
_Block = tuple[Any, Any, Callable[..., tuple[np.ndarray, str]]]


def _events(feature: _Feature, fit: Sequence[np.ndarray], score: Sequence[np.ndarray]) -> list[_Block]:
    """Candidate events of one feature, with their counts on D and D′ in each half of the selection runs.

    ``fit`` and ``score`` are (counts on D, counts on D′) per feature value in the two halves of
    the selection runs. Fixed events (each value, ≤ / ≥, two-sided intervals) of a feature that
    learned nothing are counted in both halves, and :func:`_best_event` asks both to agree;
    unions of values ranked by their ratio, and every event of a learned feature, are ranked on
    ``fit`` and counted on ``score`` only, so that their counts are not inflated by the very data
    that chose them. Returns blocks ``(counts in fit or None, counts in score, make)``, counts as
    ``(x, y)`` arrays over the block's events, with ``make(i)`` giving event i's membership mask over
    the feature's values and its text.
    """
    v = feature.size
    seen = np.flatnonzero((fit[0] + fit[1] + score[0] + score[1]) > 0)

    def single(i: int, seen: np.ndarray = seen) -> tuple[np.ndarray, str]:
        mask = np.zeros(v, dtype=bool)
        mask[seen[i]] = True
        return mask, feature.label(int(seen[i]))

    def text(a: int, b: int, default: str) -> str:
        return feature.bounds(a, b) if feature.bounds is not None else default

    def at_most(i: int) -> tuple[np.ndarray, str]:
        return np.arange(v) <= i, text(0, i, f"{feature.name} ≤ {i}")

    def at_least(i: int) -> tuple[np.ndarray, str]:
        return np.arange(v) >= i + 1, text(i + 1, v - 1, f"{feature.name} ≥ {i + 1}")

    lo, hi = _interval_ends(v) if feature.ordered and 2 < v <= 64 else (None, None)

    def interval(
        i: int,
    ) -> tuple[np.ndarray, str]:  # two-sided intervals [i, j], 1 ≤ i < j ≤ v − 2 (the one-sided ones are above)
        assert lo is not None and hi is not None  # made only for features that have intervals
        return (
            (np.arange(v) >= lo[i]) & (np.arange(v) <= hi[i]),
            text(int(lo[i]), int(hi[i]), f"{feature.name} in [{lo[i]}, {hi[i]}]"),
        )

    def fixed(counts: Sequence[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        """(x, y) of each fixed event, from per-value counts (x on D, y on D′), block by block."""
        blocks = [(counts[0][seen], counts[1][seen])]
        if feature.ordered and v > 2:
            cum = [np.cumsum(c) for c in counts]
            blocks.append((cum[0][:-1], cum[1][:-1]))
            blocks.append((cum[0][-1] - cum[0][:-1], cum[1][-1] - cum[1][:-1]))
            if lo is not None:
                blocks.append((cum[0][hi] - cum[0][lo - 1], cum[1][hi] - cum[1][lo - 1]))
        return blocks

    makers = [single, at_most, at_least, interval]  # one per block; unordered features have fewer blocks
    if feature.cross is not None:  # a score's tails only: single values and slices of it would chase noise
        return [(None, b, make) for b, make in list(zip(fixed(score), makers, strict=False))[1:3]]
    blocks: list[_Block]
    if feature.learned:
        blocks = [(None, b, make) for b, make in zip(fixed(score), makers, strict=False)]
    else:
        blocks = [(a, b, make) for a, b, make in zip(fixed(fit), fixed(score), makers, strict=False)]
    if seen.size > 2:  # unions of the values ranked by their ratio in the fitting half, either way
        a, b = fit[0][seen], fit[1][seen]
        log_ratio = np.log((a + 0.5) / (b + 0.5))
        slack = np.sqrt(1 / (a + 0.5) + 1 / (b + 0.5))  # rank by a cautious ratio: rare values with a
        lower, upper = log_ratio - slack, log_ratio + slack  # lucky ratio do not come first
        for side, order in (
            ("D", seen[np.argsort(-lower, kind="stable")]),
            ("D′", seen[np.argsort(upper, kind="stable")]),
        ):
            top = min(order.size - 1, 500)

            def union(i: int, order: np.ndarray = order, side: str = side) -> tuple[np.ndarray, str]:
                mask = np.zeros(v, dtype=bool)
                mask[order[: i + 2]] = True
                return mask, f"{feature.name}: one of the {i + 2} values most typical of {side}"

            blocks.append((None, (np.cumsum(score[0][order])[1:top], np.cumsum(score[1][order])[1:top]), union))
    return blocks


def _best_event(encoder: _Encoder, epsilon: float, min_count: int, learned_region: bool = False) -> _Candidate | None:
    """The event with the largest significance over every family and both directions (``learned_region``:
    over the logistic-regression score's tails alone, or None if it has none).

    Each half of the selection runs gives an event a z-score (:func:`_z_scores`); a fixed event
    scores the smaller of its two, so that it must stand out in both halves, and an event ranked
    or learned on the first half scores its z on the second. Both are z's on half the runs, so
    they compare directly. Taking the maximum over thousands of events favours the lucky ones;
    asking two independent halves to agree keeps a rare pattern that was lucky once from beating
    a real, broader effect. Every candidate's counts are gathered first and scored in one
    vectorised pass.
    """
    codes_d, codes_d_prime = encoder.selection_codes
    h = encoder.half
    first, second, blocks = [], [], []
    for index, feature in enumerate(encoder.features):
        if learned_region != (feature.cross is not None):  # the families, or the learned region alone
            continue
        if feature.cross is not None:  # counted on both halves by models fitted on the other: halve them to
            fit = score = tuple(c / 2 for c in feature.cross)  # compare its z's with those of one half's runs
        else:
            values_d = feature.values(codes_d).astype(np.intp)
            values_d_prime = feature.values(codes_d_prime).astype(np.intp)
            fit = (
                np.bincount(values_d[:h], minlength=feature.size).astype(float),
                np.bincount(values_d_prime[:h], minlength=feature.size).astype(float),
            )
            score = (
                np.bincount(values_d[h:], minlength=feature.size).astype(float),
                np.bincount(values_d_prime[h:], minlength=feature.size).astype(float),
            )
        for a, b, make in _events(feature, fit, score):
            if b[0].size:
                second.append(b)
                first.append(a if a is not None else (np.full(b[0].size, np.nan), np.full(b[0].size, np.nan)))
                blocks.append((index, make))
    if not blocks:
        if learned_region:
            return None
        raise _too_rare(min_count)
    x_a, y_a = (np.concatenate([a[i] for a in first]) for i in (0, 1))
    x_b, y_b = (np.concatenate([b[i] for b in second]) for i in (0, 1))
    starts = np.cumsum([0] + [b[0].size for b in second[:-1]])
    only_second = np.isnan(x_a)
    frequent = np.maximum(np.nan_to_num(x_a) + x_b, np.nan_to_num(y_a) + y_b) >= min_count
    columns = []
    for xa, ya, xb, yb in ((x_a, y_a, x_b, y_b), (y_a, x_a, y_b, x_b)):  # D over D′, then D′ over D
        z = np.where(
            only_second, _z_scores(xb, yb, epsilon), np.minimum(_z_scores(xa, ya, epsilon), _z_scores(xb, yb, epsilon))
        )
        columns.append(np.where(frequent, z, -np.inf))
    z = np.stack(columns, axis=1)
    best = int(np.argmax(z))  # row-major: the first of equals, D over D′ before D′ over D, as listed
    row, reverse = divmod(best, 2)
    if not np.isfinite(z[row, reverse]):
        if learned_region:
            return None
        raise _too_rare(min_count)
    block = int(np.searchsorted(starts, row, side="right")) - 1
    index, make = blocks[block]
    mask, description = make(row - int(starts[block]))
    return _Candidate(float(z[row, reverse]), index, mask, description, bool(reverse))
