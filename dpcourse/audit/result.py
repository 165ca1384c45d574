"""What an audit returns: :class:`AuditResult` (the verdict, the p-value, the bound on ε, the event) and
:class:`ScanResult` (the p-value curve over test ε from the same runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .._validation import (
    ArrayLike,
    check_array,
)
from .statistics import _epsilon_bound, thinned_fisher_p_value


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
        learned region), or 1 when outputs are single numbers and nothing is learned. ``p_value`` is the
        better event's p-value times ``tests`` (Bonferroni), and the bound on ε is taken at
        ``level`` / ``tests``, so both stay valid for the search and agree with each other.
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
        """sup{ε : the test rejects ε at ``level``}: above the claim exactly when ``flagged`` (computed once)."""
        return _epsilon_bound(
            self.count_d, self.count_d_prime, self.trials, self.level / self.tests, self.claimed_epsilon
        )

    def p_value_at(self, epsilon: float) -> float:
        """The p-value of the same event and test runs for another test ε (times ``tests``, as ``p_value``)."""
        return min(1.0, self.tests * thinned_fisher_p_value(self.count_d, self.count_d_prime, self.trials, epsilon))

    def scan(self, test_epsilons: ArrayLike | None = None) -> ScanResult:
        """The p-value curve over ``test_epsilons`` (default 40 values up to 4× the claim) from this
        audit's test counts: no new runs (see :func:`scan`)."""
        grid = (
            np.linspace(0, 4 * self.claimed_epsilon, 41)[1:]
            if test_epsilons is None
            else check_array(test_epsilons, "test_epsilons", ndim=1, min_size=1)
        )
        if np.any(grid < 0):
            raise ValueError("test_epsilons must be >= 0")
        grid = np.sort(grid)
        # the exact p-value is non-decreasing in ε; the running maximum only removes rounding below 1e-15
        p_values = np.maximum.accumulate(np.array([self.p_value_at(float(e)) for e in grid]))
        rejected = grid[p_values < self.level]
        return ScanResult(
            grid,
            p_values,
            float(rejected.max()) if rejected.size else 0.0,
            _epsilon_bound(self.count_d, self.count_d_prime, self.trials, self.level / self.tests, 0.0)
            if self.count_d
            else 0.0,
            self,
        )

    def summary(self) -> str:
        verdict = (
            f"VIOLATES ε = {self.claimed_epsilon:g}"
            if self.flagged
            else f"consistent with ε = {self.claimed_epsilon:g}"
        )
        return (
            f"{self.mechanism}: {verdict} (p = {self.p_value:.2g}, ε ≥ {self.epsilon_lower_bound:.3f}); "
            f"input {self.pair}; event: {self.event}; Pr[E|D] = {self.p_d:.4g}, Pr[E|D′] = {self.p_d_prime:.4g}"
        )


@dataclass(frozen=True)
class ScanResult:
    """A p-value curve over test ε from one set of test runs (:func:`scan`), like StatDP's figures."""

    test_epsilons: np.ndarray
    p_values: np.ndarray
    largest_rejected: float
    epsilon_lower_bound: float
    result: AuditResult
