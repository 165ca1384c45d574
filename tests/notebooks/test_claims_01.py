"""Notebook 01's prose against its printed numbers and the package (issue 13: prose cannot drift).

Each test quotes the sentences it backs (``nb.states``) and asserts what they say about the
notebook's own results, read from the stored outputs (nbval keeps them equal to what the code
prints). Tolerances for sampled numbers come from their sampling error, as each comment says.
"""

import re

import numpy as np
import pytest

from dpcourse import mechanisms, pmw
from dpcourse.checks import laplace as check
from tests.notebooks.notebook_claims import StoredNotebook, number_after, numbers

K_GRID = (1, 3, 10, 30, 100, 300, 1000)


@pytest.fixture(scope="module")
def nb():
    return StoredNotebook("01_laplace_utility.ipynb")


def table_rows(nb, cell_id: str) -> list[str]:
    """The rows of the ``dpcourse.tables.Table`` a cell shows (its text/plain form, below the dashes)."""
    cell = nb.cells[cell_id]
    shown = [o["data"]["text/plain"] for o in cell.outputs if "text/plain" in o.get("data", {})]
    lines = next(text for text in shown if "\n-" in text).splitlines()
    dashes = next(i for i, line in enumerate(lines) if set(line.replace(" ", "")) == {"-"})
    return [line for line in lines[dashes + 1 :] if line.strip()]


def test_the_density_ratio_is_at_most_e_to_the_epsilon_not_equal_to_it(nb):
    # issue 29 erratum: the ratio "is" exp(ε‖f(x) − f(y)‖₁/Δf) was wrong; it is at most that
    nb.states(
        "449f7c0f",
        "So the ratio is *at most* $\\exp\\big(\\varepsilon\\,\\|f(x)-f(y)\\|_1/\\Delta f\\big)$, not equal to it",
        "At other outputs the ratio is smaller.",
    )
    assert "the ratio of the two densities is $\\exp\\big(" not in nb.prose("449f7c0f")
    nb.states("3c1f7a20", "it never exceeds $\\varepsilon$", "with probability $\\tfrac12(1-e^{-\\varepsilon})$")
    largest, epsilon = numbers(nb.printed_lines("3c1f7a21")[0])
    share, exact = numbers(nb.printed_lines("3c1f7a21")[1])
    assert largest <= epsilon + 5e-5  # printed to 4 decimals
    assert exact == pytest.approx(0.5 * (1 - np.exp(-0.5)), abs=1e-4)
    # 10 000 releases: 5 standard errors of a proportion near 0.2 is 0.02; the share is far from 0, so the ratio is
    # strictly below e^ε on a fifth of the outputs and "is exp(…)" would be false there
    assert abs(share - exact) <= 5 * np.sqrt(exact * (1 - exact) / 10_000)
    assert share > 0.1


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
    for line in table_rows(nb, "83750816"):
        k, epsilon, level, measured, low, high, exact = numbers(line)
        assert level == pytest.approx(
            mechanisms.laplace_max_error_bound(k=int(k), beta=0.05, sensitivity=1, epsilon=epsilon), abs=1e-3
        )
        assert exact == pytest.approx(
            mechanisms.laplace_max_error_tail(level, k=int(k), sensitivity=1, epsilon=epsilon), abs=1e-4
        )
        assert low <= exact <= high and low <= 0.05  # on the exact tail, consistent with ≤ β (95% CP interval)
        assert 0.048 <= exact <= 0.05  # just under β: the union bound loses under 4%


def direct_rows(nb):
    return [numbers(line) for line in table_rows(nb, "12d88eab")]


def test_the_release_uses_the_workloads_sensitivity_and_says_so(nb):
    # issue 29 erratum: the text said "ε/K each" while the code calibrates to W.l1_sensitivity (about half the noise)
    assert "with ε/K each" not in nb.prose("804efa56")
    nb.states(
        "804efa56",
        "The release below uses the workload's **true** sensitivity instead, `W.l1_sensitivity`",
        "this $\\Delta f$ is about $K/2$: about half the split's noise",
    )
    # the release is linear_queries.counting_query_sweep (tests/linear_queries/test_histogram_sweeps.py: it calibrates
    # to the workload's sensitivity); the cell says so
    assert "W.l1_sensitivity" in nb.cells["12d88eab"].source and "counting_query_sweep" in nb.cells["12d88eab"].source
    rows = direct_rows(nb)
    for K, sensitivity, ratio, *_ in rows:
        assert ratio == pytest.approx(sensitivity / K, abs=5e-4) and sensitivity <= K
        if K >= 100:
            assert 0.45 <= ratio <= 0.65  # about half: ε/K each (Δf = K) would print 1
    K, sensitivity, ratio, *_ = rows[-1]
    nb.states(
        "25c36a99",
        f"at $K = {K:.0f}$ one record type is in {sensitivity:.0f} of the {K:.0f} queries, so the noise is "
        f"{ratio:.3f} times the split's",
    )


