"""Notebook 02's prose against its printed numbers and the package (issue 13: prose cannot drift).

Each test quotes the sentences it backs (``nb.states``) and asserts what they say about the
notebook's own results, read from the stored outputs (nbval keeps them equal to what the code
prints). Tolerances for sampled numbers come from their sampling error, as each comment says.
"""

from itertools import pairwise

import numpy as np
import pytest

from dpcourse import bounds
from dpcourse import query_release as qr
from tests.notebook_claims import StoredNotebook, number_after, numbers


@pytest.fixture(scope="module")
def nb():
    return StoredNotebook("02_rr_vs_laplace.ipynb")


def test_neighbouring_relation_is_stated(nb):
    nb.states("bb96087a", "neighbouring datasets differ in **one person's bit**")
    nb.states(
        "4ee7f383",
        "Changing one person's bit moves every query that contains their type by $1/n$",
        "($\\Delta_1 = 1$: one person's bit moves one cell by 1)",
    )
    nb.states("cadeae28", "changing that person's bit moves all $k$ answers by $1/n$")
    nb.states("2e1eda35", "Neighbours differ in one person's bit, which moves every subset sum that contains them by 1")


def test_randomized_response_on_one_bit(nb):
    nb.states("48a2cef1", "Checked on 1000 people, 20 000 times")
    lines = nb.printed_lines("6397c972")
    truth = number_after(lines[0], "truth")
    for line in lines[1:]:
        epsilon, measured, theory, mean = numbers(line)
        assert theory == pytest.approx(bounds.rr_proportion_variance(n=1000, epsilon=epsilon), rel=1e-3)
        # a sample variance of 20 000 near-normal estimates has relative SE √(2/19 999) ≈ 1%: allow 5 SE
        assert measured == pytest.approx(theory, rel=0.05)
        assert abs(mean - truth) <= 5 * np.sqrt(theory / 20_000) + 5e-4  # 5 SE, plus the printed rounding


def test_budget_split_error_grows_like_the_number_of_queries(nb):
    nb.states(
        "99f90edc",
        "the error of each answer grows like $|Q|/(\\sqrt n\\,\\varepsilon)$",
        "which adds a factor $\\sqrt{\\log|Q|}$",
    )
    rows = [numbers(line) for line in nb.printed_lines("578a57bb")]
    k, one_report, split = (np.array(column) for column in zip(*rows, strict=True))
    slope = np.polyfit(np.log(k), np.log(split), 1)[0]
    assert 1.0 <= slope <= 1.3  # |Q|, times the √log|Q| of a maximum
    assert one_report[-1] / one_report[0] < 4  # one report: hardly grows over a thousandfold |Q|


def test_laplace_and_table_variances(nb):
    nb.states("4ee7f383", "so it grows like $\\sqrt{G}$, the size of the table, and hardly at all with $|Q|$")
    rows = [numbers(line) for line in nb.printed_lines("d53fa302")[1:]]
    for _k, lap, lap_exact, table, table_exact in rows:
        # Laplace: relative SE of a sample variance over 2000 draws is √(5/2000) = 5% per query, averaged
        # over k ≥ 10 independent queries: ≤ 1.6%; 5 SE = 8%
        assert lap == pytest.approx(lap_exact, rel=0.08)
        # table: near-normal sums, 3.2% per query, queries share their noise cells: 5 SE = 16%
        assert table == pytest.approx(table_exact, rel=0.16)
    tables = [row[3] for row in rows]
    assert max(tables) / min(tables) < 1.2 and rows[-1][1] / rows[0][1] > 1000
    slope = number_after(nb.printed("16742ac1"), "G^")
    assert 0.4 <= slope <= 0.65


def test_gaussian_beats_laplace_beyond_the_crossover(nb):
    nb.states(
        "cadeae28",
        "Gaussian wins once $k > \\ln(1.25/\\delta)$; the analytic calibration of Balle & Wang (2018) needs less noise "
        "and wins earlier",
    )
    text = nb.printed("03f83d01")
    classic, analytic = (
        number_after(text, "(classic) beats Laplace beyond k ="),
        number_after(text, "(analytic) beats Laplace beyond k ="),
    )
    assert classic == number_after(text, "ln(1.25/δ) =") and analytic < classic


def test_randomized_response_and_laplace_cross_near_root_n(nb):
    nb.states(
        "280f0963", "measured, at 0.4 to 0.6 times $\\sqrt n$, moving by a factor between 3 and 4.5 per tenfold $n$"
    )
    rows = [(number_after(line, "n ="), number_after(line, "|Q| ≈")) for line in nb.printed_lines("d0facf26")]
    for n, crossing in rows:
        assert 0.4 <= crossing / np.sqrt(n) <= 0.6
    for (n0, c0), (n1, c1) in pairwise(rows):
        assert n1 == 10 * n0 and 3 <= c1 / c0 <= 4.5


