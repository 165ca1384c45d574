"""Exact losses of the SVT variants of Lyu, Su & Li (notebook 05), and their shipped table.

The conditioning on the threshold noise of :mod:`dpcourse.svt.exact` gives the
probability of any output pattern of the variants (:func:`variant_pattern_probability`), and
with it each variant's counterexample and its exact loss (:func:`counterexample`,
:func:`exact_variant_loss`); the losses notebook 05 and its panel show are shipped in
``data/variant_losses.npz`` (:func:`write_variant_loss_table` rebuilds it).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np

from .._validation import ArrayLike, check_answers_and_threshold, check_choice, check_integer, check_positive
from ..data import DIRECTORY, load_table
from .exact import _gauss_legendre, adversarial_pair, privacy_loss
from .specs import svt_standard_spec
from .variants import VARIANTS, Variant

__all__ = [
    "VARIANT_LOSS_TABLE",
    "VARIANT_LOSS_TABLE_CS",
    "VARIANT_LOSS_TABLE_LONG",
    "VARIANT_LOSS_TABLE_MAX_QUERIES",
    "counterexample",
    "exact_variant_loss",
    "numeric_svt_s_loss",
    "svt_s_lemma_losses",
    "variant_pattern_probability",
    "write_variant_loss_table",
]


# --- Notebook 05: the SVT variants of Lyu, Su & Li ---
#: One entry of an output event: −∞ (⊥), +∞ (⊤), NaN (not answered) or ``(lo, hi)`` for a released number in [lo, hi].
PatternEntry: TypeAlias = float | tuple[float, float]


def _laplace_cdf(x: ArrayLike, scale: float) -> np.ndarray:
    if scale == 0:  # no noise: q + 0 < T + z exactly when x = T + z − q > 0
        return (np.asarray(x) > 0).astype(float)
    x = np.asarray(x, dtype=float)
    half = 0.5 * np.exp(-np.abs(x) / scale)
    return np.where(x < 0, half, 1.0 - half)


def _pattern_items(pattern: Sequence[Any], m: int) -> list[tuple[Any, ...]]:
    items = list(pattern)
    if len(items) != m:
        raise ValueError(f"pattern must have one entry per query ({m}); got {len(items)}")
    kinds: list[tuple[Any, ...]] = []
    for item in items:
        if isinstance(item, (tuple, list)):
            lo, hi = float(item[0]), float(item[1])
            if not lo < hi:
                raise ValueError(f"a numeric event (lo, hi) needs lo < hi; got {item!r}")
            kinds.append(("number", lo, hi))
        elif np.isnan(item):
            kinds.append(("halted",))
        elif np.isposinf(item):
            kinds.append(("top",))
        elif np.isneginf(item):
            kinds.append(("bottom",))
        else:
            raise ValueError(
                "pattern entries are -inf (⊥), inf (⊤), nan (not answered) or (lo, hi) for a released number"
            )
    return kinds


def variant_pattern_probability(
    variant: str | Variant,
    answers: ArrayLike,
    pattern: Sequence[Any],
    *,
    threshold: ArrayLike,
    epsilon: float,
    c: int,
    sensitivity: float = 1.0,
) -> float:
    """Exact probability that a variant's output matches ``pattern``, by quadrature over the threshold noise.

    ``pattern`` has one entry per query: −∞ (⊥), +∞ (⊤), NaN (not answered) or ``(lo, hi)``,
    the event that the released number lies in [lo, hi]. Given the threshold noise ρ = z the
    answers are independent; for Alg. 3 the released qᵢ + νᵢ is the compared value, so the event
    is νᵢ ∈ [max(Tᵢ + z, lo) − qᵢ, hi − qᵢ]; Alg. 2's re-drawn threshold makes each stretch up to
    and including a ⊤ an independent integral. A pattern the stopping rule cannot produce has
    probability 0.

    Parameters
    ----------
    variant : str or Variant
        A key of :data:`~dpcourse.svt.VARIANTS` (``"alg1"`` … ``"alg6"``, ``"svt_s"``) or a :class:`Variant`.
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D).
    pattern : sequence, length m
        The output event, one entry per query as above.
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    epsilon : float
        The privacy parameter ε the variant is run with, > 0.
    c : int
        The variant's c, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).

    Returns
    -------
    float
        The probability of the event, in [0, 1].

    Raises
    ------
    ValueError
        If ``variant`` is not a known key, ``epsilon`` or ``sensitivity`` is not a finite number > 0, ``c`` is
        not an integer ≥ 1, ``answers`` or ``threshold`` is not as above (finite numbers), ``pattern`` does not
        have m entries, or one of its entries is neither ±∞, NaN nor a pair ``(lo, hi)`` with lo < hi.
    TypeError
        If a parameter is not a number (or array of numbers) of its kind.
    """
    v = VARIANTS[check_choice(variant, "variant", sorted(VARIANTS))] if isinstance(variant, str) else variant
    spec = v.spec(
        check_positive(epsilon, "epsilon"), check_integer(c, "c", minimum=1), check_positive(sensitivity, "sensitivity")
    )
    q, t = check_answers_and_threshold(answers, threshold)
    kinds = _pattern_items(pattern, q.size)
    tops = np.cumsum([k[0] in ("top", "number") for k in kinds])
    for i, kind in enumerate(kinds):
        stopped = spec.c is not None and i > 0 and tops[i - 1] >= spec.c
        if (kind[0] == "halted") != stopped:
            return 0.0
        if kind[0] == "number" and spec.numeric == "none" or kind[0] == "top" and spec.numeric != "none":
            return 0.0
    live = [i for i, kind in enumerate(kinds) if kind[0] != "halted"]
    segments, current = [], []
    for i in live:
        current.append(i)
        if spec.redraw_scale is not None and kinds[i][0] in ("top", "number"):
            segments.append(current)
            current = []
    if current:
        segments.append(current)
    probability = 1.0
    for number, segment in enumerate(segments):
        scale_rho = spec.threshold_scale if number == 0 or spec.redraw_scale is None else spec.redraw_scale
        kinks = [0.0] + [q[i] - t[i] for i in segment]
        # a released-number event [lo, hi] bends the integrand where T + z meets either end
        kinks += [kinds[i][j] - t[i] for i in segment if kinds[i][0] == "number" for j in (1, 2)]
        piece = scale_rho if spec.query_scale == 0 else min(scale_rho, spec.query_scale)
        # ρ's density is below e^{-45} beyond ±45 scales: integrate there only
        z, w = _gauss_legendre(-45 * scale_rho, 45 * scale_rho, kinks, piece)
        integrand = 0.5 / scale_rho * np.exp(-np.abs(z) / scale_rho)
        for i in segment:
            kind, x = kinds[i], t[i] + z - q[i]
            below = _laplace_cdf(x, spec.query_scale)
            if kind[0] == "bottom":
                integrand = integrand * below
            elif kind[0] == "top":
                integrand = integrand * (1.0 - below)
            elif spec.numeric == "compared":
                upper = _laplace_cdf(kind[2] - q[i], spec.query_scale)
                lower = _laplace_cdf(np.maximum(t[i] + z, kind[1]) - q[i], spec.query_scale)
                integrand = integrand * np.clip(upper - lower, 0.0, None)
            else:
                released = _laplace_cdf(kind[2] - q[i], spec.numeric_scale) - _laplace_cdf(
                    kind[1] - q[i], spec.numeric_scale
                )
                integrand = integrand * (1.0 - below) * released
        probability *= float(np.clip(w @ integrand, 0.0, 1.0))
    return probability


def counterexample(
    variant_key: str, num_queries: int, *, c: int = 1, sensitivity: float = 1.0
) -> tuple[np.ndarray, np.ndarray, float, Sequence[PatternEntry]]:
    """A neighbouring pair and an output event that show each variant's worst case.

    For :func:`variant_pattern_probability`, the pair and event of each variant are:

    * alg1, svt_s: (0^{m−c}, Δ^c) / (Δ^{m−c}, 0^c) and ⊥^{m−c}⊤^c. The m − c early ⊥ are
      paid for once by the threshold noise (ε₁) and each of the c late ⊤ by its query noise
      (ε₂/c), so the loss tends to ε₁ + ε₂ = ε as m grows. For c = 1 this is notebook 04's
      adversarial pair (0, …, 0, Δ) / (Δ, …, Δ, 0) and ⊥^{m−1}⊤; for c ≥ 2 that pair and
      event stay below ε (at c = 2 they tend to 0.75ε for Alg. 1), since only one ⊤ pays;
    * alg2: c blocks, each notebook 04's pair and ⊥^{L−1}⊤ on its stretch of L ≈ m/c queries:
      Alg. 2 redraws the threshold after every ⊤, so each block is an AboveThreshold run of
      its own with ε/c, and the loss tends to ε;
    * alg5: notebook 04's pair and ⊥^{m−1}⊤ (for any c): impossible on D′, the loss is infinite;
    * alg3: all answers 0 on D and Δ on D′, and ⊥^{m−1} followed by a released number ≤ T − Δ:
      the low number pins the threshold, and each ⊥ adds ε/(2c) of loss;
    * alg4: (0^{m−c}, Δ^c) / (Δ^{m−c}, 0^c) and ⊥^{m−c}⊤^c: the loss tends to (1 + 6c)ε/4;
    * alg6: the X shape (Δ^k, 0^k) / (0^k, Δ^k) with k = ⌊m/2⌋ and ⊤^k⊥^k: the loss grows with k.

    Parameters
    ----------
    variant_key : str
        ``"alg1"`` … ``"alg6"`` or ``"svt_s"``.
    num_queries : int
        The number m of queries, ≥ 1 (≥ c for alg2).
    c : int, optional
        The variant's c, ≥ 1 (default 1).
    sensitivity : float, optional
        The sensitivity Δ, > 0 (default 1).

    Returns
    -------
    tuple
        ``(answers_d, answers_d_prime, threshold, pattern)``: two arrays of shape ``(m,)``, the threshold
        (a float) and the event (a list of m entries).

    Raises
    ------
    ValueError
        If ``variant_key`` is not one of the seven, ``num_queries`` or ``c`` is not an integer ≥ 1 (or, for
        alg2, ``num_queries`` < ``c``), or ``sensitivity`` is not a finite number > 0.
    TypeError
        If ``num_queries`` or ``c`` is not an integer, or ``sensitivity`` is not a real number.
    """
    m = check_integer(num_queries, "num_queries", minimum=1)
    c = check_integer(c, "c", minimum=1)
    delta_q = check_positive(sensitivity, "sensitivity")
    bottom, top = -np.inf, np.inf
    if variant_key == "alg5" or variant_key in ("alg1", "svt_s") and c == 1:
        d, d_prime = adversarial_pair(m, sensitivity=delta_q)
        return d, d_prime, 0.5 * delta_q, [bottom] * (m - 1) + [top]
    if variant_key == "alg2":
        if m < c:
            raise ValueError(
                f"num_queries must be an integer in [c, inf] for alg2's counterexample; got {num_queries!r}"
            )
        sizes = np.full(c, m // c)
        sizes[0] += m % c
        blocks = [adversarial_pair(int(size), sensitivity=delta_q) for size in sizes]
        pattern: list[PatternEntry] = [x for size in sizes for x in [bottom] * (int(size) - 1) + [top]]
        return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks]), 0.5 * delta_q, pattern
    if variant_key == "alg3":
        return np.zeros(m), np.full(m, delta_q), 0.0, [bottom] * (m - 1) + [(-1e9 * delta_q, -1.0 * delta_q)]
    if variant_key in ("alg1", "svt_s", "alg4"):
        k = max(m - c, 0)
        d = np.r_[np.zeros(k), np.full(m - k, delta_q)]
        d_prime = np.r_[np.full(k, delta_q), np.zeros(m - k)]
        return d, d_prime, 0.5 * delta_q, [bottom] * k + [top] * (m - k)
    if variant_key == "alg6":
        k = max(m // 2, 1)
        d = np.r_[np.full(k, delta_q), np.zeros(m - k)]
        d_prime = np.r_[np.zeros(k), np.full(m - k, delta_q)]
        return d, d_prime, 0.5 * delta_q, [top] * k + [bottom] * (m - k)
    raise ValueError(f"variant_key must be one of 'alg1' … 'alg6', 'svt_s'; got {variant_key!r}")


def exact_variant_loss(
    variant_key: str, num_queries: int, *, epsilon: float, c: int = 1, sensitivity: float = 1.0
) -> tuple[float, float, float]:
    """(loss, Pr on D, Pr on D′) of :func:`counterexample`'s event, exactly; loss = ∞ when Pr on D′ is 0.

    The losses notebook 05 and its panel show at ε = 1 come from the shipped table
    (:data:`VARIANT_LOSS_TABLE`, the same numbers): an entry is used only when the variant's noise
    and the counterexample it was computed from match today's exactly.

    Parameters
    ----------
    variant_key : str
        ``"alg1"`` … ``"alg6"`` or ``"svt_s"``.
    num_queries : int
        The number m of queries, ≥ 1 (≥ c for alg2).
    epsilon : float
        The privacy parameter ε the variant is run with, > 0.
    c : int, optional
        The variant's c, ≥ 1 (default 1).
    sensitivity : float, optional
        The sensitivity Δ, > 0 (default 1).

    Returns
    -------
    tuple of float
        ``(loss, p, p_prime)``: ln(p/p′), ∞ when p′ = 0 < p and 0 when p = 0, and the event's probabilities
        on D and D′.

    Raises
    ------
    ValueError
        As :func:`counterexample`, and if ``epsilon`` is not a finite number > 0.
    TypeError
        As :func:`counterexample`, and if ``epsilon`` is not a real number.
    """
    stored = _stored_variant_loss(variant_key, num_queries, epsilon, c, sensitivity)
    if stored is not None:
        return stored
    return _computed_variant_loss(variant_key, num_queries, epsilon=epsilon, c=c, sensitivity=sensitivity)


def _computed_variant_loss(
    variant_key: str, num_queries: int, *, epsilon: float, c: int, sensitivity: float
) -> tuple[float, float, float]:
    d, d_prime, threshold, pattern = counterexample(variant_key, num_queries, c=c, sensitivity=sensitivity)
    p = variant_pattern_probability(
        variant_key, d, pattern, threshold=threshold, epsilon=epsilon, c=c, sensitivity=sensitivity
    )
    q = variant_pattern_probability(
        variant_key, d_prime, pattern, threshold=threshold, epsilon=epsilon, c=c, sensitivity=sensitivity
    )
    return (float(privacy_loss(np.array([p]), np.array([q]))[0]) if p > 0 else 0.0), p, q


def svt_s_lemma_losses(
    lengths: Sequence[int], *, epsilon: float, c: int, sensitivity: float = 1.0
) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact losses of SVT-S's all-⊥ and all-⊤ outputs, against ε₁: Lyu, Su & Li's two lemmas.

    The lemmas: for neighbours D, D′ and any ℓ, Pr[A(D) = ⊥^ℓ] ≤ e^{ε₁} Pr[A(D′) = ⊥^ℓ], and the
    same for ⊤^ℓ. Both are events in which every comparison goes the same way, so one shift of the
    threshold noise ρ by Δ (density ratio e^{ε₁}) covers them all at once. For each ℓ in ``lengths``
    this computes, with :func:`variant_pattern_probability`, the loss of ⊥^ℓ on (0^ℓ) against
    (Δ^ℓ) and of ⊤^ℓ on (Δ^ℓ) against (0^ℓ) (each answer moves by Δ, towards the event on D),
    threshold Δ/2, for SVT-S with ε, c and its default allocation; ⊤^ℓ needs ℓ ≤ c (SVT-S stops
    after c ⊤), and is NaN otherwise.

    Parameters
    ----------
    lengths : sequence of int
        The lengths ℓ, each ≥ 1; not empty.
    epsilon : float
        SVT-S's ε = ε₁ + ε₂, > 0.
    c : int
        SVT-S's c, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ, > 0 (default 1).

    Returns
    -------
    tuple
        ``(bottom_losses, top_losses, epsilon_1)``: two arrays with one loss per length (NaN in
        ``top_losses`` where ℓ > c) and ε₁, the bound of both lemmas.

    Raises
    ------
    ValueError
        If ``c`` is not an integer ≥ 1, ``epsilon`` or ``sensitivity`` is not a finite number > 0, or
        ``lengths`` is not a non-empty sequence of integers ≥ 1.
    TypeError
        If ``c`` or an entry of ``lengths`` is not an integer, or ``epsilon`` or ``sensitivity`` is not a real
        number.
    """
    c = check_integer(c, "c", minimum=1)
    delta_q = check_positive(sensitivity, "sensitivity")
    epsilon_1 = delta_q / svt_standard_spec(epsilon, c, delta_q).threshold_scale
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__len__") or len(lengths) == 0:
        raise ValueError(f"lengths must be a non-empty sequence of whole numbers >= 1, got {lengths!r}")
    bottom, top = [], []
    for length in lengths:
        ell = check_integer(length, "lengths", minimum=1)
        zeros, shifted = np.zeros(ell), np.full(ell, delta_q)
        kw: dict[str, Any] = {"threshold": 0.5 * delta_q, "epsilon": epsilon, "c": c, "sensitivity": delta_q}
        p, p_prime = (variant_pattern_probability("svt_s", x, [-np.inf] * ell, **kw) for x in (zeros, shifted))
        bottom.append(np.log(p / p_prime))
        if ell <= c:
            p, p_prime = (variant_pattern_probability("svt_s", x, [np.inf] * ell, **kw) for x in (shifted, zeros))
            top.append(np.log(p / p_prime))
        else:
            top.append(np.nan)
    return np.array(bottom), np.array(top), epsilon_1


