"""Notebook 06's entry point: Hedge, multiplicative weights, and Private Multiplicative Weights (PMW).

Lecture 3 (end: Hedge and its regret), Lecture 4 (MW query release, Private MW,
Theorem 4.3) and the online-PMW slides (Dwork & Roth's OnlineMultiplicativeWeights via
NumericSparse, Theorems 4.10, 4.14, 4.15). Private MW is due to Hardt & Rothblum, "A
multiplicative weights mechanism for privacy-preserving data analysis" (FOCS 2010); the
offline MW release with the exponential mechanism choosing the queries (MWEM) to Hardt,
Ligett & McSherry, "A simple and practical algorithm for differentially private data
release" (NeurIPS 2012).

This module gathers the lecture's names in one place; each idea lives in its own module:

* :mod:`dpcourse.hedge`: :func:`hedge` and :class:`HedgeResult`; the MW step
  :func:`mw_update`, :func:`kl_potential`, and the offline release :func:`mw_query_release`
  (:class:`MWReleaseResult`);
* :mod:`dpcourse.conjunctions`: :class:`ConjunctionQuery`, :class:`ConjunctionWorkload`,
  :func:`conjunction_workload`, :func:`product_histogram`, and the dense / sparse /
  conjunction query forms the MW step works on;
* :mod:`dpcourse.private_mw`: :class:`PrivateMW` (:data:`CALIBRATIONS`, :class:`PMWHistory`,
  :class:`BudgetExhaustedError`) and the stream runners :func:`run_stream`,
  :func:`run_stream_with_potential`;
* :mod:`dpcourse.pmw_baselines`: :class:`LaplacePerQuery` (:func:`per_query_epsilon`),
  :class:`NoisyHistogram`, and the comparison :func:`release_errors` (:class:`ReleaseErrors`).

The data are a histogram x over a finite universe 𝒳 with n = Σ x, seen as the distribution
p = x/n; a linear query is a vector q ∈ [0, 1]^|𝒳| with normalised answer q·p. Curators share
one interface: ``answer(query) -> float``, ``privacy_spent``, ``answered``. An interaction with
an adaptive analyst is one run; each curator draws its noise as the queries arrive, so the
unit of vectorisation is a query, not a trial.
"""

from __future__ import annotations

from .conjunctions import ConjunctionQuery, ConjunctionWorkload, conjunction_workload, product_histogram
from .hedge import ADVERSARIES, HedgeResult, MWReleaseResult, hedge, kl_potential, mw_query_release, mw_update
from .pmw_baselines import LaplacePerQuery, NoisyHistogram, ReleaseErrors, per_query_epsilon, release_errors
from .private_mw import (
    CALIBRATIONS,
    BudgetExhaustedError,
    PMWHistory,
    PrivateMW,
    run_stream,
    run_stream_with_potential,
)

__all__ = [
    "ADVERSARIES",
    "CALIBRATIONS",
    "BudgetExhaustedError",
    "ConjunctionQuery",
    "ConjunctionWorkload",
    "HedgeResult",
    "LaplacePerQuery",
    "MWReleaseResult",
    "NoisyHistogram",
    "PMWHistory",
    "PrivateMW",
    "ReleaseErrors",
    "conjunction_workload",
    "hedge",
    "kl_potential",
    "mw_query_release",
    "mw_update",
    "per_query_epsilon",
    "product_histogram",
    "release_errors",
    "run_stream",
    "run_stream_with_potential",
]
