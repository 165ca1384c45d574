"""The test of a chosen event: StatDP's thinned Fisher test made exact, the confidence bound on ε, z scores.

See :mod:`dpcourse.audit` for the argument; :func:`thinned_fisher_p_value` is StatDP's test (Ding et al., CCS 2018)
averaged exactly over the thinning and doubled, which keeps it valid.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats

from .._validation import (
    check_integer,
    check_nonnegative,
)


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
    eps = (
        np.inf
        if isinstance(epsilon, (int, float, np.floating)) and epsilon == np.inf
        else check_nonnegative(epsilon, "epsilon")
    )
    keep = float(np.exp(-eps))
    if x == 0 or keep == 0.0:
        return 1.0
    mean, sd = x * keep, np.sqrt(x * keep * (1 - keep))
    k = np.arange(max(0, int(mean - 9 * sd - 1)), min(x, int(mean + 9 * sd + 2)) + 1)
    weight = stats.binom.pmf(k, x, keep)
    fisher = _fisher_tails(x, y, n)(k)
    expected = float(weight @ fisher) + max(0.0, 1.0 - float(weight.sum()))
    return min(1.0, 2.0 * expected)


class _FisherTails:
    """Fisher's one-sided p-values Pr[H ≥ k] for thinned counts k ≤ x against y, H ~ Hypergeom(2n, n, k + y).

    They do not depend on the test ε (only the binomial weights over k do), and the bisection for the
    ε bound and a p-value curve ask for overlapping ranges of k many times: each value is computed once.
    """

    def __init__(self, x: int, y: int, n: int) -> None:
        self.y, self.n = y, n
        self.values = np.full(x + 1, np.nan)

    def __call__(self, k: np.ndarray) -> np.ndarray:
        missing = k[np.isnan(self.values[k])]
        if missing.size:
            self.values[missing] = stats.hypergeom.sf(missing - 1, 2 * self.n, self.n, missing + self.y)
        return self.values[k]


@lru_cache(maxsize=8)  # a table is 8(x + 1) bytes, x ≤ 10⁶ test runs
def _fisher_tails(x: int, y: int, n: int) -> _FisherTails:
    return _FisherTails(x, y, n)


def _epsilon_bound(count_d: int, count_d_prime: int, n: int, level: float, claim: float) -> float:
    """sup{ε ≥ 0 : p(ε) < level}, bracketed on the side of ``claim`` the test is on (0 if none)."""

    def p(e: float) -> float:
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


def _z_scores(x: np.ndarray, y: np.ndarray, epsilon: float) -> np.ndarray:
    """Poisson-approximate z of x against e^ε·y: how significantly x/y exceeds e^ε."""
    e = np.exp(epsilon)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (x - e * y) / np.sqrt(x + e * e * y)
    return np.where(x + y > 0, z, -np.inf)


def _too_rare(min_count: int) -> ValueError:
    return ValueError(
        f"no output event occurred min_count = {min_count} times in the selection runs; "
        "raise selection_trials or lower min_count"
    )
