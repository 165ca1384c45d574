import numpy as np
import pytest
from matplotlib.figure import Figure

from dpcourse import svt
from dpcourse.widgets.above_threshold_studies import (
    accuracy_study,
    adversarial_losses,
    anomaly_search,
    composed_epsilon,
    cut_noise_losses,
    delta_accuracy_table,
    outcome_distribution,
    random_pair_losses,
    sparse_accuracy_study,
)


def test_outcome_distribution_is_exact_and_its_intervals_hold_it():
    answers = [0.0, 2.0, 5.0]
    pmf = outcome_distribution(answers, threshold=3, epsilon=1.0, trials=20_000, rng=4)
    assert pmf.exact == pytest.approx(svt.above_threshold_pmf(answers, threshold=3, epsilon=1.0))
    assert pmf.counts.sum() == 20_000 and np.all((pmf.low <= pmf.exact) & (pmf.exact <= pmf.high))
    lines = pmf.report().splitlines()
    assert len(lines) == 1 + 4 + 1 and lines[1].split()[0] == "⊤" and lines[4].split()[0] == "⊥³"
    assert lines[-1].endswith("for 4 of 4 outcomes")
    fig = pmf.figure()
    assert isinstance(fig, Figure) and fig.axes[0].get_xticklabels()[-1].get_text() == "all ⊥"
    with pytest.raises(ValueError, match="trials"):
        outcome_distribution(answers, threshold=3, epsilon=1.0, trials=0, rng=4)


def test_random_pairs_never_pass_epsilon_and_follow_the_seed():
    fractions = random_pair_losses(12, rng=5)
    assert fractions.shape == (12,) and np.all((fractions > 0) & (fractions <= 1 + 1e-9))
    np.testing.assert_array_equal(random_pair_losses(12, rng=5), fractions)
    with pytest.raises(ValueError, match="count"):
        random_pair_losses(0, rng=5)


def test_the_adversarial_pair_approaches_epsilon_whatever_epsilon():
    losses = adversarial_losses(num_queries=[1, 4, 64], epsilons=[0.5, 2.0])
    for ratio in losses.ratios.values():
        assert np.all(np.diff(ratio) > 0) and ratio[-1] == pytest.approx(1.0, abs=1e-4) and ratio.max() <= 1 + 1e-9
    assert losses.spread < 0.02
    report = losses.report().splitlines()
    assert report[0].startswith("ε = 0.5: loss/ε = ") and report[-1].startswith("largest difference")
    assert "the three ε lie within" in losses.figure().axes[0].texts[0].get_text()


def test_cutting_either_noise_passes_epsilon_and_each_bottom_adds_its_factor():
    table, line = cut_noise_losses(num_queries=[2, 8])
    published, halved, no_threshold = (row[1:] for row in table.rows)
    assert max(published) <= 1.0 and halved[-1] > 1.0 and no_threshold[1] > no_threshold[0]
    added, factor = (float(part.split()[0].rstrip(";")) for part in (line.split("adds ")[1], line.split("= ")[1]))
    assert added == pytest.approx(factor, abs=1e-4) and factor <= 0.25


def test_anomaly_search_finds_clear_anomalies():
    series = np.full(20, 10.0)
    series[[3, 12]] = 200.0
    text = anomaly_search(series, [12, 3], threshold=100, epsilon=5.0, trials=400, rng=0).splitlines()
    assert text[0] == "trials that found exactly the 2 anomalies: 1.000"
    assert text[1].startswith("released values: mean |error| = ")


def test_accuracy_studies_stay_below_their_theorems():
    single = accuracy_study([1, 30], beta=0.05, epsilon=1.0, trials=2000, rng=1)
    for line in single.report().splitlines():
        assert 2.0 <= float(line.rsplit("ratio ", 1)[1]) <= 3.2
    assert single.figure().axes[0].get_legend().get_texts()[0].get_text() == "measured α (0.95-quantile of 2000 trials)"
    both = sparse_accuracy_study([8, 64], c=2, beta=0.1, epsilon=1.0, trials=1000, rng=2)
    assert all(np.all(both.bound[name] > both.measured[name]) for name in both.measured)
    assert both.report().splitlines()[-1].startswith("NumericSparse / SparseVector, measured: ")
    assert both.figure().axes[0].get_title() == "c = 2 discoveries, ε = 1, β = 0.1"


def test_delta_table_and_composed_epsilon():
    table = delta_accuracy_table(256, [1, 256], beta=0.05, epsilon=1.0, delta=1e-6, trials=300, rng=3)
    (one, many) = table.rows
    assert one[5] > 1 > many[5]  # δ > 0 loses for one discovery, wins past c = 8 ln(1/δ) ≈ 110
    composed = composed_epsilon([0.1, 1.0, 50.0], deltas=[1e-6], discoveries=[1])
    ratio = composed.ratios[(1e-6, 1)]
    assert ratio[1] == pytest.approx(svt.sparse_vector_composed_epsilon(epsilon=1.0, c=1, delta=1e-6))
    assert composed.report().endswith("above 1 from ε ≈ 50")
    assert composed.figure().axes[0].get_ylabel() == "Theorem 3.20's ε / ε"
