"""The published sparse vector variants of Lyu, Su & Li (2017), and Lyu's standard SVT.

Lecture 3's table of six SVT algorithms, each as its paper states it, and SVT-S, the
standard SVT that Lyu et al. propose. All answer a list of queries against thresholds
T₁, T₂, … and differ in the noise they add and in when they stop:

====  =======================  ==============  =================  ==========  ============================
key   source                   threshold ρ     query noise νᵢ      on ⊤        stops after
====  =======================  ==============  =================  ==========  ============================
alg1  Lyu et al. 2017          Lap(Δ/ε₁)       Lap(2cΔ/ε₂)         ⊤           c ⊤
alg2  Dwork & Roth 2014        Lap(cΔ/ε₁)      Lap(2cΔ/ε₁)         ⊤, new ρ    c ⊤ (new ρ ~ Lap(cΔ/ε₂))
alg3  Roth 2011                Lap(Δ/ε₁)       Lap(cΔ/ε₂)          qᵢ + νᵢ     c ⊤
alg4  Lee & Clifton 2014       Lap(Δ/ε₁)       Lap(Δ/ε₂)           ⊤           c ⊤   (ε₁ = ε/4)
alg5  Stoddard et al. 2014     Lap(Δ/ε₁)       0                   ⊤           never
alg6  Chen et al. 2015         Lap(Δ/ε₁)       Lap(Δ/ε₂)           ⊤           never
====  =======================  ==============  =================  ==========  ============================

with ε₁ = ε/2 and ε₂ = ε − ε₁ unless stated. What Lyu et al. prove: Alg. 1 and 2 are ε-DP;
Alg. 3 is not ε′-DP for any ε′ (it releases the very noise it compared with); Alg. 4 is
((1 + 6c)/4)ε-DP (its query noise does not grow with c); Alg. 5 and 6 are not ε′-DP for any
ε′ (no query noise; no bound on the number of ⊤).

Output codes (one float array ``(trials, m)``): :data:`BOTTOM` = −∞ for ⊥, :data:`TOP` = +∞
for ⊤, :data:`HALTED` = NaN for a query not answered because the algorithm had stopped, and
a finite number for a released value (Alg. 3, and SVT-S with ε₃ > 0).

Each variant's noise is a :class:`~dpcourse.svt.NoiseSpec`, run by
:func:`~dpcourse.svt.run_spec` (:mod:`dpcourse.svt.specs`); the scores of top-c selection
are in :mod:`dpcourse.svt.selection`. The package :mod:`dpcourse.svt` re-exports every name of the
three modules, so ``from dpcourse.svt import X`` works for every name the notebooks use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_answers_and_threshold,
    check_integer,
    check_nonnegative,
    check_positive,
)
from .specs import (
    NoiseSpec,
    _alg1,
    _alg2,
    _alg3,
    _alg4,
    _alg5,
    _alg6,
    _laplace_noise,
    run_spec,
    svt_standard_spec,
)

__all__ = [
    "VARIANTS",
    "Variant",
    "format_outputs",
    "svt_retraversal",
    "svt_standard",
]


@dataclass(frozen=True)
class Variant:
    """One SVT variant: where it comes from, what it claims, what is true, and how to run it.

    Attributes
    ----------
    key : str
        Its key in :data:`VARIANTS` (``"alg1"`` … ``"alg6"``, ``"svt_s"``).
    name : str
        Its name in tables and figures.
    source : str
        The paper it comes from.
    claim : str
        The privacy its paper claims.
    truth : str
        The privacy it really has according to Lyu et al.
    flaw : str or None
        What breaks its claim, or None for a variant that is ε-DP.
    spec : callable
        ``spec(epsilon, c, sensitivity)`` gives its :class:`NoiseSpec`.
    true_epsilon : callable
        ``true_epsilon(epsilon, c)`` is the privacy it really has according to Lyu et al. (``inf`` when no
        finite ε′ holds).
    """

    key: str
    name: str
    source: str
    claim: str
    truth: str
    flaw: str | None
    spec: Callable[[float, int, float], NoiseSpec] = field(repr=False)
    true_epsilon: Callable[[float, int], float] = field(repr=False)

    @property
    def is_private(self) -> bool:
        """Whether it is ε-DP as claimed (it has no flaw)."""
        return self.flaw is None

    def run(
        self,
        answers: ArrayLike,
        *,
        threshold: ArrayLike,
        epsilon: float,
        c: int,
        sensitivity: float = 1.0,
        trials: int = 1,
        rng: RngLike = None,
    ) -> np.ndarray:
        """Outputs of ``trials`` runs, shape ``(trials, m)``, coded ⊥ = −∞, ⊤ = +∞, halted = NaN, or a number.

        Parameters
        ----------
        answers : array_like, shape (m,)
            The query answers q₁(D), …, q_m(D).
        threshold : float or array_like, shape (m,)
            T (or one threshold per query).
        epsilon : float
            The privacy parameter ε the variant is run with (what its paper claims), > 0.
        c : int
            The c of the variant (the number of ⊤ its noise is calibrated for, and after which it stops if it
            stops), ≥ 1.
        sensitivity : float, optional
            The sensitivity Δ of every query, > 0 (default 1).
        trials : int, optional
            Number of independent runs, ≥ 1 (default 1).
        rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
            Seed or generator for the noise.

        Returns
        -------
        numpy.ndarray of float
            The ``(trials, m)`` output codes (see :func:`run_spec`).

        Raises
        ------
        ValueError
            If ``c`` or ``trials`` is not an integer ≥ 1, ``epsilon`` or ``sensitivity`` is not a finite number
            > 0, ``answers`` or ``threshold`` is not as above (finite numbers), or ``rng`` is a negative seed.
        TypeError
            If a parameter is not a number (or array of numbers) of its kind, or ``rng`` is not a seed,
            ``SeedSequence`` or ``Generator``.
        """
        c = check_integer(c, "c", minimum=1)
        spec = self.spec(epsilon, c, check_positive(sensitivity, "sensitivity"))
        return run_spec(spec, answers, threshold=threshold, trials=check_integer(trials, "trials", minimum=1), rng=rng)


VARIANTS: dict[str, Variant] = {
    v.key: v
    for v in (
        Variant(
            "alg1", "Alg. 1 (SVT of Lyu et al.)", "Lyu, Su & Li 2017", "ε-DP", "ε-DP", None, _alg1, lambda eps, c: eps
        ),
        Variant(
            "alg2",
            "Alg. 2 (Dwork & Roth's Sparse)",
            "Dwork & Roth 2014",
            "ε-DP",
            "ε-DP",
            None,
            _alg2,
            lambda eps, c: eps,
        ),
        Variant(
            "alg3",
            "Alg. 3 (Roth's lecture notes)",
            "Roth 2011",
            "ε-DP",
            "not ε′-DP for any ε′",
            "outputs qᵢ + νᵢ, revealing the noise it compared with",
            _alg3,
            lambda eps, c: np.inf,
        ),
        Variant(
            "alg4",
            "Alg. 4 (Lee & Clifton)",
            "Lee & Clifton 2014",
            "ε-DP",
            "((1 + 6c)/4)·ε-DP",
            "query noise Lap(Δ/ε₂) does not grow with c",
            _alg4,
            lambda eps, c: (1 + 6 * c) / 4 * eps,
        ),
        Variant(
            "alg5",
            "Alg. 5 (Stoddard et al.)",
            "Stoddard et al. 2014",
            "ε-DP",
            "not ε′-DP for any ε′",
            "no noise on the query answers",
            _alg5,
            lambda eps, c: np.inf,
        ),
        Variant(
            "alg6",
            "Alg. 6 (Chen et al.)",
            "Chen et al. 2015",
            "ε-DP",
            "not ε′-DP for any ε′",
            "query noise does not grow with the number of ⊤, and it never stops",
            _alg6,
            lambda eps, c: np.inf,
        ),
        Variant(
            "svt_s",
            "SVT-S (standard SVT)",
            "Lyu, Su & Li 2017",
            "ε-DP",
            "ε-DP",
            None,
            lambda eps, c, s: svt_standard_spec(eps, c, s),
            lambda eps, c: eps,
        ),
    )
}


def svt_standard(
    answers: ArrayLike,
    *,
    threshold: ArrayLike,
    epsilon: float,
    c: int,
    sensitivity: float = 1.0,
    numeric_epsilon: float = 0.0,
    monotonic: bool = False,
    ratio: float | None = None,
    trials: int = 1,
    rng: RngLike = None,
) -> np.ndarray:
    """Run SVT-S with a chosen budget allocation (see :func:`svt_standard_spec`); outputs as :meth:`Variant.run`.

    Parameters
    ----------
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D).
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    epsilon : float
        The budget ε = ε₁ + ε₂ of the comparisons, > 0.
    c : int
        The number of ⊤ after which it stops, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    numeric_epsilon : float, optional
        ε₃ ≥ 0 for the released values; 0 (default) outputs ⊤ instead of a value.
    monotonic : bool, optional
        Whether the queries are monotonic (halved query noise); default False.
    ratio : float or None, optional
        ε₂/ε₁, > 0; None (default) for Lyu et al.'s optimum.
    trials : int, optional
        Number of independent runs, ≥ 1 (default 1).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Returns
    -------
    numpy.ndarray of float
        The ``(trials, m)`` output codes (see :func:`run_spec`).

    Raises
    ------
    ValueError
        As :func:`svt_standard_spec` and :func:`run_spec`.
    TypeError
        As :func:`svt_standard_spec` and :func:`run_spec`.
    """
    spec = svt_standard_spec(epsilon, c, sensitivity, numeric_epsilon=numeric_epsilon, monotonic=monotonic, ratio=ratio)
    return run_spec(spec, answers, threshold=threshold, trials=trials, rng=rng)


def svt_retraversal(
    answers: ArrayLike,
    *,
    threshold: ArrayLike,
    epsilon: float,
    c: int,
    monotonic: bool,
    sensitivity: float = 1.0,
    raise_by: float = 0.0,
    max_passes: int = 10,
    trials: int = 1,
    rng: RngLike = None,
) -> np.ndarray:
    """SVT-S with retraversal (Lyu et al.'s SVT-ReTr): scan the list again until c items are chosen.

    The threshold is raised by ``raise_by``·D, with D the standard deviation √2·b of the query
    noise Lap(b) (Lyu et al. try 1D, 3D and 5D), so that the first pass takes fewer low items.
    One noisy threshold for the whole run; each look at an item gets fresh query noise, and an
    item already chosen is skipped. It is SVT-S on the list repeated ``max_passes`` times, so it
    is ε-DP exactly when SVT-S is: ``monotonic`` must be said, because ``monotonic=True`` uses
    SVT-S's halved query noise Lap(cΔ/ε₂) and allocation 1 : c^{2/3}, which is ε-DP only if every
    answer moves in the same direction between neighbours (counts under adding a person);
    ``monotonic=False`` uses Lap(2cΔ/ε₂) and 1 : (2c)^{2/3}.

    Sampling: given the threshold noise ρ, every look at item i is above the threshold
    independently with the same probability pᵢ = Pr[qᵢ + ν ≥ T + ρ], so the pass Gᵢ in which
    item i is first above is Geometric(pᵢ), and the passes choose, in order of (pass, position),
    the first c items with Gᵢ ≤ ``max_passes`` (a later look at a chosen item is skipped, and the
    run ends when the c-th item is chosen). Drawing ρ and one Gᵢ per item and trial, by inversion
    of (1 − pᵢ)^k, gives the same distribution as scanning pass by pass with fresh Laplace noise
    (``tests/svt/test_variants.py`` compares the two), from one ``(trials, m)`` draw.

    Parameters
    ----------
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D) (e.g. the items' counts).
    threshold : float or array_like, shape (m,)
        T (or one threshold per item), before it is raised.
    epsilon : float
        The budget ε = ε₁ + ε₂ of SVT-S, > 0.
    c : int
        The number of items to choose, ≥ 1.
    monotonic : bool
        Whether the queries are monotonic (see above); no default, it must be said.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    raise_by : float, optional
        How many standard deviations D of the query noise to raise the threshold by, ≥ 0 (default 0).
    max_passes : int, optional
        The most passes over the list, ≥ 1 (default 10).
    trials : int, optional
        Number of independent runs, ≥ 1 (default 1).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Returns
    -------
    numpy.ndarray of bool
        Shape ``(trials, m)``: the chosen items of each run (at most c).

    Raises
    ------
    ValueError
        If ``answers`` is not a non-empty 1-D array of finite numbers, ``threshold`` is neither one finite
        number nor one per item, ``epsilon`` or ``sensitivity`` is not a finite number > 0, ``c``, ``trials``
        or ``max_passes`` is not an integer ≥ 1, ``raise_by`` is not a finite number ≥ 0, or ``rng`` is a
        negative seed.
    TypeError
        If ``monotonic`` is not a bool, another parameter is not a number of its kind, or ``rng`` is not a seed,
        ``SeedSequence`` or ``Generator``.
    """
    q, t = check_answers_and_threshold(answers, threshold)
    if not isinstance(monotonic, (bool, np.bool_)):
        raise TypeError(f"monotonic must be True or False; got {monotonic!r}")
    spec = svt_standard_spec(epsilon, c, sensitivity, monotonic=bool(monotonic))
    t = t + check_nonnegative(raise_by, "raise_by") * np.sqrt(2) * spec.query_scale
    trials = check_integer(trials, "trials", minimum=1)
    passes = check_integer(max_passes, "max_passes", minimum=1)
    gen = as_generator(rng)
    rho = _laplace_noise(gen, spec.threshold_scale, (trials, 1))
    # one look is below the threshold when ν < x = T + ρ − q: ln Pr = ln F(x) for the Laplace CDF F,
    # written without cancellation on both sides of 0
    x = (t + rho - q) / spec.query_scale
    with np.errstate(divide="ignore", invalid="ignore"):
        log_below = np.where(x < 0, x - np.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(x))))
        # G = 1 + ⌊ln U / ln(1 − p)⌋ with U uniform on (0, 1]: Pr[G > k] = (1 − p)^k
        first_pass = 1.0 + np.floor(np.log1p(-gen.random(size=x.shape)) / log_below)
    first_pass[log_below == 0.0] = np.inf  # p = 0 to rounding: never above
    order = np.where(first_pass <= passes, (first_pass - 1.0) * q.size + np.arange(q.size), np.inf)
    if c < q.size:
        cutoff = np.partition(order, c - 1, axis=1)[:, c - 1 : c]
        return np.isfinite(order) & (order <= cutoff)
    return np.isfinite(order)


def format_outputs(row: ArrayLike) -> str:
    """One run's outputs as text: ⊥, ⊤, · (not answered) or the released number.

    Parameters
    ----------
    row : array_like, shape (m,)
        One run's output codes (a row of :meth:`Variant.run`'s result).

    Returns
    -------
    str
        The m outputs separated by spaces, released numbers with two decimals.
    """

    def one(v: float) -> str:
        if np.isnan(v):
            return "·"
        if np.isinf(v):
            return "⊤" if v > 0 else "⊥"
        return f"{v:.2f}"

    return " ".join(one(v) for v in np.asarray(row, dtype=float))
