"""Exact output probabilities: AboveThreshold, its proof steps, and the SVT variants of notebook 05.

The output of AboveThreshold on m queries is ⊥ᵏ⊤ for some k ∈ {0, …, m − 1}, or ⊥ᵐ.
Conditioning on the threshold noise ρ = z (Lecture 3, "The analysis of AboveThreshold"),

    Pr[⊥ᵏ⊤] = ∫ p_ρ(z) · ∏_{i<k} F(T + z − qᵢ) · (1 − F(T + z − q_k)) dz,
    Pr[⊥ᵐ]  = ∫ p_ρ(z) · ∏_{i<m} F(T + z − qᵢ) dz,

with F the CDF of the query noise. This module evaluates all m + 1 integrals at once by
Gauss–Legendre quadrature on segments that end at every kink of the integrand (z = 0
for the Laplace density of ρ, z = qᵢ − T for each Laplace CDF), so that each piece is
smooth and the rule converges to machine precision; the prefix products ∏_{i<k} F are
shared across k. The privacy loss of an outcome o between neighbours D, D′ is
ln(Pr[M(D) = o] / Pr[M(D′) = o]); ε-DP means it never exceeds ε in absolute value.

The same conditioning gives the probability of any output pattern of the variants of Lyu,
Su & Li (:func:`variant_pattern_probability`), and with it each variant's counterexample and
its exact loss (:func:`counterexample`, :func:`exact_variant_loss`). The empirical side,
running a mechanism and testing its claim, is :mod:`dpcourse.audit`.

Each part lives in its own module, and this one gathers them for the notebooks (``exact.X``):
:mod:`dpcourse.exact_above_threshold` (AboveThreshold's exact output probabilities, privacy
losses and proof steps) and :mod:`dpcourse.exact_variants` (the variants' patterns,
counterexamples and exact losses, and their shipped table).
"""

from __future__ import annotations

from .exact_above_threshold import (
    PrivacyLoss,
    ProofSteps,
    above_threshold_pmf,
    adversarial_pair,
    generalized_above_threshold_pmf,
    max_privacy_loss,
    outcome_integrand,
    privacy_loss,
    proof_steps,
)
from .exact_variants import (
    VARIANT_LOSS_TABLE as VARIANT_LOSS_TABLE,
)
from .exact_variants import (
    VARIANT_LOSS_TABLE_CS as VARIANT_LOSS_TABLE_CS,
)
from .exact_variants import (
    VARIANT_LOSS_TABLE_LONG as VARIANT_LOSS_TABLE_LONG,
)
from .exact_variants import (
    VARIANT_LOSS_TABLE_MAX_QUERIES as VARIANT_LOSS_TABLE_MAX_QUERIES,
)
from .exact_variants import (
    _pattern_items as _pattern_items,  # dpcourse.audit re-exports it
)
from .exact_variants import (
    counterexample,
    exact_variant_loss,
    variant_pattern_probability,
)
from .exact_variants import (
    write_variant_loss_table as write_variant_loss_table,
)

__all__ = [
    "PrivacyLoss",
    "ProofSteps",
    "above_threshold_pmf",
    "adversarial_pair",
    "counterexample",
    "exact_variant_loss",
    "generalized_above_threshold_pmf",
    "max_privacy_loss",
    "outcome_integrand",
    "privacy_loss",
    "proof_steps",
    "variant_pattern_probability",
]
