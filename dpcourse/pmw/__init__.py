"""Multiplicative weights and Private Multiplicative Weights: notebook 06.

- :mod:`~dpcourse.pmw.multiplicative_weights`: Hedge and its regret, the MW step, the offline MW release (no privacy);
- :mod:`~dpcourse.pmw.conjunctions`: linear queries as dense vectors, sparse rows or conjunctions over
  {0, 1}^d, the forms the MW step works on;
- :mod:`~dpcourse.pmw.private_mw`: the online Private MW curator and its stream runners;
- :mod:`~dpcourse.pmw.baselines`: the online-PMW slides' baselines (Laplace per query, the noisy histogram) and
  the error summary that compares them with Private MW;
- :mod:`~dpcourse.pmw.theory`: Hedge's regret, MW and PMW update counts and Private MW's error bounds, which
  import no sampler.

Every name in these modules' ``__all__`` is importable from here.
"""

from __future__ import annotations

from .baselines import (
    REPLACE_ONE_HISTOGRAM_SENSITIVITY,
    LaplacePerQuery,
    NoisyHistogram,
    ReleaseErrors,
    per_query_epsilon,
    release_errors,
)
from .conjunctions import ConjunctionQuery, ConjunctionWorkload, conjunction_workload, product_histogram
from .multiplicative_weights import (
    ADVERSARIES,
    HedgeResult,
    MWReleaseResult,
    hedge,
    kl_potential,
    mw_query_release,
    mw_update,
)
from .private_mw import (
    CALIBRATIONS,
    BudgetExhaustedError,
    PMWHistory,
    PrivateMW,
    run_stream,
    run_stream_then_synthetic,
    run_stream_with_potential,
)
from .theory import (
    MW_UPDATE_STATEMENTS,
    hedge_regret_bound,
    mw_update_count_bound,
    pmw_dwork_roth_alpha,
    pmw_dwork_roth_error_bound,
    pmw_dwork_roth_requirement,
    pmw_notes_alpha,
    pmw_notes_epsilon0,
    pmw_notes_error_bound,
    pmw_update_count_bound,
    replace_one_histogram_max_error_bound,
)

__all__ = [
    "REPLACE_ONE_HISTOGRAM_SENSITIVITY",
    "LaplacePerQuery",
    "NoisyHistogram",
    "ReleaseErrors",
    "per_query_epsilon",
    "release_errors",
    "ConjunctionQuery",
    "ConjunctionWorkload",
    "conjunction_workload",
    "product_histogram",
    "ADVERSARIES",
    "HedgeResult",
    "MWReleaseResult",
    "hedge",
    "kl_potential",
    "mw_query_release",
    "mw_update",
    "CALIBRATIONS",
    "BudgetExhaustedError",
    "PMWHistory",
    "PrivateMW",
    "run_stream",
    "run_stream_then_synthetic",
    "run_stream_with_potential",
    "MW_UPDATE_STATEMENTS",
    "hedge_regret_bound",
    "mw_update_count_bound",
    "pmw_dwork_roth_alpha",
    "pmw_dwork_roth_error_bound",
    "pmw_dwork_roth_requirement",
    "pmw_notes_alpha",
    "pmw_notes_epsilon0",
    "pmw_notes_error_bound",
    "pmw_update_count_bound",
    "replace_one_histogram_max_error_bound",
]
