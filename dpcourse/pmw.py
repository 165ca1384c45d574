"""Multiplicative weights, and Private Multiplicative Weights (PMW) for online query release.

Lecture 3 (end: Hedge and its regret), Lecture 4 (MW query release, Private MW,
Theorem 4.3) and the online-PMW slides (Dwork & Roth's OnlineMultiplicativeWeights via
NumericSparse, Theorems 4.10, 4.14, 4.15). Private MW is due to Hardt & Rothblum, "A
multiplicative weights mechanism for privacy-preserving data analysis" (FOCS 2010); the
offline MW release with the exponential mechanism choosing the queries (MWEM) to Hardt,
Ligett & McSherry, "A simple and practical algorithm for differentially private data
release" (NeurIPS 2012).

The data are a histogram x over a finite universe 𝒳 with n = Σ x, seen as the distribution
p = x/n. A linear query is a vector q ∈ [0, 1]^|𝒳| with normalised answer q·p. Queries
may be given as a dense vector, a 1 × |𝒳| ``scipy.sparse`` row, or a
:class:`ConjunctionQuery` (a k-way marginal cell over 𝒳 = {0, 1}^d, stored as a few small
integers and evaluated on a strided view, so neither the query nor its support is ever
materialised). Every per-query step is vectorised and costs O(|support of q|), an update
O(|𝒳|); nothing loops over the universe in Python.

Curators share one interface: ``answer(query) -> float``, ``privacy_spent``, ``answered``:

* :class:`PrivateMW`, the online PMW curator (two calibrations, see its docstring);
* :class:`LaplacePerQuery`, the Laplace mechanism on each query with ε split by basic or
  (δ > 0) advanced composition, the online-PMW slides' two baselines;
* :class:`NoisyHistogram`, Laplace noise on x once, every query answered from it.

An interaction with an adaptive analyst is one run; each curator draws its noise as the
queries arrive, so the unit of vectorisation is a query, not a trial.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np
from scipy import sparse, special

from . import bounds
from ._validation import (
    as_generator,
    check_array,
    check_choice,
    check_size,
    check_epsilon,
    check_histogram,
    check_integer,
    check_positive,
    check_probability,
    check_unit_interval_array,
)
from .mechanisms import laplace_mechanism, laplace_scale
from .svt import HaltedError, OnlineNumericSparse, OnlineSparseVector, numeric_sparse_scales

__all__ = [
    "CALIBRATIONS",
    "BudgetExhaustedError",
    "ConjunctionQuery",
    "ConjunctionWorkload",
    "HedgeResult",
    "LaplacePerQuery",
    "MWReleaseResult",
    "NoisyHistogram",
    "PMWHistory",
    "PrivateMW",
    "ReleaseErrors",
    "conjunction_workload",
    "hedge",
    "kl_potential",
    "mw_query_release",
    "mw_update",
    "per_query_epsilon",
    "product_histogram",
    "release_errors",
    "run_stream",
    "run_stream_with_potential",
]

CALIBRATIONS = ("notes", "dwork_roth")


class BudgetExhaustedError(HaltedError):
    """A curator refuses a query: its update budget (or its query budget) is spent."""


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

    def regret_against(self, p) -> np.ndarray:
        """Σₜ xₜ·ℓₜ − Σₜ p·ℓₜ against a distribution p over the experts (or a ``(K, N)`` stack of them).

        Lecture 4, Corollary 4.2: at most the regret against the best expert (Σₜ p·ℓₜ is an
        average of the experts' totals), hence within the same bound.
        """
        dist = check_array(p, "p", ndim=None)
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


def hedge(losses, *, eta: float) -> HedgeResult:
    """Hedge (multiplicative weights over N experts, Lecture 3, Algorithm 1), all T rounds at once.

    W₁(i) = 1 and Wₜ₊₁(i) = Wₜ(i)·e^{−η ℓₜ(i)}, so xₜ ∝ exp(−η Σ_{s<t} ℓₛ): a row-wise softmax
    of the cumulative losses, computed in one vectorised step (no loop over rounds).

    Parameters
    ----------
    losses : array_like, shape (T, N)
        ℓₜ(i) ∈ [−1, 1].
    eta : float
        The learning rate η > 0.

    Returns
    -------
    HedgeResult
        With ``regret`` and ``bound``: regret ≤ η Σₜ xₜ·ℓₜ² + ln N/η.

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
# Linear queries: dense, sparse, conjunctions
# --------------------------------------------------------------------------------------
def _checked_conjunctions(num_bits, attributes, values) -> tuple[int, np.ndarray, np.ndarray]:
    """``(d, attributes, values)`` of conjunctions, one per row (``int8`` arrays of the same shape), checked:
    d bits (1 to 30), attributes distinct bit positions in [0, d − 1] within a row, values 0 or 1."""
    d = check_integer(num_bits, "num_bits", minimum=1, maximum=30)
    attrs = check_array(attributes, "attributes", ndim=2, min_size=0)
    vals = check_array(values, "values", shape=attrs.shape, min_size=0)
    if np.any(attrs != np.round(attrs)) or np.any(attrs < 0) or np.any(attrs > d - 1):
        raise ValueError(f"attributes must be bit positions, integers in [0, {d - 1}]")
    if np.any((vals != 0) & (vals != 1)):
        raise ValueError("values must be 0 or 1")
    if attrs.shape[1] > 1 and np.any(np.diff(np.sort(attrs, axis=1), axis=1) == 0):
        raise ValueError("attributes must be distinct bit positions in each query")
    return d, attrs.astype(np.int8), vals.astype(np.int8)


@dataclass(frozen=True)
class ConjunctionQuery:
    """q(u) = 1 if bit ``attributes[j]`` of u equals ``values[j]`` for every j, else 0, over 𝒳 = {0, 1}^d.

    A w-way marginal cell ("how many people have attribute 3 = 1 and attribute 7 = 0?").
    Stored as 2w small integers; :meth:`view` returns its support as a strided view of any
    vector over 𝒳 (cell u has bit j = (u >> j) & 1), so q·v is ``view(v).sum()``.

    Examples
    --------
    >>> q = ConjunctionQuery(3, (0,), (1,))
    >>> q.dense().tolist()
    [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    """

    num_bits: int
    attributes: tuple[int, ...]
    values: tuple[int, ...]

    def __post_init__(self):
        d, attrs, vals = _checked_conjunctions(self.num_bits, [self.attributes], [self.values])
        object.__setattr__(self, "num_bits", d)
        object.__setattr__(self, "attributes", tuple(attrs[0].tolist()))
        object.__setattr__(self, "values", tuple(vals[0].tolist()))

    @classmethod
    def _checked(cls, num_bits: int, attributes: tuple[int, ...], values: tuple[int, ...]) -> ConjunctionQuery:
        """A query from parts already checked (a row of a :class:`ConjunctionWorkload`), without checking again."""
        query = object.__new__(cls)
        object.__setattr__(query, "num_bits", num_bits)
        object.__setattr__(query, "attributes", attributes)
        object.__setattr__(query, "values", values)
        return query

    @property
    def domain_size(self) -> int:
        return 2**self.num_bits

    def _layout(self) -> tuple[tuple[int, ...], tuple]:
        """The shape to view a vector over 𝒳 in, and the index that picks the support (computed once per query)."""
        layout = self.__dict__.get("_layout_cache")
        if layout is None:
            shape, index, high = [], [], self.num_bits
            for a, v in sorted(zip(self.attributes, self.values), reverse=True):
                shape += [2 ** (high - a - 1), 2]
                index += [slice(None), v]
                high = a
            shape.append(2**high)
            index.append(slice(None))
            layout = (tuple(shape), tuple(index))
            object.__setattr__(self, "_layout_cache", layout)
        return layout

    def view(self, vector: np.ndarray) -> np.ndarray:
        """The entries of ``vector`` (contiguous, length 2^d) on the query's support, as a writable view."""
        shape, index = self._layout()
        return vector.reshape(shape)[index]

    def dense(self) -> np.ndarray:
        """q as a dense 0/1 vector of length 2^d."""
        q = np.zeros(self.domain_size)
        self.view(q)[...] = 1.0
        return q


@dataclass(frozen=True)
class ConjunctionWorkload:
    """k conjunction queries over {0, 1}^d, stored as two ``(k, w)`` int8 arrays (2kw bytes in all)."""

    num_bits: int
    attributes: np.ndarray
    values: np.ndarray

    def __post_init__(self):
        """Check every row once, as :class:`ConjunctionQuery` does, so that indexing need not check again."""
        d, attrs, vals = _checked_conjunctions(self.num_bits, self.attributes, self.values)
        object.__setattr__(self, "num_bits", d)
        object.__setattr__(self, "attributes", attrs)
        object.__setattr__(self, "values", vals)

    def __len__(self) -> int:
        return int(self.attributes.shape[0])

    def __getitem__(self, i: int) -> ConjunctionQuery:
        i = operator.index(i)  # one query; a slice would not be a row
        return ConjunctionQuery._checked(self.num_bits, tuple(self.attributes[i].tolist()), tuple(self.values[i].tolist()))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def domain_size(self) -> int:
        return 2**self.num_bits

    def answers(self, vector) -> np.ndarray:
        """q·v for every query (one strided sum each)."""
        v = np.ascontiguousarray(check_array(vector, "vector", shape=(self.domain_size,)))
        return np.array([q.view(v).sum() for q in self])

    def matrix(self) -> np.ndarray:
        """The dense ``(k, 2^d)`` query matrix (for small universes only)."""
        return np.vstack([q.dense() for q in self])


def conjunction_workload(num_queries: int, num_bits: int, *, width: int = 2, rng=None) -> ConjunctionWorkload:
    """``num_queries`` random w-way conjunctions: w distinct attributes and a random value for each."""
    k = check_integer(num_queries, "num_queries", minimum=1)
    d = check_integer(num_bits, "num_bits", minimum=1, maximum=30)
    w = check_integer(width, "width", minimum=1, maximum=d)
    gen = as_generator(rng)
    attrs = np.argsort(gen.random((k, d)), axis=1)[:, :w].astype(np.int8)
    vals = gen.integers(0, 2, size=(k, w), dtype=np.int8)
    return ConjunctionWorkload(d, attrs, vals)


def product_histogram(n: int, num_bits: int, *, rng=None, skew: float = 0.4) -> np.ndarray:
    """Counts of n records drawn from a product distribution on {0, 1}^d (bit j is 1 w.p. ½ + U(−skew, skew)).

    A dataset that is far from uniform (so MW has something to learn), drawn with one
    multinomial over the 2^d cells.
    """
    nn = check_integer(n, "n", minimum=1)
    d = check_integer(num_bits, "num_bits", minimum=1, maximum=24)
    s = check_positive(skew, "skew")
    if s >= 0.5:
        raise ValueError(f"skew must be in (0, 0.5); got {skew!r}")
    check_size(3 * 8 * d * 2**d, "num_bits")  # the 2^d × d bit table and its two products
    gen = as_generator(rng)
    ones = 0.5 + gen.uniform(-s, s, size=d)
    bits = (np.arange(2**d)[:, None] >> np.arange(d)) & 1
    probs = np.exp(bits @ np.log(ones) + (1 - bits) @ np.log1p(-ones))
    return gen.multinomial(nn, probs / probs.sum()).astype(float)


class _Dense:
    __slots__ = ("q",)

    def __init__(self, q):
        self.q = q

    def dot(self, v):
        return float(self.q @ v)

    def scale(self, w, coef):
        w *= np.exp(coef * self.q)


class _Sparse:
    __slots__ = ("idx", "data")

    def __init__(self, idx, data):
        self.idx, self.data = idx, data

    def dot(self, v):
        return float(v[self.idx] @ self.data)

    def scale(self, w, coef):
        w[self.idx] *= np.exp(coef * self.data)


class _Conj:
    __slots__ = ("q",)

    def __init__(self, q):
        self.q = q

    def dot(self, v):
        return float(self.q.view(v).sum())

    def scale(self, w, coef):
        self.q.view(w)[...] *= np.exp(coef)


def _as_query(query, domain_size: int):
    """Validate a query (dense vector, 1 × |𝒳| sparse row, or ConjunctionQuery) and wrap it."""
    if isinstance(query, ConjunctionQuery):
        if query.domain_size != domain_size:
            raise ValueError(f"query must be over a universe of {domain_size} cells; this one has {query.domain_size}")
        return _Conj(query)
    if sparse.issparse(query):
        row = sparse.csr_array(query, dtype=float)
        if row.shape != (1, domain_size):
            raise ValueError(f"query must have shape (1, {domain_size}) as a sparse row; got {row.shape}")
        data = check_unit_interval_array(row.data, "query", min_size=0)
        return _Sparse(row.indices, data)
    q = check_unit_interval_array(query, "query", shape=(domain_size,))
    return _Dense(q)


# --------------------------------------------------------------------------------------
# Multiplicative weights for query release (no privacy)
# --------------------------------------------------------------------------------------
def kl_potential(p, synthetic) -> float:
    """KL(p‖p̃) = Σᵤ p(u) ln(p(u)/p̃(u)) (0·ln 0 = 0), the potential of the update-count proofs."""
    pp = check_array(p, "p", ndim=1)
    ps = check_array(synthetic, "synthetic", shape=pp.shape)
    return float(special.rel_entr(pp, ps).sum())


def mw_update(synthetic, query, released: float, *, eta: float) -> np.ndarray:
    """One MW step: p̃ ← Normalize(p̃ · e^{−η ℓ}) with ℓ = sign(q·p̃ − y)·q (Lecture 4).

    If the synthetic answer is too high, the cells the query counts lose weight; too low,
    they gain. ``released`` is y (q·p without privacy, a noisy answer with it).

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
    eta = check_positive(eta, "eta")
    q.scale(p, -eta * np.sign(q.dot(p) - y))
    return p / p.sum()


@dataclass(frozen=True)
class MWReleaseResult:
    """A run of MW query release without privacy.

    Attributes
    ----------
    synthetic : ndarray
        The final synthetic distribution p̃.
    updates : int
    chosen : ndarray of int
        The index of the query that triggered each update.
    gaps : ndarray
        |q·p̃ₜ − q·p| of the query of each update (all ≥ α).
    potential : ndarray
        KL(p‖p̃ₜ) before the first update and after each one (length updates + 1).
    final_max_error : float
        maxₖ |qₖ·p̃ − qₖ·p| at the end (< α when the run stopped by itself).
    """

    synthetic: np.ndarray
    updates: int
    chosen: np.ndarray
    gaps: np.ndarray
    potential: np.ndarray
    final_max_error: float
    alpha: float
    eta: float


def _query_matrix(queries, domain_size):
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


def mw_query_release(histogram, queries, *, alpha: float, eta: float | None = None, adversarial: bool = True,
                     max_updates: int | None = None) -> MWReleaseResult:
    """MW query release without privacy (Lecture 4): p̃₁ uniform, update on every query answered ≥ α off.

    ``adversarial=True``: in each round the adversary asks the query of the workload that
    the synthetic data answers worst, until none is off by α or more. ``adversarial=False``:
    the queries are asked once, in order. Updates use the exact answer y = q·p.

    With η = α/2 (the default, Dwork & Roth's choice) the potential falls by at least α²/4
    per update, so there are at most 4 ln|𝒳|/α² updates on *any* stream
    (:func:`dpcourse.bounds.mw_update_count_bound`).

    Parameters
    ----------
    histogram : array_like, shape (|𝒳|,)
    queries : array_like (k, |𝒳|), sparse matrix, or ConjunctionWorkload (small |𝒳| only)
    alpha : float
        Accuracy α ∈ (0, 1].
    eta : float, optional
        Learning rate, default α/2.
    max_updates : int, optional
        A safety cap (default: the bound, rounded up, plus one, so a violated bound shows).
    """
    x = check_histogram(histogram, min_cells=2)
    d = x.size
    a = check_positive(alpha, "alpha")
    if a > 1:
        raise ValueError(f"alpha must be in (0, 1]; got {alpha!r}")
    eta = a / 2 if eta is None else check_positive(eta, "eta")
    w = _query_matrix(queries, d)
    cap = (int(np.ceil(bounds.mw_update_count_bound(domain_size=d, alpha=a))) + 1 if max_updates is None
           else check_integer(max_updates, "max_updates", minimum=0))
    p = x / x.sum()
    truth = np.asarray(w @ p).ravel()
    synthetic = np.full(d, 1.0 / d)
    chosen, gaps, potential = [], [], [kl_potential(p, synthetic)]
    order = iter(range(w.shape[0]))
    while len(chosen) < cap:
        if adversarial:
            errors = np.abs(np.asarray(w @ synthetic).ravel() - truth)
            i = int(np.argmax(errors))
            gap = errors[i]
            if gap < a:
                break
        else:
            i = next(order, None)
            if i is None:
                break
            row = w[[i]] if sparse.issparse(w) else w[i]
            gap = abs(float(np.asarray(row @ synthetic).ravel()[0]) - truth[i])
            if gap < a:
                continue
        row = w[[i]] if sparse.issparse(w) else w[i]
        synthetic = mw_update(synthetic, row, truth[i], eta=eta)
        chosen.append(i)
        gaps.append(gap)
        potential.append(kl_potential(p, synthetic))
    final = float(np.max(np.abs(np.asarray(w @ synthetic).ravel() - truth)))
    return MWReleaseResult(synthetic, len(chosen), np.array(chosen, dtype=int), np.array(gaps),
                           np.array(potential), final, a, eta)


# --------------------------------------------------------------------------------------
# Private Multiplicative Weights
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PMWHistory:
    """What a curator released, query by query (never the true answers: they are private).

    ``answers`` are the released answers, ``synthetic_answers`` what the synthetic data said
    before the query, ``updated`` whether the query triggered an update (a paid answer).
    """

    answers: np.ndarray
    synthetic_answers: np.ndarray
    updated: np.ndarray


class PrivateMW:
    """Private Multiplicative Weights: an online curator for adaptively chosen linear queries.

    For each query the curator compares the synthetic answer q·p̃ₜ with the true q·p through
    the sparse vector core (:mod:`dpcourse.svt`). If they agree, it releases q·p̃ₜ, which
    costs no privacy; if not, it releases a Laplace-noised q·p and moves p̃ towards p with
    the MW update (:func:`mw_update`). Two calibrations:

    ``calibration="notes"`` (Lecture 4, Theorem 4.3; δ = 0 only)
        N = ⌊16 ln|𝒳|/α²⌋ updates, ε₀ = ε/(2N). Each round is an AboveThreshold run with
        budget ε₀ (sensitivity 1/n, which assumes n public: neighbours replace one record) on
        |q·p̃ₜ − q·p| with threshold α: noisy threshold
        α + Lap(2/(nε₀)), query noise Lap(4/(nε₀)); the N rounds are run by one
        :class:`~dpcourse.svt.OnlineSparseVector` (c = N, budget Nε₀). On ⊤ it releases y = q·p + Lap(1/(nε₀)), updates with ℓ = sign(q·p̃ₜ − y)·q and η = α/4,
        and the next query starts a fresh run. Accurate (:func:`bounds.pmw_notes_error_bound`)
        when ε₀ ≥ 16 ln(3k/β)/(nα).

    ``calibration="dwork_roth"`` (the slides' OnlineMultiplicativeWeights; Dwork & Roth
    Algorithm 5, Theorem 4.14 for δ = 0 and 4.15 for δ > 0)
        c = ⌊4 ln|𝒳|/α²⌋ updates, η = α/2, one :class:`~dpcourse.svt.OnlineNumericSparse`
        (ε, c, sensitivity 1/n, Dwork & Roth's budget split: ε₁ = 8ε/9 for δ = 0,
        ε₁ = √512 ε/(√512 + 1) for δ > 0) fed the two queries q·p − q·p̃ₜ and q·p̃ₜ − q·p (the
        second only if the first was ⊥) with threshold T = 2α. A numeric answer a gives
        y = q·p̃ₜ + a (resp. − a) and an update. For δ > 0 both parts of the core use
        σ(ε′) = √(32c ln(2/δ))/ε′ (δ/2 each), as in Dwork & Roth's NumericSparse, and the whole
        is (ε, δ)-DP; the δ > 0 split is the one behind the slides' constant 2 + 32√2.
        The slides set the threshold to twice NumericSparse's accuracy level,
        T = 18c(ln 2|Q| + ln(4c/β))/(εn) for δ = 0, i.e. T = 2R(α); that equals 2α only at the
        smallest admissible α (α = R(α)). For larger α this package keeps T = 2α, which keeps
        both steps of the proof (a ⊤ means a gap ≥ T − R(α) ≥ α, a ⊥ a gap < T + R(α) ≤ 3α).
        Accurate to 3α when α ≥ R(α) (:func:`bounds.pmw_dwork_roth_requirement`).

    Parameters
    ----------
    histogram : array_like, shape (|𝒳|,)
        Counts x ≥ 0 with n = Σ x > 0; |𝒳| ≥ 2.
    epsilon : float
        Total privacy budget ε > 0.
    alpha : float
        Accuracy parameter α ∈ (0, 1].
    beta : float
        Failure probability of the accuracy statement.
    delta : float
        0, or δ ∈ (0, 1) (``"dwork_roth"`` only).
    max_queries : int, optional
        |Q|. When given, the curator answers at most this many queries (the accuracy
        statement covers |Q| queries) and reports ``guaranteed_error``.
    rng : seed or Generator
    calibration : {"notes", "dwork_roth"}, optional
        Default ``"notes"`` for δ = 0, ``"dwork_roth"`` for δ > 0.

    Once the update budget is spent (N, resp. c updates), or ``max_queries`` answered, the
    curator refuses: :meth:`answer` raises :class:`BudgetExhaustedError`, and no further
    privacy is spent. :meth:`synthetic_answer` still answers from p̃ (post-processing,
    free), with no accuracy guarantee.

    Privacy
    -------
    notes: each round costs ε₀ for its AboveThreshold run and ε₀ for the Laplace release;
    at most N rounds, so ε = 2ε₀N by basic composition (Lecture 4). dwork_roth: the data are
    touched only through NumericSparse, which is (ε, δ)-DP (Dwork & Roth, Theorem 4.13).
    Everything else (the synthetic answers, p̃) is post-processing.

    Examples
    --------
    >>> pmw = PrivateMW([30, 10, 50, 10], epsilon=1e4, alpha=0.2, rng=0)
    >>> round(pmw.answer([1, 0, 1, 0]), 2), pmw.updates, pmw.max_updates
    (0.8, 1, 554)
    """

    def __init__(self, histogram, *, epsilon: float, alpha: float, beta: float = 0.05, delta: float = 0.0,
                 max_queries: int | None = None, rng=None, calibration: str | None = None):
        x = check_histogram(histogram, min_cells=2)
        self.domain_size = int(x.size)
        self.n = float(x.sum())
        self._p = x / self.n
        self.epsilon = check_epsilon(epsilon)
        self.alpha = check_positive(alpha, "alpha")
        if self.alpha > 1:
            raise ValueError(f"alpha must be in (0, 1] (answers are normalised); got {alpha!r}")
        self.beta = check_probability(beta, "beta")
        self.delta = 0.0 if delta == 0 else check_probability(delta, "delta")
        self.max_queries = None if max_queries is None else check_integer(max_queries, "max_queries", minimum=1)
        if calibration is None:
            calibration = "notes" if self.delta == 0 else "dwork_roth"
        self.calibration = check_choice(calibration, "calibration", CALIBRATIONS)
        if self.calibration == "notes" and self.delta > 0:
            raise ValueError("delta must be 0 with calibration='notes' (Lecture 4 is pure ε-DP); "
                             "use calibration='dwork_roth' for δ > 0")
        self._rng = as_generator(rng)
        log_d = np.log(self.domain_size)
        self.sensitivity = 1.0 / self.n
        if self.calibration == "notes":
            self.max_updates = max(1, int(np.floor(bounds.pmw_update_count_bound(domain_size=self.domain_size,
                                                                                 alpha=self.alpha))))
            self.epsilon0 = self.epsilon / (2 * self.max_updates)
            self.eta = self.alpha / 4
            self.threshold = self.alpha
            # N AboveThreshold rounds with ε₀ each, threshold α: SparseVector with c = N and budget Nε₀ = ε/2
            # (threshold noise Lap(2cΔ/(Nε₀)) = Lap(2/(nε₀)), query noise Lap(4/(nε₀)); a fresh threshold per round).
            self._sparse = OnlineSparseVector(threshold=self.threshold, epsilon=self.max_updates * self.epsilon0,
                                              c=self.max_updates, sensitivity=self.sensitivity, rng=self._rng)
            self.noise_scales = {
                "threshold": 2 * self.sensitivity / self.epsilon0,
                "query": 4 * self.sensitivity / self.epsilon0,
                "release": laplace_scale(sensitivity=self.sensitivity, epsilon=self.epsilon0),
            }
        else:
            self.max_updates = max(1, int(np.floor(4 * log_d / self.alpha**2)))
            self.epsilon0 = None
            self.eta = self.alpha / 2
            self.threshold = 2 * self.alpha
            self._sparse = OnlineNumericSparse(threshold=self.threshold, epsilon=self.epsilon, c=self.max_updates,
                                               sensitivity=self.sensitivity,
                                               delta=self.delta, rng=self._rng)
            scales = numeric_sparse_scales(epsilon=self.epsilon, c=self.max_updates, sensitivity=self.sensitivity,
                                           delta=self.delta)
            self.noise_scales = dict(zip(("threshold", "query", "release"), map(float, scales)))
        self._synthetic = np.full(self.domain_size, 1.0 / self.domain_size)
        self.updates = 0
        self.answered = 0
        self._laplace_releases = 0
        self._answers: list[float] = []
        self._synthetic_answers: list[float] = []
        self._updated: list[bool] = []

    # -- state ---------------------------------------------------------------------------
    @property
    def synthetic(self) -> np.ndarray:
        """A copy of the current synthetic distribution p̃ₜ (public: it is post-processing)."""
        return self._synthetic.copy()

    @property
    def exhausted(self) -> bool:
        """True when the curator refuses further queries."""
        if self.max_queries is not None and self.answered >= self.max_queries:
            return True
        return self._sparse.halted

    @property
    def privacy_spent(self) -> float:
        """ε spent so far (never above ``epsilon``; δ, when > 0, is spent from the first query).

        notes: ε₀ per round started (the SparseVector core's account) + ε₀ per Laplace release.
        dwork_roth: the NumericSparse core's own account ((1 − s)ε/c per comparison run started
        plus sε/c per released value, s = 1/9; ε once started when δ > 0).

        This is an after-the-fact, data-dependent account of one run, not the curator's
        privacy guarantee: the number of updates depends on the data, so a run that stopped
        at 0.01 is not "0.01-DP". The guarantee is ``epsilon`` (and ``delta``), whatever the run.
        """
        if not self.answered:
            return 0.0
        if self.calibration == "notes":
            return self._sparse.privacy_spent + self.epsilon0 * self._laplace_releases
        return self._sparse.privacy_spent

    @property
    def history(self) -> PMWHistory:
        return PMWHistory(np.array(self._answers), np.array(self._synthetic_answers),
                          np.array(self._updated, dtype=bool))

    @property
    def guaranteed_error(self) -> float | None:
        """The theorem's error level if (ε, n, |Q| = max_queries, β) meet its condition for this α, else None.

        notes: 11α/8 when ε₀ ≥ 16 ln(3|Q|/β)/(nα); dwork_roth: 3α when α ≥ R(α).
        """
        if self.max_queries is None:
            return None
        if self.calibration == "notes":
            need = 16 * np.log(3 * self.max_queries / self.beta) / (self.n * self.alpha)
            return 11 * self.alpha / 8 if self.epsilon0 >= need else None
        need = bounds.pmw_dwork_roth_requirement(self.alpha, n=self.n, epsilon=self.epsilon,
                                                 domain_size=self.domain_size, num_queries=self.max_queries,
                                                 beta=self.beta, delta=self.delta)
        return 3 * self.alpha if self.alpha >= need else None

    # -- answering -----------------------------------------------------------------------
    def synthetic_answer(self, query) -> float:
        """q·p̃ₜ: an answer from the synthetic data alone (free, no accuracy guarantee)."""
        return _as_query(query, self.domain_size).dot(self._synthetic)

    def answer(self, query) -> float:
        """Release an answer to one linear query (normalised, in [0, 1] up to noise).

        Raises
        ------
        BudgetExhaustedError
            When the update budget or ``max_queries`` is spent.
        """
        q = _as_query(query, self.domain_size)
        if self.exhausted:
            if self.max_queries is not None and self.answered >= self.max_queries:
                raise BudgetExhaustedError(f"PrivateMW has answered max_queries = {self.max_queries} queries")
            raise BudgetExhaustedError(
                f"PrivateMW has made all {self.max_updates} updates its privacy budget pays for; it answers no "
                "more queries (synthetic_answer(query) answers from p̃ for free, without an accuracy guarantee)")
        synthetic_value = q.dot(self._synthetic)
        true_value = q.dot(self._p)
        if self.calibration == "notes":
            released = self._answer_notes(synthetic_value, true_value)
        else:
            released = self._answer_dwork_roth(synthetic_value, true_value)
        updated = released is not None
        if updated:
            q.scale(self._synthetic, -self.eta * np.sign(synthetic_value - released))
            self._synthetic /= self._synthetic.sum()
            self.updates += 1
        else:
            released = synthetic_value
        self.answered += 1
        self._answers.append(released)
        self._synthetic_answers.append(synthetic_value)
        self._updated.append(updated)
        return released

    def _answer_notes(self, synthetic_value, true_value):
        if not self._sparse.test(abs(synthetic_value - true_value)):
            return None
        self._laplace_releases += 1
        return float(laplace_mechanism(true_value, sensitivity=self.sensitivity, epsilon=self.epsilon0,
                                       rng=self._rng))

    def _answer_dwork_roth(self, synthetic_value, true_value):
        above = self._sparse.test(true_value - synthetic_value)
        if above is not None:  # the second comparison is skipped: this query is already paid for
            return synthetic_value + above
        below = self._sparse.test(synthetic_value - true_value)
        return None if below is None else synthetic_value - below


# --------------------------------------------------------------------------------------
# Baselines
# --------------------------------------------------------------------------------------
def per_query_epsilon(*, epsilon: float, num_queries: int, delta: float = 0.0) -> float:
    """The ε₀ each of k Laplace answers may use so that all k together are (ε, δ)-DP.

    δ = 0: ε₀ = ε/k (basic composition). δ > 0: the largest ε₀ with
    ε₀√(2k ln(1/δ)) + kε₀(e^{ε₀} − 1) ≤ ε (advanced composition, Dwork & Roth Theorem 3.20),
    or ε/k if that is larger (:func:`bounds.advanced_composition_per_query_epsilon`).
    """
    eps = check_epsilon(epsilon)
    k = check_integer(num_queries, "num_queries", minimum=1)
    if delta == 0:
        return eps / k
    return bounds.advanced_composition_per_query_epsilon(epsilon=eps, k=k, delta=check_probability(delta, "delta"))


class LaplacePerQuery:
    """Baseline: answer each of at most k queries with q·p + Lap(1/(nε₀)), ε₀ from :func:`per_query_epsilon`.

    With probability 1 − β all k answers are within ln(k/β)/(nε₀) (Theorem 3.8): k ln(k/β)/(nε)
    for δ = 0 (Lecture 3 / :func:`bounds.composed_laplace_max_error_bound`).

    Privacy
    -------
    Each answer is ε₀-DP (sensitivity 1/n); k of them compose to ε (basic) or (ε, δ)
    (advanced composition). The (k + 1)-th query is refused with :class:`BudgetExhaustedError`.
    """

    def __init__(self, histogram, *, epsilon: float, num_queries: int, delta: float = 0.0, rng=None):
        x = check_histogram(histogram)
        self.domain_size, self.n = int(x.size), float(x.sum())
        self._p = x / self.n
        self.epsilon, self.delta = check_epsilon(epsilon), float(delta)
        self.num_queries = check_integer(num_queries, "num_queries", minimum=1)
        self.epsilon_per_query = per_query_epsilon(epsilon=epsilon, num_queries=num_queries, delta=delta)
        self.noise_scale = laplace_scale(sensitivity=1.0 / self.n, epsilon=self.epsilon_per_query)
        self._rng = as_generator(rng)
        self.answered = 0

    @property
    def privacy_spent(self) -> float:
        """ε₀ × answered for δ = 0; ε once started for δ > 0 (the composition is for all k)."""
        if self.delta > 0:
            return self.epsilon if self.answered else 0.0
        return self.epsilon_per_query * self.answered

    def answer(self, query) -> float:
        if self.answered >= self.num_queries:
            raise BudgetExhaustedError(f"LaplacePerQuery has answered its num_queries = {self.num_queries} queries")
        q = _as_query(query, self.domain_size)
        self.answered += 1
        return float(laplace_mechanism(q.dot(self._p), sensitivity=1.0 / self.n, epsilon=self.epsilon_per_query,
                                       rng=self._rng))


class NoisyHistogram:
    """Baseline: release x̂ = x + Lap(1/ε) per cell once; answer every query as q·x̂/n.

    Its error on q is q·Z/n, of order √|𝒳|/(nε) (:func:`bounds.noisy_histogram_max_error_bound`).

    Privacy
    -------
    x has L1 sensitivity 1, so x̂ is ε-DP; answers are post-processing, unlimited in number.
    """

    def __init__(self, histogram, *, epsilon: float, rng=None):
        x = check_histogram(histogram)
        self.domain_size, self.n = int(x.size), float(x.sum())
        self.epsilon = check_epsilon(epsilon)
        self.noisy_histogram = laplace_mechanism(x, sensitivity=1.0, epsilon=self.epsilon, rng=rng)
        self._estimate = self.noisy_histogram / self.n
        self.answered = 0

    @property
    def privacy_spent(self) -> float:
        return self.epsilon

    def answer(self, query) -> float:
        self.answered += 1
        return _as_query(query, self.domain_size).dot(self._estimate)


def run_stream(curator, queries, *, stop_when_exhausted: bool = True) -> np.ndarray:
    """Ask ``curator`` every query of ``queries`` in order; the released answers (NaN once it refuses).

    A loop over queries is the nature of an online curator: each answer may depend on the
    previous ones.
    """
    queries = _query_stream(queries, curator.domain_size)
    out = np.full(len(queries), np.nan)
    for i, query in enumerate(queries):
        try:
            out[i] = curator.answer(query)
        except BudgetExhaustedError:
            if not stop_when_exhausted:
                raise
            break
    return out


def _query_stream(queries, domain_size: int):
    """A stream of queries checked before the first is asked: a workload, a sparse matrix, a list of
    query objects (possibly empty), or a dense ``(k, |𝒳|)`` array of entries in [0, 1]."""
    if isinstance(queries, ConjunctionWorkload):
        if queries.domain_size != domain_size:
            raise ValueError(f"queries must be over a universe of {domain_size} cells; "
                             f"this workload has {queries.domain_size}")
        return queries
    if sparse.issparse(queries):
        rows = sparse.csr_array(queries, dtype=float)
        if rows.ndim != 2 or rows.shape[1] != domain_size:
            raise ValueError(f"queries must have shape (k, {domain_size}); got {rows.shape}")
        return [rows[[i]] for i in range(rows.shape[0])]
    if isinstance(queries, (list, tuple)) and all(isinstance(q, ConjunctionQuery) or sparse.issparse(q) for q in queries):
        return list(queries)  # each query object is checked when it is asked
    return check_unit_interval_array(queries, "queries", shape=(None, domain_size))


def run_stream_with_potential(curator: PrivateMW, queries, p) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`run_stream`, also returning KL(p‖p̃ₜ) after each query (how close the synthetic data has come).

    ``p`` is the true distribution x/n; computing the potential reads the private data, so
    this is for teaching, not for release.
    """
    target = check_array(p, "p", shape=(curator.domain_size,))
    queries = _query_stream(queries, curator.domain_size)
    out = np.full(len(queries), np.nan)
    potential = np.full(len(queries), np.nan)
    for i, query in enumerate(queries):
        try:
            out[i] = curator.answer(query)
        except BudgetExhaustedError:
            break
        potential[i] = kl_potential(target, curator._synthetic)
    return out, potential


@dataclass(frozen=True)
class ReleaseErrors:
    """Max absolute errors of the three curators on one workload (normalised answers).

    All three are scored on every query of the workload. PMW's refused queries (after its
    update budget ran out) are scored with the answer the analyst gets for free from the
    synthetic data, q·p̃ (post-processing, no accuracy guarantee); ``pmw_answered`` says how
    many PMW actually answered.
    """

    pmw: float
    laplace: float
    histogram: float
    alpha: float
    updates: int
    max_updates: int
    pmw_privacy_spent: float
    pmw_answered: int


def release_errors(histogram, workload: ConjunctionWorkload, *, epsilon: float, alpha: float | None = None,
                   beta: float = 0.05, rng=None, truth=None) -> ReleaseErrors:
    """Answer every query of ``workload`` with PMW, Laplace per query and the noisy histogram; max errors.

    ``alpha=None`` takes Theorem 4.3's α (:func:`bounds.pmw_notes_alpha`), capped at 1: PMW
    calibrated as the notes prescribe. The Laplace baseline uses basic composition (ε/k each),
    drawn in one vectorised call; the noisy histogram is :class:`NoisyHistogram`. ``truth``
    (the exact answers) may be passed to save recomputing them.

    Scoring: like with like, every method on every query. If PMW refuses the tail of the
    stream, those queries are answered from its final synthetic data (free post-processing)
    and count in its error, rather than being dropped.
    """
    x = check_histogram(histogram, min_cells=2)
    k = len(workload)
    gen = as_generator(rng)
    n = float(x.sum())
    if alpha is None:
        alpha = min(1.0, bounds.pmw_notes_alpha(n=n, epsilon=epsilon, domain_size=x.size, num_queries=k, beta=beta))
    truth = workload.answers(x / n) if truth is None else check_array(truth, "truth", shape=(k,))
    curator = PrivateMW(x, epsilon=epsilon, alpha=alpha, beta=beta, max_queries=k, rng=gen)
    answers = run_stream(curator, workload)
    for i in range(curator.answered, k):  # refused: the synthetic data's free answer
        answers[i] = curator.synthetic_answer(workload[i])
    laplace = laplace_mechanism(truth, sensitivity=k / n, epsilon=epsilon, rng=gen)
    noisy = NoisyHistogram(x, epsilon=epsilon, rng=gen)
    from_histogram = workload.answers(noisy.noisy_histogram / n)
    return ReleaseErrors(float(np.max(np.abs(answers - truth))), float(np.max(np.abs(laplace - truth))),
                         float(np.max(np.abs(from_histogram - truth))), float(alpha), curator.updates,
                         curator.max_updates, curator.privacy_spent, curator.answered)
