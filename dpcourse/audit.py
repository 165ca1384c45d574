"""Empirical auditing: run a mechanism on neighbouring inputs and test its privacy claim.

A black-box test in the style of StatDP (Ding et al., CCS 2018) and DP-Sniper (Bichsel et al.,
S&P 2021). For a mechanism M that claims ε-DP and a pair of neighbouring inputs D, D′, an
output event E witnesses a violation when Pr[M(D) ∈ E] > e^ε · Pr[M(D′) ∈ E]. The auditor

1. **selects**: runs M on every candidate pair (StatDP's family of neighbouring inputs, or the
   user's own pairs), encodes the outputs as small integers once, and scores every event of
   several families (whole outputs, per-position values and intervals, counts of each value,
   Hamming distances to reference patterns, a naive-Bayes score learned from the data) by how
   significantly it violates the claim, in both directions (D over D′ and D′ over D), in each half
   of the selection runs (a fixed event must stand out in both; what is learned on the first half is
   scored on the second); with many pairs, each is screened on a quarter of the selection runs and
   only the most promising get the rest (successive halving);
2. **tests** the single most significant (pair, event) on **fresh** runs, so the search costs
   nothing in validity: the p-value and the lower confidence bound on ε need no correction.

The test is StatDP's: under H₀: p ≤ e^ε p′, keeping each of the x occurrences of E on D with
probability e^{−ε} leaves a count that is stochastically no larger than one with success
probability p′, so Fisher's one-sided exact test on (thinned x, x′) is valid for every thinning.
StatDP averages that p-value over random thinnings; an average of valid p-values is only
guaranteed valid after doubling, so :func:`thinned_fisher_p_value` returns twice the exact
expectation over the thinning (no random draws). It increases with ε, so the set of ε it does
not reject at ``level`` is a confidence interval: its lower end is ``epsilon_lower_bound``, and
``flagged`` (p-value at the claimed ε below ``level``) holds exactly when that bound exceeds the
claim.

Mechanisms are any callable ``mechanism(answers, *, trials, rng)`` returning an array whose first
axis is the trials: numbers, booleans, integer categories, or the output codes of
:mod:`dpcourse.svt_variants` (⊥ = −∞, ⊤ = +∞, halted = NaN); a key of
:data:`~dpcourse.svt_variants.VARIANTS` or a :class:`~dpcourse.svt_variants.Variant` is run at
the claimed ε with the given ``c``, ``threshold`` and ``sensitivity``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
from scipy import stats

from ._validation import (
    as_generator,
    check_array,
    check_epsilon,
    check_integer,
    check_neighbouring_answers,
    check_nonnegative,
    check_positive,
    check_probability,
)
from .exact import (  # noqa: F401  (re-exported: notebooks 04/05 and the checks import them from here)
    PrivacyLoss,
    ProofSteps,
    _pattern_items,
    above_threshold_pmf,
    adversarial_pair,
    counterexample,
    exact_variant_loss,
    generalized_above_threshold_pmf,
    max_privacy_loss,
    outcome_integrand,
    privacy_loss,
    proof_steps,
    variant_pattern_probability,
)
from .exact import __all__ as _exact_names
from .experiments import proportion_interval
from .svt_variants import VARIANTS, Variant

__all__ = [
    "AuditResult",
    "ScanResult",
    "audit",
    "pattern_frequency",
    "scan",
    "statdp_pairs",
    "thinned_fisher_p_value",
    *_exact_names,  # the exact probabilities, re-exported from :mod:`dpcourse.exact`
]


# --------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------
def statdp_pairs(num_queries=(5, 10), *, sensitivity: float = 1.0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """StatDP's family of neighbouring inputs, for each length in ``num_queries``.

    Re-implemented from ``statdp/generators.py``, ``generate_databases`` (cmla-psu/statdp, lines
    57–82 at commit d1f1e8f): D = (1, …, 1) against D′ = one below (0, 1, …), one above (2, 1, …),
    one above rest below (2, 0, …), one below rest above (0, 2, …), half and half (2^⌊m/2⌋, 0^…),
    all above (2, …), all below (0, …), and the X shape (1^⌊m/2⌋, 0^⌈m/2⌉) against
    (0^⌊m/2⌋, 1^⌈m/2⌉). Order matters for SVT, so the patterns keep StatDP's orientation; the
    auditor tests both directions of every event, which covers swapping D and D′. Values are
    multiples of ``sensitivity`` (Δ); StatDP's lengths are 5 and 10.
    """
    delta_q = check_positive(sensitivity, "sensitivity")
    lengths = (num_queries,) if np.ndim(num_queries) == 0 else tuple(num_queries)
    pairs = {}
    for m in lengths:
        m = check_integer(m, "num_queries", minimum=1)
        ones, half, rest = np.ones(m), m // 2, m - m // 2
        for name, d_prime in [("one below", np.r_[0.0, np.ones(m - 1)]), ("one above", np.r_[2.0, np.ones(m - 1)]),
                              ("one above rest below", np.r_[2.0, np.zeros(m - 1)]),
                              ("one below rest above", np.r_[0.0, np.full(m - 1, 2.0)]),
                              ("half and half", np.r_[np.full(half, 2.0), np.zeros(rest)]),
                              ("all above", np.full(m, 2.0)), ("all below", np.zeros(m))]:
            pairs[f"{name} (m = {m})"] = (delta_q * ones, delta_q * d_prime)
        pairs[f"X shape (m = {m})"] = (delta_q * np.r_[np.ones(half), np.zeros(rest)],
                                       delta_q * np.r_[np.zeros(half), np.ones(rest)])
    return pairs


# --------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------
def thinned_fisher_p_value(count_d: int, count_d_prime: int, n: int, epsilon: float) -> float:
    """A valid p-value for H₀: Pr[E | D] ≤ e^ε Pr[E | D′], from the counts of E in n runs on each.

    ``epsilon`` is the test ε, a number ≥ 0 (0 tests whether E is more likely on D at all; ∞ gives 1).

    2 · E[Fisher(X, x′)] with X ~ Binomial(x, e^{−ε}) the thinned count (StatDP's statistic,
    Ding et al. 2018, §4.2), the expectation taken exactly over X (mass beyond 9 standard
    deviations, below 1e-18, is counted as p = 1). Fisher's one-sided test for each X is valid;
    twice an average of valid p-values is valid (Rüschendorf 1982; Vovk & Wang 2020), while the
    average alone need not be. Non-decreasing in ε.

    Examples
    --------
    >>> round(thinned_fisher_p_value(300, 100, 10_000, epsilon=0.5), 6) < 0.01
    True
    >>> thinned_fisher_p_value(100, 100, 10_000, epsilon=0.5)
    1.0
    """
    n = check_integer(n, "n", minimum=1)
    x = check_integer(count_d, "count_d", minimum=0, maximum=n)
    y = check_integer(count_d_prime, "count_d_prime", minimum=0, maximum=n)
    # a test ε of 0 is meaningful (is E more likely on D at all?), and ε = ∞ gives p = 1
    eps = np.inf if isinstance(epsilon, (int, float, np.floating)) and epsilon == np.inf else check_nonnegative(epsilon, "epsilon")
    keep = float(np.exp(-eps))
    if x == 0 or keep == 0.0:
        return 1.0
    mean, sd = x * keep, np.sqrt(x * keep * (1 - keep))
    k = np.arange(max(0, int(mean - 9 * sd - 1)), min(x, int(mean + 9 * sd + 2)) + 1)
    weight = stats.binom.pmf(k, x, keep)
    fisher = stats.hypergeom.sf(k - 1, 2 * n, n, k + y)
    expected = float(weight @ fisher) + max(0.0, 1.0 - float(weight.sum()))
    return min(1.0, 2.0 * expected)


def _epsilon_bound(count_d, count_d_prime, n, level, claim):
    """sup{ε ≥ 0 : p(ε) < level}, bracketed on the side of ``claim`` the test is on (0 if none)."""
    def p(e):
        return thinned_fisher_p_value(count_d, count_d_prime, n, e)
    if p(0.0) >= level:
        return 0.0
    if p(claim) < level:
        lo, hi = claim, max(2 * claim, np.log(max(count_d, 2)) + 5)
        while p(hi) < level:
            lo, hi = hi, 2 * hi
    else:
        lo, hi = 0.0, claim
    for _ in range(40):
        if hi - lo < 1e-3 * max(hi, 1e-2):
            break
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p(mid) < level else (lo, mid)
    return lo


# --------------------------------------------------------------------------------------
# Encoding outputs and scoring events
# --------------------------------------------------------------------------------------
_SPECIAL = (-np.inf, np.inf, np.nan)
_SPECIAL_NAMES = ("⊥", "⊤", "·")
_MAX_CATEGORIES = 32  # a column with more distinct finite values is numeric and gets quantile bins
_BINS = 24
_FINALISTS = 4  # input pairs that get the full selection runs after screening (see _audit)
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


def _as_outputs(raw, trials: int) -> np.ndarray:
    out = np.asarray(raw)
    if out.ndim == 0 or out.shape[0] != trials:
        raise ValueError(f"the mechanism must return an array whose first axis is the {trials} trials; "
                         f"got shape {np.shape(raw)}")
    if out.dtype == object:
        raise TypeError("the mechanism must return numbers, booleans or integer categories, not objects")
    return out.reshape(trials, -1).astype(float)


@dataclass(frozen=True)
class _Feature:
    """An integer statistic of an output row, with values in [0, size), and how to read a value."""

    name: str
    size: int
    ordered: bool
    values: object = field(repr=False)  # callable: codes (n, k) -> int array (n,)
    label: object = field(repr=False)  # callable: value -> text
    learned: bool = False  # fitted on the first half of the selection runs: score its events on the second
    cross: tuple | None = field(default=None, repr=False)  # cross-fitted counts (x, y) per value, see _LogisticScore
    bounds: object = field(default=None, repr=False)  # callable: (lo, hi) value range -> text, for ordered events


class _Encoder:
    """Everything fitted on the selection runs of one input pair: column codes and the features."""

    def __init__(self, sel_d: np.ndarray, sel_d_prime: np.ndarray, screening: bool = False):
        self.k = sel_d.shape[1]
        both = np.empty((2 * sel_d.shape[0], self.k))
        both[0::2], both[1::2] = sel_d, sel_d_prime  # interleaved: every head of it samples D and D′ alike
        head = both[:_SAMPLE // self.k + 1]  # more than 32 values in a sample: not all categorical
        values = np.unique(head[np.isfinite(head)])
        if values.size <= _MAX_CATEGORIES and head.shape[0] < both.shape[0]:
            values = np.unique(both[np.isfinite(both)])
        if values.size <= _MAX_CATEGORIES:  # every column categorical: one shared list, one pass to encode
            self.shared = _ColumnCoder(values, None)
            self.columns = [self.shared] * self.k
        else:
            self.shared = None
            self.columns = [_ColumnCoder.fit(both[:, j]) for j in range(self.k)]
        self.selection_codes = self.codes(sel_d), self.codes(sel_d_prime)
        self.half = sel_d.shape[0] // 2  # rows [0, half) fit what is learned; [half, n) score it
        self.features = self._fit_features(*(c[:self.half] for c in self.selection_codes))
        if self.k > 1:  # a single number per run has nothing to combine: no learned region
            self.features.append(self._logistic_feature(*self.selection_codes, final=not screening))

    def codes(self, outputs: np.ndarray) -> np.ndarray:
        """The ``(n, k)`` integer codes of ``(n, k)`` outputs: one pass over the specials, then finite values per column."""
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

    def _fit_features(self, codes_d, codes_d_prime) -> list[_Feature]:
        k, features = self.k, []
        patterns, first, inverse = _unique_with_a_row(_row_keys(np.vstack([codes_d, codes_d_prime])))
        rows = np.vstack([codes_d, codes_d_prime])[first]
        n = codes_d.shape[0]

        def pattern_value(codes, patterns=patterns):
            key = _row_keys(codes)
            where = np.minimum(np.searchsorted(patterns, key), patterns.size - 1)
            return np.where(patterns[where] == key, where, patterns.size)  # unseen patterns: one extra value

        features.append(_Feature("output", patterns.size + 1, False, pattern_value,
                                 lambda v, rows=rows: "another output" if v >= len(rows) else
                                 "output " + " ".join(self.columns[j].describe(c) for j, c in enumerate(rows[v]))))
        # per position
        for j, col in enumerate(self.columns):
            features.append(_Feature(f"position {j}", col.size, True, lambda codes, j=j: codes[:, j],
                                     lambda v, j=j, col=col: f"position {j} is {col.describe(v)}"))
        if k == 1:
            return features
        # counts of each value across positions (⊥, ⊤, halted, each category; any finite number)
        shared = {}
        for j, col in enumerate(self.columns):
            for code in range(col.size):
                shared.setdefault(self._value_key(col, code), []).append((j, code))
        for key, members in shared.items():
            if len(members) < 2:
                continue
            cols = np.array([j for j, _ in members])
            want = np.array([c for _, c in members])
            features.append(_Feature(f"count of {key}", len(members) + 1, True,
                                     lambda codes, cols=cols, want=want: _matches(codes, cols, want),
                                     lambda v, key=key: f"{key} appears {v} times"))
        numeric = [j for j, col in enumerate(self.columns) if col.edges is not None]
        if len(numeric) >= 2:
            first_bin = np.array([3 + self.columns[j].atoms.size for j in numeric])
            features.append(_Feature("count of numbers", len(numeric) + 1, True,
                                     lambda codes, cols=np.array(numeric): _matches(codes, cols, first_bin, at_least=True),
                                     lambda v: f"{v} positions are numbers"))
        # Hamming distances to reference patterns: the most frequent outputs on each input, and the
        # positionwise most D-like and most D′-like codes
        size = max(col.size for col in self.columns)
        counts_d = np.stack([np.bincount(codes_d[:, j], minlength=size) for j in range(k)])
        counts_d_prime = np.stack([np.bincount(codes_d_prime[:, j], minlength=size) for j in range(k)])
        log_ratio = np.log((counts_d + 0.5) / (counts_d_prime + 0.5))
        log_ratio[(counts_d == 0) & (counts_d_prime == 0)] = 0.0
        references = {"the most D-like output": np.argmax(log_ratio, axis=1),
                      "the most D′-like output": np.argmin(log_ratio, axis=1)}
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
            features.append(_Feature(f"Hamming distance to {name}", k + 1, True,
                                     lambda codes, ref=ref: k - _matches(codes, range(k), ref),
                                     lambda v, name=name, text=text: f"{v} positions differ from {name} ({text})",
                                     learned=True))
        # a learned region (in the spirit of DP-Sniper): the naive-Bayes log-likelihood ratio
        # Σⱼ ln(p̂ⱼ(codeⱼ | D)/p̂ⱼ(codeⱼ | D′)), cut into quantile bins fitted on the selection runs
        score_d, score_d_prime = _row_scores(log_ratio, codes_d), _row_scores(log_ratio, codes_d_prime)
        edges = np.unique(np.quantile(np.r_[score_d, score_d_prime], np.linspace(0, 1, 65)[1:-1]))
        features.append(_Feature("naive-Bayes score", edges.size + 1, True,
                                 lambda codes: np.searchsorted(edges, _row_scores(log_ratio, codes), side="right"),
                                 lambda v: f"score bin {v} of {edges.size + 1}", learned=True))
        return features

    def _logistic_feature(self, codes_d, codes_d_prime, final: bool = True) -> _Feature:
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
        x, y = (np.stack([np.bincount(inverse[which & h], minlength=distinct) for h in (first_half, ~first_half)],
                         axis=1).astype(float) for which in (on_d, ~on_d))
        counts, fitted = np.zeros((2, size)), []
        for fit, held in ((0, 1), (1, 0)) if final else ((0, 1),):  # screening: one way suffices to rank pairs
            model = _LogisticScore(self.columns, rows, x[:, fit], y[:, fit], start=fitted[0] if fitted else None)
            fitted.append(model.theta)  # the second half starts from the first's weights: fewer steps
            bins = _quantile_bins(model(rows), x[:, held] + y[:, held])
            counts += [np.bincount(bins, weights=c[:, held], minlength=size) for c in (x, y)]
        if final:  # screening only compares pairs by the cross-fitted counts: no model on all the runs
            model = _LogisticScore(self.columns, rows, x.sum(axis=1), y.sum(axis=1), start=(fitted[0] + fitted[1]) / 2)
            edges = _quantile_edges(model(rows), x.sum(axis=1) + y.sum(axis=1))
        levels = np.r_[0.0, _LEVELS, 1.0]  # value v is the quantile range [levels[v], levels[v + 1])

        def bounds(lo, hi):
            if lo == 0:
                return f"logistic-regression score in its lowest {levels[hi + 1]:.2%}"
            if hi == size - 1:
                return f"logistic-regression score in its highest {1 - levels[lo]:.2%}"
            return f"logistic-regression score between its {levels[lo]:.2%} and {levels[hi + 1]:.2%} quantiles"
        values = (lambda codes: np.searchsorted(edges, model(codes), side="right")) if final else None
        return _Feature("logistic-regression score", size, True, values, lambda v: bounds(v, v), learned=True,
                        cross=(counts[0], counts[1]), bounds=bounds)

    @staticmethod
    def _value_key(col: _ColumnCoder, code: int) -> str:
        if code < 3:
            return _SPECIAL_NAMES[code]
        if code - 3 < col.atoms.size:
            return f"{col.atoms[code - 3]:.6g}"
        return f"number bin {code - 3 - col.atoms.size}" if col.edges is not None else "another value"


def _matches(codes: np.ndarray, columns, values, at_least: bool = False) -> np.ndarray:
    """For each row, in how many of ``columns`` the code equals (``at_least``: is at least) the column's
    entry of ``values``. Counted a column at a time: a reduction along rows of a few codes is 2-3× slower."""
    count = np.zeros(codes.shape[0], dtype=np.intp)
    for j, v in zip(columns, values):
        count += codes[:, j] >= v if at_least else codes[:, j] == v
    return count


def _row_scores(table: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Σⱼ table[j, codes[:, j]] for each row, a column at a time (no (n, k) temporary)."""
    score = np.zeros(codes.shape[0])
    for j in range(codes.shape[1]):
        score += table[j][codes[:, j]]
    return score


