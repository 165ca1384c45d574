"""Hedge and multiplicative weights for query release (no privacy).

Lecture 3 (end: Hedge and its regret) and Lecture 4 (MW query release). The data are a
histogram x over a finite universe 𝒳 seen as the distribution p = x/n; :func:`mw_update` is
the one multiplicative-weights step that the offline release here and the online
:class:`dpcourse.pmw.PrivateMW` both take. Queries may be dense vectors, sparse rows or
:class:`dpcourse.pmw.ConjunctionQuery` (see :mod:`dpcourse.pmw.conjunctions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse, special

from .._validation import (
    ArrayLike,
    check_array,
    check_choice,
    check_histogram,
    check_integer,
    check_positive,
    check_unit_interval_array,
)
from . import theory
from .conjunctions import ConjunctionWorkload, _as_query, _Dense

#: The query orders :func:`mw_query_release` knows: the largest gap first, the smallest gap ≥ α first, as given.
ADVERSARIES = ("largest", "smallest", "in_order")

__all__ = [
    "ADVERSARIES",
    "HedgeResult",
    "MWReleaseResult",
    "hedge",
    "kl_potential",
    "mw_query_release",
    "mw_update",
]


# --------------------------------------------------------------------------------------
# Hedge
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HedgeResult:
    """One run of Hedge on a ``(T, N)`` loss matrix.

    Attributes
    ----------
    weights : ndarray, shape (T, N)
        xₜ, the distribution over experts used in round t (before seeing ℓₜ).
    expected_losses : ndarray, shape (T,)
        xₜ·ℓₜ, the expected loss of round t.
    second_moments : ndarray, shape (T,)
        xₜ·ℓₜ², which enters Theorem 1.5.
    cumulative_losses : ndarray, shape (T, N)
        Σ_{s≤t} ℓₛ(i), each expert's loss after each round.
    eta : float
        The learning rate η the run used.
    """

    weights: np.ndarray
    expected_losses: np.ndarray
    second_moments: np.ndarray
    cumulative_losses: np.ndarray
    eta: float

    @property
    def expert_losses(self) -> np.ndarray:
        """Σₜ ℓₜ(i), each expert's total loss."""
        return self.cumulative_losses[-1]

    @property
    def total_loss(self) -> float:
        return float(self.expected_losses.sum())

    @property
    def best_expert(self) -> int:
        return int(np.argmin(self.expert_losses))

    @property
    def regret(self) -> float:
        """Σₜ xₜ·ℓₜ − minᵢ Σₜ ℓₜ(i)."""
        return self.total_loss - float(self.expert_losses.min())

    def regret_against(self, p: ArrayLike) -> np.ndarray:
        """Σₜ xₜ·ℓₜ − Σₜ p·ℓₜ against a distribution p over the experts (or a ``(K, N)`` stack of them).

        Lecture 4, Corollary 4.2: at most the regret against the best expert (Σₜ p·ℓₜ is an
        average of the experts' totals), hence within the same bound.

        Parameters
        ----------
        p : array_like, shape (N,) or (K, N)
            A distribution over the N experts (entries ≥ 0 summing to 1), or K of them stacked as rows.

        Returns
        -------
        float or numpy.ndarray
            The regret against ``p``: a number for one distribution, shape ``(K,)`` for a stack.

        Raises
        ------
        ValueError
            If ``p`` is not 1-D or 2-D, has not N entries per distribution, has an entry that is not finite
            or is negative, or has a row that does not sum to 1.
        TypeError
            If ``p`` is not an array of numbers.
        """
        dist = check_array(p, "p", ndim=(1, 2))
        if dist.shape[-1] != self.weights.shape[1] or dist.ndim > 2:
            raise ValueError(f"p must have {self.weights.shape[1]} entries (one per expert), or be a (K, N) stack")
        if np.any(dist < 0) or not np.allclose(dist.sum(axis=-1), 1.0):
            raise ValueError("p must be a probability vector over the experts (entries >= 0 summing to 1)")
        return self.total_loss - dist @ self.expert_losses

    @property
    def regret_curve(self) -> np.ndarray:
        """The regret after each round t = 1 … T, against the best expert over rounds 1 … t."""
        return np.cumsum(self.expected_losses) - self.cumulative_losses.min(axis=1)

    @property
    def bound(self) -> float:
        """The regret bound η Σₜ xₜ·ℓₜ² + ln N/η, in the version this package proves (see :func:`hedge`)."""
        return float(self.eta * self.second_moments.sum() + np.log(self.weights.shape[1]) / self.eta)


