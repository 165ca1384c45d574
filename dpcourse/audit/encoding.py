"""Encoding a mechanism's outputs once as small integers, and the families of features scored on them.

A column is categorical (its few distinct values, ⊥, ⊤ and ·) or numeric (quantile bins fitted on the
selection runs); an :class:`_Encoder` fits the columns on the selection runs of a pair and turns every
output into a row of codes, on which the event families of :mod:`dpcourse.audit.events` are counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .region import _LEVELS, _LogisticScore, _row_scores

_SPECIAL = (-np.inf, np.inf, np.nan)


_SPECIAL_NAMES = ("⊥", "⊤", "·")


_MAX_CATEGORIES = 32  # a column with more distinct finite values is numeric and gets quantile bins


_BINS = 24


_SAMPLE = 20_000  # values per column from which an encoder decides numeric or not, its atoms and bins


@dataclass(frozen=True)
class _ColumnCoder:
    """Column j's code: 0/1/2 for −∞/+∞/NaN, then one code per atom (a value that recurs: a
    category, or a number used as a flag such as −1000), then one per quantile bin of the rest."""

    atoms: np.ndarray  # sorted values that get a code of their own
    edges: np.ndarray | None  # interior bin edges of the other values; None: no other values seen

    @property
    def size(self) -> int:
        return 3 + self.atoms.size + (1 if self.edges is None else self.edges.size + 1)

    def encode_finite(self, x: np.ndarray) -> np.ndarray:
        """Codes of finite values ``x`` (the special codes are set by :meth:`_Encoder.codes`)."""
        a = self.atoms.size
        where = np.searchsorted(self.atoms, x)
        hit = (where < a) & (self.atoms[np.minimum(where, max(a - 1, 0))] == x) if a else np.zeros(x.shape, bool)
        rest = 3 + a + (0 if self.edges is None else np.searchsorted(self.edges, x, side="right"))
        return np.where(hit, 3 + where, rest)  # without bins, every unseen value shares one "other" code

    def describe(self, code: int) -> str:
        if code < 3:
            return _SPECIAL_NAMES[code]
        i = code - 3
        if i < self.atoms.size:
            return f"{self.atoms[i]:.4g}"
        i -= self.atoms.size
        if self.edges is None:
            return "another value"
        lo = "-inf" if i == 0 else f"{self.edges[i - 1]:.3g}"
        hi = "inf" if i == self.edges.size else f"{self.edges[i]:.3g}"
        return f"a number in [{lo}, {hi})"

    @classmethod
    def fit(cls, column: np.ndarray) -> _ColumnCoder:
        """Atoms and bins of one column. Sorting every value is what costs: a column is seen to be
        numeric, and its recurring values and quantile edges are found, on a sample of
        :data:`_SAMPLE` values; only the atoms' counts are taken over the whole column."""
        finite = column[np.isfinite(column)]
        sample = finite[:_SAMPLE]  # the runs are independent: the first ones are a random sample
        values, counts = np.unique(sample, return_counts=True)
        if values.size <= _MAX_CATEGORIES:
            if sample.size == finite.size:
                return cls(values, None)
            values, counts = np.unique(finite, return_counts=True)
            if values.size <= _MAX_CATEGORIES:
                return cls(values, None)
        elif sample.size < finite.size:  # a value with the atoms' frequency (≥ 1/200) recurs in the sample
            values = values[counts >= 2]  # with probability 1 − e^{−100}; count those candidates exactly
            if values.size:
                where = np.searchsorted(values, finite)
                hit = (where < values.size) & (values[np.minimum(where, values.size - 1)] == finite)
                counts = np.bincount(where[hit], minlength=values.size)
            else:
                counts = np.zeros(0, dtype=np.intp)
        atoms = values[counts >= max(20, 0.005 * column.size)]
        rest = sample[~np.isin(sample, atoms)]
        edges = np.unique(np.quantile(rest, np.linspace(0, 1, _BINS + 1)[1:-1])) if rest.size else None
        return cls(atoms, edges)


def _as_outputs(raw: Any, trials: int) -> np.ndarray:
    out = np.asarray(raw)
    if out.ndim == 0 or out.shape[0] != trials:
        raise ValueError(
            f"the mechanism must return an array whose first axis is the {trials} trials; got shape {np.shape(raw)}"
        )
    if out.dtype == object:
        raise TypeError("the mechanism must return numbers, booleans or integer categories, not objects")
    return out.reshape(trials, -1).astype(float)


