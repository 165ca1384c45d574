"""Notebook 06's figures and studies: each draws what its notebook cell says it measures."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from dpcourse import mechanisms, pmw
from dpcourse.widgets import pmw_figures as figures


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def line_labelled(ax, label):
    return next(line for line in ax.get_lines() if line.get_label() == label)


def test_hedge_run_draws_the_regret_curve_and_theorem_1_5():
    losses = np.random.default_rng(3).uniform(0, 1, size=(200, 5))
    run = pmw.hedge(losses, eta=0.1)
    figures.show_hedge_run(run, highlight=2, stride=1)
    ax_r, ax_w = plt.gcf().axes
    np.testing.assert_allclose(line_labelled(ax_r, "Hedge regret (measured)").get_ydata(), run.regret_curve)
    t = np.arange(1, 201)
    np.testing.assert_allclose(line_labelled(ax_r, "ln N/η + ηt (Theorem 1.5)").get_ydata(), np.log(5) / 0.1 + 0.1 * t)
    assert ax_w.get_title() == "The weight moves to expert 2"
    with pytest.raises(ValueError, match="highlight"):
        figures.show_hedge_run(run, highlight=5)
    with pytest.raises(ValueError, match="stride"):
        figures.show_hedge_run(run, highlight=0, stride=0)


def test_mw_updates_draws_each_adversarys_count_and_the_potential_at_the_first_alpha():
    x = pmw.product_histogram(10_000, 4, rng=1)
    queries = np.vstack([pmw.conjunction_workload(30, 4, width=2, rng=2).matrix(), np.eye(16)])
    alphas = [0.1, 0.2]
    runs = {
        a: [pmw.mw_query_release(x, queries, alpha=al, adversary=a) for al in alphas] for a in ("largest", "smallest")
    }
    figures.show_mw_updates(runs, alphas, domain_size=16)
    ax_u, ax_k = plt.gcf().axes
    for adversary in runs:
        counts = line_labelled(ax_u, f"{adversary} gap first (measured)").get_ydata()
        assert list(counts) == [r.updates for r in runs[adversary]]
        potential = line_labelled(ax_k, f"KL(p ‖ p̃ₜ), {adversary} gap first").get_ydata()
        np.testing.assert_allclose(potential, runs[adversary][0].potential)
    assert ax_k.get_title() == "The potential falls (α = 0.1)"
    with pytest.raises(ValueError, match="one run per alpha"):
        figures.show_mw_updates({"largest": runs["largest"][:1]}, alphas, domain_size=16)


@pytest.fixture(scope="module")
def small_pmw_run():
    x = pmw.product_histogram(10**7, 6, rng=3)
    p = x / x.sum()
    stream = pmw.conjunction_workload(300, 6, width=2, rng=4)
    curator = pmw.PrivateMW(x, epsilon=1.0, alpha=0.2, max_queries=300, rng=5)
    answers, potential = pmw.run_stream_with_potential(curator, stream, p)
    return curator, stream.answers(p), answers, potential


def test_private_mw_run_splits_free_and_paid_answers(small_pmw_run):
    curator, truth, answers, potential = small_pmw_run
    np.testing.assert_array_equal(curator.history.answers, answers)  # the figure reads the history
    figures.show_private_mw_run(curator.history, truth, potential, alpha=0.2)
    ax_a, ax_e, ax_p, ax_n = plt.gcf().axes
    paid = line_labelled(ax_a, "paid (Laplace) + update")
    assert len(paid.get_xdata()) == curator.updates > 0
    np.testing.assert_allclose(line_labelled(ax_e, "|error|").get_ydata(), np.abs(answers - truth))
    assert line_labelled(ax_e, "11α/8 (Theorem 4.3)").get_ydata()[0] == pytest.approx(11 * 0.2 / 8)
    assert ax_n.get_lines()[0].get_ydata()[-1] == curator.updates
    with pytest.raises(ValueError, match="one entry per answer"):
        figures.show_private_mw_run(curator.history, truth[:-1], potential, alpha=0.2)


def test_update_cap_study_runs_each_n_and_tables_it():
    probs = pmw.product_histogram(10**9, 4, rng=13) / 10**9
    stream = pmw.conjunction_workload(300, 4, width=2, rng=14)
    study = figures.update_cap_by_n(probs, stream, [1e2, 1e6], alpha=0.4, rng=15)
    again = pmw.PrivateMW(probs * 1e2, epsilon=1.0, alpha=0.4, max_queries=300, rng=15)
    pmw.run_stream(again, stream)
    assert study.updates[0] == again.updates and study.answered[0] == again.answered
    assert study.max_updates == int(16 * np.log(16) / 0.4**2)
    least = pmw.pmw_notes_alpha(n=1e6, epsilon=1.0, domain_size=16, num_queries=300, beta=0.05)
    assert study.least_alpha[1] == pytest.approx(least)
    table = study.table()
    assert table.header[-1] == "Theorem 4.3's least α" and len(table.rows) == 2
    assert table.caption == "α = 0.4, |X| = 16"
    study.show()
    assert plt.gcf().axes[0].get_title() == "The cap binds only when n is too small for α"
    with pytest.raises(ValueError, match="alpha"):
        figures.update_cap_by_n(probs, stream, [1e2], alpha=0.0)


def test_em_utility_measures_both_mechanisms_and_the_exact_tail():
    prices = np.arange(1, 21)
    valuations = np.random.default_rng(6).integers(1, 21, size=50)
    revenue = mechanisms.pricing_revenue(valuations, prices)
    em = figures.em_utility(revenue, consumers=50, epsilon=1.0, sensitivity=20.0, draws=2000, rng=(7, 8))
    assert em.em_loss.shape == em.rnm_loss.shape == (2000,)
    assert np.all(em.em_loss >= 0) and np.all(em.rnm_loss >= 0)
    # the measured tail is near the exact one, and the theorem's tail is above the exact one
    measured = np.mean(em.em_loss >= 50)  # the exact tail is Pr[loss ≥ g]
    assert abs(measured - em.exact_tail[50]) < 0.03
    assert np.all(em.theorem_tail >= em.exact_tail - 1e-12)
    assert em.exact_tail[int(em.exact_quantile(0.9))] <= 0.1
    em.show()
    assert plt.gcf().axes[0].get_title() == "Pricing: 50 consumers, ε = 1"
    with pytest.raises(ValueError, match="sensitivity"):
        figures.em_utility(revenue, consumers=50, epsilon=1.0, sensitivity=0.0)


def test_mw_updates_table_lists_each_adversarys_updates_beside_the_bound():
    x = pmw.product_histogram(10_000, 4, rng=1)
    queries = np.vstack([pmw.conjunction_workload(30, 4, width=2, rng=2).matrix(), np.eye(16)])
    runs = {
        a: [pmw.mw_query_release(x, queries, alpha=al, adversary=a) for al in (0.1, 0.2)]
        for a in ("largest", "smallest")
    }
    table = figures.mw_updates_table(runs, [0.1, 0.2], domain_size=16, num_queries=46)
    assert table.caption == "46 queries, |X| = 16"
    assert [row[1] for row in table.rows] == [r.updates for r in runs["largest"]]
    assert [row[2] for row in table.rows] == [r.updates for r in runs["smallest"]]
    assert table.rows[0][3] == pytest.approx(4 * np.log(16) / 0.01)
    with pytest.raises(ValueError, match="one run per alpha"):
        figures.mw_updates_table(runs, [0.1], domain_size=16, num_queries=46)
