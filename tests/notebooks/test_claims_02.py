"""Notebook 02's prose against its printed numbers and the package (issue 13: prose cannot drift).

Each test quotes the sentences it backs (``nb.states``) and asserts what they say about the
notebook's own results, read from the stored outputs (nbval keeps them equal to what the code
prints). Tolerances for sampled numbers come from their sampling error, as each comment says.
"""

import re
from itertools import pairwise

import numpy as np
import pytest
from scipy import integrate

from dpcourse import linear_queries, mechanisms
from tests.notebooks.notebook_claims import StoredNotebook, number_after, numbers


@pytest.fixture(scope="module")
def nb():
    return StoredNotebook("02_rr_vs_laplace.ipynb")


def shown_table(nb, cell_id: str) -> tuple[str, list[list[float]]]:
    """The caption and the numeric rows of the ``dpcourse.tables.Table`` a code cell shows (its text/plain form)."""
    cell = nb.cells[cell_id]
    (text,) = [
        "".join(o["data"]["text/plain"]) for o in cell.get("outputs", []) if o.get("output_type") == "execute_result"
    ]
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if line and set(line) <= {"-", " "})
    return "\n".join(lines[: rule - 1]), [numbers(line) for line in lines[rule + 1 :] if line.strip()]


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
    nb.states("48a2cef1", "Checked on 1000 people, 5000 times")
    caption, rows = shown_table(nb, "6397c972")
    truth = number_after(caption, "true proportion")
    assert "5000 runs" in caption and len(rows) == 4
    for epsilon, measured, theory, mean in rows:
        assert theory == pytest.approx(mechanisms.rr_proportion_variance(n=1000, epsilon=epsilon), rel=1e-3)
        # a sample variance of 5000 near-normal estimates has relative SE √(2/4999) ≈ 2%: allow 5 SE
        assert measured == pytest.approx(theory, rel=0.1)
        assert abs(mean - truth) <= 5 * np.sqrt(theory / 5000) + 5e-4  # 5 SE, plus the printed rounding


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
    _, rows = shown_table(nb, "d53fa302")
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
        "280f0963",
        "Measured, they cross at about $0.5\\sqrt n$, and the crossing moves by a factor between 3 and 4.5 per "
        "tenfold $n$",
    )
    rows = [(number_after(line, "n ="), number_after(line, "|Q| ≈")) for line in nb.printed_lines("d0facf26")]
    for n, crossing in rows:
        assert 0.4 <= crossing / np.sqrt(n) <= 0.6
    for (n0, c0), (n1, c1) in pairwise(rows):
        assert n1 == 10 * n0 and 3 <= c1 / c0 <= 4.5


def test_the_attack(nb):
    nb.states(
        "c13a0001",
        "Answers within $E = 0.1\\sqrt n$ give away every bit; at $E = \\sqrt n$ the attack still recovers 77% of "
        "them; the 1-DP answers leave it at guessing",
    )
    lines = nb.printed_lines("9b6d577c")
    recovered = {number_after(line, "E ="): number_after(line, "√n:") for line in lines if line.startswith("E =")}
    assert recovered[0.1] == 1.0 and round(100 * recovered[1.0]) == 77
    dp = number_after(lines[-2], "):")
    assert abs(dp - 0.5) < 0.06  # 200 bits × 10 trials: SE ≈ 0.5/√2000 = 0.011; 5 SE
    nb.states("2e1eda35", "(about 0.73 at $\\varepsilon = 1$, $\\delta = 0$)")
    guess = number_after(lines[-1], "at most")
    assert round(guess, 2) == 0.73 and guess == pytest.approx(mechanisms.dp_bit_guess_bound(epsilon=1.0), abs=5e-4)
    # "Small here means a small constant times √n, not o(√n)": at E = 0.3√n and E = √n the attack beats what any 1-DP
    # release allows, so the lecture's table (§11) cannot mark c/√n with k = O(n) as reachable
    nb.states(
        "c13a0001",
        "Small here means a small constant times $\\sqrt n$, not $o(\\sqrt n)$: at $E = 0.3\\sqrt n$ and $E = \\sqrt n$ "
        "it recovers 0.996 and 0.773 of the bits, more than the 0.731 any 1-DP release allows",
    )
    assert (recovered[0.3], recovered[1.0], round(guess, 3)) == (0.996, 0.773, 0.731)
    assert min(recovered[0.3], recovered[1.0]) > guess


