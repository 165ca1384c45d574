"""Each numeric exercise accepts the precision it states, and what its ✓ prints (issue 39, item 5): 02 sample-size
wants the smallest whole n exactly (int() truncation misses the bound), gaussian-sigma, allocation-gain and
numeric-budget 3 significant digits."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpcourse.checks import rr_vs_laplace, svt_variants
from tests.checks.cases_rr_vs_laplace import SIGMA
from tests.checks.cases_svt_variants import THRESHOLD_EPSILON


def verdict(exercise, *answers):
    return exercise.verdict(exercise.evidence(*answers))


def test_sample_size_refuses_the_truncated_roots_that_miss_the_bound():
    sizes = rr_vs_laplace._sample_sizes()
    laplace, rr = int(np.ceil(sizes["laplace"])), int(np.ceil(sizes["rr"]))
    assert (laplace, rr) == (15202, 7768)
    assert verdict(rr_vs_laplace.sample_size, laplace, rr).passed
    for answers, what in (((15201, rr), "n for Laplace"), ((laplace, 7767), "n for randomized response")):
        wrong = verdict(rr_vs_laplace.sample_size, *answers)
        assert wrong.status == "failed" and wrong.message.startswith(what), wrong
        assert "one person short" in wrong.message and wrong.mistake == "the root rounded down (int() truncates)"
    root = verdict(rr_vs_laplace.sample_size, float(sizes["laplace"]), rr)
    assert root.status == "failed" and "smallest whole n" in root.message and "round" in root.hint


@pytest.mark.parametrize(
    ("exercise", "right", "rounded", "too_coarse"),
    [
        (rr_vs_laplace.narrow_gaussian_sigma, SIGMA, 0.00485, 0.00482),
        (svt_variants.allocation_gain, None, 2.589, 2.57),
        (svt_variants.numeric_budget, THRESHOLD_EPSILON, 0.0869, 0.0866),
    ],
)
def test_three_significant_digits_pass_and_a_wrong_answer_is_told_the_precision(exercise, right, rounded, too_coarse):
    right = (
        right
        if right is not None
        else svt_variants._difference_variance(svt_variants.svt_standard_spec(0.5, 8, 1.0, ratio=1))
        / svt_variants._difference_variance(svt_variants.svt_standard_spec(0.5, 8, 1.0))
    )
    assert abs(rounded - right) < 1e-3 * abs(right) * 10  # a rounding of the right value, to 3 or 4 digits
    assert verdict(exercise, float(f"{right:.3g}")).passed
    assert verdict(exercise, rounded).passed, exercise.exercise
    wrong = verdict(exercise, too_coarse)
    assert wrong.status == "failed" and "to 3 significant digits" in wrong.message, wrong


@pytest.mark.parametrize("exercise", [svt_variants.allocation_gain, svt_variants.numeric_budget])
def test_the_value_a_pass_prints_passes(exercise):
    right = {"allocation-gain": 2.5894126100339094, "numeric-budget": THRESHOLD_EPSILON}[exercise.exercise]
    shown = verdict(exercise, right).message
    printed = float(re.search(r"\d+\.\d+", shown).group())  # the first number the ✓ prints is the answer
    assert printed != right and verdict(exercise, printed).passed, shown


# exercise → (the number its ✓ prints for the answer, read from the message; the answers with that number in place)
PRINTED = {
    "sensitivities": (r"Δ₂ = √s/n = ([\d.]+)", lambda x: (0.005, x)),
    "small-error": (r"^([\d.]+) =", lambda x: (x,)),
    "prefix-variance": (r"^([\d.]+) =", lambda x: (x,)),
    "counterexample-loss": (r"^([\d.]+),", lambda x: (x,)),
    "allocation-gain": (r"has ([\d.]+)×", lambda x: (x,)),
    "numeric-budget": (r"ε₁ = ([\d.]+)", lambda x: (x,)),
    "gaussian-sigma": (r"σ = ([\d.]+)", lambda x: (x,)),
    "icu-epsilon": (r"ε = ([\d.]+)", lambda x: (x,)),
    "choose-alpha": (r"α = ([\d.]+)", lambda x: (x,)),
    "em-epsilon": (r"/loss = ([\d.]+)", lambda x: (x,)),
    "update-cap": (r"α² = ([\d.]+)", lambda x: (x,)),
}


@pytest.mark.parametrize("exercise_id", sorted(PRINTED))
def test_every_number_a_pass_prints_for_the_answer_passes_too(exercise_id):
    from tests.checks.test_checks import CASES

    check, right, _ = CASES[exercise_id]
    pattern, answers = PRINTED[exercise_id]
    printed = float(re.search(pattern, check.verdict(check.evidence(*right)).message).group(1))
    assert verdict(check, *answers(printed)).passed, (exercise_id, printed)


def test_a_wrong_number_is_told_the_precision_the_check_accepts():
    from dpcourse.checks import laplace, pmw

    assert "(the check accepts a relative error of 0.002)" in verdict(laplace.icu_epsilon, 1.0).message
    assert "(the check accepts a relative error of 0.001)" in verdict(pmw.em_epsilon, 1.0).message
    assert verdict(laplace.max_queries, 1).message.endswith("which is not right")  # a whole number: exact