def _row_keys(codes: np.ndarray) -> np.ndarray:
    """Each row of codes hashed to 64 bits by fixed random odd multipliers (collisions ~ n²/2⁶⁴): whole outputs as keys."""
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


_LEVELS = np.unique(np.r_[np.geomspace(1e-2, 0.5, 16), 1 - np.geomspace(1e-2, 0.5, 16)])
"""Quantile levels at which a learned score is cut: dense in both tails, where violating events lie."""
_RIDGE = 1.0  # prior precision of every weight (in runs): a code seen a handful of times stays near 0
_FUSION = 1000.0  # precision of the difference of adjacent number bins' weights: neighbouring values act alike
_FIT_PATTERNS = 40_000  # more distinct outputs than this: fit on a random 40,000 of them


def _bin_term(col: _ColumnCoder) -> np.ndarray:
    """By code of one column: its number bin's index scaled to [−1/2, 1/2], and 0 for ⊥, ⊤, halted and atoms."""
    term = np.zeros(col.size)
    if col.edges is not None:
        first = 3 + col.atoms.size
        term[first:] = np.arange(col.size - first) / (col.size - first) - 0.5
    return term


class _LogisticScore:
    """A linear score of the output codes, fitted by penalised logistic regression of D against D′.

    DP-Sniper (Bichsel et al. 2021) trains a classifier to tell M(D) from M(D′) and tests the runs it
    is most confident about; a threshold on the classifier's log-odds approximates the likelihood-ratio
    event that is most powerful against the claim. Here the features are one indicator per column
    and code (⊥, ⊤, halted, each atom, each number bin) and each numeric column's bin index, so the
    score is Σⱼ wⱼ(codeⱼ) + βⱼ·binⱼ. Unlike the naive-Bayes score it is fitted jointly, so positions
    that move together (an SVT's answers before and after its ⊤) are not counted twice. Runs are
    aggregated by distinct output first, and the weights are found by L-BFGS under a ridge prior
    (:data:`_RIDGE`) and a fused prior that ties adjacent number bins (:data:`_FUSION`); both are
    in units of runs, so they matter only where the data are thin.
    """

    def __init__(self, columns, rows: np.ndarray, x: np.ndarray, y: np.ndarray, start: np.ndarray | None = None):
        from scipy import optimize, special

        sizes = np.array([col.size for col in columns])
        offsets = np.r_[0, np.cumsum(sizes)[:-1]]
        bin_terms = [_bin_term(col) for col in columns]
        seen = np.flatnonzero(x + y)
        if seen.size > _FIT_PATTERNS:  # mostly numbers: a random subset of the distinct outputs, whatever their runs
            seen = np.sort(np.random.default_rng(0).choice(seen, _FIT_PATTERNS, replace=False))
        rows, x, y = rows[seen], x[seen], y[seen]
        index = rows + offsets
        ordinal = np.column_stack([term[rows[:, j]] for j, term in enumerate(bin_terms)])
        n_weights, k = int(sizes.sum()), rows.shape[1]
        # adjacent number bins, whose weights the fused prior ties: (low, low + 1) within each numeric column
        low = np.concatenate([np.zeros(0, np.intp)] + [o + np.arange(3 + col.atoms.size, col.size - 1) for o, col
                                                        in zip(offsets, columns) if col.edges is not None]).astype(np.intp)

        def loss(theta):
            w, beta, bias = theta[:n_weights], theta[n_weights:-1], theta[-1]
            s = w[index].sum(axis=1) + ordinal @ beta + bias
            jump = w[low + 1] - w[low]
            value = x @ np.logaddexp(0, -s) + y @ np.logaddexp(0, s)
            value += 0.5 * _RIDGE * (w @ w + beta @ beta) + 0.5 * _FUSION * (jump @ jump)
            r = y * special.expit(s) - x * special.expit(-s)  # d loss / d score of each distinct output
            grad_w = np.bincount(index.ravel(), np.repeat(r, k), minlength=n_weights) + _RIDGE * w
            grad_w += _FUSION * (np.bincount(low, -jump, minlength=n_weights) + np.bincount(low + 1, jump, minlength=n_weights))
            return value, np.r_[grad_w, ordinal.T @ r + _RIDGE * beta, r.sum()]
        # the score only ranks outputs: a relative tolerance of 1e-6 on the loss is ample
        theta = optimize.minimize(loss, np.zeros(n_weights + k + 1) if start is None else start, jac=True,
                                  method="L-BFGS-B", options={"ftol": 1e-6, "maxiter": 300}).x
        self.theta = theta
        # each column's contribution to the score, by code: its indicator's weight plus its bin's slope term
        self.tables = [theta[o:o + n] + theta[n_weights + j] * term
                       for j, (o, n, term) in enumerate(zip(offsets, sizes, bin_terms))]

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        return _row_scores(self.tables, codes)