def numeric_svt_s_loss(
    num_queries: int, *, epsilon: float, numeric_epsilon: float, c: int, sensitivity: float = 1.0
) -> float:
    """Exact loss of SVT-S with numeric outputs (ε₃ > 0) on its worst event; it tends to ε + ε₃.

    SVT-S with ε₃ > 0 releases qᵢ + Lap(cΔ/ε₃), with fresh noise, for each of its c answers above the
    threshold (Lyu et al.'s line 7), for a total claim of ε + ε₃. The event is :func:`counterexample`'s
    for SVT-S, (0^{m−c}, Δ^c) against (Δ^{m−c}, 0^c) and ⊥^{m−c} followed by c answers above, with each
    released number in [Δ, Δ + 50cΔ/ε₃] (every one where D's answer is the larger, so that each release
    pays its full ε₃/c).

    Parameters
    ----------
    num_queries : int
        The number m of queries, ≥ 1.
    epsilon : float
        SVT-S's ε = ε₁ + ε₂ for the comparisons, > 0.
    numeric_epsilon : float
        ε₃ for the released values, > 0.
    c : int
        SVT-S's c, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ, > 0 (default 1).

    Returns
    -------
    float
        The exact privacy loss of the event.

    Raises
    ------
    ValueError
        If ``num_queries`` or ``c`` is not an integer ≥ 1, or ``epsilon``, ``numeric_epsilon`` or
        ``sensitivity`` is not a finite number > 0.
    TypeError
        If ``num_queries`` or ``c`` is not an integer, or another parameter is not a real number.
    """
    m = check_integer(num_queries, "num_queries", minimum=1)
    c = check_integer(c, "c", minimum=1)
    eps3 = check_positive(numeric_epsilon, "numeric_epsilon")
    delta_q = check_positive(sensitivity, "sensitivity")
    variant = Variant(
        "svt_s_numeric",
        "SVT-S with numeric outputs",
        "Lyu, Su & Li 2017",
        "(ε + ε₃)-DP",
        "(ε + ε₃)-DP",
        None,
        lambda eps, c_, s: svt_standard_spec(eps, c_, s, numeric_epsilon=eps3),
        lambda eps, c_: eps + eps3,
    )
    d, d_prime, threshold, pattern = counterexample("svt_s", m, c=c, sensitivity=delta_q)
    released = (delta_q, delta_q + 50 * c * delta_q / eps3)
    pattern = [released if x == np.inf else x for x in pattern]
    p, p_prime = (
        variant_pattern_probability(variant, x, pattern, threshold=threshold, epsilon=epsilon, c=c, sensitivity=delta_q)
        for x in (d, d_prime)
    )
    return float(np.log(p / p_prime))