def test_the_lecture_table_agrees_with_the_attack(nb):
    # Going further §10's table (Markdown): with k = O(n) queries, a row is reachable (✓) only at an accuracy above
    # what §6's attack beats (a small constant times 1/√n, test_the_attack); randomized response reaches √(log n)/√n
    lines = [line for line in nb.cells["c13a0024"].source.splitlines() if line.startswith("|")]
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines[2:])}
    reachable_with_k_linear = [accuracy for accuracy, cells in rows.items() if cells[1].startswith("✓")]
    assert reachable_with_k_linear == ["$\\sqrt{\\log n}/\\sqrt n$", "$o(1)$ but $\\gg 1/\\sqrt n$", "$\\Theta(1)$"]
    assert rows["$c/\\sqrt n$, small constant $c$"][1] == "✗ LP: 0.773 of the bits at $c = 1$ (§6)"
    nb.states(
        "c13a0011",
        "§6's attack already beats what a 1-DP release allows at a small constant times $1/\\sqrt n$",
        "while randomized response reaches $O(\\sqrt{\\log n}/\\sqrt n)$",
    )


def test_gaussian_at_root_n_queries_beats_one_over_root_n(nb):
    nb.states(
        "c13a0020",
        "At $k = \\sqrt n$ that is $\\tilde O(n^{-3/4})$, and its ratio to $1/\\sqrt n$ falls like $n^{-1/4}$ up to "
        "logarithms",
        "Measured, 200 releases each, $\\varepsilon = 1$, $\\delta = 10^{-6}$, analytic calibration",
    )
    nb.states("c13a0003", "The ratio falls below 1 from $n = 10^5$ on; its measured slope, about $-0.2$")
    lines = nb.printed_lines("c13a0002")
    _, rows = shown_table(nb, "c13a0002")
    ratios = {int(row[0]): row[4] for row in rows}
    assert all(int(row[1]) == round(np.sqrt(row[0])) for row in rows)
    assert list(ratios.values()) == sorted(ratios.values(), reverse=True)
    assert [n for n, r in ratios.items() if r < 1] == [n for n in ratios if n >= 10**5]
    # the ratio is σ₁·n^(−1/4)·E max|N(0,1)| over √n draws: slope −1/4 plus ½·d ln ln √n / d ln n ≈ +0.04
    slope = number_after(lines[-1], "n^")
    assert round(slope, 1) == -0.2


def test_noisy_table_answers_every_type_query_below_one_over_root_n(nb):
    nb.states(
        "c13a0021",
        "\\mathbb E\\max_S|\\text{error}_S| \\approx \\frac{G/2 + \\sqrt{G/\\pi}}{\\varepsilon n},$$ a little above "
        "$G/(2\\varepsilon n)$: $O(1/n)$ for any number of queries",
        "Measured, 500 releases each, $\\varepsilon = 1$",
    )
    nb.states(
        "ccbfc210",
        "At $n = 1000$ the table is still above $1/\\sqrt n$; from $n = 10^4$ on it is below (2.8 times at $n = 10^4$, "
        "8.7 times at $10^5$)",
    )
    G = 64
    _, rows = shown_table(nb, "c13a0004")
    for n, mean, p95, approx, half, root, ratio in rows:
        expected = mechanisms.noisy_table_all_queries_mean_error(num_types=G, epsilon=1.0, n=n)
        assert approx == pytest.approx(expected, rel=5e-4) and half == pytest.approx(G / (2 * n), rel=5e-4)
        # SE of a mean of 500 runs, the sd estimated as (p95 − mean)/1.645: allow 5 SE, plus the printed rounding
        assert abs(mean - expected) <= 5 * (p95 - mean) / 1.645 / np.sqrt(500) + 5e-4 * mean
        assert ratio == pytest.approx(root / mean, rel=1e-3)
        if n == 1000:
            assert mean > root
        else:
            assert round(ratio, 1) == {10**4: 2.8, 10**5: 8.7}[n]


