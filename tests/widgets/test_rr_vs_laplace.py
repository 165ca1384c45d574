import pytest

from dpcourse.widgets import reconstruction_panel, release_comparison_panel


@pytest.fixture(scope="module")
def comparison():
    return release_comparison_panel(num_types=16, max_queries=100, trials=20, render=False)


def test_comparison_panel_shows_every_method(comparison):
    assert {key.split(":")[0] for key in comparison.numbers} == {
        "randomized_response",
        "laplace",
        "laplace_histogram",
        "gaussian",
    }


def test_more_privacy_means_more_error(comparison):
    comparison.set(epsilon=1.0)
    before = dict(comparison.numbers)
    comparison.set(epsilon=0.2)
    for method in ("laplace", "laplace_histogram", "gaussian", "randomized_response"):
        key = f"{method}: max error at |Q| = 100"
        assert comparison.numbers[key] > before[key]
        assert comparison.numbers[f"{method}: bound"] > before[f"{method}: bound"]


def test_methods_can_be_hidden(comparison):
    comparison.set(methods=("laplace",))
    assert all(key.startswith("laplace:") for key in comparison.numbers)
    assert len(comparison.figure.axes[0].lines) > 0
    comparison.set(methods=("randomized_response", "laplace", "laplace_histogram", "gaussian"))


def test_reconstruction_panel_reacts_to_noise():
    panel = reconstruction_panel(n=60, trials=3, render=False)
    panel.set(noise=0.02)
    assert panel.numbers["fraction recovered at current E"] >= 0.95
    panel.set(noise=10.0)
    assert panel.numbers["fraction recovered at current E"] < 0.8
    panel.set(queries_per_person=2.0)
    assert panel.numbers["m"] == 120
