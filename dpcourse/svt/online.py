"""The sparse vector technique's online forms: AboveThreshold, SparseVector and NumericSparse one query at a time.

For adaptively chosen queries (Private Multiplicative Weights uses these): each class answers
one query at a time with the scales of :mod:`dpcourse.svt.theory` and refuses further queries
with :class:`HaltedError` once it has halted. Outputs follow :mod:`dpcourse.svt.variants`'
coding; the batch forms, vectorised over trials, are in :mod:`dpcourse.svt`, which re-exports
everything here.
"""

from __future__ import annotations

import math

from .._validation import (
    RngLike,
    as_generator,
    check_array,
    check_epsilon,
    check_integer,
    check_nonnegative,
    check_positive,
    check_probability,
)
from .theory import above_threshold_scales, numeric_sparse_scales, numeric_sparse_share, sparse_vector_scales

__all__ = [
    "HaltedError",
    "OnlineAboveThreshold",
    "OnlineNumericSparse",
    "OnlineSparseVector",
]


class HaltedError(RuntimeError):
    """The online algorithm has halted and answers no more queries."""


# --------------------------------------------------------------------------------------
# Online forms
# --------------------------------------------------------------------------------------
class OnlineAboveThreshold:
    """AboveThreshold for adaptively chosen queries: call :meth:`test` once per query.

    The noisy threshold T̂ = T + Lap(2Δ/ε) is drawn when the object is created; each
    :meth:`test` adds fresh Lap(4Δ/ε) noise to the answer it is given. After the first ⊤
    the object has halted and :meth:`test` raises :class:`HaltedError`. The whole
    interaction is ε-DP however many queries are asked, so ``privacy_spent`` is ε from the start.

    Parameters
    ----------
    threshold : float
        The threshold T, a finite number.
    epsilon : float
        The privacy parameter ε of the whole interaction, > 0.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Attributes
    ----------
    answered : int
        How many queries :meth:`test` has answered.
    halted : bool
        Whether the ⊤ has come (no more queries are answered).

    Raises
    ------
    ValueError
        If ``threshold`` is not one finite number, ``epsilon`` or ``sensitivity`` is not a finite number > 0,
        or ``rng`` is a negative seed.
    TypeError
        If ``threshold``, ``epsilon`` or ``sensitivity`` is not a number, or ``rng`` is not a seed,
        ``SeedSequence`` or ``Generator``.

    Examples
    --------
    >>> at = OnlineAboveThreshold(threshold=10.0, epsilon=100.0, rng=0)
    >>> at.test(0.0), at.test(20.0), at.halted
    (False, True, True)
    """

    def __init__(self, *, threshold: float, epsilon: float, sensitivity: float = 1.0, rng: RngLike = None):
        self.threshold = float(check_array(threshold, "threshold", ndim=0))
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self._rng = as_generator(rng)
        # the scales of above_threshold_noise, drawn as scipy.stats.laplace would (scale·Lap(0, 1) + 0, the
        # same floats) without freezing two distributions per run (about 1 ms each)
        threshold_scale, self._query_scale = above_threshold_scales(epsilon=self.epsilon, sensitivity=self.sensitivity)
        self._noisy_threshold = self.threshold + (float(self._rng.laplace(0.0, 1.0)) * threshold_scale + 0.0)
        self.answered = 0
        self.halted = False

    @property
    def privacy_spent(self) -> float:
        """ε: the whole interaction's budget, spent from the start."""
        return self.epsilon

    def test(self, value: float) -> bool:
        """Compare one query answer with the noisy threshold: ``True`` for ⊤ (and halt), ``False`` for ⊥.

        Parameters
        ----------
        value : float
            The query's true answer q(D), a finite number.

        Returns
        -------
        bool
            ``True`` for ⊤ (the object has now halted), ``False`` for ⊥.

        Raises
        ------
        HaltedError
            If the object has already halted.
        ValueError
            If ``value`` is not one finite number.
        TypeError
            If ``value`` is not a number.
        """
        if self.halted:
            raise HaltedError("AboveThreshold has halted after its ⊤; start a new run to ask more queries")
        value = float(check_array(value, "value", ndim=0))
        above = value + (float(self._rng.laplace(0.0, 1.0)) * self._query_scale + 0.0) >= self._noisy_threshold
        self.answered += 1
        self.halted = bool(above)
        return bool(above)


