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

from dpcourse import bounds

NOTEBOOK = "notebooks/04_above_threshold_proof.ipynb"
FLOAT = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


@pytest.fixture(scope="module")
def out():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    texts = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            texts[cell.id] = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")
    return texts


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
    assert numbers(out["f58db06e"], "largest loss / ε over 300 random pairs:")[0] < 0.8
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


def test_what_breaks(out):
    text = out["861bb82e"]
    published = numbers(text, "AboveThreshold as published")
    halved = numbers(text, "query noise halved, Lap(2Δ/ε)")[-3:]
    no_threshold = numbers(text, "no threshold noise")
    assert max(published) <= 1.0
    # "the total becomes e^{3ε/2}": above ε, never above 3ε/2
    assert halved[-1] > 1.0 and max(halved) <= 1.5 + 1e-3
    # "Without threshold noise the loss keeps growing with m"
    assert np.all(np.diff(no_threshold) > 0) and no_threshold[-1] > 1.0


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
    from dpcourse import svt

    assert svt.numeric_sparse_scales(epsilon=1.0, c=4)[0] / svt.sparse_vector_scales(epsilon=1.0, c=4)[
        0
    ] == pytest.approx(9 / 8)


def test_sparse_vector_with_delta(out):
    rows = [line for line in out["h13-sv-delta"].splitlines() if line.startswith("c =")]
    c = np.array([numbers(r, "c =")[0] for r in rows])
    a0, b0 = np.array([numbers(r, "δ = 0:")[:2] for r in rows]).T
    a1, b1 = np.array([numbers(r, "δ = 1e-06:")[:2] for r in rows]).T
    ratio = np.array([numbers(r, "ratio")[0] for r in rows])
    composed = np.array([numbers(r, "compose to ε =")[0] for r in rows])
    # "every measured α stays below its bound"
    assert np.all(a0 < b0) and np.all(a1 < b1)
    # "about ten times worse than δ = 0 for a single discovery"
    assert c[0] == 1 and 8 <= ratio[0] <= 12
    # "better once c passes 8 ln(1/δ)" (about 110)
    crossover = 8 * np.log(1e6)
    assert 100 < crossover < 120
    assert np.all(ratio[c > crossover] < 1) and np.all(ratio[c < crossover] > 1)
    # "at ε = 1 it holds (the c runs compose to about 0.51ε)"
    assert np.all(composed <= 1.0) and np.allclose(composed, 0.51, atol=0.01)
    # "and where it fails … the function refuses"
    assert "refused:" in out["h13-sv-delta"]


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
        bounds.numeric_sparse_accuracy_bound(num_queries=300, c=4, beta=0.05, epsilon=1.0, delta=1e-6), abs=0.5
    )
    # "ε₁ = √512/(√512 + 1)·ε and ε₂ = 2ε/(√512 + 1)" (section 6)
    eps1, eps2 = numbers(text, "split: ε₁ =")[0], numbers(text, "ε₂ =")[0]
    assert eps1 == pytest.approx(np.sqrt(512) / (np.sqrt(512) + 1), abs=1e-4)
    assert eps2 == pytest.approx(2 / (np.sqrt(512) + 1), abs=1e-4)


def test_panel_stays_within_epsilon(out):
    # "the privacy loss of each outcome, which stays within ±ε whatever you choose"
    assert numbers(out["ca923fb0"], "loss / epsilon:")[0] <= 1.0