def test_the_attack(nb):
    nb.states(
        "c13a0001",
        "Answers within $E = 0.1\\sqrt n$ give away every bit; at $E = \\sqrt n$ the attack still recovers 78% of "
        "them; the 1-DP answers leave it at guessing",
    )
    nb.states(
        "c13a0010", "✗ [LP/LS]; measured: every bit at $E = 0.1\\sqrt n$", "the attack measured: 78% at $E = \\sqrt n$"
    )
    lines = nb.printed_lines("9b6d577c")
    recovered = {number_after(line, "E ="): number_after(line, "√n:") for line in lines if line.startswith("E =")}
    assert recovered[0.1] == 1.0 and round(100 * recovered[1.0]) == 78
    dp = number_after(lines[-2], "):")
    assert abs(dp - 0.5) < 0.06  # 200 bits × 10 trials: SE ≈ 0.5/√2000 = 0.011; 5 SE
    nb.states("2e1eda35", "(about 0.73 at $\\varepsilon = 1$, $\\delta = 0$)")
    guess = number_after(lines[-1], "at most")
    assert round(guess, 2) == 0.73 and guess == pytest.approx(bounds.dp_bit_guess_bound(epsilon=1.0), abs=5e-4)


def test_gaussian_at_root_n_queries_beats_one_over_root_n(nb):
    nb.states(
        "c13a0001",
        "at $k = \\sqrt n$ that is $\\tilde O(n^{-3/4})$, and its ratio to $1/\\sqrt n$ falls like $n^{-1/4}$ up to "
        "logarithms",
    )
    nb.states("c13a0003", "The ratio falls below 1 from $n = 10^5$ on; its measured slope, about $-0.2$")
    lines = nb.printed_lines("c13a0002")
    rows = [numbers(line) for line in lines[1:-1]]
    ratios = {int(row[0]): row[4] for row in rows}
    assert all(int(row[1]) == round(np.sqrt(row[0])) for row in rows)
    assert list(ratios.values()) == sorted(ratios.values(), reverse=True)
    assert [n for n, r in ratios.items() if r < 1] == [n for n in ratios if n >= 10**5]
    # the ratio is σ₁·n^(−1/4)·E max|N(0,1)| over √n draws: slope −1/4 plus ½·d ln ln √n / d ln n ≈ +0.04
    slope = number_after(lines[-1], "n^")
    assert round(slope, 1) == -0.2


def test_noisy_table_answers_every_type_query_below_one_over_root_n(nb):
    nb.states(
        "c13a0003",
        "a little above $G/(2\\varepsilon n)$, on average $(G/2 + \\sqrt{G/\\pi})/(\\varepsilon n)$: $O(1/n)$ for any "
        "number of queries",
    )
    nb.states(
        "ccbfc210",
        "At $n = 1000$ the table is still above $1/\\sqrt n$; from $n = 10^4$ on it is below (2.7 times at $n = 10^4$, "
        "8.6 times at $10^5$)",
    )
    G = 64
    for line in nb.printed_lines("c13a0004"):
        n = number_after(line, "n =")
        mean, p95, root = (
            number_after(line, "mean"),
            number_after(line, "95th percentile"),
            number_after(line, "1/√n ="),
        )
        expected = bounds.noisy_table_all_queries_mean_error(num_types=G, epsilon=1.0, n=n)
        assert number_after(line, "(εn) =") == pytest.approx(expected, rel=5e-3)
        # SE of a mean of 500 runs, the sd estimated as (p95 − mean)/1.645: allow 5 SE, plus the printed rounding
        assert abs(mean - expected) <= 5 * (p95 - mean) / 1.645 / np.sqrt(500) + 0.005 * mean
        if n == 1000:
            assert mean > root
        else:
            assert round(root / mean, 1) == {10**4: 2.7, 10**5: 8.6}[n]


def test_all_subsets_formula_against_the_package():
    # the [T] formula recomputed: 4000 runs at n = 10⁴; 5 SE of the sample mean
    worst = qr.histogram_all_subsets_max_error(qr.make_population(10_000, 64, rng=1), epsilon=1.0, rng=2, trials=4000)
    expected = bounds.noisy_table_all_queries_mean_error(num_types=64, epsilon=1.0, n=10_000)
    assert abs(worst.mean() - expected) <= 5 * worst.std(ddof=1) / np.sqrt(worst.size)


def test_randomized_response_needs_its_square_root_log(nb):
    nb.states("c13a0011", 'the lecture\'s "O(1/√n) by randomized response" drops this $\\sqrt{\\log}$ factor')
    scaled = [
        bounds.rr_max_error_bound(n=n, num_queries=n, beta=0.05, epsilon=1.0) * np.sqrt(n)
        for n in (10**3, 10**5, 10**7)
    ]
    assert scaled == sorted(scaled) and scaled[-1] / scaled[0] > 1.2  # not O(1/√n) at k = n


def test_summary_repeats_only_what_the_sections_measured(nb):
    # each phrase is backed by the test named beside it
    nb.states(
        "548dfc2b",
        "splitting the budget over unrelated bits costs a factor $|Q|$",  # budget split
        "wins beyond $k \\approx \\ln(1.25/\\delta)$ queries (earlier with the analytic calibration)",  # crossover
        "the Gaussian mechanism, $\\tilde O(n^{-3/4})$ at $k = \\sqrt n$",  # Gaussian at √n
        "64 types: $O(1/n)$ for every query",
    )  # all 2^64 queries
