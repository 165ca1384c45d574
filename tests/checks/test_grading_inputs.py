"""Function exercises at grading time: the student's function is called on inputs drawn from the grader's seed.

The right answer passes on every seed tried; each named mistake, written as a student would write it, fails on
every seed (and on the documented examples) and is named; a table of the documented examples (or, for
AboveThreshold, a sampler of the documented example's outcome probabilities) passes nothing at grading; a failure
says on which input, in short form; partial credit is the share of cases right; and the judge's work stays bounded.
"""

from __future__ import annotations

import json
import re
import sys
import time

import numpy as np
import pytest

from dpcourse.checks import _above_threshold_outcomes as at_outcomes
from dpcourse.checks import above_threshold as at
from dpcourse.checks import all_exercises
from dpcourse.svt import above_threshold_pmf
from tests.checks import judged
from tests.checks.test_checks import AUDITED, CASES

FUNCTION_EXERCISES = sorted(e for e, ex in all_exercises().items() if ex.cases is not None)
SEEDS = (0, 1, 2, 3, 2**62 + 12345, 987654321987)


def _function_mistakes(exercise):
    """The named mistakes of a function exercise (for audit-your-own, those of the mechanism, with a right audit)."""
    check, right, mistakes = CASES[exercise]
    return [(answer, phrase) for answer, phrase in mistakes if answer[1:] == right[1:] and answer[0] is not right[0]]


def test_every_function_exercise_draws_its_inputs_when_grading():
    assert {"audit-your-own", "debias-counts", "exact-tail-level", "implement", "mw-step"} <= set(FUNCTION_EXERCISES)
    for exercise in FUNCTION_EXERCISES:
        check = all_exercises()[exercise]
        documented = repr(check.cases(None))
        drawn = [repr(check.cases(np.random.default_rng(seed))) for seed in SEEDS[:3]]
        assert all(cases != documented for cases in drawn) and drawn[0] != drawn[1]
        assert repr(check.cases(np.random.default_rng(7))) == repr(check.cases(np.random.default_rng(7)))


@pytest.mark.parametrize("exercise", FUNCTION_EXERCISES)
def test_the_right_answer_passes_on_every_grading_seed_with_full_credit(exercise):
    check, right, _ = CASES[exercise]
    for seed in SEEDS:
        evidence = json.loads(json.dumps(judged.evidence(check, *right, seed=seed)))
        verdict = check.verdict(evidence, seed=seed)
        assert verdict.passed and verdict.score == 1.0, (seed, verdict)


@pytest.mark.parametrize(
    "exercise, index", [(e, i) for e in FUNCTION_EXERCISES for i in range(len(_function_mistakes(e)))]
)
def test_each_named_mistake_fails_on_every_grading_seed_and_is_named(exercise, index):
    check, _, _ = CASES[exercise]
    answer, phrase = _function_mistakes(exercise)[index]
    for seed in SEEDS:
        verdict = judged.verdict(check, *answer, seed=seed)
        assert verdict.status == "failed", (seed, verdict)
        assert phrase in verdict.message + " " + verdict.hint, (seed, verdict)
        assert verdict.mistake and verdict.score < 1.0, (seed, verdict)


@pytest.mark.parametrize("exercise", FUNCTION_EXERCISES)
def test_function_exercises_separate_every_named_mistake_on_their_examples_and_on_drawn_inputs(exercise):
    """Each named mistake fails on the documented examples and on the inputs of every grading seed tried,
    and the right answer passes on all of them: no mistake agrees with the answer on every input."""
    check, right, mistakes = CASES[exercise]
    assert len(check.cases(None)) >= (1 if exercise in ("implement", "audit-your-own") else 3)  # statistical: fewer
    for seed in (None, *range(6)):
        assert judged.verdict(check, *right, seed=seed).passed, seed
        for answer, phrase in mistakes:
            verdict = judged.verdict(check, *answer, seed=seed)
            assert verdict.status == "failed", (exercise, phrase, seed)