# --------------------------------------------------------------------------------------
# Shipped exact losses: every variant's counterexample at ε = 1, as notebook 05 and its panel show them
# --------------------------------------------------------------------------------------
VARIANT_LOSS_TABLE = DIRECTORY / "variant_losses.npz"
VARIANT_LOSS_TABLE_MAX_QUERIES = 42  # notebook 05's Alg. 4 curves reach m = c + 39 for c ≤ 3; the panel m ≤ 40
VARIANT_LOSS_TABLE_CS = (1, 2, 3, 4, 5)  # the panel's c slider
VARIANT_LOSS_TABLE_LONG = 150  # notebook 05: Alg. 1, Alg. 2 and SVT-S reach ε at m = 150, c = 1, 2, 3


def _variant_loss_fingerprint(
    variant_key: str, num_queries: int, epsilon: float, c: int, sensitivity: float
) -> np.ndarray:
    """Numbers that change if the variant's noise or its counterexample does: ε, Δ, the noise scales and
    stopping rule, the threshold, and weighted sums of both inputs and of the event."""
    spec = VARIANTS[variant_key].spec(epsilon, c, sensitivity)
    d, d_prime, threshold, pattern = counterexample(variant_key, num_queries, c=c, sensitivity=sensitivity)
    codes = np.array(
        [x[0] + 2 * x[1] if isinstance(x, (tuple, list)) else {-np.inf: 1.0, np.inf: 2.0}.get(x, 3.0) for x in pattern]
    )
    weights = np.arange(1.0, d.size + 1)
    return np.array(
        [
            num_queries,
            c,
            epsilon,
            sensitivity,
            spec.threshold_scale,
            spec.query_scale,
            spec.redraw_scale or 0.0,
            spec.c or 0,
            ("none", "compared", "fresh").index(spec.numeric),
            spec.numeric_scale,
            threshold,
            d @ weights,
            d_prime @ weights,
            codes @ weights,
        ]
    )


