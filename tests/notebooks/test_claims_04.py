"""Notebook 04's prose against its own printed numbers.

Every number or comparison a markdown cell of notebook 04 states about the notebook's results
is asserted here against the output stored right under it (``make nbtest`` guarantees the
stored outputs are what a fresh run prints, so this reads them instead of recomputing: fast).
A sentence the numbers contradict fails here. The cell ids name the code cell whose output
backs the claim; the quoted words are the claim.
"""

import re

import nbformat
import numpy as np
import pytest
from scipy import stats

from dpcourse import svt
from dpcourse.mechanisms import advanced_composition_epsilon
from dpcourse.widgets import above_threshold as widgets_at
from tests.notebooks.core_layout import check_core_layout
from tests.notebooks.notebook_claims import StoredNotebook

NOTEBOOK = "notebooks/04_above_threshold_proof.ipynb"
FLOAT = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


@pytest.fixture(scope="module")
def out():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    texts = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            parts = []
            for o in cell.get("outputs", []):
                if o.output_type == "stream":
                    parts.append(o.get("text", ""))
                elif "text/plain" in o.get("data", {}) and "<Figure" not in o["data"]["text/plain"]:
                    parts.append(o["data"]["text/plain"] + "\n")  # a Table keeps its numbers as plain text
            texts[cell.id] = "".join(parts)
    return texts


@pytest.fixture(scope="module")
def prose():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    return {cell.id: " ".join(cell.source.split()) for cell in nb.cells if cell.cell_type == "markdown"}


def numbers(text, after):
    """The numbers on the line that contains ``after``, following it."""
    line = next(line for line in text.splitlines() if after in line)
    return [float(x) for x in re.findall(FLOAT, line.split(after, 1)[1])]


def test_exact_pmf_section(out):
    text = out["a1b77e71"]
    # "computed here to machine precision" (summary) and the 99% intervals
    assert numbers(text, "sum of exact probabilities:")[0] == pytest.approx(1.0, abs=1e-12)
    inside, total = numbers(text, "inside the 99% interval for")[:2]
    assert inside == total
    # "The run almost always stops at the anomaly (index 9)"
    assert numbers(text, "⊥⁹⊤")[0] > 0.85


def test_privacy_loss_claims(out):
    # "Random pairs stay well inside the budget"
    assert numbers(out["f58db06e"], "largest loss / ε over 100 random pairs:")[0] < 0.8
    # "the loss approaches ε, never passes it"
    rows = [numbers(line, "loss/ε =") for line in out["a93498d3"].splitlines() if "loss/ε =" in line]
    for ratios in rows:
        assert max(ratios) <= 1.0 and ratios[-1] > 0.999
        assert np.all(np.diff(ratios) >= 0)
    # the figure's note: the three ε lie within the printed spread of each other
    spread = numbers(out["a93498d3"], "largest difference between the three ε at one m:")[0]
    # the rows are printed to 4 decimals, so their spread can differ from the exact one by up to 1e-4
    assert len(rows) == 3 and abs(spread - np.ptp(np.array(rows), axis=0).max()) <= 1.5e-4 and spread < 0.02
    # "Both factors reach e^{ε/2} exactly"
    text = out["1688314f"]
    assert numbers(text, "max p(z−Δ)/p(z) =")[0] == numbers(text, "max p(z−Δ)/p(z) =")[-1]
    assert numbers(text, "max ratio =")[0] == numbers(text, "max ratio =")[-1]


def test_what_breaks(out, prose):
    text = out["861bb82e"]
    published = numbers(text, "AboveThreshold as published")
    halved = numbers(text, "query noise halved, Lap(2Δ/ε)")[-3:]
    no_threshold = numbers(text, "no threshold noise ")[:3]
    assert max(published) <= 1.0
    # "the total becomes e^{3ε/2}": above ε, never above 3ε/2
    assert halved[-1] > 1.0 and max(halved) <= 1.5 + 1e-3
    # "Without threshold noise the loss keeps growing with m"
    assert np.all(np.diff(no_threshold) > 0) and no_threshold[-1] > 1.0


