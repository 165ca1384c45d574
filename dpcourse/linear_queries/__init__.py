"""Linear queries and how to release many of them: notebooks 01, 02 and 03.

- :mod:`~dpcourse.linear_queries.workloads`: a linear query over a histogram and the workloads built from
  them (explicit, prefix, all-range), their sensitivities and Gram matrices;
- :mod:`~dpcourse.linear_queries.rr_vs_laplace`: randomized response against Laplace, the noisy table and
  the Gaussian mechanism for many queries (notebook 02);
- :mod:`~dpcourse.linear_queries.comparisons`: notebook 02's measurements over grids of settings (the number
  of queries, the table's size, n, the attack's noise level);
- :mod:`~dpcourse.linear_queries.histogram_sweeps`: notebook 01's measurements (K counting queries answered
  directly or from the noisy histogram, and the histogram against the universe's size);
- :mod:`~dpcourse.linear_queries.reconstruction`: too many too-accurate answers reveal the data (Dinur &
  Nissim's attack by least squares);
- :mod:`~dpcourse.linear_queries.strategies`: strategy matrices (identity, prefix, b-ary tree, Haar wavelet)
  and the tree's canonical decomposition (notebook 03);
- :mod:`~dpcourse.linear_queries.factorization`: answering a strategy with noise and the workload by
  least squares, its sampled and exact errors, and the SVD lower bound.

Every name in these modules' ``__all__`` is importable from here.
"""

from __future__ import annotations

from .comparisons import (
    AttackSweep,
    CrossoverSweep,
    QueryCountSweep,
    RootNSweep,
    TableSizeSweep,
    all_subsets_errors,
    attack_sweep,
    crossover_sweep,
    gaussian_root_n_errors,
    release_variances,
    rr_proportion_variances,
    rr_query_count_sweep,
    table_size_sweep,
    type_queries_max_errors,
)
from .factorization import (
    ALL_RANGE_TABLE,
    ALL_RANGE_TABLE_BRANCHINGS,
    ALL_RANGE_TABLE_EVERY_BRANCHING,
    ALL_RANGE_TABLE_SIZES,
    expected_error,
    least_squares,
    matrix_mechanism,
    noise_variance,
    sampled_error,
    svd_lower_bound,
    tree_least_squares,
    write_all_range_table,
)
from .histogram_sweeps import CountingQuerySweep, UniverseSizeSweep, counting_query_sweep, universe_size_sweep
from .reconstruction import (
    NOISE_KINDS,
    AttackResult,
    all_subsets_max_error,
    least_squares_estimate,
    pseudo_inverse,
    reconstruct,
    run_attack,
    subset_sum_queries,
)
from .rr_vs_laplace import (
    METHODS,
    Population,
    gaussian_answers,
    histogram_all_subsets_max_error,
    histogram_answers,
    laplace_answers,
    make_population,
    prefix_max_errors,
    random_type_queries,
    randomized_response_answers,
    release,
    rr_split_budget_answers,
)
from .strategies import (
    NEIGHBOURS,
    NOISES,
    Strategy,
    answer_by_decomposition,
    canonical_decomposition,
    hierarchical_strategy,
    identity_strategy,
    l1_sensitivity,
    prefix_strategy,
    wavelet_strategy,
)
from .workloads import (
    AllRangeWorkload,
    MatrixWorkload,
    PrefixWorkload,
    Workload,
    all_range_workload,
    histogram,
    identity_workload,
    prefix_workload,
    random_counting_workload,
)

__all__ = [
    "AttackSweep",
    "CrossoverSweep",
    "QueryCountSweep",
    "RootNSweep",
    "TableSizeSweep",
    "all_subsets_errors",
    "attack_sweep",
    "crossover_sweep",
    "gaussian_root_n_errors",
    "release_variances",
    "rr_proportion_variances",
    "rr_query_count_sweep",
    "table_size_sweep",
    "type_queries_max_errors",
    "ALL_RANGE_TABLE",
    "ALL_RANGE_TABLE_BRANCHINGS",
    "ALL_RANGE_TABLE_EVERY_BRANCHING",
    "ALL_RANGE_TABLE_SIZES",
    "expected_error",
    "least_squares",
    "matrix_mechanism",
    "noise_variance",
    "sampled_error",
    "svd_lower_bound",
    "tree_least_squares",
    "write_all_range_table",
    "CountingQuerySweep",
    "UniverseSizeSweep",
    "counting_query_sweep",
    "universe_size_sweep",
    "NOISE_KINDS",
    "AttackResult",
    "all_subsets_max_error",
    "least_squares_estimate",
    "pseudo_inverse",
    "reconstruct",
    "run_attack",
    "subset_sum_queries",
    "METHODS",
    "Population",
    "gaussian_answers",
    "histogram_all_subsets_max_error",
    "histogram_answers",
    "laplace_answers",
    "make_population",
    "prefix_max_errors",
    "random_type_queries",
    "randomized_response_answers",
    "release",
    "rr_split_budget_answers",
    "NEIGHBOURS",
    "NOISES",
    "Strategy",
    "answer_by_decomposition",
    "canonical_decomposition",
    "hierarchical_strategy",
    "identity_strategy",
    "l1_sensitivity",
    "prefix_strategy",
    "wavelet_strategy",
    "AllRangeWorkload",
    "MatrixWorkload",
    "PrefixWorkload",
    "all_range_workload",
    "prefix_workload",
    "Workload",
    "histogram",
    "identity_workload",
    "random_counting_workload",
]
