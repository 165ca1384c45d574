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
    mechanism : str
        The mechanism's name: a variant's key, or a callable's ``key`` or ``__name__``.
    pair : str
        The name of the input pair (StatDP's pattern, "pair i" of the user's list, or "given"), with
        " (D and D′ swapped)" when the event is more likely on the second input of the pair.
    event : str
        The event tested, chosen on the selection runs.
    p_d : float
        The event's frequency on the test runs on ``answers_d``.
    ci_d : tuple of float
        Its (1 − ``level`` / ``tests``) Clopper–Pearson interval.
    p_d_prime : float
        The event's frequency on the test runs on ``answers_d_prime``.
    ci_d_prime : tuple of float
        Its (1 − ``level`` / ``tests``) Clopper–Pearson interval.
    count_d : int
        How many of the ``trials`` test runs on ``answers_d`` gave the event.
    count_d_prime : int
        How many of the ``trials`` test runs on ``answers_d_prime`` gave the event.
    p_value : float
        For H₀: Pr[E | D] ≤ e^ε Pr[E | D′] on the fresh test runs (see :func:`thinned_fisher_p_value`).
    claimed_epsilon : float
        The ε the mechanism claims (and the test ε).
    level : float
        The test's level.
    trials : int
        The number of fresh test runs on each input.
    selection_trials : int
        The number of runs on each input of a finalist pair that chose the event.
    pairs_searched : int
        How many input pairs were searched.
    answers_d : numpy.ndarray
        The input on which the event is more likely.
    answers_d_prime : numpy.ndarray
        Its neighbour.
    flagged : bool
        The claimed ε is rejected at ``level``: ``p_value < level``.
    epsilon_lower_bound : float
        A (1 − ``level``) lower confidence bound on the privacy loss of ``event`` between the two
        inputs: the ε's the test rejects. It exceeds the claim exactly when ``flagged``.
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
        """The p-value of the same event and test runs for another test ε (times ``tests``, as ``p_value``).

        Parameters
        ----------
        epsilon : float
            The test ε, ≥ 0 (∞ gives 1).

        Returns
        -------
        float
            The p-value, in [0, 1].

        Raises
        ------
        ValueError
            If ``epsilon`` is negative or NaN.
        TypeError
            If ``epsilon`` is not a real number.
        """
        return min(1.0, self.tests * thinned_fisher_p_value(self.count_d, self.count_d_prime, self.trials, epsilon))

    def scan(self, test_epsilons: ArrayLike | None = None) -> ScanResult:
        """The p-value curve over ``test_epsilons`` from this audit's test counts: no new runs (see :func:`scan`).

        Parameters
        ----------
        test_epsilons : array_like or None, optional
            The test ε's, a non-empty 1-D array of finite numbers ≥ 0, in any order (they are sorted); None
            (default) for 40 values evenly spaced up to 4× the claim.

        Returns
        -------
        ScanResult
            The p-value at each test ε and the bounds read from the curve.

        Raises
        ------
        ValueError
            If ``test_epsilons`` is not a non-empty 1-D array of finite numbers ≥ 0.
        TypeError
            If ``test_epsilons`` is not numeric.
        """
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
        """One line for a notebook: the verdict, the p-value, the bound on ε, the pair and the event.

        Returns
        -------
        str
            The summary, e.g. ``"alg3: VIOLATES ε = 1 (p = …, ε ≥ …); input …; event: …; Pr[E|D] = …"``.
        """
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
    """A p-value curve over test ε from one set of test runs (:func:`scan`), like StatDP's figures.

    Attributes
    ----------
    test_epsilons : numpy.ndarray
        The test ε's, in increasing order.
    p_values : numpy.ndarray
        The p-value at each (as :meth:`AuditResult.p_value_at`), non-decreasing.
    largest_rejected : float
        The largest test ε whose p-value is below the audit's ``level``, or 0 if none is.
    epsilon_lower_bound : float
        The lower confidence bound on ε, found by bisection on the p-value, not only among the grid's points
        (0 when the event never occurred on D).
    result : AuditResult
        The audit the curve comes from.
    """

    test_epsilons: np.ndarray
    p_values: np.ndarray
    largest_rejected: float
    epsilon_lower_bound: float
    result: AuditResult