def test_without_threshold_noise_each_bottom_is_protected_but_nothing_caps_the_sum(out, prose):
    # The old text called each ⊥ "a fresh, unprotected comparison". It is protected: its own Lap(4Δ/ε) noise changes
    # its factor by ln(F(T)/F(T − Δ)) ≤ ε/4 on the adversarial pair (T = 0.5, Δ = 1, ε = 1), and the loss grows by
    # exactly that per extra ⊥: no budget caps the sum. An unprotected ⊥ (no query noise) would change by ∞.
    assert "unprotected comparison" not in prose["1c3f9be3"]
    assert "no budget caps their sum" in prose["1c3f9be3"]
    line = next(line for line in out["861bb82e"].splitlines() if "each extra ⊥ adds" in line)
    slope, printed_factor = numbers(line, "adds")[0], numbers(line, "= ")[0]
    noise = stats.laplace(scale=4.0)
    factor = np.log(noise.cdf(0.5) / noise.cdf(-0.5))
    assert printed_factor == pytest.approx(factor, abs=1e-4) and factor <= 0.25
    assert slope == pytest.approx(factor, abs=1e-4)
    losses = [
        svt.max_privacy_loss(*svt.adversarial_pair(m), threshold=0.5, epsilon=1.0, threshold_noise=None).max_loss
        for m in (8, 32)
    ]
    assert (losses[1] - losses[0]) / 24 == pytest.approx(factor, rel=1e-6)


def test_the_hard_pair_is_called_the_notebooks_own(prose):
    # The lectures (Lecture 3's SVT part) have no adversarial family, hard case or example of neighbours.
    assert "The lecture's adversarial family" not in prose["f1b30af3"]
    assert "This notebook's own adversarial family" in prose["f1b30af3"]
    for module in (svt.adversarial_pair, widgets_at.neighbouring_answers):
        assert "lecture's hard" not in module.__doc__ and "is the lecture's" not in module.__doc__


def test_above_threshold_accuracy_is_two_to_three_times_pessimistic(out):
    ratios = [numbers(line, "ratio")[0] for line in out["c98d8955"].splitlines() if "ratio" in line]
    assert len(ratios) == 7 and all(2.0 <= r <= 3.0 for r in ratios)


def test_sparse_vector_and_numeric_sparse_accuracy(out):
    text = out["h13-sv-accuracy"]
    sv = numbers(text, "SparseVector: measured α =")
    ns = numbers(text, "NumericSparse: measured α =")
    # "Both bounds hold": bound / measured > 1 (the last two numbers of each line)
    assert min(sv[-2:]) > 1 and min(ns[-2:]) > 1
    # "SparseVector's measured α grows like ln k; NumericSparse's barely moves at first"
    assert np.all(np.diff(sv[:-2]) > 0)
    assert ns[-3] > ns[0] and ns[1] / ns[0] < 1.1
    # "NumericSparse … needs the larger α, by a factor that shrinks as k grows"
    factor = numbers(text, "NumericSparse / SparseVector, measured:")
    assert min(factor) > 1 and np.all(np.diff(factor) < 0)
    # "their noise is only 9/8 of SparseVector's" (the comparisons' calibration)

    assert svt.numeric_sparse_scales(epsilon=1.0, c=4)[0] / svt.sparse_vector_scales(epsilon=1.0, c=4)[
        0
    ] == pytest.approx(9 / 8)