class OnlineSparseVector:
    """SparseVector for adaptively chosen queries: up to c ⊤, each AboveThreshold run with ε/c.

    :meth:`test` returns ``True`` for ⊤ and ``False`` for ⊥; after the c-th ⊤ the object has
    halted and raises :class:`HaltedError`. ``privacy_spent`` is the budget of the runs
    started so far, (runs started)·ε/c ≤ ε (δ = 0; with δ > 0 the total is (ε, δ) by
    advanced composition, checked as in :func:`sparse_vector_scales`, and ``privacy_spent``
    reports ε once started).

    Parameters
    ----------
    threshold : float
        The threshold T, a finite number.
    epsilon : float
        The privacy parameter ε of the whole interaction, > 0.
    c : int
        The number of ⊤ answers after which it halts, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    delta : float, optional
        0 (default) for basic composition, or δ in (0, 1) for advanced composition.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Attributes
    ----------
    answered : int
        How many queries :meth:`test` has answered.
    num_above : int
        How many of them came out ⊤.
    halted : bool
        Whether the c-th ⊤ has come (no more queries are answered).

    Raises
    ------
    ValueError
        If ``threshold`` is not one finite number, ``epsilon`` or ``sensitivity`` is not a finite number > 0,
        ``c`` is not an integer ≥ 1, ``delta`` is neither 0 nor in (0, 1) or is too large for advanced
        composition at this ε (see :func:`sparse_vector_scales`), or ``rng`` is a negative seed.
    TypeError
        If a parameter is not a number of its kind, or ``rng`` is not a seed, ``SeedSequence`` or ``Generator``.
    """

    def __init__(
        self,
        *,
        threshold: float,
        epsilon: float,
        c: int,
        sensitivity: float = 1.0,
        delta: float = 0.0,
        rng: RngLike = None,
    ):
        self.threshold = float(check_array(threshold, "threshold", ndim=0))
        self.epsilon = check_epsilon(epsilon)
        self.c = check_integer(c, "c", minimum=1)
        self.delta = check_nonnegative(delta, "delta")  # its upper end is sparse_vector_scales's to check
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self._set_scales()
        self._rng = as_generator(rng)
        self.num_above = 0
        self.answered = 0
        self.halted = False
        self._new_run()

    def _set_scales(self) -> None:
        self._threshold_scale, self._query_scale = sparse_vector_scales(
            epsilon=self.epsilon, c=self.c, sensitivity=self.sensitivity, delta=self.delta
        )

    def _new_run(self) -> None:
        self._noisy_threshold = self.threshold + self._rng.laplace(0.0, self._threshold_scale)

    @property
    def privacy_spent(self) -> float:
        """ε/c per AboveThreshold run started (δ = 0); ε with δ > 0."""
        if self.delta > 0:
            return self.epsilon
        runs_started = min(self.num_above + 1, self.c)
        return runs_started * self.epsilon / self.c

    def _compare(self, value: float) -> bool:
        if self.halted:
            raise HaltedError(f"SparseVector has halted after c = {self.c} ⊤ answers")
        if type(value) is not float or not math.isfinite(value):  # a plain finite float (PMW's answers) needs no more
            value = float(check_array(value, "value", ndim=0))
        above = value + self._rng.laplace(0.0, self._query_scale) >= self._noisy_threshold
        self.answered += 1
        if above:
            self.num_above += 1
            if self.num_above >= self.c:
                self.halted = True
            else:
                self._new_run()
        return bool(above)

    def test(self, value: float) -> bool:
        """⊤ (``True``) or ⊥ (``False``) for one query answer.

        After a ⊤ that is not the c-th, a new AboveThreshold run starts with fresh threshold noise.

        Parameters
        ----------
        value : float
            The query's true answer q(D), a finite number.

        Returns
        -------
        bool
            ``True`` for ⊤, ``False`` for ⊥.

        Raises
        ------
        HaltedError
            If the object has already halted (after its c-th ⊤).
        ValueError
            If ``value`` is not one finite number.
        TypeError
            If ``value`` is not a number.
        """
        return self._compare(value)