@dataclass(frozen=True)
class _Candidate:
    score: float
    feature: int
    members: np.ndarray  # boolean mask over the feature's values
    description: str
    reverse: bool  # True: the event is more likely on D′ (test D′ against D)


@lru_cache(maxsize=None)
def _interval_ends(v: int) -> tuple[np.ndarray, np.ndarray]:
    """Ends (lo, hi) of the two-sided intervals 1 ≤ lo < hi ≤ v − 2 of a feature with v values."""
    lo, hi = np.triu_indices(v - 1, k=1)
    keep = lo >= 1
    return lo[keep], hi[keep]


def _events(feature: _Feature, fit, score):
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

    def single(i, seen=seen):
        mask = np.zeros(v, dtype=bool)
        mask[seen[i]] = True
        return mask, feature.label(int(seen[i]))

    def text(a, b, default):
        return feature.bounds(a, b) if feature.bounds is not None else default

    def at_most(i):
        return np.arange(v) <= i, text(0, i, f"{feature.name} ≤ {i}")

    def at_least(i):
        return np.arange(v) >= i + 1, text(i + 1, v - 1, f"{feature.name} ≥ {i + 1}")
    lo, hi = _interval_ends(v) if feature.ordered and 2 < v <= 64 else (None, None)

    def interval(i):  # two-sided intervals [i, j], 1 ≤ i < j ≤ v − 2 (the one-sided ones are above)
        return ((np.arange(v) >= lo[i]) & (np.arange(v) <= hi[i]),
                text(int(lo[i]), int(hi[i]), f"{feature.name} in [{lo[i]}, {hi[i]}]"))

    def fixed(counts):
        """(x, y) of each fixed event, from per-value counts (x on D, y on D′), block by block."""
        blocks = [(counts[0][seen], counts[1][seen])]
        if feature.ordered and v > 2:
            cum = [np.cumsum(c) for c in counts]
            blocks.append((cum[0][:-1], cum[1][:-1]))
            blocks.append((cum[0][-1] - cum[0][:-1], cum[1][-1] - cum[1][:-1]))
            if lo is not None:
                blocks.append((cum[0][hi] - cum[0][lo - 1], cum[1][hi] - cum[1][lo - 1]))
        return blocks
    makers = [single, at_most, at_least, interval]
    if feature.cross is not None:  # a score's tails only: single values and slices of it would chase noise
        return [(None, b, make) for b, make in list(zip(fixed(score), makers))[1:3]]
    if feature.learned:
        blocks = [(None, b, make) for b, make in zip(fixed(score), makers)]
    else:
        blocks = [(a, b, make) for a, b, make in zip(fixed(fit), fixed(score), makers)]
    if seen.size > 2:  # unions of the values ranked by their ratio in the fitting half, either way
        a, b = fit[0][seen], fit[1][seen]
        log_ratio = np.log((a + 0.5) / (b + 0.5))
        slack = np.sqrt(1 / (a + 0.5) + 1 / (b + 0.5))  # rank by a cautious ratio: rare values with a
        lower, upper = log_ratio - slack, log_ratio + slack  # lucky ratio do not come first
        for side, order in (("D", seen[np.argsort(-lower, kind="stable")]),
                            ("D′", seen[np.argsort(upper, kind="stable")])):
            top = min(order.size - 1, 500)

            def union(i, order=order, side=side):
                mask = np.zeros(v, dtype=bool)
                mask[order[:i + 2]] = True
                return mask, f"{feature.name}: one of the {i + 2} values most typical of {side}"
            blocks.append((None, (np.cumsum(score[0][order])[1:top], np.cumsum(score[1][order])[1:top]), union))
    return blocks