def test_sparse_vector_with_delta(out, prose):
    # "equal at c = 8 ln(1/δ), about 110 for δ = 10⁻⁶"
    assert "about 110 for $\\delta = 10^{-6}$" in prose["at-delta-claim-md"]
    check = out["at-delta-check"]
    (below_pure, below_approx), (above_pure, above_approx) = (
        numbers(line, "δ = 0:")[::2] for line in check.splitlines() if line.startswith("c =")
    )
    assert below_pure < below_approx and above_pure > above_approx  # the scales cross between 110 and 111
    assert 110 < numbers(check, "8 ln(1/δ) =")[0] < 111
    rows = [line.split() for line in out["h13-sv-delta"].splitlines() if line[:1].isdigit()]
    c, a0, b0, a1, b1, ratio = np.array([[float(x) for x in row] for row in rows]).T
    # "every measured α stays below its bound"
    assert np.all(a0 < b0) and np.all(a1 < b1)
    # "about ten times worse than δ = 0 for a single discovery"
    assert c[0] == 1 and 8 <= ratio[0] <= 12
    # "better once c passes 8 ln(1/δ)"
    crossover = 8 * np.log(1e6)
    assert np.all(ratio[c > crossover] < 1) and np.all(ratio[c < crossover] > 1)
    # the panel's default state draws the same comparison
    summary = out["at-delta-summary"]
    assert numbers(summary, "crossover 8 ln(1/δ):")[0] == pytest.approx(crossover, abs=0.05)
    assert numbers(summary, "more accurate:")[0] == 256


def test_corollary_charges_are_not_the_cost(out, prose):
    # "At ε = 1 the runs compose to about 0.51ε whatever c" and "Corollary 3.21 charges … the whole ε"
    composed = [
        numbers(line, "compose to ε =")[0] for line in out["at-charges-check"].splitlines() if "compose" in line
    ]
    assert len(composed) == 3 and np.allclose(composed, 0.51, atol=0.01)
    assert "refused:" in out["at-charges-check"]
    # "passes ε only from about ε = 5 at δ = 0.1 and ε = 19 at δ = 10⁻⁶ (later for larger c)": large ε alone suffices,
    # whatever δ (the section's claim once read "only for large ε with large δ")
    assert (
        "Only for large $\\varepsilon$ does the second term push the total past $\\varepsilon$, whatever $\\delta$ "
        "(from about $\\varepsilon = 5$ at $\\delta = 0.1$ and $\\varepsilon = 19$ at $\\delta = 10^{-6}$, below)"
        in prose["at-charges-md"]
    )
    crossing = {
        (line.split(",")[0], int(numbers(line, "c =")[0])): numbers(line, "from ε ≈")[0]
        for line in out["at-charges-fig"].splitlines()
    }
    assert 5 <= crossing[("δ = 0.1", 1)] < 6 and 19 <= crossing[("δ = 1e-06", 1)] < 20
    for d in ("δ = 0.1", "δ = 1e-06"):
        assert crossing[(d, 1)] < crossing[(d, 512)]
    # NumericSparse (δ > 0): Corollary 3.21 charges the comparisons ε₁ and the values ε₂/2 (sum ε); Theorem 3.20
    # puts each at about half its charge. The old docstring said "the values cost about ε₂/2, the comparisons ε₁".
    doc = " ".join(svt.numeric_sparse_scales.__doc__.split())
    assert "values cost about" not in doc and "conservative charges, not what the parts cost" in doc
    eps, c, delta = 1.0, 4, 1e-6
    share = svt.numeric_sparse_share(delta)
    eps1, eps2 = (1 - share) * eps, 2 * share * eps
    threshold_scale, _, value_scale = svt.numeric_sparse_scales(epsilon=eps, c=c, delta=delta)
    slope = np.sqrt(2 * c * np.log(2 / delta))  # Corollary 3.21: ε₀ = charge/(2√(2c ln(1/δ′))) with δ′ = δ/2
    assert 2 / threshold_scale * 2 * slope == pytest.approx(eps1) and 1 / value_scale * 2 * slope == pytest.approx(
        eps2 / 2
    )
    assert eps1 + eps2 / 2 == pytest.approx(eps)
    comparisons = advanced_composition_epsilon(epsilon0=2 / threshold_scale, k=c, delta=delta / 2)
    values = advanced_composition_epsilon(epsilon0=1 / value_scale, k=c, delta=delta / 2)
    assert 0.45 < comparisons / eps1 < 0.55 and 0.45 < values / (eps2 / 2) < 0.55


