"""Notebook 05: the variants' samplers and the auditor, against StatDP on the same inputs.

StatDP (cmla-psu/statdp) is not a dependency of the workbook: it is timed in its own virtual
environment, given by the environment variable ``STATDP_PYTHON`` (default
``/tmp/statdp-venv/bin/python``; install it there with ``pip install numpy numba tqdm
coloredlogs matplotlib`` and ``pip install --no-deps <a checkout of cmla-psu/statdp>``). When
that interpreter is missing, the StatDP rows are left out and a note says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import numpy as np

from dpcourse import audit
from dpcourse.audit.peer_suites import PEER_MECHANISMS, checkdp_mechanisms
from dpcourse.svt import VARIANTS

from ._harness import Section

STATDP_PYTHON = os.environ.get("STATDP_PYTHON", "/tmp/statdp-venv/bin/python")

# One call of StatDP's detect_counterexample, in StatDP's own interpreter: its iSVT2 (statdp/algorithms.py
# lines 95-109) at ε = 0.2 with its benchmark's T = 1, N = 1; StatDP's default sample sizes (100,000 runs per
# input to choose the event, 500,000 to test it), one test ε, on one given pair or on its whole input family.
_STATDP_DRIVER = """
import json, sys, time, logging
from statdp import detect_counterexample
from statdp.algorithms import iSVT2
databases = json.loads(sys.argv[1])
start = time.perf_counter()
result = detect_counterexample(iSVT2, 0.2, {"epsilon": 0.2, "T": 1, "N": 1}, databases=databases, cores=2,
                               quiet=True, loglevel=logging.WARNING)
print(json.dumps({"seconds": time.perf_counter() - start, "p": result[0][1]}))
"""


def _statdp_seconds(databases):
    out = subprocess.run(
        [STATDP_PYTHON, "-c", _STATDP_DRIVER, json.dumps(databases)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _python_loop(answers, threshold, epsilon, c, trials, rng):
    """Alg. 1 one trial at a time, the textbook way (the baseline)."""
    out = np.full((trials, answers.size), np.nan)
    for j in range(trials):
        rho, count = rng.laplace(0, 2 / epsilon), 0
        for i, a in enumerate(answers):
            above = a + rng.laplace(0, 4 * c / epsilon) >= threshold + rho
            out[j, i] = np.inf if above else -np.inf
            count += above
            if count >= c:
                break
    return out


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def run() -> Section:
    section = Section("Notebook 05 (flawed SVT variants and the auditor)")
    answers = np.r_[np.ones(5), np.zeros(5)]
    gen = np.random.default_rng(0)
    ratio = section.ratio(
        "Alg. 1 runner, 20,000 trials × 10 queries",
        lambda: VARIANTS["alg1"].run(answers, threshold=0.5, epsilon=1.0, c=2, trials=20_000, rng=gen),
        "a plain Python loop over trials",
        lambda: _python_loop(answers, 0.5, 1.0, 2, 20_000, gen),
        repeat=3,
    )
    section.notes.append(f"The vectorised runner draws {1 / ratio:.0f}× as many samples per second as the loop.")

    isvt2 = PEER_MECHANISMS["statdp_isvt2"]
    d, d_prime = audit.statdp_pairs(10)["X shape (m = 10)"]
    one_pair, r1 = _timed(
        lambda: audit.audit(isvt2, d, d_prime, epsilon=0.2, trials=500_000, selection_trials=100_000, rng=1)
    )
    section.rows.append(
        (
            "auditor, StatDP's iSVT2 at ε = 0.2, one pair (X shape, m = 10), 100,000 + 500,000 runs",
            f"{one_pair:.3g} s",
            f"p = {r1.p_value:.2g}",
        )
    )
    full, r2 = _timed(lambda: audit.audit(isvt2, epsilon=0.2, trials=500_000, selection_trials=100_000, rng=1))
    section.rows.append(
        ("auditor, same, full search over StatDP's 16 pairs", f"{full:.3g} s", f"p = {r2.p_value:.2g}; input {r2.pair}")
    )
    if os.path.exists(STATDP_PYTHON):
        s1 = _statdp_seconds([d.tolist(), d_prime.tolist()])
        section.rows.append(
            (
                "StatDP (2 processes), same mechanism, pair and run counts, one test ε",
                f"{s1['seconds']:.3g} s",
                f"p = {s1['p']:.2g}; auditor is {s1['seconds'] / one_pair:.3g}× faster",
            )
        )
        s2 = _statdp_seconds(None)
        section.rows.append(
            (
                "StatDP, its full input family (16 pairs), one test ε",
                f"{s2['seconds']:.3g} s",
                f"p = {s2['p']:.2g}; auditor's full search is {s2['seconds'] / full:.3g}× faster",
            )
        )
        section.notes.append(
            f"On one input pair the auditor is {s1['seconds'] / one_pair:.3g}× faster than StatDP; its "
            f"search over all 16 pairs takes {full / s2['seconds']:.3g}× the time StatDP needs for one "
            "test ε over the same pairs."
        )
    else:
        section.notes.append(f"StatDP's interpreter {STATDP_PYTHON} is missing: StatDP was not timed.")

    _power(section)
    return section


def _power(section, seeds=(1, 2, 3)):
    """The power claim at full size: every mechanism of the three suites (and Lyu et al.'s flawed variants at
    ε = 0.2, and CheckDP's flawed examples at ε = 0.2 too), full search over StatDP's 16 pairs with 400,000 +
    600,000 runs per input, at the suite's ε, for
    several seeds (correct mechanisms: the first seed only; their level is a unit test). The unit tests audit
    each flawed mechanism on the pair found here, with runs sized from the frequencies recorded here."""
    mechanisms = [
        *PEER_MECHANISMS.items(),
        *((key, m) for key, m in checkdp_mechanisms(0.2).items() if m.flawed),
        *((key, key) for key in ("alg3", "alg4", "alg5", "alg6")),
    ]
    caught = 0
    for key, m in mechanisms:
        flawed = getattr(m, "flawed", True)
        epsilon = getattr(m, "epsilon", 0.2)
        results, seconds = [], 0.0
        for seed in seeds if flawed else seeds[:1]:
            s, r = _timed(
                lambda m=m, epsilon=epsilon, seed=seed: audit.audit(
                    m, epsilon=epsilon, trials=600_000, selection_trials=400_000, threshold=1.0, rng=seed
                )
            )
            seconds += s
            results.append(r)
        flags = sum(r.flagged for r in results)
        caught += flawed and flags == len(results)
        first = results[0]
        section.rows.append(
            (
                f"power: {key} at ε = {epsilon:g} ({'flawed' if flawed else 'correct'}), full search, "
                f"400,000 + 600,000 runs, seeds {', '.join(str(x) for x in seeds[: len(results)])}",
                f"{seconds / len(results):.3g} s per audit",
                f"flagged {flags} of {len(results)}; p = {', '.join(f'{r.p_value:.2g}' for r in results)}; "
                f"seed {seeds[0]}: input {first.pair}; event: {first.event}; tests: {first.tests}; "
                f"Pr[E|D] = {first.p_d:.4g}, Pr[E|D′] = {first.p_d_prime:.4g}",
            )
        )
    section.notes.append(
        f"Power at 10⁶ runs per input: {caught} of {sum(getattr(m, 'flawed', True) for _, m in mechanisms)} "
        f"flawed mechanisms flagged for every one of seeds {', '.join(map(str, seeds))} (rows 'power:')."
    )