def _z_scores(x, y, epsilon):
    """Poisson-approximate z of x against e^ε·y: how significantly x/y exceeds e^ε."""
    e = np.exp(epsilon)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (x - e * y) / np.sqrt(x + e * e * y)
    return np.where(x + y > 0, z, -np.inf)


def _too_rare(min_count) -> ValueError:
    return ValueError(f"no output event occurred min_count = {min_count} times in the selection runs; "
                      "raise selection_trials or lower min_count")


def _best_event(encoder: _Encoder, epsilon, min_count, learned_region: bool = False) -> _Candidate | None:
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
            fit = (np.bincount(values_d[:h], minlength=feature.size).astype(float),
                   np.bincount(values_d_prime[:h], minlength=feature.size).astype(float))
            score = (np.bincount(values_d[h:], minlength=feature.size).astype(float),
                     np.bincount(values_d_prime[h:], minlength=feature.size).astype(float))
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
    for (xa, ya, xb, yb) in ((x_a, y_a, x_b, y_b), (y_a, x_a, y_b, x_b)):  # D over D′, then D′ over D
        z = np.where(only_second, _z_scores(xb, yb, epsilon), np.minimum(_z_scores(xa, ya, epsilon),
                                                                            _z_scores(xb, yb, epsilon)))
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