def _documented_table(exercise):
    """A student's function that looks its answers up in a table of the documented examples' right results."""
    check, right, _ = CASES[exercise]
    function = right[0]
    if exercise == "implement":  # a sampler of each documented example's exact outcome probabilities
        table = {
            (tuple(answers), threshold, epsilon): above_threshold_pmf(answers, threshold=threshold, epsilon=epsilon)
            for answers, threshold, epsilon, _, _ in check.cases(None)
        }

        def lookup(answers, threshold, epsilon, rng):
            pmf = table[(tuple(float(a) for a in answers), threshold, epsilon)]
            k = int(np.searchsorted(np.cumsum(pmf), rng.random()))
            return None if k >= pmf.size - 1 else k

        return (lookup, *right[1:])
    if exercise == "audit-your-own":
        table = {
            (answers, trials, seed): function(np.array(answers), trials=trials, rng=seed)
            for answers, trials, seed in check.cases(None)
        }
        return (lambda answers, *, trials, rng: table[(tuple(answers.tolist()), trials, rng)], *right[1:])

    def key(args):
        return repr([np.asarray(a).tolist() for a in args])

    table = {key(case): function(*case) for case in check.cases(None)}
    return (lambda *args: table[key(args)],)


@pytest.mark.parametrize("exercise", FUNCTION_EXERCISES)
def test_a_table_of_the_documented_examples_passes_the_own_run_and_fails_every_grading_seed(exercise):
    check, _, _ = CASES[exercise]
    table = _documented_table(exercise)
    assert check.verdict(check.evidence(*table)).passed
    for seed in SEEDS:
        verdict = check.verdict(check.evidence(*table, seed=seed), seed=seed)
        assert verdict.status == "failed" and verdict.score == 0.0, (seed, verdict)
    # the judge regenerates the inputs from its seed: evidence gathered for another seed does not pass
    check_right = CASES[exercise][1]
    assert check.verdict(judged.evidence(check, *check_right, seed=1), seed=2).status == "failed"


DOCUMENTED_CDF = np.cumsum(above_threshold_pmf([0.0, 1.0, 2.0, 3.0], threshold=2.0, epsilon=1.0))


