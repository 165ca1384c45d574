import numpy as np
import pytest

from dpcourse.checks import CheckFailed
from dpcourse.checks import laplace as check


def test_right_answers_pass(capsys):
    check.tail_level(lambda k, beta, s, e: np.log(k / beta) * s / e)
    check.sample_size(200 * np.log(200 / 0.05) / (0.01 * 0.5), num_queries=200, alpha=0.01, beta=0.05, epsilon=0.5)
    check.icu_sensitivity(10, days=10, hospitals=3)
    assert capsys.readouterr().out.count("✓") == 3


@pytest.mark.parametrize(
    "call, exercise",
    [
        (lambda: check.tail_level(lambda k, beta, s, e: np.log(1 / beta) * s / e), "tail-level"),
        (lambda: check.tail_level(lambda k, beta, s, e: np.log(k / beta) * e / s), "tail-level"),
        (lambda: check.tail_level(42), "tail-level"),
        (lambda: check.sample_size(1000, num_queries=200, alpha=0.01, beta=0.05, epsilon=0.5), "sample-size"),
        (lambda: check.sample_size(None, num_queries=200, alpha=0.01, beta=0.05, epsilon=0.5), "sample-size"),
        (lambda: check.icu_sensitivity(1), "icu-sensitivity"),
        (lambda: check.icu_sensitivity(30, days=10, hospitals=3), "icu-sensitivity"),
    ],
)
def test_wrong_answers_fail_with_the_exercise_named(call, exercise):
    with pytest.raises(CheckFailed, match=rf"^\[{exercise}\]") as info:
        call()
    assert isinstance(info.value, AssertionError)


def test_unfinished_stub_gets_a_clear_message():
    def stub(*args):
        raise NotImplementedError

    with pytest.raises(CheckFailed, match="still raises NotImplementedError"):
        check.tail_level(stub)


def test_icu_workload_sensitivity_is_the_number_of_days():
    for days in (1, 4, 9):
        assert check.icu_occupancy_workload(2, days).l1_sensitivity == days