def test_numeric_sparse_values_with_delta(out):
    text = out["h13-ns-delta"]
    measured, theorem, level = (
        numbers(text, "measured α =")[0],
        numbers(text, "Theorem 3.28's α =")[0],
        numbers(text, "σ(ε₂)·ln(2c/β) =")[0],
    )
    # "The measured α is above the theorem's … the larger of the two levels … holds"
    assert theorem < measured < level
    assert level == pytest.approx(
        svt.numeric_sparse_accuracy_bound(num_queries=300, c=4, beta=0.05, epsilon=1.0, delta=1e-6), abs=0.5
    )
    # "ε₁ = √512/(√512 + 1)·ε and ε₂ = 2ε/(√512 + 1)" (section 6)
    eps1, eps2 = numbers(text, "split: ε₁ =")[0], numbers(text, "ε₂ =")[0]
    assert eps1 == pytest.approx(np.sqrt(512) / (np.sqrt(512) + 1), abs=1e-4)
    assert eps2 == pytest.approx(2 / (np.sqrt(512) + 1), abs=1e-4)


def test_panel_stays_within_epsilon(out):
    # "the privacy loss of each outcome, which stays within ±ε whatever you choose"
    assert numbers(out["ca923fb0"], "loss / epsilon:")[0] <= 1.0


def test_a_core_lab_with_each_exercise_in_the_section_it_tests_then_going_further():
    # issue 39: twelve sections came before the first exercise ("implement AboveThreshold" sat 40 cells below the
    # algorithm); the δ > 0 and Corollary 3.21 material goes further
    nb = StoredNotebook("04_above_threshold_proof.ipynb")
    check_core_layout(
        nb,
        {
            "implement": 1,
            "small-pmf": 2,
            "large-loss": 3,
            "free-bottoms": 4,
            "top-budget": 4,
            "sv-scales": 5,
            "ns-scales": 5,
        },
    )
    nb.states("fe4a698c", "The core, six sections with six exercises and one written answer, takes about 90 minutes")
    cells = nb.notebook.cells
    hand_in = next(i for i, cell in enumerate(cells) if "hand-in" in cell.metadata.get("tags", []))
    core = " ".join(cell.source for cell in cells[1:hand_in])  # the opening cell names what goes further
    for further in ("Corollary 3.21", "\\sqrt{512}", "Theorem 3.20", "delta_panel ="):
        assert further not in core, further
    # the algorithm is stated in Section 1, right above Exercise 1
    algorithm = next(i for i, cell in enumerate(cells) if "> **AboveThreshold**" in cell.source)
    implement = next(
        i for i, cell in enumerate(cells) if cell.metadata.get("dpcourse", {}).get("exercise") == "implement"
    )
    assert cells[algorithm].source.startswith("## 1 · ") and implement - algorithm <= 3


def test_the_written_exercise_follows_the_proof_in_the_marking_format():
    # issue 42's format: a prompt, then a Markdown cell tagged `written` holding the model answer, its metadata the
    # exercise id, the points and 3–5 rubric items; the proof it asks about is the one Section 4 checks
    nb = StoredNotebook("04_above_threshold_proof.ipynb")
    cells = nb.notebook.cells
    (index,) = [i for i, cell in enumerate(cells) if "written" in cell.metadata.get("tags", [])]
    answer, prompt = cells[index], cells[index - 1]
    assert answer.cell_type == prompt.cell_type == "markdown"
    written = answer.metadata["dpcourse"]["written"]
    assert written["exercise"] == "free-bottoms" and written["points"] == 4
    rubric = written["rubric"]
    assert 3 <= len(rubric) <= 5 and len({item["id"] for item in rubric}) == len(rubric)
    assert all(set(item) == {"id", "text", "points"} and item["text"] for item in rubric)
    assert sum(item["points"] for item in rubric if item["points"] > 0) == written["points"]
    assert any(item["points"] < 0 for item in rubric)
    assert prompt.source.startswith("### Written exercise") and "4 points" in prompt.source
    # the model answer argues the lecture's steps: the shift u = z + Δ, the ⊥ factors only grow, the fictitious query
    text = " ".join(answer.source.split())
    for step in ("u = z + \\Delta", "q_i(D') - \\Delta \\le q_i(D)", "\\tilde q = q_{k+1} + \\Delta", "2\\Delta"):
        assert step in text, step
