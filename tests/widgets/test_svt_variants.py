import numpy as np
import pytest

from dpcourse.widgets import variant_loss_panel


@pytest.fixture(scope="module")
def panel():
    return variant_loss_panel(render=False)


def test_panel_shows_alg4_reaching_its_true_guarantee(panel):
    panel.set(variant="alg4", epsilon=1.0, c=2, max_queries=40)
    assert panel.numbers["loss at largest m"] == pytest.approx(3.25, rel=1e-3)
    assert panel.numbers["loss exceeds the claim"]


def test_private_variants_stay_below_the_claim(panel):
    for variant in ("alg1", "alg2", "svt_s"):
        panel.set(variant=variant)
        assert not panel.numbers["loss exceeds the claim"]


def test_alg5_is_drawn_as_infinite(panel):
    panel.set(variant="alg5")
    assert panel.numbers["loss at largest m"] == np.inf
    assert any(
        line.get_label().startswith("infinite") and len(line.get_xdata()) > 0 and line.get_visible()
        for line in panel.figure.axes[0].lines
    )
