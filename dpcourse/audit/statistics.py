"""The test of a chosen event: StatDP's thinned Fisher test made exact, the confidence bound on ε, z scores.

See :mod:`dpcourse.audit` for the argument; :func:`thinned_fisher_p_value` is StatDP's test (Ding et al., CCS 2018)
averaged exactly over the thinning and doubled, which keeps it valid.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special

from .._validation import (
    check_integer,
    check_nonnegative,
)


def thinned_fisher_p_value(count_d: int, count_d_prime: int, n: int, epsilon: float) -> float:
    """A valid p-value for H₀: Pr[E | D] ≤ e^ε Pr[E | D′], from the counts of E in n runs on each.

    2 · E[Fisher(X, x′)] with X ~ Binomial(x, e^{−ε}) the thinned count (StatDP's statistic,
    Ding et al. 2018, §4.2), the expectation taken exactly over X (mass beyond 9 standard
    deviations, below 1e-18, is counted as p = 1). Fisher's one-sided test for each X is valid;
    twice an average of valid p-values is valid (Rüschendorf 1982; Vovk & Wang 2020), while the
    average alone need not be. Non-decreasing in ε.

    Parameters
    ----------
    count_d : int
        x, how many of the n runs on D gave E, in [0, n].
    count_d_prime : int
        x′, how many of the n runs on D′ gave E, in [0, n].
    n : int
        The number of runs on each input, ≥ 1.
    epsilon : float
        The test ε, a number ≥ 0 (0 tests whether E is more likely on D at all; ∞ gives 1).

    Returns
    -------
    float
        The p-value, in [0, 1]; 1 when x = 0 or ε = ∞.

    Raises
    ------
    ValueError
        If ``n`` is not an integer ≥ 1, a count is not an integer in [0, n], or ``epsilon`` is negative or NaN.
    TypeError
        If ``n`` or a count is not an integer, or ``epsilon`` is not a real number.

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
    from scipy import stats  # on first use: importing the audit (the SVT checks, the grader) need not import it

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
            if missing.size * (self.y + 1) <= _DIRECT_TERMS:
                self.values[missing] = _hypergeom_upper_tails(missing, self.y, self.n)
            else:
                from scipy import stats  # on first use, as in thinned_fisher_p_value

                self.values[missing] = stats.hypergeom.sf(missing - 1, 2 * self.n, self.n, missing + self.y)
        return self.values[k]


_DIRECT_TERMS = 500_000  # up to this many terms (about 20 ms) the tails are summed here; beyond, scipy is as quick


@lru_cache(maxsize=4)
def _log_factorials(n: int) -> np.ndarray:
    """ln k! for k = 0 … 2n (8 MB at n = 5·10⁵): the tails below look them up instead of calling gammaln."""
    return special.gammaln(np.arange(2 * n + 1) + 1.0)


def _hypergeom_upper_tails(k: np.ndarray, y: int, n: int) -> np.ndarray:
    """Pr[H ≥ k] for H ~ Hypergeom(2n, n, k + y), for every k at once: the same numbers as scipy's
    ``hypergeom.sf(k − 1, 2n, n, k + y)``, without its Python loop over k.

    Given k + y occurrences in all, D's share H ≥ k leaves D′ at most y, so the tail is the y + 1 terms
    h = k + j, j = 0, …, y, of C(n, h)·C(n, y − j)/C(2n, k + y) (a term with h > n is 0), summed in logarithms.
    In ln: [2 ln n! − ln(2n)! + ln(k + y)! + ln(2n − k − y)!] − [ln h! + ln(n − h)!] − [ln(y − j)! + ln(n − y + j)!],
    the first bracket one number per k, the second a sliding window over h, the third one vector over j.
    """
    f = _log_factorials(n)
    j = np.arange(y + 1)
    per_j = f[y - j] + f[n - y + j]
    per_h = np.full(n + y + 2, np.inf)  # h > n: an impossible term, e^−∞ = 0
    per_h[: n + 1] = f[: n + 1] + f[n::-1]
    total = k + y
    per_k = 2 * f[n] - f[2 * n] + f[total] + f[2 * n - total]
    log_terms = np.lib.stride_tricks.sliding_window_view(per_h, y + 1)[k]
    log_terms = per_k[:, None] - log_terms - per_j[None, :]
    top = log_terms.max(axis=1)  # finite: the term h = k ≤ n is always possible
    tails = np.exp(top) * np.exp(log_terms - top[:, None]).sum(axis=1)
    return np.minimum(1.0, tails)


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