@dataclass(frozen=True)
class _Feature:
    """An integer statistic of an output row, with values in [0, size), and how to read a value."""

    name: str
    size: int
    ordered: bool
    values: Callable[..., np.ndarray] = field(repr=False)  # codes (n, k) -> int array (n,)
    label: Callable[..., str] = field(repr=False)  # value -> text
    learned: bool = False  # fitted on the first half of the selection runs: score its events on the second
    cross: tuple[np.ndarray, np.ndarray] | None = field(
        default=None, repr=False
    )  # cross-fitted counts (x, y) per value
    bounds: Callable[[int, int], str] | None = field(default=None, repr=False)  # (lo, hi) value range -> text, ordered


def _unfitted(codes: np.ndarray) -> np.ndarray:
    """A screening run's learned feature has cross-fitted counts only: no model maps new codes to values."""
    raise RuntimeError("a screening encoder's learned feature has no model on all the runs")


class _Encoder:
    """Everything fitted on the selection runs of one input pair: column codes and the features."""

    def __init__(self, sel_d: np.ndarray, sel_d_prime: np.ndarray, screening: bool = False):
        self.k = sel_d.shape[1]
        both = np.empty((2 * sel_d.shape[0], self.k))
        both[0::2], both[1::2] = sel_d, sel_d_prime  # interleaved: every head of it samples D and D′ alike
        head = both[: _SAMPLE // self.k + 1]  # more than 32 values in a sample: not all categorical
        values = np.unique(head[np.isfinite(head)])
        if values.size <= _MAX_CATEGORIES and head.shape[0] < both.shape[0]:
            values = np.unique(both[np.isfinite(both)])
        if values.size <= _MAX_CATEGORIES:  # every column categorical: one shared list, one pass to encode
            self.shared: _ColumnCoder | None = _ColumnCoder(values, None)
            self.columns = [self.shared] * self.k
        else:
            self.shared = None
            self.columns = [_ColumnCoder.fit(both[:, j]) for j in range(self.k)]
        self.selection_codes = self.codes(sel_d), self.codes(sel_d_prime)
        self.half = sel_d.shape[0] // 2  # rows [0, half) fit what is learned; [half, n) score it
        self.features = self._fit_features(*(c[: self.half] for c in self.selection_codes))
        if self.k > 1:  # a single number per run has nothing to combine: no learned region
            self.features.append(self._logistic_feature(*self.selection_codes, final=not screening))

    def codes(self, outputs: np.ndarray) -> np.ndarray:
        """The ``(n, k)`` integer codes of ``(n, k)`` outputs: specials in one pass, then finite values by column."""
        codes = (outputs > 0).astype(np.int16)  # +∞ → 1, −∞ → 0; NaN compares False and is set next
        codes[np.isnan(outputs)] = 2
        finite = np.isfinite(outputs)
        if not finite.any():  # only ⊥, ⊤ and halted, as from the SVT variants
            return codes
        if self.shared is not None:
            codes[finite] = self.shared.encode_finite(outputs[finite])
            return codes
        for j in np.flatnonzero(finite.any(axis=0)):
            rows = finite[:, j]
            codes[rows, j] = self.columns[j].encode_finite(outputs[rows, j])
        return codes

    def _fit_features(self, codes_d: np.ndarray, codes_d_prime: np.ndarray) -> list[_Feature]:
        k, features = self.k, []
        patterns, first, inverse = _unique_with_a_row(_row_keys(np.vstack([codes_d, codes_d_prime])))
        rows = np.vstack([codes_d, codes_d_prime])[first]
        n = codes_d.shape[0]

        def pattern_value(codes: np.ndarray, patterns: np.ndarray = patterns) -> np.ndarray:
            key = _row_keys(codes)
            where = np.minimum(np.searchsorted(patterns, key), patterns.size - 1)
            return np.where(patterns[where] == key, where, patterns.size)  # unseen patterns: one extra value

        features.append(
            _Feature(
                "output",
                patterns.size + 1,
                False,
                pattern_value,
                lambda v, rows=rows: (
                    "another output"
                    if v >= len(rows)
                    else "output " + " ".join(self.columns[j].describe(c) for j, c in enumerate(rows[v]))
                ),
            )
        )
        # per position
        for j, col in enumerate(self.columns):
            features.append(
                _Feature(
                    f"position {j}",
                    col.size,
                    True,
                    lambda codes, j=j: codes[:, j],
                    lambda v, j=j, col=col: f"position {j} is {col.describe(v)}",
                )
            )
        if k == 1:
            return features
        # counts of each value across positions (⊥, ⊤, halted, each category; any finite number)
        shared: dict[Any, list[tuple[int, int]]] = {}
        for j, col in enumerate(self.columns):
            for code in range(col.size):
                shared.setdefault(self._value_key(col, code), []).append((j, code))
        for key, members in shared.items():
            if len(members) < 2:
                continue
            cols = np.array([j for j, _ in members])
            want = np.array([c for _, c in members])
            features.append(
                _Feature(
                    f"count of {key}",
                    len(members) + 1,
                    True,
                    lambda codes, cols=cols, want=want: _matches(codes, cols, want),
                    lambda v, key=key: f"{key} appears {v} times",
                )
            )
        numeric = [j for j, col in enumerate(self.columns) if col.edges is not None]
        if len(numeric) >= 2:
            numeric_columns = np.array(numeric)
            first_bin = np.array([3 + self.columns[j].atoms.size for j in numeric])
            features.append(
                _Feature(
                    "count of numbers",
                    len(numeric) + 1,
                    True,
                    lambda codes, cols=numeric_columns: _matches(codes, cols, first_bin, at_least=True),
                    lambda v: f"{v} positions are numbers",
                )
            )
        # Hamming distances to reference patterns: the most frequent outputs on each input, and the
        # positionwise most D-like and most D′-like codes
        size = max(col.size for col in self.columns)
        counts_d = np.stack([np.bincount(codes_d[:, j], minlength=size) for j in range(k)])
        counts_d_prime = np.stack([np.bincount(codes_d_prime[:, j], minlength=size) for j in range(k)])
        log_ratio = np.log((counts_d + 0.5) / (counts_d_prime + 0.5))
        log_ratio[(counts_d == 0) & (counts_d_prime == 0)] = 0.0
        references = {
            "the most D-like output": np.argmax(log_ratio, axis=1),
            "the most D′-like output": np.argmin(log_ratio, axis=1),
        }
        for name, which in (("D", inverse[:n]), ("D′", inverse[n:])):
            freq = np.bincount(which, minlength=patterns.size)
            for rank, v in enumerate(np.argsort(-freq)[:2]):
                references[f"the {'most' if rank == 0 else 'second most'} frequent output on {name}"] = rows[v]
        seen = set()
        for name, ref in references.items():
            if tuple(ref) in seen:
                continue
            seen.add(tuple(ref))
            text = " ".join(self.columns[j].describe(c) for j, c in enumerate(ref))
            features.append(
                _Feature(
                    f"Hamming distance to {name}",
                    k + 1,
                    True,
                    lambda codes, ref=ref: k - _matches(codes, range(k), ref),
                    lambda v, name=name, text=text: f"{v} positions differ from {name} ({text})",
                    learned=True,
                )
            )
        # a learned region (in the spirit of DP-Sniper): the naive-Bayes log-likelihood ratio
        # Σⱼ ln(p̂ⱼ(codeⱼ | D)/p̂ⱼ(codeⱼ | D′)), cut into quantile bins fitted on the selection runs
        score_d, score_d_prime = _row_scores(log_ratio, codes_d), _row_scores(log_ratio, codes_d_prime)
        edges = np.unique(np.quantile(np.r_[score_d, score_d_prime], np.linspace(0, 1, 65)[1:-1]))
        features.append(
            _Feature(
                "naive-Bayes score",
                edges.size + 1,
                True,
                lambda codes: np.searchsorted(edges, _row_scores(log_ratio, codes), side="right"),
                lambda v: f"score bin {v} of {edges.size + 1}",
                learned=True,
            )
        )
        return features

    def _logistic_feature(self, codes_d: np.ndarray, codes_d_prime: np.ndarray, final: bool = True) -> _Feature:
        """DP-Sniper's learned region: a logistic-regression score (:class:`_LogisticScore`), cut at quantiles.

        The score's events are judged by cross-fitting: a model fitted on one half of the selection runs
        bins the other half at that half's quantiles of its score (:data:`_LEVELS`), and the two halves'
        counts are added. The event tested is the same quantile range of a model fitted on all the
        selection runs, which is better than either half's.
        """
        size = _LEVELS.size + 1
        both = np.vstack([codes_d, codes_d_prime])
        _, first, inverse = _unique_with_a_row(_row_keys(both))
        rows = both[first].astype(np.intp)  # the distinct outputs
        n, distinct = codes_d.shape[0], rows.shape[0]
        first_half = np.r_[np.arange(n) < self.half, np.arange(n) < self.half]
        on_d = np.arange(2 * n) < n
        # runs of each distinct output: on D and on D′ (rows), in the first and the second half (columns)
        x, y = (
            np.stack(
                [np.bincount(inverse[which & h], minlength=distinct) for h in (first_half, ~first_half)], axis=1
            ).astype(float)
            for which in (on_d, ~on_d)
        )
        counts, fitted = np.zeros((2, size)), list[np.ndarray]()
        for fit, held in ((0, 1), (1, 0)) if final else ((0, 1),):  # screening: one way suffices to rank pairs
            model = _LogisticScore(self.columns, rows, x[:, fit], y[:, fit], start=fitted[0] if fitted else None)
            fitted.append(model.theta)  # the second half starts from the first's weights: fewer steps
            bins = _quantile_bins(model(rows), x[:, held] + y[:, held])
            counts += [np.bincount(bins, weights=c[:, held], minlength=size) for c in (x, y)]
        if final:  # screening only compares pairs by the cross-fitted counts: no model on all the runs
            model = _LogisticScore(self.columns, rows, x.sum(axis=1), y.sum(axis=1), start=(fitted[0] + fitted[1]) / 2)
            edges = _quantile_edges(model(rows), x.sum(axis=1) + y.sum(axis=1))
        levels = np.r_[0.0, _LEVELS, 1.0]  # value v is the quantile range [levels[v], levels[v + 1])

        def bounds(lo: int, hi: int) -> str:
            if lo == 0:
                return f"logistic-regression score in its lowest {levels[hi + 1]:.2%}"
            if hi == size - 1:
                return f"logistic-regression score in its highest {1 - levels[lo]:.2%}"
            return f"logistic-regression score between its {levels[lo]:.2%} and {levels[hi + 1]:.2%} quantiles"

        values = (lambda codes: np.searchsorted(edges, model(codes), side="right")) if final else _unfitted
        return _Feature(
            "logistic-regression score",
            size,
            True,
            values,
            lambda v: bounds(v, v),
            learned=True,
            cross=(counts[0], counts[1]),
            bounds=bounds,
        )

    @staticmethod
    def _value_key(col: _ColumnCoder, code: int) -> str:
        if code < 3:
            return _SPECIAL_NAMES[code]
        if code - 3 < col.atoms.size:
            return f"{col.atoms[code - 3]:.6g}"
        return f"number bin {code - 3 - col.atoms.size}" if col.edges is not None else "another value"


def _matches(
    codes: np.ndarray, columns: Sequence[int] | np.ndarray, values: Sequence[Any] | np.ndarray, at_least: bool = False
) -> np.ndarray:
    """For each row, in how many of ``columns`` the code equals (``at_least``: is at least) the column's
    entry of ``values``. Counted a column at a time: a reduction along rows of a few codes is 2-3× slower.
    The count is kept in a byte while it fits (fewer than 256 columns; an eighth of the memory traffic of an
    intp, which made the largest audits about an eighth quicker) and returned as intp."""
    count: np.ndarray = np.zeros(codes.shape[0], dtype=np.uint8 if len(columns) < 256 else np.intp)
    for j, v in zip(columns, values, strict=True):
        count += codes[:, j] >= v if at_least else codes[:, j] == v
    return count.astype(np.intp, copy=False)


def _row_keys(codes: np.ndarray) -> np.ndarray:
    """Each row of codes hashed to 64 bits by fixed random odd multipliers: whole outputs as keys.

    Collisions are improbable: about n²/2⁶⁴ pairs of rows collide.
    """
    multipliers = np.random.default_rng(12345).integers(1, 2**62, size=codes.shape[1]) | 1
    return codes.astype(np.int64) @ multipliers


def _unique_with_a_row(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct ``keys``, for each the index of one element holding it, and each element's distinct key.
    Like ``np.unique`` with ``return_index``, but any holder will do, which spares the stable sort that
    ``return_index`` needs."""
    values, inverse = np.unique(keys, return_inverse=True)
    inverse = inverse.ravel()
    row = np.empty(values.size, dtype=np.intp)
    row[inverse] = np.arange(keys.size)
    return values, row, inverse


def _quantile_edges(scores: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """The score at each of :data:`_LEVELS` among runs (distinct outputs' ``scores``, each seen ``runs`` times)."""
    order = np.argsort(scores, kind="stable")
    cumulative = np.cumsum(runs[order])
    where = np.searchsorted(cumulative, _LEVELS * cumulative[-1], side="right")
    return scores[order][np.minimum(where, order.size - 1)]


def _quantile_bins(scores: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """Each distinct output's quantile bin (0 … len(_LEVELS)) among the runs it counts."""
    return np.searchsorted(_quantile_edges(scores, runs), scores, side="right")