def hedge(losses: ArrayLike, *, eta: float) -> HedgeResult:
    """Hedge (multiplicative weights over N experts, Lecture 3, Algorithm 1), all T rounds at once.

    W₁(i) = 1 and Wₜ₊₁(i) = Wₜ(i)·e^{−η ℓₜ(i)}, so xₜ ∝ exp(−η Σ_{s<t} ℓₛ): a row-wise softmax
    of the cumulative losses, computed in one vectorised step (no loop over rounds).

    Parameters
    ----------
    losses : array_like, shape (T, N)
        ℓₜ(i) ∈ [−1, 1], the loss of expert i in round t.
    eta : float
        The learning rate η > 0 (the bound below is proved for η ≤ 1; larger η is accepted).

    Returns
    -------
    HedgeResult
        With ``regret`` and ``bound``: regret ≤ η Σₜ xₜ·ℓₜ² + ln N/η.

    Raises
    ------
    ValueError
        If ``losses`` is not a finite 2-D array or has an entry outside [−1, 1], or ``eta`` is not a
        finite number > 0.
    TypeError
        If ``losses`` is not an array of numbers or ``eta`` is not a real number.

    Notes
    -----
    Which Theorem 1.5. Lecture 3 states the bound for **non-negative** losses and **any**
    η > 0 (it writes ε for η). This package proves and checks it for losses in **[−1, 1]** with
    **η ≤ 1**, the version MW query release needs (its losses sign(·)·q are negative on half
    the updates). The proof is the same potential argument, Φₜ = ln Σᵢ Wₜ(i): each round,
    Φₜ₊₁ − Φₜ = ln(xₜ·e^{−ηℓₜ}) ≤ −η xₜ·ℓₜ + η² xₜ·ℓₜ², using e^{−y} ≤ 1 − y + y², which
    holds for y = ηℓ ≥ −1 (hence η ≤ 1 when losses may be −1); for y ≥ 0 it holds for any η,
    which is why the lecture's version needs no cap on η. Summing and comparing with
    Φ_{T+1} ≥ −η Σₜ ℓₜ(i*) gives the bound.

    Examples
    --------
    >>> r = hedge([[1.0, 0.0], [1.0, 0.0]], eta=0.5)
    >>> r.weights[1].round(3).tolist(), r.best_expert
    ([0.378, 0.622], 1)
    """
    loss = check_array(losses, "losses", ndim=2)
    if np.any(np.abs(loss) > 1):
        raise ValueError(f"losses must lie in [−1, 1]; found {np.abs(loss).max():g}")
    eta = check_positive(eta, "eta")
    cumulative = np.cumsum(loss, axis=0)
    before = np.vstack([np.zeros((1, loss.shape[1])), cumulative[:-1]])
    weights = special.softmax(-eta * before, axis=1)
    return HedgeResult(weights, np.sum(weights * loss, axis=1), np.sum(weights * loss**2, axis=1), cumulative, eta)


# --------------------------------------------------------------------------------------
# Multiplicative weights for query release (no privacy)
# --------------------------------------------------------------------------------------
def kl_potential(p: ArrayLike, synthetic: ArrayLike) -> float:
    """KL(p‖p̃) = Σᵤ p(u) ln(p(u)/p̃(u)) (0·ln 0 = 0), the potential of the update-count proofs.

    Parameters
    ----------
    p : array_like, shape (|𝒳|,)
        The true distribution p = x/n.
    synthetic : array_like, shape (|𝒳|,)
        The synthetic distribution p̃. Neither is checked to sum to 1.

    Returns
    -------
    float
        KL(p‖p̃) in nats; ``inf`` if p̃(u) = 0 at a cell with p(u) > 0.

    Raises
    ------
    ValueError
        If ``p`` is not a finite 1-D array, or ``synthetic`` is not a finite array of the same shape.
    TypeError
        If either is not an array of numbers.
    """
    pp = check_array(p, "p", ndim=1)
    ps = check_array(synthetic, "synthetic", shape=pp.shape)
    return _kl(pp, ps)


def _kl(p: np.ndarray, synthetic: np.ndarray) -> float:
    """KL(p‖p̃) on checked arrays of one shape (a PMW run re-evaluates it after every update)."""
    return float(special.rel_entr(p, synthetic).sum())


