import re

import numpy as np
import pytest
from matplotlib.figure import Figure

from dpcourse import audit, svt
from dpcourse.widgets import variant_loss_panel
from dpcourse.widgets.svt_variants import (
    draw_alg4_losses,
    draw_p_value_scans,
    draw_top_c_ncs,
    exact_against_simulation,
    verdict_table,
)


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


# --- the notebook's instruments (tables and figures behind its short cells) ---------------------------------------

B, T, N = -np.inf, np.inf, np.nan


def _axes():
    return Figure().subplots()


def test_exact_against_simulation_agrees_and_draws_each_variant_from_one_generator():
    q, patterns = [0.5, 1.5, 0.0], {"alg1": [B, T, B], "alg3": [B, (1.0, 4.0), B], "alg4": [T, T, N]}
    table = exact_against_simulation(q, patterns, threshold=1.0, epsilon=1.0, c=2, trials=20_000, rng=3)
    rows = [re.split(r"\s{2,}", line.strip()) for line in str(table).splitlines()[3:]]
    assert [row[0] for row in rows] == ["alg1", "alg3", "alg4"]
    assert rows[1][1] == "⊥ ∈[1.0, 4.0] ⊥" and rows[2][1] == "⊤ ⊤ ·"
    assert all(float(row[-1]) < 4 for row in rows)  # |z|: sampling noise only
    exact = svt.variant_pattern_probability("alg4", q, [T, T, N], threshold=1.0, epsilon=1.0, c=2)
    assert float(rows[2][-3]) == pytest.approx(exact, abs=1e-5)
    # the second variant's runs come after the first's, from the same generator
    rng = np.random.default_rng(3)
    svt.VARIANTS["alg1"].run(q, threshold=1.0, epsilon=1.0, c=2, trials=20_000, rng=rng)
    runs = svt.VARIANTS["alg3"].run(q, threshold=1.0, epsilon=1.0, c=2, trials=20_000, rng=rng)
    assert float(rows[1][-2]) == pytest.approx(audit.pattern_frequency(runs, patterns["alg3"]), abs=1e-5)
    assert "20,000 runs" in str(table).splitlines()[0]
    with pytest.raises(ValueError, match="trials"):
        exact_against_simulation(q, patterns, threshold=1.0, epsilon=1.0, c=2, trials=1, rng=3)


def test_alg4_losses_climb_to_lyus_bound_and_are_drawn_with_it():
    ax = _axes()
    last = draw_alg4_losses(ax, cs=(1, 2), epsilon=1.0)
    assert set(last) == {1, 2} and last[1][0] == 40 and last[2][0] == 41
    for c, (_, loss) in last.items():
        assert loss == pytest.approx((1 + 6 * c) / 4, abs=1e-3) and loss <= (1 + 6 * c) / 4 + 1e-9
    levels = sorted(line.get_ydata()[0] for line in ax.lines if line.get_linestyle() in (":", "--"))
    assert levels == pytest.approx([1.0, 1.75, 3.25])
    with pytest.raises(ValueError, match="cs"):
        draw_alg4_losses(_axes(), cs=(4,))


@pytest.fixture(scope="module")
def two_audits():
    pairs = audit.statdp_pairs()
    return {
        key: audit.audit(key, *pairs["half and half (m = 10)"], epsilon=0.5, threshold=1.0, trials=4000, rng=1)
        for key in ("alg4", "alg1")
    }


def test_verdict_table_says_what_each_audit_found(two_audits):
    table = str(verdict_table(two_audits, dict.fromkeys(two_audits, "half and half (m = 10)")))
    lines = table.splitlines()
    assert lines[0] == "Audits at a claimed ε = 0.5"
    for key, result in two_audits.items():
        row = next(line for line in lines if line.startswith(key))
        assert ("VIOLATES ε = 0.5" in row) == result.flagged and f"{result.epsilon_lower_bound:.3f}" in row
    assert "AuditResult(" not in table
    with pytest.raises(ValueError, match="results"):
        verdict_table({}, {})


def test_p_value_scans_are_each_audits_own_scan(two_audits):
    ax = _axes()
    grid = np.linspace(0.05, 1.5, 10)
    scans = draw_p_value_scans(ax, two_audits, grid, true_epsilon=("true ε", 0.875))
    for key, scan in scans.items():
        assert np.array_equal(scan.p_values, two_audits[key].scan(grid).p_values)
    labels = [line.get_label() for line in ax.lines]
    assert labels[:2] == ["alg4, claims ε = 0.5", "alg1, claims ε = 0.5"] and "true ε" in labels
    with pytest.raises(ValueError, match="results"):
        draw_p_value_scans(_axes(), {}, grid)


def test_top_c_ncs_draws_one_line_per_method():
    counts = np.array([90.0, 3, 70, 5, 60, 1, 2, 40])
    scores = svt.non_interactive_top_c(counts, 3, epsilons=[0.5, 1.0], raises=(0, 1, 3), trials=5, rng=0)
    ax = _axes()
    draw_top_c_ncs(ax, scores)
    assert [line.get_label() for line in ax.lines] == [
        "exponential mechanism (no threshold)",
        "SVT-ReTr, threshold + 0D",
        "SVT-ReTr, threshold + 1D",
        "SVT-ReTr, threshold + 3D",
    ]
    assert np.allclose(ax.lines[2].get_ydata(), scores.mean("SVT-ReTr + 1D", "NCS"))
