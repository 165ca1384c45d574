import numpy as np
import pytest

from dpcourse.audit import exact_variant_loss
from dpcourse.checks import CheckFailed
from dpcourse.checks import svt_variants as check
from dpcourse.svt_variants import svt_standard_spec
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
    assert any(line.get_label().startswith("infinite") for line in panel.figure.axes[0].lines)


def test_checks(capsys):
    check.spot_the_flaw({"alg3": "output", "alg4": "query noise", "alg5": "query noise", "alg6": "query noise"})
    check.counterexample_loss(exact_variant_loss("alg4", 8, epsilon=1.0, c=2)[0])
    spec = svt_standard_spec(0.5, 8, 1.0)
    check.allocation(1 / spec.threshold_scale, 16 / spec.query_scale)
    assert capsys.readouterr().out.count("✓") == 3
    with pytest.raises(CheckFailed, match=r"^\[spot-the-flaw\]"):
        check.spot_the_flaw({"alg3": "query noise"})
    with pytest.raises(CheckFailed, match=r"^\[counterexample-loss\]"):
        check.counterexample_loss(1.0)
    with pytest.raises(CheckFailed, match=r"^\[allocation\]"):
        check.allocation(0.25, 0.25)