def test_k_queries_with_split_budget(nb):
    nb.states("25c36a99", "The error grows almost linearly in $K$ (times $\\ln K$)")
    rows = direct_rows(nb)
    for K, sensitivity, _ratio, measured, half_width, exact, level in rows:
        # the printed ± is a 95% interval (1.96 SE): allow 5 SE, plus the printed rounding
        assert abs(measured - exact) <= 5 * half_width / 1.96 + 1e-5
        assert exact == pytest.approx(
            mechanisms.laplace_expected_max_error(k=int(K), sensitivity=sensitivity, epsilon=1.0, n=10_000), abs=1e-5
        )
        assert measured < level
    K, measured = np.array([r[0] for r in rows]), np.array([r[3] for r in rows])
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
    _, direct, histogram, ratios = np.array([numbers(line) for line in table_rows(nb, "6a322f04")]).T
    assert histogram[0] > direct[0]  # one query: answer it directly
    assert int(number_after(nb.printed("6a322f04"), "wins from K =")) <= 10
    assert histogram[-1] / histogram[0] < 4 and direct[-1] / direct[0] > 1000
    assert round(min(ratios), 1) == 3.3 and round(max(ratios), 1) == 6.7 and int(np.argmax(ratios)) == 0
    for K, measured, ratio in zip(K_GRID, histogram, ratios, strict=True):
        bound = mechanisms.noisy_histogram_max_error_bound(
            domain_size=64, num_queries=K, beta=0.05, epsilon=1.0, n=10_000
        )
        assert bound / measured == pytest.approx(ratio, rel=0.05)  # measured printed to 2 significant digits at K = 1


def test_histogram_error_grows_like_root_universe(nb):
    nb.states(
        "558f4b52",
        "at fixed $K$, the histogram's error grows like $\\sqrt{|\\mathcal X|}$, while answering the queries directly "
        "does not care about $|\\mathcal X|$ at all",
    )
    slope = number_after(nb.printed("bd6a4874"), "|X|^")
    assert 0.4 <= slope <= 0.6


def test_the_max_queries_exercise_says_all_answers_at_once_and_the_check_takes_only_that(nb):
    # issue 29 erratum: the exercise read per answer but was checked for all answers together
    nb.states("6d0b3a10", "**all $K$ answers at once**", "not to each answer on its own", "**split evenly**")
    office = check.EXAMPLE_OFFICE
    n, epsilon, alpha, beta = office["n"], office["epsilon"], office["alpha"], office["beta"]

    def largest(log_term):
        return max(k for k in range(1, 5000) if k * log_term(k) / (n * epsilon) <= alpha)

    together, alone = largest(lambda k: np.log(k / beta)), largest(lambda k: np.log(1 / beta))
    assert together == 538 and alone > together
    assert check.max_queries.verdict({"value": together}).passed
    verdict = check.max_queries.verdict({"value": alone})
    assert verdict.status == "failed" and "all K answers at once" in verdict.message


def test_the_summary_says_what_private_mw_pays_in_n(nb):
    # issue 29 erratum: "polylogarithmic in both K and |X|" without the price; PMW pays n^{2/3} in counts
    assert "answer yes" not in nb.prose("01gofur0")
    nb.states(
        "01gofur0",
        "shrinking only like $n^{-1/3}$ instead of $1/n$",
        "In counts that is $n\\alpha = O\\big(n^{2/3}",
        "which *grows* with $n$, while the count errors of both Laplace strategies above do not depend on $n$ at all",
    )
    setting = {"epsilon": 1.0, "domain_size": 64, "num_queries": 100, "beta": 0.05}
    counts = [n * pmw.pmw_notes_error_bound(n=n, **setting) for n in (1e4, 8e4)]
    assert counts[1] / counts[0] == pytest.approx(8 ** (2 / 3))  # n^{2/3} in counts: ×4 for 8× the people
    # K and |X| from 10 to 10⁶: the error grows by the cube root of the ratio of the logarithms and nothing more
    small, large = (
        pmw.pmw_notes_error_bound(n=1e4, **{**setting, "num_queries": k, "domain_size": k}) for k in (10, 10**6)
    )
    logs = np.log(3e6 / 0.05) * np.log(1e6) / (np.log(30 / 0.05) * np.log(10))
    assert large / small == pytest.approx(np.cbrt(logs)) and large / small < 3
    histogram = [
        mechanisms.noisy_histogram_max_error_bound(domain_size=d, num_queries=100, beta=0.05, epsilon=1.0)
        for d in (10, 10**6)
    ]
    assert histogram[1] / histogram[0] > 100  # the noisy histogram pays √|X| over the same range
    laplace_counts = [
        mechanisms.laplace_max_error_bound(k=100, beta=0.05, sensitivity=100, epsilon=1.0),
        mechanisms.noisy_histogram_max_error_bound(domain_size=64, num_queries=100, beta=0.05, epsilon=1.0),
    ]
    assert all(np.isfinite(laplace_counts))  # no n among their arguments: count errors that do not depend on n


def test_the_core_is_a_lab_and_going_further_comes_after_the_hand_in(nb):
    # issue 39: the opening states the time; at most six sections before the hand-in, every exercise among them;
    # one optional part after it, holding the outlook beyond this lecture
    nb.states("5ee11dd6", "**Time:** about 90 minutes for §1–§5", "not needed for the hand-in")
    cells = nb.notebook.cells
    hand_in = next(i for i, cell in enumerate(cells) if "hand-in" in cell.metadata.get("tags", []))
    sections = [
        cell.source[:4] for cell in cells[:hand_in] if cell.cell_type == "markdown" and re.match(r"## \d", cell.source)
    ]
    assert sections == ["## 1", "## 2", "## 3", "## 4", "## 5"]
    exercises = [i for i, cell in enumerate(cells) if "exercise" in cell.metadata.get("dpcourse", {})]
    assert len(exercises) == 10 and max(exercises) < hand_in
    going_further = [i for i, cell in enumerate(cells) if cell.source.startswith("## Going further (optional)")]
    assert going_further == [len(cells) - 1] and going_further[0] > hand_in
    assert "Private multiplicative weights" not in nb.prose("dee0a9af")  # the outlook moved out of the core