# --------------------------------------------------------------------------------------
# The auditor
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit`.

    Attributes
    ----------
    flagged : bool
        The claimed ε is rejected at ``level``: ``p_value < level``.
    p_value : float
        For H₀: Pr[E | D] ≤ e^ε Pr[E | D′] on the fresh test runs (see :func:`thinned_fisher_p_value`).
    epsilon_lower_bound : float
        A (1 − ``level``) lower confidence bound on the privacy loss of ``event`` between the two
        inputs: the ε's the test rejects. It exceeds the claim exactly when ``flagged``.
    event : str
        The event tested, chosen on the selection runs.
    answers_d, answers_d_prime : numpy.ndarray
        The inputs, ordered so that the event is more likely on ``answers_d``.
    pair : str
        The name of the input pair (StatDP's pattern, "pair i" of the user's list, or "given").
    p_d, p_d_prime, ci_d, ci_d_prime :
        The event's frequencies on the test runs, with (1 − ``level`` / ``tests``) Clopper–Pearson intervals.
    tests : int
        How many chosen events were tested on the test runs: 2 (the best of the families and the best
        learned region), or 1 when outputs are single numbers and nothing is learned. ``p_value`` is the better event's p-value times
        ``tests`` (Bonferroni), and the bound on ε is taken at ``level`` / ``tests``, so both stay
        valid for the search and agree with each other.
    """

    mechanism: str
    pair: str
    event: str
    p_d: float
    ci_d: tuple[float, float]
    p_d_prime: float
    ci_d_prime: tuple[float, float]
    count_d: int
    count_d_prime: int
    p_value: float
    claimed_epsilon: float
    level: float
    trials: int
    selection_trials: int
    pairs_searched: int
    answers_d: np.ndarray = field(repr=False)
    answers_d_prime: np.ndarray = field(repr=False)
    tests: int = 1

    @property
    def flagged(self) -> bool:
        """Whether the claimed ε is rejected at ``level``."""
        return self.p_value < self.level

    @cached_property
    def epsilon_lower_bound(self) -> float:
        """sup{ε : the test rejects ε at ``level``}: above the claim exactly when ``flagged`` (computed on first use)."""
        return _epsilon_bound(self.count_d, self.count_d_prime, self.trials, self.level / self.tests,
                              self.claimed_epsilon)

    def p_value_at(self, epsilon: float) -> float:
        """The p-value of the same event and test runs for another test ε (times ``tests``, as ``p_value``)."""
        return min(1.0, self.tests * thinned_fisher_p_value(self.count_d, self.count_d_prime, self.trials, epsilon))

    def scan(self, test_epsilons=None) -> ScanResult:
        """The p-value curve over ``test_epsilons`` (default 40 values up to 4× the claim) from this
        audit's test counts: no new runs (see :func:`scan`)."""
        grid = (np.linspace(0, 4 * self.claimed_epsilon, 41)[1:] if test_epsilons is None
                else check_array(test_epsilons, "test_epsilons", ndim=1, min_size=1))
        if np.any(grid < 0):
            raise ValueError("test_epsilons must be >= 0")
        grid = np.sort(grid)
        # the exact p-value is non-decreasing in ε; the running maximum only removes rounding below 1e-15
        p_values = np.maximum.accumulate(np.array([self.p_value_at(float(e)) for e in grid]))
        rejected = grid[p_values < self.level]
        return ScanResult(grid, p_values, float(rejected.max()) if rejected.size else 0.0,
                          _epsilon_bound(self.count_d, self.count_d_prime, self.trials, self.level / self.tests, 0.0)
                          if self.count_d else 0.0, self)

    def summary(self) -> str:
        verdict = f"VIOLATES ε = {self.claimed_epsilon:g}" if self.flagged else f"consistent with ε = {self.claimed_epsilon:g}"
        return (f"{self.mechanism}: {verdict} (p = {self.p_value:.2g}, ε ≥ {self.epsilon_lower_bound:.3f}); "
                f"input {self.pair}; event: {self.event}; Pr[E|D] = {self.p_d:.4g}, Pr[E|D′] = {self.p_d_prime:.4g}")


@dataclass(frozen=True)
class ScanResult:
    """A p-value curve over test ε from one set of test runs (:func:`scan`), like StatDP's figures."""

    test_epsilons: np.ndarray
    p_values: np.ndarray
    largest_rejected: float
    epsilon_lower_bound: float
    result: AuditResult


def _as_mechanism(mechanism, epsilon, c, threshold, sensitivity):
    if isinstance(mechanism, str):
        if mechanism not in VARIANTS:
            raise ValueError(f"mechanism must be a key of VARIANTS {sorted(VARIANTS)}, a Variant or a callable; "
                             f"got {mechanism!r}")
        mechanism = VARIANTS[mechanism]
    if isinstance(mechanism, Variant):
        v = mechanism
        c = check_integer(c, "c", minimum=1)

        def run(answers, *, trials, rng):
            return v.run(answers, threshold=threshold, epsilon=epsilon, c=c, sensitivity=sensitivity,
                         trials=trials, rng=rng)
        return run, v.key
    if not callable(mechanism):
        raise TypeError(f"mechanism must be a key of VARIANTS, a Variant or a callable; got {type(mechanism).__name__}")
    return mechanism, getattr(mechanism, "key", getattr(mechanism, "__name__", type(mechanism).__name__))


def _input_pairs(answers_d, answers_d_prime, pairs, sensitivity):
    if pairs is not None:
        if answers_d is not None or answers_d_prime is not None:
            raise ValueError("give pairs, or answers_d and answers_d_prime, not both")
        listed = list(pairs.items()) if isinstance(pairs, dict) else [(f"pair {i}", p) for i, p in enumerate(pairs)]
        if not listed:
            raise ValueError("pairs must hold at least one (answers_d, answers_d_prime) pair")
        return [(name, *check_neighbouring_answers(d, d_prime, sensitivity)) for name, (d, d_prime) in listed]
    if answers_d is None and answers_d_prime is None:
        return [(name, d, d_prime) for name, (d, d_prime) in statdp_pairs(sensitivity=sensitivity).items()]
    if answers_d is None or answers_d_prime is None:
        raise ValueError("give both answers_d and answers_d_prime, or neither (to search StatDP's pairs)")
    return [("given", *check_neighbouring_answers(answers_d, answers_d_prime, sensitivity))]


def _finalist_pairs(scores) -> list[int]:
    """Indices (in order) of the screened pairs that get the full selection runs: the best by the learned
    region and the best others by the families' events, _FINALISTS in all. ``scores`` are (families' z,
    learned z) per pair; outputs of one number learn nothing (z −∞), and then the families choose all."""
    by_families = sorted(range(len(scores)), key=lambda i: -scores[i][0])
    by_learned = max(range(len(scores)), key=lambda i: scores[i][1])
    if not np.isfinite(scores[by_learned][1]):
        return sorted(by_families[:_FINALISTS])
    return sorted([i for i in by_families if i != by_learned][:_FINALISTS - 1] + [by_learned])


def audit(mechanism, answers_d=None, answers_d_prime=None, *, epsilon: float, trials: int = 200_000,
          selection_trials: int | None = None, rng=None, level: float = 0.01, pairs=None, c: int = 1,
          threshold=1.0, sensitivity: float = 1.0, min_count: int = 10) -> AuditResult:
    """Test a mechanism's claim of ε-DP on neighbouring inputs; see the module docstring.

    Parameters
    ----------
    mechanism : str, Variant or callable
        A key of :data:`~dpcourse.svt_variants.VARIANTS`, a variant, or any
        ``mechanism(answers, *, trials, rng)`` returning an array with one row per trial.
    answers_d, answers_d_prime : array_like, optional
        One neighbouring pair. With neither (and no ``pairs``), StatDP's family
        (:func:`statdp_pairs`: 8 patterns × lengths 5 and 10) is searched.
    epsilon : float
        The claimed ε (also the ε a variant is run at).
    trials : int
        Fresh runs per input for the test of the chosen event (at most 10⁶).
    selection_trials : int, optional
        Runs per input and per candidate pair for choosing the event; default ``trials // 4``.
    level : float
        The test's level: a mechanism that keeps its claim is flagged with probability ≤ ``level``.
    pairs : list or dict of (answers_d, answers_d_prime), optional
        The user's own candidate pairs, searched instead of StatDP's.
    c, threshold, sensitivity :
        Passed to a variant (its c, threshold T and Δ); ``sensitivity`` is also the neighbour distance.
    min_count : int
        An event is considered only if it occurs at least this often on one input in the selection runs.
    """
    return _audit(mechanism, answers_d, answers_d_prime, epsilon=epsilon, trials=trials,
                  selection_trials=selection_trials, rng=rng, level=level, pairs=pairs, c=c, threshold=threshold,
                  sensitivity=sensitivity, min_count=min_count)


def _audit(mechanism, answers_d, answers_d_prime, *, epsilon, trials, selection_trials, rng, level, pairs, c,
           threshold, sensitivity, min_count) -> AuditResult:
    eps = check_epsilon(epsilon)
    level = check_probability(level, "level")
    delta_q = check_positive(sensitivity, "sensitivity")
    trials = check_integer(trials, "trials", minimum=100, maximum=10**6)
    selection = check_integer(trials // 4 if selection_trials is None else selection_trials, "selection_trials",
                              minimum=100, maximum=10**6)
    run, name = _as_mechanism(mechanism, eps, c, threshold, delta_q)
    gen = as_generator(rng)
    candidates = _input_pairs(answers_d, answers_d_prime, pairs, delta_q)

    # Successive halving over the pairs: with more than _FINALISTS of them, every pair is first screened on a
    # quarter of the selection runs, and only the _FINALISTS best get the rest (the best by the learned region
    # and the others by the families' events, whose maxima are on another scale); the event is chosen on the
    # finalists' full selection runs. Each pair and event is still chosen on selection runs only, so the
    # test stays valid; the search costs about 7/16 of running every one of 16 pairs in full.
    screen = max(100, selection // 4) if len(candidates) > _FINALISTS else selection
    screened = []
    for pair in candidates:
        pair_name, d, d_prime = pair
        outputs = tuple(_as_outputs(run(x, trials=screen, rng=gen), screen) for x in (d, d_prime))
        if screen < selection:
            encoder = _Encoder(*outputs, screening=True)
            learned = _best_event(encoder, eps, min_count, learned_region=True)
            score = (_best_event(encoder, eps, min_count).score, -np.inf if learned is None else learned.score)
        else:
            score = None
        screened.append((score, pair, outputs))
    if screen < selection:
        keep = _finalist_pairs([score for score, _, _ in screened])
        screened = [screened[i] for i in keep]
    # Two finalists go to the test: the most significant event of the families, and the most significant
    # learned region (DP-Sniper's classifier, which gathers a leak spread thinly over many outputs that no
    # family shows). Their selection z's do not compare: the families' maximum over thousands of events is
    # inflated by chance, the learned region's, cross-fitted over a few dozen tails, much less. So both
    # are tested, each at level / 2 (Bonferroni), and the better one is reported.
    best = {}
    for _, pair, (sel_d, sel_d_prime) in screened:
        pair_name, d, d_prime = pair
        if screen < selection:
            sel_d = np.vstack([sel_d, _as_outputs(run(d, trials=selection - screen, rng=gen), selection - screen)])
            sel_d_prime = np.vstack([sel_d_prime, _as_outputs(run(d_prime, trials=selection - screen, rng=gen),
                                                               selection - screen)])
        encoder = _Encoder(sel_d, sel_d_prime)
        for kind, candidate in (("families", _best_event(encoder, eps, min_count)),
                                ("learned", _best_event(encoder, eps, min_count, learned_region=True))):
            if candidate is not None and (kind not in best or candidate.score > best[kind][0].score):
                best[kind] = (candidate, encoder, pair)
    finalists = [best["families"], *([best["learned"]] if "learned" in best else [])]
    test_codes, tested = {}, []
    for candidate, encoder, (pair_name, d, d_prime) in finalists:
        if pair_name not in test_codes:  # both finalists may come from one pair: its test runs serve both
            order = (d_prime, d) if candidate.reverse else (d, d_prime)  # drawn on the favoured input first
            test_codes[pair_name] = [encoder.codes(_as_outputs(run(x, trials=trials, rng=gen), trials)) for x in order]
            if candidate.reverse:
                test_codes[pair_name].reverse()  # kept as (D, D′)
        codes = test_codes[pair_name][::-1] if candidate.reverse else test_codes[pair_name]
        feature = encoder.features[candidate.feature]
        counts = [int(np.sum(candidate.members[feature.values(c)])) for c in codes]
        tested.append((thinned_fisher_p_value(*counts, trials, eps), counts, candidate, (pair_name, d, d_prime)))
    raw_p, (count_d, count_d_prime), candidate, (pair_name, d, d_prime) = min(tested, key=lambda item: item[0])
    if candidate.reverse:
        d, d_prime = d_prime, d
    low, high = proportion_interval(np.array([count_d, count_d_prime]), trials, confidence=1 - level / len(tested))
    return AuditResult(name, pair_name + (" (D and D′ swapped)" if candidate.reverse else ""), candidate.description,
                       count_d / trials, (float(low[0]), float(high[0])), count_d_prime / trials,
                       (float(low[1]), float(high[1])), count_d, count_d_prime, min(1.0, len(tested) * raw_p), eps,
                       level, trials, selection, len(candidates), np.asarray(d, dtype=float),
                       np.asarray(d_prime, dtype=float), len(tested))


def scan(mechanism, answers_d=None, answers_d_prime=None, *, epsilon: float, test_epsilons=None,
         **kwargs) -> ScanResult:
    """The p-value at each test ε, all from one audit's test runs (StatDP's p-value curve).

    The event is chosen once, at the claimed ``epsilon`` (which is also the ε a variant runs at),
    and the same test counts give every p-value, so the curve rises monotonically and crosses
    ``level`` at the lower confidence bound on ε. ``test_epsilons`` defaults to 40 values up to
    4ε. Other keywords as :func:`audit`. An audit already run gives its curve without new runs:
    :meth:`AuditResult.scan`.
    """
    return audit(mechanism, answers_d, answers_d_prime, epsilon=epsilon, **kwargs).scan(test_epsilons)


def pattern_frequency(outputs, pattern) -> float:
    """The fraction of runs (rows of a variant's ``(trials, m)`` outputs) that match ``pattern``.

    The empirical counterpart of :func:`dpcourse.exact.variant_pattern_probability`, with the
    same pattern codes.
    """
    out = check_array(outputs, "outputs", ndim=2, finite=False)  # ±inf and NaN are output codes
    kinds = _pattern_items(pattern, out.shape[1])
    match = np.ones(out.shape[0], dtype=bool)
    for i, kind in enumerate(kinds):
        column = out[:, i]
        if kind[0] == "bottom":
            match &= np.isneginf(column)
        elif kind[0] == "top":
            match &= np.isposinf(column)
        elif kind[0] == "halted":
            match &= np.isnan(column)
        else:
            match &= np.isfinite(column) & (column >= kind[1]) & (column <= kind[2])
    return float(match.mean())
