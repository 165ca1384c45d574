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
are in :mod:`dpcourse.svt.selection`. This module re-exports both, so ``svt_variants.X`` works for
every name the notebooks use.
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

    ``true_epsilon(epsilon, c)`` is the privacy it really has according to Lyu et al. (``inf``
    when no finite ε′ holds); ``spec(epsilon, c, sensitivity)`` gives its :class:`NoiseSpec`.
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
        """Outputs of ``trials`` runs, shape ``(trials, m)``, coded ⊥ = −∞, ⊤ = +∞, halted = NaN, or a number."""
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
    """Run SVT-S with a chosen budget allocation (see :func:`svt_standard_spec`); outputs as :meth:`Variant.run`."""
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
    ``monotonic=False`` uses Lap(2cΔ/ε₂) and 1 : (2c)^{2/3}. Returns a boolean ``(trials, m)``
    array of the chosen items.

    Sampling: given the threshold noise ρ, every look at item i is above the threshold
    independently with the same probability pᵢ = Pr[qᵢ + ν ≥ T + ρ], so the pass Gᵢ in which
    item i is first above is Geometric(pᵢ), and the passes choose, in order of (pass, position),
    the first c items with Gᵢ ≤ ``max_passes`` (a later look at a chosen item is skipped, and the
    run ends when the c-th item is chosen). Drawing ρ and one Gᵢ per item and trial, by inversion
    of (1 − pᵢ)^k, gives the same distribution as scanning pass by pass with fresh Laplace noise
    (``tests/svt/test_variants.py`` compares the two), from one ``(trials, m)`` draw.
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
    """One run's outputs as text: ⊥, ⊤, · (not answered) or the released number."""

    def one(v: float) -> str:
        if np.isnan(v):
            return "·"
        if np.isinf(v):
            return "⊤" if v > 0 else "⊥"
        return f"{v:.2f}"

    return " ".join(one(v) for v in np.asarray(row, dtype=float))