@lru_cache(maxsize=1)
def _variant_loss_table() -> dict:
    table = load_table(VARIANT_LOSS_TABLE.name)
    return dict(zip(table["keys"].tolist(), table["rows"], strict=False)) if table else {}


def _stored_variant_loss(
    variant_key: str, num_queries: int, epsilon: float, c: int, sensitivity: float
) -> tuple[float, float, float] | None:
    """(loss, p, p′) from the shipped table when an entry matches exactly; None otherwise (then it is computed)."""
    if not isinstance(variant_key, str) or variant_key not in VARIANTS or epsilon != 1.0 or sensitivity != 1.0:
        return None
    entry = _variant_loss_table().get(f"{variant_key}-{num_queries}-{c}")
    if entry is None or not np.array_equal(
        entry[3:], _variant_loss_fingerprint(variant_key, num_queries, epsilon, c, sensitivity)
    ):
        return None
    return float(entry[0]), float(entry[1]), float(entry[2])


def write_variant_loss_table(
    path: Path = VARIANT_LOSS_TABLE,
    max_queries: int = VARIANT_LOSS_TABLE_MAX_QUERIES,
    cs: Sequence[int] = VARIANT_LOSS_TABLE_CS,
    long: int | None = VARIANT_LOSS_TABLE_LONG,
) -> Path:
    """Compute :func:`exact_variant_loss` at ε = 1, Δ = 1 for every variant, every c in ``cs`` and every m up to
    ``max_queries`` (m ≥ c for Alg. 2), and for Alg. 1, Alg. 2 and SVT-S at m = ``long``, c = 1, 2, 3; store
    each (loss, p, p′) with its fingerprint. ``python -m dpcourse.data`` runs this; ``tests/svt/test_exact.py``
    recomputes part of it and compares.

    Parameters
    ----------
    path : pathlib.Path, optional
        Where to write the table (default :data:`VARIANT_LOSS_TABLE`, the shipped one); its folder is created.
    max_queries : int, optional
        The largest m of the grid (default :data:`VARIANT_LOSS_TABLE_MAX_QUERIES`).
    cs : sequence of int, optional
        The values of c of the grid (default :data:`VARIANT_LOSS_TABLE_CS`).
    long : int or None, optional
        The m of the long cases of Alg. 1, Alg. 2 and SVT-S (default :data:`VARIANT_LOSS_TABLE_LONG`); None
        leaves them out.

    Returns
    -------
    pathlib.Path
        ``path``, the table written (a compressed ``.npz`` of keys and rows).
    """
    cases = [(key, m, c) for key in VARIANTS for c in cs for m in range(1, max_queries + 1) if key != "alg2" or m >= c]
    if long is not None:
        cases += [(key, long, c) for key in ("alg1", "alg2", "svt_s") for c in (1, 2, 3)]
    rows = [
        np.concatenate(
            [
                _computed_variant_loss(key, m, epsilon=1.0, c=c, sensitivity=1.0),
                _variant_loss_fingerprint(key, m, 1.0, c, 1.0),
            ]
        )
        for key, m, c in cases
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    # one array of keys and one of rows (loss, p, p′, fingerprint …): a zip entry per case would take longer to load
    np.savez_compressed(path, keys=np.array([f"{key}-{m}-{c}" for key, m, c in cases]), rows=np.vstack(rows))
    return path
