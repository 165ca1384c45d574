import math

import numpy as np
import pytest

from dpcourse import _validation as v


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, -math.inf])
def test_epsilon_rejects_non_positive_nan_and_inf(bad):
    with pytest.raises(ValueError, match=r"epsilon must be a finite number > 0"):
        v.check_epsilon(bad)


def test_epsilon_inf_allowed_only_on_request():
    assert v.check_epsilon(math.inf, allow_inf=True) == math.inf


@pytest.mark.parametrize("bad", ["1", None, [1.0], True])
def test_real_parameters_reject_non_numbers_with_type_error(bad):
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        v.check_epsilon(bad)


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, math.nan])
def test_probability_must_be_in_open_unit_interval(bad):
    with pytest.raises(ValueError, match=r"delta must be a number in the open interval \(0, 1\)"):
        v.check_probability(bad, "delta")


def test_integer_range_and_type():
    assert v.check_integer(np.int64(3), "k", minimum=1) == 3
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, inf\]; got 0"):
        v.check_integer(0, "k", minimum=1)
    with pytest.raises(TypeError, match="k must be an integer"):
        v.check_integer(2.0, "k", minimum=1)


def test_array_shape_and_finiteness():
    with pytest.raises(ValueError, match=r"x must have shape \(any, 3\); got \(2, 2\)"):
        v.check_array(np.zeros((2, 2)), "x", shape=(None, 3))
    with pytest.raises(ValueError, match="x must be a 1-dimensional array"):
        v.check_array(np.zeros((2, 2)), "x", ndim=1)
    with pytest.raises(ValueError, match="only finite numbers"):
        v.check_array([1.0, np.nan], "x")
    with pytest.raises(TypeError, match="x must be an array of numbers"):
        v.check_array(["a", "b"], "x")


def test_binary_rejects_other_values_and_accepts_booleans():
    assert v.check_binary([True, False, 1]).tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="bits must contain only 0 and 1; found 2"):
        v.check_binary([0, 1, 2])


def test_unit_interval_array():
    with pytest.raises(ValueError, match=r"q must have every entry in \[0, 1\]"):
        v.check_unit_interval_array([0.2, 1.2], "q")


def test_choice():
    with pytest.raises(ValueError, match="calibration must be one of 'a', 'b'; got 'c'"):
        v.check_choice("c", "calibration", ("a", "b"))


def test_as_generator_is_reproducible_and_strict():
    assert v.as_generator(5).random() == np.random.default_rng(5).random()
    g = np.random.default_rng(1)
    assert v.as_generator(g) is g
    with pytest.raises(TypeError, match="rng must be None, a seed"):
        v.as_generator("seed")
    with pytest.raises(ValueError, match="rng must be a seed >= 0"):
        v.as_generator(-3)


def test_trials_and_sample_shape():
    assert v.sample_shape(None, (4,)) == (4,)
    assert v.sample_shape(3, (4,)) == (3, 4)
    with pytest.raises(ValueError, match="trials must be an integer in"):
        v.check_trials(0)