def mw_update(synthetic: ArrayLike, query: ArrayLike, released: float, *, eta: float) -> np.ndarray:
    """One MW step: p̃ ← Normalize(p̃ · e^{−η ℓ}) with ℓ = sign(q·p̃ − y)·q (Lecture 4).

    If the synthetic answer is too high, the cells the query counts lose weight; too low,
    they gain.

    Parameters
    ----------
    synthetic : array_like, shape (|𝒳|,)
        The current synthetic distribution p̃ (entries ≥ 0 summing to 1); it is not modified.
    query : array_like, sparse matrix or ConjunctionQuery
        The query q: a vector in [0, 1]^|𝒳|, a 1 × |𝒳| ``scipy.sparse`` row with entries in [0, 1],
        or a :class:`~dpcourse.pmw.conjunctions.ConjunctionQuery` over a universe of |𝒳| cells.
    released : float
        y, the answer compared with q·p̃ (normalised): q·p without privacy, a noisy answer with it.
    eta : float
        The learning rate η > 0.

    Returns
    -------
    numpy.ndarray
        The updated synthetic distribution, shape (|𝒳|,), a new array summing to 1.

    Raises
    ------
    ValueError
        If ``synthetic`` is not a 1-D probability vector, ``query`` has the wrong shape or universe or an
        entry outside [0, 1], ``released`` is not one finite number, or ``eta`` is not a finite number > 0.
    TypeError
        If an array is not made of numbers or ``eta`` is not a real number.

    Examples
    --------
    >>> mw_update([0.5, 0.5], [1.0, 0.0], 0.8, eta=np.log(2)).tolist()
    [0.6666666666666666, 0.3333333333333333]
    """
    p = check_array(synthetic, "synthetic", ndim=1).copy()
    if np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError("synthetic must be a probability vector (entries >= 0 summing to 1)")
    q = _as_query(query, p.size)
    y = float(check_array(released, "released", ndim=0))
    return _mw_step(p, q, y, check_positive(eta, "eta"))


def _mw_step(p: np.ndarray, q: Any, released: float, eta: float) -> np.ndarray:
    """The MW step on checked inputs (``p`` is modified in place and returned normalised)."""
    q.scale(p, -eta * np.sign(q.dot(p) - released))
    p /= p.sum()
    return p


@dataclass(frozen=True)
class MWReleaseResult:
    """A run of MW query release without privacy.

    Attributes
    ----------
    synthetic : ndarray
        The final synthetic distribution p̃.
    updates : int
        How many MW updates the run made.
    chosen : ndarray of int
        The index of the query that triggered each update.
    gaps : ndarray
        |q·p̃ₜ − q·p| of the query of each update (all ≥ α).
    potential : ndarray
        KL(p‖p̃ₜ) before the first update and after each one (length updates + 1).
    final_max_error : float
        maxₖ |qₖ·p̃ − qₖ·p| at the end (< α when an adaptive adversary's run stopped by itself).
    alpha : float
        The accuracy α the run updated at.
    eta : float
        The learning rate η of its updates.
    """

    synthetic: np.ndarray
    updates: int
    chosen: np.ndarray
    gaps: np.ndarray
    potential: np.ndarray
    final_max_error: float
    alpha: float
    eta: float


def _query_matrix(queries: ArrayLike, domain_size: int) -> np.ndarray:
    if sparse.issparse(queries):
        w = sparse.csr_array(queries, dtype=float)
        check_unit_interval_array(w.data, "queries", min_size=0)
    elif isinstance(queries, ConjunctionWorkload):
        w = queries.matrix()
    else:
        w = check_unit_interval_array(queries, "queries", ndim=2)
    if w.shape[1] != domain_size:
        raise ValueError(f"queries must have {domain_size} columns (one per cell); got shape {w.shape}")
    return w


