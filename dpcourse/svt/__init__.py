"""The sparse vector technique: notebooks 04 and 05.

- :mod:`~dpcourse.svt.batch`: AboveThreshold, SparseVector and NumericSparse on a whole stream of answers,
  vectorised over trials;
- :mod:`~dpcourse.svt.online`: the same algorithms one adaptively chosen query at a time (Private MW uses them);
- :mod:`~dpcourse.svt.theory`: their noise scales and accuracy bounds (Dwork & Roth, Lecture 3), which import
  no sampler;
- :mod:`~dpcourse.svt.exact`: AboveThreshold's exact output probabilities, privacy loss and each step of its
  proof;
- :mod:`~dpcourse.svt.variants`: the published variants of Lyu, Su & Li (2017) as their papers state them;
- :mod:`~dpcourse.svt.specs`: each variant as numbers (its noise and stopping rule) and one sampler for all;
- :mod:`~dpcourse.svt.selection`: choosing the top c of many counts, the data and scores of Lyu et al.;
- :mod:`~dpcourse.svt.exact_variants`: the variants' exact losses and counterexamples, and their shipped table;
- :mod:`~dpcourse.svt.top_c`: Lyu et al.'s top-c experiments (SVT's budget splits, and the exponential mechanism).

Every name in these modules' ``__all__`` is importable from here. The empirical side, running a mechanism
and testing its claim, is :mod:`dpcourse.audit`.
"""

from __future__ import annotations

from .batch import (
    NONE_ABOVE,
    AboveThresholdResult,
    NumericSparseResult,
    SparseVectorResult,
    above_threshold,
    above_threshold_noise,
    accuracy_margins,
    generalized_above_threshold,
    numeric_sparse,
    sparse_accuracy_margins,
    sparse_vector,
)
from .exact import (
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
    VARIANT_LOSS_TABLE,
    VARIANT_LOSS_TABLE_CS,
    VARIANT_LOSS_TABLE_LONG,
    VARIANT_LOSS_TABLE_MAX_QUERIES,
    counterexample,
    exact_variant_loss,
    numeric_svt_s_loss,
    svt_s_lemma_losses,
    variant_pattern_probability,
    write_variant_loss_table,
)
from .online import HaltedError, OnlineAboveThreshold, OnlineNumericSparse, OnlineSparseVector
from .selection import f_measure, normalized_cumulative_rank, normalized_cumulative_support, top_c_mask, zipf_counts
from .specs import BOTTOM, HALTED, TOP, NoiseSpec, run_spec, svt_standard_spec
from .theory import (
    above_threshold_accuracy_bound,
    above_threshold_loss_bound,
    above_threshold_scales,
    numeric_sparse_accuracy_bound,
    numeric_sparse_scales,
    numeric_sparse_share,
    sparse_vector_accuracy_bound,
    sparse_vector_composed_epsilon,
    sparse_vector_scales,
)
from .top_c import TopCScores, interactive_top_c, non_interactive_top_c
from .variants import VARIANTS, Variant, format_outputs, svt_retraversal, svt_standard

__all__ = [
    "BOTTOM",
    "HALTED",
    "TOP",
    "NONE_ABOVE",
    "AboveThresholdResult",
    "NumericSparseResult",
    "SparseVectorResult",
    "above_threshold",
    "above_threshold_noise",
    "accuracy_margins",
    "generalized_above_threshold",
    "numeric_sparse",
    "sparse_accuracy_margins",
    "sparse_vector",
    "PrivacyLoss",
    "ProofSteps",
    "above_threshold_pmf",
    "adversarial_pair",
    "generalized_above_threshold_pmf",
    "max_privacy_loss",
    "outcome_integrand",
    "privacy_loss",
    "proof_steps",
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
    "HaltedError",
    "OnlineAboveThreshold",
    "OnlineNumericSparse",
    "OnlineSparseVector",
    "f_measure",
    "normalized_cumulative_rank",
    "normalized_cumulative_support",
    "top_c_mask",
    "zipf_counts",
    "NoiseSpec",
    "run_spec",
    "svt_standard_spec",
    "above_threshold_accuracy_bound",
    "above_threshold_loss_bound",
    "above_threshold_scales",
    "numeric_sparse_accuracy_bound",
    "numeric_sparse_scales",
    "numeric_sparse_share",
    "sparse_vector_accuracy_bound",
    "sparse_vector_composed_epsilon",
    "sparse_vector_scales",
    "TopCScores",
    "interactive_top_c",
    "non_interactive_top_c",
    "VARIANTS",
    "Variant",
    "format_outputs",
    "svt_retraversal",
    "svt_standard",
]
