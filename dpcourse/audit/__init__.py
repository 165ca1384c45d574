"""Empirical auditing: run a mechanism on neighbouring inputs and test its privacy claim.

A black-box test in the style of StatDP (Ding et al., CCS 2018) and DP-Sniper (Bichsel et al.,
S&P 2021). For a mechanism M that claims ε-DP and a pair of neighbouring inputs D, D′, an
output event E witnesses a violation when Pr[M(D) ∈ E] > e^ε · Pr[M(D′) ∈ E]. The auditor

1. **selects**: runs M on every candidate pair (StatDP's family of neighbouring inputs, or the
   user's own pairs), encodes the outputs as small integers once, and scores every event of
   several families (whole outputs, per-position values and intervals, counts of each value,
   Hamming distances to reference patterns, a naive-Bayes score learned from the data) by how
   significantly it violates the claim, in both directions (D over D′ and D′ over D), in each half
   of the selection runs (a fixed event must stand out in both; what is learned on the first half is
   scored on the second); with many pairs, each is screened on a quarter of the selection runs and
   only the most promising get the rest (successive halving);
2. **tests** the single most significant (pair, event) on **fresh** runs, so the search costs
   nothing in validity: the p-value and the lower confidence bound on ε need no correction.

The test is StatDP's: under H₀: p ≤ e^ε p′, keeping each of the x occurrences of E on D with
probability e^{−ε} leaves a count that is stochastically no larger than one with success
probability p′, so Fisher's one-sided exact test on (thinned x, x′) is valid for every thinning.
StatDP averages that p-value over random thinnings; an average of valid p-values is only
guaranteed valid after doubling, so :func:`thinned_fisher_p_value` returns twice the exact
expectation over the thinning (no random draws). It increases with ε, so the set of ε it does
not reject at ``level`` is a confidence interval: its lower end is ``epsilon_lower_bound``, and
``flagged`` (p-value at the claimed ε below ``level``) holds exactly when that bound exceeds the
claim.

Mechanisms are any callable ``mechanism(answers, *, trials, rng)`` returning an array whose first
axis is the trials: numbers, booleans, integer categories, or the output codes of
:mod:`dpcourse.svt.variants` (⊥ = −∞, ⊤ = +∞, halted = NaN); a key of
:data:`~dpcourse.svt.VARIANTS` or a :class:`~dpcourse.svt.Variant` is run at
the claimed ε with the given ``c``, ``threshold`` and ``sensitivity``.

The auditor is a subpackage, one step a module, each building on the ones before it:
:mod:`~dpcourse.audit.statistics` (the test and the bound on ε), :mod:`~dpcourse.audit.region` (the learned
region), :mod:`~dpcourse.audit.encoding` (outputs as codes, the feature families),
:mod:`~dpcourse.audit.events` (events and their search), :mod:`~dpcourse.audit.result` (what an audit
returns), :mod:`~dpcourse.audit.search` (input pairs, screening, :func:`audit`, :func:`scan`) and
:mod:`~dpcourse.audit.peer_suites` (StatDP's, DP-Sniper's and CheckDP's SVT suites). It imports the
library, never the classroom, the checks or the widgets. The exact probabilities it is compared with
live in :mod:`dpcourse.svt` (:mod:`~dpcourse.svt.exact` and :mod:`~dpcourse.svt.exact_variants`).
"""

from __future__ import annotations

from .encoding import _as_outputs, _Encoder  # noqa: F401  (tests/audit/test_auditor.py reaches into them)
from .events import _best_event  # noqa: F401
from .peer_suites import PEER_MECHANISMS
from .result import AuditResult, ScanResult
from .search import audit, pattern_frequency, scan, statdp_pairs
from .statistics import thinned_fisher_p_value

__all__ = [
    "PEER_MECHANISMS",
    "AuditResult",
    "ScanResult",
    "audit",
    "pattern_frequency",
    "scan",
    "statdp_pairs",
    "thinned_fisher_p_value",
]