def mw_query_release(
    histogram: ArrayLike,
    queries: ArrayLike,
    *,
    alpha: float,
    eta: float | None = None,
    adversary: str = "largest",
    max_updates: int | None = None,
) -> MWReleaseResult:
    """MW query release without privacy (Lecture 4): p̃₁ uniform, update on every query answered ≥ α off.

    ``adversary`` says which query is asked next (:data:`ADVERSARIES`):

    * ``"largest"``: the query of the workload the synthetic data answers worst. The potential
      falls by at least η·gap − η² per update, so the largest gap makes each update count most:
      this adversary *minimises* the number of updates;
    * ``"smallest"``: the query with the smallest gap that is still ≥ α. Each update is worth as
      little as the rule allows, so this adversary forces (many) more updates;
    * ``"in_order"``: the queries are asked once, in order.

    Both adaptive adversaries ask until no query is off by α or more. Updates use the exact answer y = q·p.

    With η = α/2 (the default, Dwork & Roth's choice) the potential falls by at least α²/4
    per update, so there are at most 4 ln|𝒳|/α² updates on *any* stream
    (:func:`dpcourse.pmw.mw_update_count_bound`).

    Parameters
    ----------
    histogram : array_like, shape (|𝒳|,)
        Counts x ≥ 0 with n = Σ x > 0 over |𝒳| ≥ 2 cells; the release works on p = x/n.
    queries : array_like (k, |𝒳|), sparse matrix, or ConjunctionWorkload (small |𝒳| only)
        The workload, one query per row, every entry in [0, 1]; a workload is made dense.
    alpha : float
        Accuracy α ∈ (0, 1].
    eta : float, optional
        Learning rate, default α/2.
    adversary : {"largest", "smallest", "in_order"}, optional
        Which query is asked next (above).
    max_updates : int, optional
        A safety cap ≥ 0 (default: the bound, rounded up, plus one, so a violated bound shows).

    Returns
    -------
    MWReleaseResult
        The final synthetic distribution, the updates made (which query, its gap) and the potential
        KL(p‖p̃ₜ) along the way.

    Raises
    ------
    ValueError
        If ``histogram`` is not a finite 1-D array of at least two counts ≥ 0 with a positive total,
        ``queries`` has an entry outside [0, 1] or not |𝒳| columns, ``alpha`` is not in (0, 1], ``eta``
        is not a finite number > 0, ``adversary`` is not one of :data:`ADVERSARIES`, or ``max_updates``
        is negative.
    TypeError
        If an array is not made of numbers, ``alpha`` or ``eta`` is not a real number, or ``max_updates``
        is not an integer.
    """
    x = check_histogram(histogram, min_cells=2)
    d = x.size
    a = check_positive(alpha, "alpha")
    if a > 1:
        raise ValueError(f"alpha must be in (0, 1]; got {alpha!r}")
    eta = a / 2 if eta is None else check_positive(eta, "eta")
    check_choice(adversary, "adversary", ADVERSARIES)
    w = _query_matrix(queries, d)
    cap = (
        int(np.ceil(theory.mw_update_count_bound(domain_size=d, alpha=a))) + 1
        if max_updates is None
        else check_integer(max_updates, "max_updates", minimum=0)
    )
    p = x / x.sum()
    truth = np.asarray(w @ p).ravel()
    synthetic = np.full(d, 1.0 / d)
    chosen: list[int] = []
    gaps: list[float] = []
    potential = [kl_potential(p, synthetic)]
    order = iter(range(w.shape[0]))
    while len(chosen) < cap:
        if adversary != "in_order":
            errors = np.abs(np.asarray(w @ synthetic).ravel() - truth)
            if adversary == "largest":
                i = int(np.argmax(errors))
            else:  # the smallest gap that still counts: errors below α are pushed out of the minimum
                i = int(np.argmin(np.where(errors >= a, errors, np.inf)))
            gap = errors[i]
            if gap < a:
                break
        else:
            step = next(order, None)
            if step is None:
                break
            i = step
            row = w[[i]] if sparse.issparse(w) else w[i]
            gap = abs(float(np.asarray(row @ synthetic).ravel()[0]) - truth[i])
            if gap < a:
                continue
        row = w[[i]] if sparse.issparse(w) else w[i]
        query = _as_query(row, d) if sparse.issparse(w) else _Dense(row)  # a dense row was checked with w
        synthetic = _mw_step(synthetic.copy(), query, truth[i], eta)
        chosen.append(i)
        gaps.append(gap)
        potential.append(_kl(p, synthetic))
    final = float(np.max(np.abs(np.asarray(w @ synthetic).ravel() - truth)))
    return MWReleaseResult(
        synthetic, len(chosen), np.array(chosen, dtype=int), np.array(gaps), np.array(potential), final, a, eta
    )