def _exact_mean_abs_laplace_sum(g: int) -> float:
    """E|Z₁ + … + Z_g| for i.i.d. Lap(1), from the characteristic function (1 + t²)^(−g): E|X| = (2/π)∫(1 − φ)/t²."""
    return 2 / np.pi * integrate.quad(lambda t: (1 - (1 + t * t) ** -g) / t**2, 0, np.inf, limit=200)[0]


def test_the_all_type_queries_formula_is_an_approximation_and_says_so(nb):
    # erratum: the notebook gave (G/2 + √(G/π))/(εn) as the mean; it is the normal approximation of E|Σ Z_g|
    nb.states(
        "c13a0021",
        "is about $2\\sqrt{G/\\pi}/\\varepsilon$ by the normal approximation of a sum of $G$ Laplace variables",
    )
    for g, (low, high) in {1: (0.05, 0.07), 64: (1e-4, 1e-3)}.items():
        exact = g / 2 + _exact_mean_abs_laplace_sum(g) / 2  # E max_S |error| at ε = 1, n = 1
        approx = mechanisms.noisy_table_all_queries_mean_error(num_types=g, epsilon=1.0)
        assert low < abs(approx / exact - 1) < high  # not exact, and close at the notebook's G = 64
    assert _exact_mean_abs_laplace_sum(1) == pytest.approx(1.0)  # E|Lap(1)| = 1: the integral is right


def test_all_subsets_formula_against_the_package():
    # the [T] formula recomputed: 4000 runs at n = 10⁴; 5 SE of the sample mean
    worst = linear_queries.histogram_all_subsets_max_error(
        linear_queries.make_population(10_000, 64, rng=1), epsilon=1.0, rng=2, trials=4000
    )
    expected = mechanisms.noisy_table_all_queries_mean_error(num_types=64, epsilon=1.0, n=10_000)
    assert abs(worst.mean() - expected) <= 5 * worst.std(ddof=1) / np.sqrt(worst.size)


def test_randomized_response_needs_its_square_root_log(nb):
    nb.states(
        "c13a0011",
        'the lecture\'s "$O(1/\\sqrt n)$ by randomized response" drops this $\\sqrt{\\log}$ factor, and $\\sqrt n$ times the '
        "bound keeps growing with $n$",
    )
    scaled = [
        mechanisms.rr_max_error_bound(n=n, num_queries=n, beta=0.05, epsilon=1.0) * np.sqrt(n)
        for n in (10**3, 10**5, 10**7)
    ]
    assert scaled == sorted(scaled) and scaled[-1] / scaled[0] > 1.2  # not O(1/√n) at k = n
    printed = [number_after(line, "bound at k = n:") for line in nb.printed_lines("c13a0025")]
    assert printed == pytest.approx(scaled, abs=5e-4)