def _sampled_documented_pmf(answers, threshold, epsilon, rng):
    """No AboveThreshold at all: an outcome drawn from the documented example's exact probabilities."""
    k = int(np.searchsorted(DOCUMENTED_CDF, rng.random()))
    return None if k >= 4 else min(k, len(answers) - 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_implement_refuses_the_sampled_table_and_the_epsilon_slips_at_grading(seed):
    from .test_checks import at_epsilon_left_out, at_epsilon_multiplied

    for cheat in (_sampled_documented_pmf, at_epsilon_left_out, at_epsilon_multiplied):
        verdict = judged.verdict(at.implementation, cheat, seed=seed)
        assert verdict.status == "failed" and verdict.score <= 0.25, (cheat.__name__, verdict)


def test_implement_catches_the_epsilon_slips_in_a_students_own_run():
    from .test_checks import at_epsilon_left_out, at_epsilon_multiplied

    for slip, phrase in ((at_epsilon_left_out, "ε is left out"), (at_epsilon_multiplied, "multiplied by ε")):
        verdict = judged.verdict(at.implementation, slip)
        assert verdict.status == "failed" and phrase in verdict.message and verdict.score == 0.5


def test_implement_draws_inputs_where_every_two_distributions_are_told_apart():
    for seed in range(12):
        for case in at_outcomes.implementation_cases(np.random.default_rng(seed)):
            assert at_outcomes.separation(case) == 1.0, (seed, case)
            assert abs(np.log(case[2])) > np.log(2.4)  # ε far from 1, 1/2 and 2


_INPUT_FORMS = {
    "exact-tail-level": r"with k=\d+, beta=[\d.e-]+, sensitivity=[\d.]+, epsilon=[\d.]+",
    "debias-counts": r"with report_counts=\[[\d, ]+\], epsilon=[\d.]+",
    "implement": r"with answers=\[[-\d., ]+\], threshold=[-\d.]+, epsilon=[\d.]+",
    "audit-your-own": r"with answers=\[[-\d., ]+\], trials=\d+, rng=\d+",
    "mw-step": r"with q·p̃ = [\d.]+, y = [-\d.]+, eta = [\d.]+",
    "workload-sensitivity": r"with W=\[\[[-\d.,\[\]]+\]\]",
}


def _long_numbers(text):
    """Numbers shown with more than 6 significant digits (a float's repr), other than whole numbers."""
    return [
        n for n in re.findall(r"\d+\.\d+(?:e-?\d+)?", text) if len(n.split("e")[0].replace(".", "").lstrip("0")) > 6
    ]


@pytest.mark.parametrize("exercise", FUNCTION_EXERCISES)
def test_a_failure_on_a_grading_input_names_the_input_in_short_form(exercise):
    check, _, _ = CASES[exercise]
    answers = [answer for answer, _ in _function_mistakes(exercise)]

    def raises(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    answers.append((raises, *CASES[exercise][1][1:]))
    for answer in answers:
        for seed in SEEDS[:3]:
            verdict = judged.verdict(check, *answer, seed=seed)
            assert re.search(_INPUT_FORMS[exercise], verdict.message), verdict.message
            assert not _long_numbers(verdict.message + verdict.hint), verdict
            assert len(verdict.message) <= 400 and len(verdict.hint) <= 400


def test_partial_credit_is_the_share_of_grading_cases_right():
    from .test_checks import mw_always_up

    check = CASES["mw-step"][0]
    for seed in SEEDS:
        cases = check.cases(np.random.default_rng(seed))
        below = sum(float(q @ p) < y for p, q, y, _ in cases)  # "always up" is right when q·p̃ < y
        verdict = check.verdict(check.evidence(mw_always_up, seed=seed), seed=seed)
        assert verdict.score == pytest.approx(below / len(cases)) and 0 < verdict.score < 1

    def right_but_k_equal_2(counts, epsilon):  # right for k > 2 only
        right = CASES["debias-counts"][1][0](counts, epsilon)
        return right if len(counts) > 2 else np.zeros(2)

    check = CASES["debias-counts"][0]
    verdict = check.verdict(check.evidence(right_but_k_equal_2, seed=5), seed=5)
    assert verdict.status == "failed" and verdict.score == pytest.approx(4 / 5)


def test_a_value_exercise_and_the_audit_are_all_or_nothing():
    from .test_checks import noisy_max_small_noise

    verdict = CASES["max-queries"][0].verdict({"value": 539})
    assert verdict.score == 0.0
    check = CASES["audit-your-own"][0]
    verdict = check.verdict(check.evidence(noisy_max_small_noise, AUDITED, seed=3), seed=3)
    assert verdict.status == "failed" and verdict.score == 0.0


def _forget_what_the_checks_remember():
    """Clear the memos of ``dpcourse.checks`` (e.g. AboveThreshold's outcome distributions per setting), so that
    a timing is that of a fresh kernel or judge process, not of one warmed by the tests before it."""
    for name, module in list(sys.modules.items()):
        if name.startswith("dpcourse.checks"):
            for item in list(vars(module).values()):
                if callable(getattr(item, "cache_clear", None)):
                    item.cache_clear()


@pytest.mark.parametrize("exercise", FUNCTION_EXERCISES)
def test_the_judges_work_is_bounded(exercise):
    """A student's own run feels instant and a grading judge takes well under 2 s (CPU time, so that a busy
    machine does not fail it)."""
    check, right, _ = CASES[exercise]
    _forget_what_the_checks_remember()
    started = time.process_time()
    check.verdict(check.evidence(*right))
    assert time.process_time() - started < 1.5
    evidence = check.evidence(*right, seed=11)
    _forget_what_the_checks_remember()  # the judge's process has not seen the probe's work
    started = time.process_time()
    assert check.verdict(evidence, seed=11).passed
    assert time.process_time() - started < 2.0


def test_what_the_implement_judge_remembers_changes_no_case_and_no_verdict():
    """AboveThreshold's outcome distributions are remembered per setting (read-only): a judge with its memos cold,
    as in a fresh process, and one with them warm draw the same cases and give the same verdict."""
    check, _, mistakes = CASES["implement"]
    evidence = judged.evidence(check, *mistakes[0][0], seed=3)
    _forget_what_the_checks_remember()
    cold = repr(check.cases(np.random.default_rng(3))), check.verdict(evidence, seed=3)
    warm = repr(check.cases(np.random.default_rng(3))), check.verdict(evidence, seed=3)
    assert cold == warm and cold[1].mistake
    answers, threshold, epsilon, _, _ = check.cases(np.random.default_rng(3))[0]
    pmf, _ = at_outcomes.distributions(answers, threshold, epsilon)[""]
    with pytest.raises(ValueError, match="read-only"):
        pmf[0] = 0.5


def test_a_verdicts_score_follows_its_status():
    from dpcourse.checks import Verdict

    assert Verdict("x", "passed").score == 1.0 and Verdict("x", "passed", score=0.2).score == 1.0
    assert Verdict("x", "not attempted", score=0.7).score == 0.0
    assert Verdict("x", "failed").score == 0.0 and Verdict("x", "failed", score=0.5).score == 0.5
