import numpy as np
import pytest

from dpcourse import svt
from dpcourse.widgets import above_threshold_panel
from dpcourse.widgets.above_threshold import neighbouring_answers, outcome_label


@pytest.fixture(scope="module")
def panel():
    return above_threshold_panel(render=False)


def test_panel_shows_the_adversarial_pair_by_default(panel):
    d, d_prime = svt.adversarial_pair(8)
    expected = svt.max_privacy_loss(d, d_prime, threshold=0.5, epsilon=1.0).max_loss
    assert panel.numbers["max |privacy loss|"] == pytest.approx(expected)


def test_more_queries_bring_the_loss_closer_to_epsilon(panel):
    panel.set(m=2)
    few = panel.numbers["loss / epsilon"]
    panel.set(m=30)
    many = panel.numbers["loss / epsilon"]
    assert few < many <= 1 + 1e-9
    bars = [patch.get_height() for patch in panel.figure.axes[0].patches]
    assert len(bars) == 2 * 31


def test_every_shape_and_shift_stays_within_epsilon(panel):
    for shape in ("staircase", "random", "at threshold"):
        for shift in ("+Δ on all", "−Δ on all", "random ±Δ"):
            panel.set(shape=shape, shift=shift)
            assert panel.numbers["loss / epsilon"] <= 1 + 1e-9


def test_neighbouring_answers_validate():
    d, d_prime = neighbouring_answers("adversarial", "+Δ early, −Δ last", m=3, sensitivity=2.0, threshold=0.0)
    assert d.tolist() == [0, 0, 2] and d_prime.tolist() == [2, 2, 0]
    with pytest.raises(ValueError, match="shape must be one of"):
        neighbouring_answers("zigzag", "+Δ on all", m=3, sensitivity=1, threshold=0)
    assert [outcome_label(k, 3) for k in range(4)] == ["⊤", "⊥⊤", "⊥²⊤", "⊥³"]


def test_sparse_delta_panel_moves_the_crossover_with_delta():
    from dpcourse.widgets.above_threshold import sparse_delta_panel

    panel = sparse_delta_panel(trials=200, render=False)
    assert panel.numbers["crossover 8 ln(1/δ)"] == pytest.approx(8 * np.log(1e6))
    small_delta = panel.numbers["measured α at c = 1, δ = 0 / δ > 0"]
    panel.set(delta=1e-2)
    assert panel.numbers["crossover 8 ln(1/δ)"] == pytest.approx(8 * np.log(100))
    assert panel.numbers["measured α at c = 1, δ = 0 / δ > 0"] != small_delta
    # the δ > 0 points are the δ = 0 draws rescaled by the ratio of the two calibrations' scales
    pure, approx = panel.figure.axes[0].lines[0].get_ydata(), panel.figure.axes[0].lines[2].get_ydata()
    ratio = svt.sparse_vector_scales(epsilon=1.0, c=1, delta=1e-2)[0] / svt.sparse_vector_scales(epsilon=1.0, c=1)[0]
    assert approx[0] / pure[0] == pytest.approx(ratio)
    # the bound line is Theorem 3.26's
    bound = panel.figure.axes[0].lines[3].get_ydata()[0]
    assert bound == pytest.approx(
        svt.sparse_vector_accuracy_bound(num_queries=512, c=1, beta=0.05, epsilon=1.0, delta=1e-2)
    )


@pytest.mark.parametrize(("c_values", "error"), [((1, 2.5), TypeError), ((), ValueError), ((0, 4), ValueError)])
def test_the_delta_panel_refuses_a_c_it_would_have_truncated(c_values, error):
    from dpcourse.widgets.above_threshold import sparse_delta_panel

    with pytest.raises(error, match="c_values"):
        sparse_delta_panel(c_values=c_values, render=False)
