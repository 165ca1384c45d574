"""The sparse vector variants as numbers: each one's noise and stopping rule, and one sampler for all.

A variant of :mod:`dpcourse.svt.variants` is a :class:`NoiseSpec`: the scale of its threshold noise
ρ, of its query noise νᵢ, of a threshold redrawn after each ⊤ (Alg. 2), what it outputs on ⊤, and
after how many ⊤ it stops. :func:`run_spec` runs any specification on a list of answers, every
step vectorised over the trials; :func:`svt_standard_spec` is SVT-S's budget allocation (Lyu, Su &
Li 2017). The per-paper specifications ``_alg1`` … ``_alg6`` follow the table of
:mod:`dpcourse.svt.variants`, which names them.

Output codes (one float array ``(trials, m)``): :data:`BOTTOM` = −∞ for ⊥, :data:`TOP` = +∞
for ⊤, :data:`HALTED` = NaN for a query not answered because the algorithm had stopped, and
a finite number for a released value (Alg. 3, and SVT-S with ε₃ > 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_answers_and_threshold,
    check_epsilon,
    check_integer,
    check_nonnegative,
    check_positive,
    check_trials,
)

__all__ = [
    "BOTTOM",
    "HALTED",
    "TOP",
    "NoiseSpec",
    "run_spec",
    "svt_standard_spec",
]

BOTTOM, TOP, HALTED = -np.inf, np.inf, np.nan
_TOP_OR_BOTTOM = np.array([BOTTOM, TOP])  # indexed by "above the threshold"


@dataclass(frozen=True)
class NoiseSpec:
    """What one run of a variant does, as numbers: the scales of its noises and its stopping rule.

    Attributes
    ----------
    threshold_scale : float
        The Laplace scale of the threshold noise ρ; 0 for none.
    query_scale : float
        The Laplace scale of each query's noise νᵢ; 0 for none.
    c : int or None
        The number of ⊤ after which it stops, or None for never.
    redraw_scale : float or None, optional
        The scale of a fresh threshold noise drawn after each ⊤ (Alg. 2), or None (default) to keep ρ.
    numeric : {"none", "compared", "fresh"}, optional
        What it outputs on ⊤: ``"none"`` (default) ⊤ itself, ``"compared"`` qᵢ + νᵢ, the noisy value it
        just compared (Alg. 3), or ``"fresh"`` qᵢ + Lap(``numeric_scale``) (SVT-S with ε₃ > 0).
    numeric_scale : float, optional
        The scale of the fresh noise of ``numeric="fresh"`` (default 0).
    """

    threshold_scale: float
    query_scale: float
    c: int | None
    redraw_scale: float | None = None
    numeric: str = "none"
    numeric_scale: float = 0.0


def _split(epsilon: float, first_share: float) -> tuple[float, float]:
    eps = check_epsilon(epsilon)
    return first_share * eps, (1 - first_share) * eps


def _alg1(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.5)
    return NoiseSpec(threshold_scale=sensitivity / e1, query_scale=2 * c * sensitivity / e2, c=c)


def _alg2(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.5)
    return NoiseSpec(
        threshold_scale=c * sensitivity / e1,
        query_scale=2 * c * sensitivity / e1,
        c=c,
        redraw_scale=c * sensitivity / e2,
    )


def _alg3(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.5)
    return NoiseSpec(
        threshold_scale=sensitivity / e1, query_scale=c * sensitivity / e2, c=c, numeric="compared"
    )  # flaw: outputs qᵢ + νᵢ, the same noise the comparison used


def _alg4(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.25)
    return NoiseSpec(
        threshold_scale=sensitivity / e1,
        query_scale=sensitivity / e2,  # flaw: query noise does not grow with c
        c=c,
    )


def _alg5(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, _ = _split(epsilon, 0.5)
    return NoiseSpec(
        threshold_scale=sensitivity / e1,
        query_scale=0.0,  # flaw: no noise on the query answers
        c=None,
    )  # flaw: never stops


def _alg6(epsilon: float, c: int, sensitivity: float) -> NoiseSpec:
    e1, e2 = _split(epsilon, 0.5)
    return NoiseSpec(
        threshold_scale=sensitivity / e1,
        query_scale=sensitivity / e2,  # flaw: query noise does not grow with the number of ⊤
        c=None,
    )  # flaw: never stops


def svt_standard_spec(
    epsilon: float,
    c: int,
    sensitivity: float = 1.0,
    *,
    numeric_epsilon: float = 0.0,
    monotonic: bool = False,
    ratio: float | None = None,
) -> NoiseSpec:
    """SVT-S (Lyu et al. 2017): ρ = Lap(Δ/ε₁), νᵢ = Lap(2cΔ/ε₂) (cΔ/ε₂ for monotonic queries), stop after c ⊤.

    ε = ε₁ + ε₂ is split as ε₁ : ε₂ = 1 : ``ratio``, by default their optimum 1 : (2c)^{2/3}
    (1 : c^{2/3} for monotonic queries). With ``numeric_epsilon`` ε₃ > 0 each ⊤ is released
    as qᵢ + Lap(cΔ/ε₃), for a total of ε + ε₃.

    Parameters
    ----------
    epsilon : float
        The budget ε = ε₁ + ε₂ of the comparisons, > 0.
    c : int
        The number of ⊤ after which it stops, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    numeric_epsilon : float, optional
        ε₃ ≥ 0 for the released values; 0 (default) outputs ⊤ instead of a value.
    monotonic : bool, optional
        Whether the queries are monotonic (all answers move the same way between neighbours); default False.
    ratio : float or None, optional
        ε₂/ε₁, > 0; None (default) for the optimum above.

    Returns
    -------
    NoiseSpec
        The specification, for :func:`run_spec`.

    Raises
    ------
    ValueError
        If ``epsilon``, ``sensitivity`` or ``ratio`` is not a finite number > 0, ``c`` is not an integer ≥ 1,
        or ``numeric_epsilon`` is not a finite number ≥ 0.
    TypeError
        If a parameter is not a number of its kind (``numeric_epsilon=None`` included).
    """
    c = check_integer(c, "c", minimum=1)
    r = ((c if monotonic else 2 * c) ** (2 / 3)) if ratio is None else check_positive(ratio, "ratio")
    e1, e2 = _split(epsilon, 1 / (1 + r))
    sensitivity = check_positive(sensitivity, "sensitivity")
    eps3 = check_nonnegative(numeric_epsilon, "numeric_epsilon")
    return NoiseSpec(
        threshold_scale=sensitivity / e1,
        query_scale=(1 if monotonic else 2) * c * sensitivity / e2,
        c=c,
        numeric="fresh" if eps3 > 0 else "none",
        numeric_scale=c * sensitivity / eps3 if eps3 > 0 else 0.0,
    )


def _laplace_noise(gen: np.random.Generator, scale: float, size: int | tuple[int, ...]) -> np.ndarray:
    """Lap(0, scale) draws as scale·(E₁ − E₂), the difference of two standard exponentials.

    The same distribution as ``gen.laplace(0, scale, size)`` (the difference of two independent
    Exp(1) variables is a standard Laplace), about twice as fast: NumPy's exponential is a ziggurat
    that rarely needs a logarithm, its Laplace takes one per draw. It consumes the generator
    differently, so the same seed gives other draws than ``gen.laplace``.
    """
    noise = gen.standard_exponential(size)
    noise -= gen.standard_exponential(size)
    noise *= scale
    return noise


def run_spec(
    spec: NoiseSpec, answers: ArrayLike, *, threshold: ArrayLike, trials: int, rng: RngLike = None
) -> np.ndarray:
    """Run the algorithm described by ``spec`` on ``answers``, ``trials`` times at once.

    The queries are visited in order (each depends on how many ⊤ came before), every step
    vectorised over the trials.

    Parameters
    ----------
    spec : NoiseSpec
        The variant's noises and stopping rule.
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D).
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    trials : int
        Number of independent runs, ≥ 1 (None is taken as 1).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Returns
    -------
    numpy.ndarray of float
        The ``(trials, m)`` output codes: :data:`BOTTOM`, :data:`TOP`, :data:`HALTED` or a released value.

    Raises
    ------
    ValueError
        If ``answers`` is not a non-empty 1-D array of finite numbers, ``threshold`` is neither one finite
        number nor one per query, ``trials`` is not an integer ≥ 1, or ``rng`` is a negative seed.
    TypeError
        If ``answers`` or ``threshold`` is not numeric, ``trials`` is not an integer, or ``rng`` is not a seed,
        ``SeedSequence`` or ``Generator``.
    """
    q, t = check_answers_and_threshold(answers, threshold)
    trials = check_trials(trials) or 1
    gen = as_generator(rng)
    m = q.size
    rho = _laplace_noise(gen, spec.threshold_scale, trials) if spec.threshold_scale > 0 else np.zeros(trials)
    nu = _laplace_noise(gen, spec.query_scale, (trials, m)) if spec.query_scale > 0 else np.zeros((trials, m))
    if spec.redraw_scale is None and spec.numeric != "fresh":
        # one threshold for the whole run: every comparison at once, then the stopping rule by a
        # running count (the ⊤ before query i decide whether it is answered). The noise array becomes
        # the output in place: no (trials, m) temporaries beyond the comparison's booleans.
        out = nu
        out += q
        above = out >= t + rho[:, None]
        if spec.numeric == "compared":
            np.copyto(out, BOTTOM, where=~above)
        else:
            np.take(_TOP_OR_BOTTOM, above.view(np.uint8), out=out)
        if spec.c is not None and m > 1:
            if m <= 64:  # a few long columns: a running count is faster than a cumsum along short rows
                count = np.zeros(trials, dtype=np.int32)
                for i in range(1, m):
                    count += above[:, i - 1]
                    np.copyto(out[:, i], HALTED, where=count >= spec.c)  # (a boolean index would build a list)
            else:
                np.copyto(out[:, 1:], HALTED, where=np.cumsum(above[:, :-1], axis=1, dtype=np.int64) >= spec.c)
        return out
    out = np.full((trials, m), HALTED)
    count = np.zeros(trials, dtype=np.int64)
    active = np.ones(trials, dtype=bool)
    for i in range(m):
        above = q[i] + nu[:, i] >= t[i] + rho
        out[active & ~above, i] = BOTTOM
        hit = active & above
        if spec.numeric == "compared":
            out[hit, i] = q[i] + nu[hit, i]
        elif spec.numeric == "fresh":
            out[hit, i] = q[i] + _laplace_noise(gen, spec.numeric_scale, int(hit.sum()))
        else:
            out[hit, i] = TOP
        count += hit
        if spec.redraw_scale is not None:
            rho[hit] = _laplace_noise(gen, spec.redraw_scale, int(hit.sum()))
        if spec.c is not None:
            active &= count < spec.c
            if not active.any():  # every run has stopped: the rest stays "not answered" (and draws nothing)
                break
    return out