class OnlineNumericSparse(OnlineSparseVector):
    """NumericSparse for adaptively chosen queries: :meth:`test` returns ``None`` for ⊥, a noisy value for ⊤.

    The comparisons use (1 − s)·ε and the released values s·ε, s = ``numeric_share``
    (default Dwork & Roth's: 1/9 for δ = 0, 1/(√512 + 1) for δ > 0); see :func:`numeric_sparse_scales`.

    Parameters
    ----------
    threshold : float
        The threshold T, a finite number.
    epsilon : float
        The privacy parameter ε of the whole interaction, > 0.
    c : int
        The number of ⊤ answers (released values) after which it halts, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    delta : float, optional
        0 (default) for basic composition, or δ in (0, 1) for advanced composition.
    numeric_share : float or None, optional
        The share s of ε for the released values, in (0, 1); None (default) for Dwork & Roth's.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Attributes
    ----------
    answered : int
        How many queries :meth:`test` has answered.
    num_above : int
        How many of them came out ⊤ (and released a value).
    halted : bool
        Whether the c-th ⊤ has come (no more queries are answered).

    Raises
    ------
    ValueError
        As :class:`OnlineSparseVector`, and if ``numeric_share`` is not in (0, 1).
    TypeError
        As :class:`OnlineSparseVector`.
    """

    def __init__(
        self,
        *,
        threshold: float,
        epsilon: float,
        c: int,
        sensitivity: float = 1.0,
        delta: float = 0.0,
        numeric_share: float | None = None,
        rng: RngLike = None,
    ):
        self.numeric_share = (
            numeric_sparse_share(delta) if numeric_share is None else check_probability(numeric_share, "numeric_share")
        )
        super().__init__(threshold=threshold, epsilon=epsilon, c=c, sensitivity=sensitivity, delta=delta, rng=rng)

    def _set_scales(self) -> None:
        self._threshold_scale, self._query_scale, self._numeric_scale = numeric_sparse_scales(
            epsilon=self.epsilon,
            c=self.c,
            sensitivity=self.sensitivity,
            delta=self.delta,
            numeric_share=self.numeric_share,
        )

    @property
    def privacy_spent(self) -> float:
        """(1 − s)ε/c per comparison run started plus sε/c per value released (δ = 0); ε with δ > 0."""
        if self.delta > 0:
            return self.epsilon
        runs_started = min(self.num_above + 1, self.c)
        return (runs_started * (1 - self.numeric_share) + self.num_above * self.numeric_share) * self.epsilon / self.c

    # NumericSparse answers ⊤ with a noisy value (Dwork & Roth, Algorithm 3), not True: the override is the algorithm.
    def test(self, value: float) -> float | None:  # type: ignore[override]
        """``None`` for ⊥; for ⊤, the answer plus fresh Lap(σ(2sε)) noise (see :func:`numeric_sparse_scales`).

        Parameters
        ----------
        value : float
            The query's true answer q(D), a finite number.

        Returns
        -------
        float or None
            The released noisy answer for ⊤, ``None`` for ⊥.

        Raises
        ------
        HaltedError
            If the object has already halted (after its c-th ⊤).
        ValueError
            If ``value`` is not one finite number.
        TypeError
            If ``value`` is not a number.
        """
        if not self._compare(value):
            return None
        return float(value) + float(self._rng.laplace(0.0, self._numeric_scale))