def test_constant_error_on_all_subsets_has_a_witness_better_than_ignoring_the_data(nb):
    # erratum: the witness was the noisy table with a cell per person, error ≈ 1/(2ε) ≥ ½ for ε ≤ 1, which answering
    # |S|/2 without the data already promises; randomized response's raw reports are below ½ for every ε
    nb.states(
        "c13a0022",
        "every person sends their bit by randomized response, and each subset sum is answered by the sum of the "
        "reports, not debiased",
        "below $\\tfrac12$ for every $\\varepsilon > 0$, and within a factor 4 of the lower bound",
        "its error, about $1/(2\\varepsilon)$, is no better than ignoring the data for $\\varepsilon \\le 1$",
        "200 releases each",
    )
    caption, rows = shown_table(nb, "c13a0023")
    assert "n = 1000, every bit 1" in caption and "ignoring the data: 0.5" in caption
    assert any(row[0] <= 1 for row in rows) and any(row[0] > 1 for row in rows)
    for epsilon, lower, rr_measured, rr_formula, cell_measured in rows:
        assert lower == pytest.approx(mechanisms.all_subsets_error_lower_bound(epsilon=epsilon), rel=5e-4)
        assert rr_formula == pytest.approx(1 / (1 + np.exp(epsilon)), rel=5e-4)
        assert rr_formula < 0.5 and rr_formula <= 4 * lower * (1 + 1e-3)  # the witness, and the factor 4
        # mean of 200 releases of Bin(1000, q)/1000: SE = √(q(1 − q)/1000/200); 5 SE, plus the printed rounding
        assert abs(rr_measured - rr_formula) <= 5 * np.sqrt(rr_formula * (1 - rr_formula) / 2e5) + 5e-4 * rr_formula
        assert rr_measured < 0.5
        # the old witness: E max(Σ Z⁺, Σ Z⁻)/n ≥ E Σ Z⁺/n = 1/(2ε), at least ½ for ε ≤ 1
        if epsilon <= 1:
            assert 1 / (2 * epsilon) >= 0.5 and cell_measured >= 0.5
    # the lower bound itself: DN recovers 1 − 4α of the bits; DP allows at most (e^ε + δ)/(1 + e^ε)
    assert mechanisms.all_subsets_error_lower_bound(epsilon=1.0, delta=0.01) == pytest.approx(0.99 / (4 * (1 + np.e)))


def test_summary_repeats_only_what_the_sections_measured(nb):
    # each phrase is backed by the test named beside it
    nb.states(
        "548dfc2b",
        "splitting the budget over unrelated bits costs a factor $|Q|$",  # budget split
        "wins beyond $k \\approx \\ln(1.25/\\delta)$ queries (earlier with the analytic calibration)",  # crossover
        "a small constant times $\\sqrt n$ is already too accurate for $\\varepsilon = 1$ (§6)",  # test_the_attack
    )
    nb.states(  # the Going further part's summary
        "02gofur9",
        "the Gaussian mechanism, $\\tilde O(n^{-3/4})$ at $k = \\sqrt n$",  # Gaussian at √n
        "64 types: $O(1/n)$ for every query",  # all 2^64 queries
        "DP still reaches a constant error, $1/(1+e^\\varepsilon)$ with randomized response",
    )  # all 2^n subsets: test_constant_error_on_all_subsets_has_a_witness_better_than_ignoring_the_data


def test_the_core_is_a_lab_and_going_further_comes_after_the_hand_in(nb):
    # issue 39: the opening states the time; at most six sections before the hand-in, every exercise among them;
    # one optional part after it
    nb.states("02open00", "**Time:** about 90 minutes for §1–§6", "not needed for the hand-in")
    cells = nb.notebook.cells
    hand_in = next(i for i, cell in enumerate(cells) if "hand-in" in cell.metadata.get("tags", []))
    sections = [
        cell.source.splitlines()[0]
        for cell in cells[:hand_in]
        if cell.cell_type == "markdown" and re.match(r"## \d", cell.source)
    ]
    assert [int(re.match(r"## (\d)", s).group(1)) for s in sections] == [1, 2, 3, 4, 5, 6]
    exercises = [i for i, cell in enumerate(cells) if "exercise" in cell.metadata.get("dpcourse", {})]
    assert len(exercises) == 12 and max(exercises) < hand_in
    going_further = [i for i, cell in enumerate(cells) if cell.source.startswith("## Going further (optional)")]
    assert len(going_further) == 1 and going_further[0] > hand_in
