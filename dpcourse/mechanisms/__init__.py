"""Noise mechanisms, their calibration and the theory of their error: notebooks 01, 02 and 06.

The floor of the lectures' library. Modules, one idea each:

- :mod:`~dpcourse.mechanisms.calibration`: the noise a guarantee needs (Laplace's b = Δf/ε, the Gaussian σ,
  randomized response's keep probability), as pure formulas that the theory and the samplers share;
- :mod:`~dpcourse.mechanisms.noise`: the samplers: Laplace, Gaussian (classic and analytic), randomized
  response (binary and k-ary), the exponential mechanism, report noisy max and the largest of many Laplace
  draws;
- :mod:`~dpcourse.mechanisms.exponential`: the exponential mechanism exactly (pmf, privacy loss, utility);
- :mod:`~dpcourse.mechanisms.theory`: the error bounds of the Laplace, randomized-response and Gaussian
  mechanisms (Lecture 3), which import no sampler;
- :mod:`~dpcourse.mechanisms.composition`: basic, advanced and optimal composition and the limits of accuracy
  on all subset queries, also theory;
- :mod:`~dpcourse.mechanisms.experiments`: measuring a mechanism over many trials, with confidence intervals.

Every name in these modules' ``__all__`` is importable from here (``mechanisms.laplace_mechanism``,
``mechanisms.laplace_max_error_bound``).
"""

from __future__ import annotations

from .calibration import (
    GAUSSIAN_CALIBRATIONS,
    analytic_gaussian_delta,
    gaussian_sigma,
    laplace_scale,
    rr_keep_probability,
)
from .composition import (
    advanced_composition_epsilon,
    advanced_composition_per_query_epsilon,
    all_subsets_error_lower_bound,
    exponential_mechanism_utility_bound,
    laplace_advanced_composition_max_error_bound,
    optimal_composition_delta,
    optimal_composition_epsilon,
    rr_reports_all_subsets_error,
)
from .experiments import (
    ERROR_METRICS,
    ErrorSummary,
    TailEstimate,
    empirical_error,
    empirical_tail,
    laplace_tail_check,
    log_log_slope,
    max_abs_error,
    mean_squared_error,
    proportion_interval,
    summarize,
)
from .exponential import (
    ExponentialPrivacyLoss,
    adversarial_scores,
    exponential_mechanism_pmf,
    exponential_privacy_loss,
    pricing_revenue,
    utility_gap_tail,
)
from .noise import (
    exponential_mechanism,
    gaussian_mechanism,
    k_randomized_response,
    k_rr_debias_counts,
    k_rr_probabilities,
    laplace_maximum,
    laplace_mechanism,
    randomized_response,
    report_noisy_max,
    rr_debias,
    rr_estimate,
)
from .theory import (
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

__all__ = [
    "GAUSSIAN_CALIBRATIONS",
    "analytic_gaussian_delta",
    "gaussian_sigma",
    "laplace_scale",
    "rr_keep_probability",
    "all_subsets_error_lower_bound",
    "rr_reports_all_subsets_error",
    "advanced_composition_epsilon",
    "advanced_composition_per_query_epsilon",
    "exponential_mechanism_utility_bound",
    "laplace_advanced_composition_max_error_bound",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
    "ERROR_METRICS",
    "ErrorSummary",
    "TailEstimate",
    "empirical_error",
    "empirical_tail",
    "laplace_tail_check",
    "log_log_slope",
    "max_abs_error",
    "mean_squared_error",
    "proportion_interval",
    "summarize",
    "ExponentialPrivacyLoss",
    "adversarial_scores",
    "exponential_mechanism_pmf",
    "exponential_privacy_loss",
    "pricing_revenue",
    "utility_gap_tail",
    "exponential_mechanism",
    "report_noisy_max",
    "gaussian_mechanism",
    "k_randomized_response",
    "k_rr_debias_counts",
    "k_rr_probabilities",
    "laplace_maximum",
    "laplace_mechanism",
    "randomized_response",
    "rr_debias",
    "rr_estimate",
    "composed_laplace_max_error_bound",
    "composed_laplace_sample_complexity",
    "dp_bit_guess_bound",
    "gaussian_laplace_crossover",
    "gaussian_max_error_bound",
    "laplace_expected_max_error",
    "laplace_linear_combination_tail_bound",
    "laplace_max_error_bound",
    "laplace_max_error_quantile",
    "laplace_max_error_tail",
    "laplace_variance",
    "noisy_histogram_max_error_bound",
    "noisy_table_all_queries_mean_error",
    "rr_answer_variance",
    "rr_max_error_bound",
    "rr_proportion_variance",
    "rr_report_range",
]
