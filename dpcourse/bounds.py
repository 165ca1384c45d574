"""Theory lines: the error bounds and rates that the notebooks draw beside measurements.

Each formula lives here once, with the lecture it comes from. Units: *unnormalised*
(counts) unless a function says otherwise; pass ``n`` where offered to get the normalised
error (divide by the number of people n).

The lecture writes δ for the failure probability of an accuracy statement; to keep it
apart from the δ of (ε, δ)-DP this package calls it β.

Each idea lives in its own module, and this one gathers them for the notebooks (``bounds.X``):

* :mod:`dpcourse.bounds_laplace`: notebooks 01 and 02, the Laplace, randomized-response and
  Gaussian error bounds;
* :mod:`dpcourse.bounds_composition`: advanced and optimal composition, the exponential
  mechanism's utility bound;
* :mod:`dpcourse.bounds_svt`: notebook 04, the sparse vector technique's noise scales
  (calibration is theory; :mod:`dpcourse.svt` samples with them) and accuracy bounds;
* :mod:`dpcourse.bounds_pmw`: notebook 06, Hedge, MW and Private MW.

The theory is the floor of the library: these modules import no sampler of the package. The
Laplace, Gaussian and randomized-response calibrations they need come from
:mod:`dpcourse.calibration`, which sits below both the theory and the samplers.
"""

from __future__ import annotations

from .bounds_composition import (
    advanced_composition_epsilon,
    advanced_composition_per_query_epsilon,
    all_subsets_error_lower_bound,
    exponential_mechanism_utility_bound,
    laplace_advanced_composition_max_error_bound,
    optimal_composition_delta,
    optimal_composition_epsilon,
    rr_reports_all_subsets_error,
)
from .bounds_laplace import (
    composed_laplace_max_error_bound,
    composed_laplace_sample_complexity,
    dp_bit_guess_bound,
    gaussian_laplace_crossover,
    gaussian_max_error_bound,
    laplace_expected_max_error,
    laplace_linear_combination_tail_bound,
    laplace_max_error_bound,
    laplace_max_error_quantile,
    laplace_max_error_tail,
    laplace_variance,
    noisy_histogram_max_error_bound,
    noisy_table_all_queries_mean_error,
    rr_answer_variance,
    rr_max_error_bound,
    rr_proportion_variance,
    rr_report_range,
)
from .bounds_pmw import (
    MW_UPDATE_STATEMENTS,
    hedge_regret_bound,
    mw_update_count_bound,
    pmw_dwork_roth_alpha,
    pmw_dwork_roth_error_bound,
    pmw_dwork_roth_requirement,
    pmw_notes_alpha,
    pmw_notes_error_bound,
    pmw_update_count_bound,
)
from .bounds_svt import (
    above_threshold_accuracy_bound,
    above_threshold_scales,
    numeric_sparse_accuracy_bound,
    numeric_sparse_scales,
    numeric_sparse_share,
    sparse_vector_accuracy_bound,
    sparse_vector_scales,
)

__all__ = [
    "MW_UPDATE_STATEMENTS",
    "gaussian_laplace_crossover",
    "gaussian_max_error_bound",
    "dp_bit_guess_bound",
    "noisy_table_all_queries_mean_error",
    "all_subsets_error_lower_bound",
    "rr_reports_all_subsets_error",
    "rr_answer_variance",
    "rr_max_error_bound",
    "rr_report_range",
    "above_threshold_accuracy_bound",
    "above_threshold_scales",
    "numeric_sparse_scales",
    "numeric_sparse_share",
    "sparse_vector_scales",
    "advanced_composition_epsilon",
    "advanced_composition_per_query_epsilon",
    "exponential_mechanism_utility_bound",
    "laplace_advanced_composition_max_error_bound",
    "numeric_sparse_accuracy_bound",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
    "sparse_vector_accuracy_bound",
    "composed_laplace_max_error_bound",
    "composed_laplace_sample_complexity",
    "laplace_expected_max_error",
    "laplace_linear_combination_tail_bound",
    "laplace_max_error_bound",
    "laplace_max_error_quantile",
    "laplace_max_error_tail",
    "laplace_variance",
    "noisy_histogram_max_error_bound",
    "rr_proportion_variance",
    "hedge_regret_bound",
    "mw_update_count_bound",
    "pmw_dwork_roth_alpha",
    "pmw_dwork_roth_error_bound",
    "pmw_dwork_roth_requirement",
    "pmw_notes_alpha",
    "pmw_notes_error_bound",
    "pmw_update_count_bound",
]
