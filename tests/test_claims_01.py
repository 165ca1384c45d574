"""Notebook 01's prose against its printed numbers and the package (issue 13: prose cannot drift).

Each test quotes the sentences it backs (``nb.states``) and asserts what they say about the
notebook's own results, read from the stored outputs (nbval keeps them equal to what the code
prints). Tolerances for sampled numbers come from their sampling error, as each comment says.
"""

import numpy as np
import pytest

from dpcourse import bounds
from tests.notebook_claims import StoredNotebook, number_after, numbers

K_GRID = (1, 3, 10, 30, 100, 300, 1000)


@pytest.fixture(scope="module")
def nb():
    return StoredNotebook("01_laplace_utility.ipynb")


def test_neighbouring_relation_is_stated(nb):
    nb.states("449f7c0f", "for all neighbours $\\|x-y\\|_1 \\le 1$ (one person added or removed)")
    nb.states("c7ac7365", "Adding or removing one person changes the histogram $x$ by one standard basis vector")
    nb.states(
        "804efa56",
        "adding or removing one person moves each of the $K$ counts by at most 1, so the vector of $K$ counting "
        "queries has $\\Delta f \\le K$",
    )
    nb.states("7ae6a683", "($\\Delta f = 1$: adding or removing a person changes one cell by 1)")


def test_theorem_3_8_measured_on_the_exact_tail(nb):
    nb.states(
        "2a4970d2",
        "The measured frequency sits on the exact tail, just under $\\beta = 0.05$: the union bound loses almost "
        "nothing",
    )
    nb.states("dee0a9af", "the union bound behind it is nearly tight")
    for line in nb.printed_lines("83750816")[1:]:
        k, epsilon, level, measured, low, high, exact = numbers(line)
        assert level == pytest.approx(
            bounds.laplace_max_error_bound(k=int(k), beta=0.05, sensitivity=1, epsilon=epsilon), abs=1e-3
        )
        assert exact == pytest.approx(
            bounds.laplace_max_error_tail(level, k=int(k), sensitivity=1, epsilon=epsilon), abs=1e-4
        )
        assert low <= exact <= high and low <= 0.05  # on the exact tail, consistent with ≤ β (95% CP interval)
        assert 0.048 <= exact <= 0.05  # just under β: the union bound loses under 4%


def direct_rows(nb):
    return [numbers(line) for line in nb.printed_lines("12d88eab")[1:]]


def test_k_queries_with_split_budget(nb):
    nb.states("25c36a99", "The error grows almost linearly in $K$ (times $\\ln K$)")
    rows = direct_rows(nb)
    for K, sensitivity, measured, half_width, exact, level in rows:
        # the printed ± is a 95% interval (1.96 SE): allow 5 SE, plus the printed rounding
        assert abs(measured - exact) <= 5 * half_width / 1.96 + 1e-5
        assert exact == pytest.approx(
            bounds.laplace_expected_max_error(k=int(K), sensitivity=sensitivity, epsilon=1.0, n=10_000), abs=1e-5
        )
        assert measured < level
    K, measured = np.array([r[0] for r in rows]), np.array([r[2] for r in rows])
    assert 1.0 <= np.polyfit(np.log(K), np.log(measured), 1)[0] <= 1.3


def test_noisy_histogram_against_per_query_laplace(nb):
    nb.states(
        "7ae6a683", "it does not grow with $K$ at all (only through the maximum over queries, like $\\sqrt{\\log K}$)"
    )
    nb.states(
        "558f4b52",
        "With only $|\\mathcal X| = 64$ record types, the histogram wins as soon as a handful of queries are asked",
        "The histogram's bound lies 3.3 to 6.7 times above the measured mean error (the most at small $K$)",
    )
    lines = nb.printed_lines("6a322f04")
    pairs = [numbers(line.split(":")[1]) for line in lines if line.strip().startswith("K =")]
    direct, histogram = np.array(pairs).T
    assert histogram[0] > direct[0]  # one query: answer it directly
    assert int(number_after(lines[-2], "wins from K =")) <= 10
    assert histogram[-1] / histogram[0] < 4 and direct[-1] / direct[0] > 1000
    ratios = numbers(lines[-1].split(":")[1])
    assert round(min(ratios), 1) == 3.3 and round(max(ratios), 1) == 6.7 and int(np.argmax(ratios)) == 0
    for K, measured, ratio in zip(K_GRID, histogram, ratios, strict=True):
        bound = bounds.noisy_histogram_max_error_bound(domain_size=64, num_queries=K, beta=0.05, epsilon=1.0, n=10_000)
        assert bound / measured == pytest.approx(ratio, rel=0.05)  # measured printed to 2 significant digits at K = 1


def test_histogram_error_grows_like_root_universe(nb):
    nb.states(
        "558f4b52",
        "at fixed $K$, the histogram's error grows like $\\sqrt{|\\mathcal X|}$, while answering the queries directly "
        "does not care about $|\\mathcal X|$ at all",
    )
    slope = number_after(nb.printed("bd6a4874"), "|X|^")
    assert 0.4 <= slope <= 0.6
