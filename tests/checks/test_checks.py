"""Every exercise's check: the right answer passes, each named mistake fails with its own hint,
an untouched stub is "not attempted", a raising or wrongly-signed function gets a clear message,
and what a student sees is one short block with no traceback and no checker source."""

from __future__ import annotations

import functools
import json
import re

import numpy as np
import pytest

from dpcourse import audit, linear_queries, mechanisms
from dpcourse.checks import CheckFailed, _core, all_exercises, laplace, pmw, rr_vs_laplace, svt_variants, trees
from dpcourse.checks import above_threshold as at
from dpcourse.pmw import mw_update, pmw_notes_alpha, pmw_update_count_bound
from dpcourse.svt import above_threshold_pmf, exact_variant_loss
from tests.checks import cases_above_threshold, cases_laplace, cases_pmw, cases_svt_variants, cases_trees, judged
from tests.checks import cases_rr_vs_laplace as cases_release

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def mw_right(p_tilde, q, y, eta):
    return mw_update(np.asarray(p_tilde), np.asarray(q), y, eta=eta)


def _mw_weights(p_tilde, q, direction, eta):
    return np.asarray(p_tilde) * np.exp(-eta * direction * np.asarray(q))


def mw_always_up(p_tilde, q, y, eta):
    weights = _mw_weights(p_tilde, q, -1.0, eta)
    return weights / weights.sum()


def mw_flipped(p_tilde, q, y, eta):
    weights = _mw_weights(p_tilde, q, -np.sign(np.asarray(q) @ np.asarray(p_tilde) - y), eta)
    return weights / weights.sum()


def mw_unnormalised(p_tilde, q, y, eta):
    return _mw_weights(p_tilde, q, np.sign(np.asarray(q) @ np.asarray(p_tilde) - y), eta)


def mw_signed_error(p_tilde, q, y, eta):
    weights = _mw_weights(p_tilde, q, np.asarray(q) @ np.asarray(p_tilde) - y, eta)
    return weights / weights.sum()


def mw_without_eta(p_tilde, q, y, eta):
    return mw_right(p_tilde, q, y, 1.0)


def exact_level(k, beta, sensitivity, epsilon):
    return mechanisms.laplace_max_error_quantile(k=k, beta=beta, sensitivity=sensitivity, epsilon=epsilon)


def k_rr(counts, epsilon):
    return mechanisms.k_rr_debias_counts(counts, epsilon=epsilon)


def at_reference(answers, threshold, epsilon, rng):
    noisy_threshold = threshold + rng.laplace(0.0, 2.0 / epsilon)
    for i, answer in enumerate(answers):
        if answer + rng.laplace(0.0, 4.0 / epsilon) >= noisy_threshold:
            return i
    return None


def at_same_scale(answers, threshold, epsilon, rng):
    noisy_threshold = threshold + rng.laplace(0.0, 2.0 / epsilon)
    for i, answer in enumerate(answers):
        if answer + rng.laplace(0.0, 2.0 / epsilon) >= noisy_threshold:
            return i
    return None


def at_swapped_scales(answers, threshold, epsilon, rng):
    noisy_threshold = threshold + rng.laplace(0.0, 4.0 / epsilon)  # the queries' scale on the threshold
    for i, answer in enumerate(answers):
        if answer + rng.laplace(0.0, 2.0 / epsilon) >= noisy_threshold:  # and the threshold's on the queries
            return i
    return None


def at_halved(answers, threshold, epsilon, rng):
    return at_reference(answers, threshold, 2 * epsilon, rng)


def at_doubled(answers, threshold, epsilon, rng):
    return at_reference(answers, threshold, epsilon / 2, rng)


def at_epsilon_left_out(answers, threshold, epsilon, rng):
    noisy_threshold = threshold + rng.laplace(0.0, 2.0)
    for i, answer in enumerate(answers):
        if answer + rng.laplace(0.0, 4.0) >= noisy_threshold:
            return i
    return None


def at_epsilon_multiplied(answers, threshold, epsilon, rng):
    noisy_threshold = threshold + rng.laplace(0.0, 2.0 * epsilon)
    for i, answer in enumerate(answers):
        if answer + rng.laplace(0.0, 4.0 * epsilon) >= noisy_threshold:
            return i
    return None


def at_fresh_threshold(answers, threshold, epsilon, rng):
    for i, answer in enumerate(answers):
        if answer + rng.laplace(0.0, 4.0 / epsilon) >= threshold + rng.laplace(0.0, 2.0 / epsilon):
            return i
    return None


def at_one_based(answers, threshold, epsilon, rng):
    k = at_reference(answers, threshold, epsilon, rng)
    return None if k is None else (k + 1 if k + 1 < len(answers) else None)


LAP, GAU = (
    mechanisms.laplace_variance(sensitivity=200 / 5000, epsilon=0.5),
    mechanisms.gaussian_sigma(l2_sensitivity=np.sqrt(200) / 5000, epsilon=0.5, delta=1e-6) ** 2,
)
SMALL = linear_queries.expected_error(
    linear_queries.all_range_workload(2), linear_queries.hierarchical_strategy(2), epsilon=1.0
)
PMF = above_threshold_pmf([0.0, 1.0], threshold=1.0, epsilon=1.0)
ALG4 = exact_variant_loss("alg4", 8, epsilon=1.0, c=2)[0]


def _difference_variance(epsilon_1, epsilon_2, c=8):  # Var(ν − ρ), ρ ~ Lap(1/ε₁), ν ~ Lap(2c/ε₂): written out here,
    return 2 / epsilon_1**2 + 2 * (2 * c / epsilon_2) ** 2  # independently of the package's svt_standard_spec


_LYU_1 = 0.5 / (1 + 16 ** (2 / 3))
GAIN = _difference_variance(0.25, 0.25) / _difference_variance(_LYU_1, 0.5 - _LYU_1)
ALPHA = pmw_notes_alpha(**pmw.ALPHA_EXERCISE)
CAP = pmw_update_count_bound(domain_size=2**12, alpha=0.1)


def noisy_max_value(answers, *, trials, rng):
    noise = np.random.default_rng(rng).laplace(0, 4.0, size=(trials, len(answers)))  # Lap(2/ε) at ε = 0.5
    return (np.asarray(answers) + noise).max(axis=1)


def noisy_max_index(answers, *, trials, rng):
    noise = np.random.default_rng(rng).laplace(0, 4.0, size=(trials, len(answers)))
    return (np.asarray(answers) + noise).argmax(axis=1)


def noisy_max_shared_noise(answers, *, trials, rng):
    noise = np.random.default_rng(rng).laplace(0, 4.0, size=trials)  # one draw per run, not per answer
    return np.max(answers) + noise


def noisy_max_epsilon_multiplied(answers, *, trials, rng):
    noise = np.random.default_rng(rng).laplace(0, 2 * 0.5, size=(trials, len(answers)))
    return (np.asarray(answers) + noise).max(axis=1)


def noisy_max_small_noise(answers, *, trials, rng):
    noise = np.random.default_rng(rng).laplace(0, 2.0, size=(trials, len(answers)))  # Lap(1/ε)
    return (np.asarray(answers) + noise).max(axis=1)


AUDITED = audit.audit(noisy_max_value, [1.0] * 5, [2.0] * 5, epsilon=0.5, trials=100_000, rng=3)
UNFLAGGED = audit.audit(noisy_max_value, [1.0] * 5, [2.0] * 5, epsilon=0.5, trials=400, rng=3)
FLAWS = {"alg3": "output", "alg4": "query noise", "alg5": "query noise", "alg6": "query noise"}

# exercise → (check, right answer (args), [(wrong answer (args), what the message must say)])
CASES = {
    "exact-tail-level": (
        laplace.exact_tail_level,
        (exact_level,),
        [
            ((lambda k, b, s, e: np.log(k / b) * s / e,), "union bound"),
            ((lambda k, b, s, e: np.log(1 / b) * s / e,), "coordinates are missing"),
            ((lambda k, b, s, e: exact_level(k, b, e, s),), "scale is inverted"),
        ],
    ),
    "max-queries": (
        laplace.max_queries,
        (538,),
        [((5000,), "dropped the logarithm"), ((1669,), "ln(1/β)"), ((539,), "off-by-one")],
    ),
    "icu-sensitivity": (
        laplace.icu_sensitivity,
        (10,),
        [((1,), "histogram"), ((30,), "one hospital"), ((9,), "off-by-one")],
    ),
    "debias-counts": (
        rr_vs_laplace.debias_counts,
        (k_rr,),
        [
            (
                (lambda c, e: (np.asarray(c) - np.sum(c) * (1 - np.exp(e) / (1 + np.exp(e)))) / np.tanh(e / 2),),
                "binary",
            ),
            ((lambda c, e: np.asarray(c) / ((np.exp(e) - 1) / (np.exp(e) + len(c) - 1)),), "by chance"),
            ((lambda c, e: k_rr(c, e) / np.sum(c),), "fractions"),
        ],
    ),
    "sensitivities": (
        rr_vs_laplace.sensitivities,
        (0.005, np.sqrt(5) / 1000),
        [
            ((np.sqrt(5) / 1000, 0.005), "swapped"),
            ((0.05, np.sqrt(50) / 1000), "at most s"),
            ((5, np.sqrt(5) / 1000), "normalised"),
            ((0.005, 0.005), "L1 sensitivity again"),
        ],
    ),
    "better-mechanism": (
        rr_vs_laplace.better_mechanism,
        ("gaussian", LAP, GAU),
        [
            (("gaussian", LAP / 2, GAU), "b²"),
            (("gaussian", LAP, np.sqrt(GAU)), "not σ²"),
            (
                ("gaussian", LAP, mechanisms.gaussian_sigma(l2_sensitivity=200 / 5000, epsilon=0.5, delta=1e-6) ** 2),
                "Δ₂",
            ),
            (("laplace", LAP, GAU), "you chose"),
        ],
    ),
    "strategy-sensitivity": (
        trees.strategy_sensitivities,
        (64, 4),
        [
            ((1, 4), "one prefix"),
            ((64, 7), "binary tree"),
            ((64, 3), "off-by-one"),
            ((64, 6), "replace-one"),
        ],
    ),
    "decomposition": (
        trees.decomposition,
        ([(0, 3), (2, 1), (2, 2), (0, 12)],),
        [
            (([(3, 0), (1, 2), (2, 2), (12, 0)],), "(index, level)"),
            (([(0, 3), (2, 1), (2, 2)],), "includes both ends"),
            (([(0, 3), (0, 4), (0, 5), (0, 6), (0, 7), (2, 2), (0, 12)],), "are enough"),
        ],
    ),
    "small-error": (
        trees.small_error,
        (SMALL,),
        [((SMALL / 2,), "2b²"), ((SMALL / 4,), "‖A‖₁ = 1"), ((3 * SMALL,), "total")],
    ),
    "implement": (
        at.implementation,
        (at_reference,),
        [
            ((at_halved,), "half as large"),
            ((at_one_based,), "1-based"),
            ((at_same_scale,), "threshold's scale"),
            ((at_doubled,), "twice as large"),
            ((at_epsilon_left_out,), "ε is left out"),
            ((at_epsilon_multiplied,), "multiplied by ε"),
            ((at_fresh_threshold,), "fresh noise for every query"),
            ((at_swapped_scales,), "scales are swapped"),
        ],
    ),
    "small-pmf": (
        at.small_pmf,
        (PMF,),
        [
            ((above_threshold_pmf([0.0, 1.0], threshold=1.0, epsilon=2.0),), "1/ε and 2/ε"),
            ((PMF[::-1],), "reverse"),
        ],
    ),
    "large-loss": (
        at.large_loss_pair,
        ([0.0] * 9 + [1.0], [1.0] * 9 + [0.0]),
        [
            (([0, 0], [0, 0]), "below 90%"),
            (([0, 0], [3, 0]), "not a neighbouring pair"),
            (([0] * 11, [1] * 11), "at most 10"),
        ],
    ),
    "spot-the-flaw": (
        svt_variants.spot_the_flaw,
        (FLAWS,),
        [
            (({**FLAWS, "alg3": "query noise"},), "alg3: 'query noise' is not the line"),
            (({**FLAWS, "alg4": "output"},), "alg4: 'output' is not the line"),
            (({"alg3": "wrong"},), "not one of"),
        ],
    ),
    "counterexample-loss": (
        svt_variants.counterexample_loss,
        (ALG4,),
        [
            ((np.exp(ALG4),), "not its logarithm"),
            ((-ALG4,), "sign is flipped"),
            ((ALG4 / np.log(10),), "base-10"),
        ],
    ),
    "allocation-gain": (
        svt_variants.allocation_gain,
        (GAIN,),
        [
            ((2.08,), "monotonic"),
            ((np.sqrt(GAIN),), "standard deviations"),
            ((1 / GAIN,), "upside down"),
        ],
    ),
    "audit-your-own": (
        svt_variants.audit_your_own,
        (noisy_max_value, AUDITED),
        [
            ((noisy_max_index, AUDITED), "index of the maximum"),
            ((noisy_max_small_noise, AUDITED), "Lap(1/ε)"),
            ((noisy_max_shared_noise, AUDITED), "shared by all the answers"),
            ((noisy_max_epsilon_multiplied, AUDITED), "ε multiplied"),
            ((noisy_max_value, UNFLAGGED), "does not flag"),
            ((noisy_max_value, 0.5), "expected the result of audit.audit"),
        ],
    ),
    "mw-step": (
        pmw.mw_step,
        (mw_right,),
        [
            ((mw_always_up,), "always gain weight"),
            ((mw_flipped,), "wrong way"),
            ((mw_unnormalised,), "not normalised"),
            ((mw_signed_error,), "not its sign"),
            ((mw_without_eta,), "η is left out"),
        ],
    ),
    "update-cap": (
        pmw.update_cap,
        (CAP,),
        [
            ((4 * np.log(2**12) / 0.01,), "without privacy"),
            ((8 * np.log(2**12) / 0.01,), "−η²"),
            ((16 * 12 / 0.01,), "log₂"),
        ],
    ),
    "choose-alpha": (pmw.choose_alpha, (ALPHA,), [((11 * ALPHA / 8,), "11α/8"), ((ALPHA / 2 ** (1 / 3),), "factor 2")]),
}

# The exercises added per notebook live beside their notebook's other test data (tests/cases_<module>.py).
for _module in (cases_laplace, cases_release, cases_trees, cases_above_threshold, cases_svt_variants, cases_pmw):
    assert not set(_module.CASES) & set(CASES), f"{_module.__name__} repeats an exercise of CASES"
    CASES.update(_module.CASES)


def test_every_exercise_of_the_workbook_is_tested():
    assert set(CASES) == set(all_exercises())


@pytest.mark.parametrize("exercise", sorted(CASES))
def test_right_answer_passes_and_shows_why(exercise, capsys):
    check, right, _ = CASES[exercise]
    assert check(*right) is None  # the verdict is shown once, not returned for IPython to show again
    assert judged.verdict(check, *right).passed
    shown = capsys.readouterr().out
    assert shown.startswith(f"✓ {exercise}: correct") and len(shown.splitlines()) == 1


@pytest.mark.parametrize("exercise, index", [(e, i) for e in sorted(CASES) for i in range(len(CASES[e][2]))])
def test_each_plausible_mistake_is_named_and_shown_without_stopping_the_run(exercise, index, capsys):
    check, _, mistakes = CASES[exercise]
    answer, phrase = mistakes[index]
    assert check(*answer) is None  # shown, not raised: Run All goes on
    assert capsys.readouterr().out.startswith(f"✗ {exercise}: ")
    verdict = judged.verdict(check, *answer)
    assert verdict.exercise == exercise and verdict.status == "failed"
    assert phrase in verdict.message + " " + verdict.hint, verdict
    assert verdict.hint  # every failure says what to do


@pytest.mark.parametrize("exercise", sorted(CASES))
def test_untouched_stub_is_not_attempted_and_does_not_raise(exercise, capsys):
    check, right, _ = CASES[exercise]
    if callable(right[0]):

        def stub(*args, **kwargs):
            raise NotImplementedError("exercise: write your answer here")

        answers = (stub,) + (...,) * (len(right) - 1)
    else:
        answers = (...,) * len(right)
    assert check(*answers) is None
    assert check.verdict(check.evidence(*answers)).status == "not attempted"
    assert "not attempted yet" in capsys.readouterr().out


FUNCTION_EXERCISES = [e for e in sorted(CASES) if callable(CASES[e][1][0]) and len(CASES[e][1]) == 1]


@pytest.mark.parametrize("exercise", FUNCTION_EXERCISES)
def test_a_raising_or_wrongly_signed_function_gets_a_clear_message(exercise):
    check = CASES[exercise][0]

    def raises(*args):
        return 1 / 0

    def message(answer):
        verdict = check.verdict(check.evidence(answer))
        assert verdict.status == "failed"
        return verdict.message

    assert "ZeroDivisionError" in message(raises)
    assert re.search("but the check calls it as|raised TypeError", message(lambda: 0))  # wrong for every exercise
    assert "expected a function" in message(42)


def test_a_failed_check_shows_one_short_block_without_traceback_or_checker_source(capsys):
    laplace.max_queries(5000)
    shown = capsys.readouterr().out
    assert "✗ max-queries" in shown and "Hint:" in shown
    assert "Traceback" not in shown and "dpcourse/checks" not in shown and "def " not in shown
    assert len(shown.splitlines()) <= 3
    rendered = "\n".join(CheckFailed(laplace.max_queries.verdict({"value": 5000}))._render_traceback_())
    assert rendered.startswith("\x1b[31m✗ max-queries") and "Traceback" not in rendered


def test_in_a_kernel_a_failure_shows_its_block_and_neither_a_failure_nor_a_stub_stops_the_run():
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("from dpcourse.checks import laplace as check\ncheck.max_queries(5000)"),
            nbformat.v4.new_code_cell("check.max_queries(...)"),
            nbformat.v4.new_code_cell("check.exact_tail_level(lambda k, beta: 0)"),
        ]
    )
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()  # no allow_errors: nothing may raise
    shown = [o["data"]["text/plain"] for o in nb.cells[0].outputs]
    assert len(shown) == 1 and shown[0].startswith("✗ max-queries") and "Hint:" in shown[0]
    assert len(shown[0].splitlines()) <= 3 and "Traceback" not in shown[0] and "dpcourse/checks" not in shown[0]
    assert "#b2182b" in nb.cells[0].outputs[0]["data"]["text/html"]  # drawn in the failure colour
    assert len(nb.cells[1].outputs) == 1 and "not attempted yet" in nb.cells[1].outputs[0]["data"]["text/plain"]
    signature = nb.cells[2].outputs[0]["data"]["text/plain"]
    assert "but the check calls it as (k, beta, sensitivity, epsilon)" in signature


def test_wrong_types_fail_with_a_message_not_an_exception():
    for answer in ("abc", "538", True, None, {"a": 1}, [1, 2], ["538"], object()):
        verdict = laplace.max_queries.verdict(laplace.max_queries.evidence(answer))
        assert verdict.status == "failed" and verdict.lines()[0].startswith("✗ max-queries"), answer


def test_numpy_scalars_and_zero_d_arrays_are_numbers():

    vectorized = np.vectorize(
        lambda k, beta, sensitivity, epsilon: -np.log(1 - (1 - beta) ** (1 / k)) * sensitivity / epsilon
    )
    assert laplace.exact_tail_level.verdict(laplace.exact_tail_level.evidence(vectorized)).passed
    assert laplace.max_queries.verdict(laplace.max_queries.evidence(np.int64(538))).passed
    assert laplace.max_queries.verdict(laplace.max_queries.evidence(np.array(538))).passed
    assert (
        rr_vs_laplace.debias_counts.verdict(
            rr_vs_laplace.debias_counts.evidence(lambda c, e: np.asarray(c) * 0.0)
        ).status
        == "failed"
    )


def test_function_exercises_are_graded_on_inputs_drawn_from_the_grading_seed():
    """A table of the documented examples passes a student's own run, and fails every grading seed."""
    from dpcourse.mechanisms import laplace_max_error_quantile

    check = laplace.exact_tail_level
    examples = check.cases(None)
    table = {
        case: laplace_max_error_quantile(k=case[0], beta=case[1], sensitivity=case[2], epsilon=case[3])
        for case in examples
    }

    def lookup(k, beta, sensitivity, epsilon):
        return table[(k, beta, sensitivity, epsilon)]

    def honest(k, beta, sensitivity, epsilon):
        return laplace_max_error_quantile(k=k, beta=beta, sensitivity=sensitivity, epsilon=epsilon)

    assert check.verdict(check.evidence(lookup)).passed
    for seed in range(5):
        assert check.verdict(check.evidence(lookup, seed=seed), seed=seed).status == "failed"
        assert check.verdict(check.evidence(honest, seed=seed), seed=seed).passed
        assert check.cases(np.random.default_rng(seed)) != examples
    # the judge regenerates the inputs from the seed: evidence for other inputs does not pass
    assert check.verdict(check.evidence(honest, seed=1), seed=2).status == "failed"


@pytest.mark.parametrize("exercise", sorted(CASES))
def test_judging_needs_only_the_json_evidence(exercise):
    """The grader judges outside the kernel, from evidence that went through JSON."""
    check, right, mistakes = CASES[exercise]
    evidence = json.loads(json.dumps(judged.evidence(check, *right)))
    assert check.verdict(evidence).passed
    wrong = json.loads(json.dumps(judged.evidence(check, *mistakes[0][0])))
    assert check.verdict(wrong).status == "failed"


def test_malformed_evidence_fails_cleanly():
    for evidence in (None, [], {}, {"value": {"unsupported": "module"}}, {"calls": "x"}, {"probe_error": "boom"}):
        assert laplace.exact_tail_level.verdict(evidence).status == "failed"
        assert laplace.max_queries.verdict(evidence).status == "failed"


def test_collecting_records_evidence_instead_of_judging():
    records = []
    _core._COLLECTOR = records
    try:
        laplace.max_queries(5000)  # wrong, but nothing is judged or raised while collecting
    finally:
        _core._COLLECTOR = None
    assert records == [{"exercise": "max-queries", "evidence": {"value": 5000}}]


def test_a_judge_that_trips_on_unforeseen_evidence_still_gives_a_verdict():
    def judge(evidence):
        return 1 / 0

    verdict = _core.Exercise("demo", probe=_core.value_evidence, judge=judge).verdict({"value": 1})
    assert verdict.status == "failed" and "ZeroDivisionError" in verdict.message


@functools.cache  # every notebook read once, not once per exercise
def _solution_lines() -> dict[str, list[str]]:
    """Exercise id → the non-trivial lines of its solution region, from the solution notebooks."""
    import nbformat

    from dpcourse.classroom.release import BEGIN, END

    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            exercise = cell.metadata.get("dpcourse", {}).get("exercise")
            if cell.cell_type != "code" or BEGIN not in cell.source or exercise is None:
                continue
            region = cell.source.split(BEGIN, 1)[1].split(END, 1)[0]
            found[exercise] = [
                line.strip()
                for line in region.splitlines()  # a def line is the stub's too
                if len(line.strip()) >= 12 and not line.strip().startswith(("#", "def "))
            ]
    return found


def _printed_forms(answer) -> set[str]:
    """How an expected value would be printed, for the numbers that could not appear in a hint by chance
    (integers from 100 on, and non-integers, to 3 or more significant digits) and the strings of a dict answer."""
    forms: set[str] = set()
    if callable(answer) or isinstance(answer, (str, dict)):
        return forms
    for x in np.ravel(np.asarray(answer, dtype=object)):
        if isinstance(x, (int, float, np.integer, np.floating)) and np.isfinite(float(x)):
            x = float(x)
            if x.is_integer() and abs(x) < 100:
                continue
            forms |= {f"{x:.3g}", f"{x:.4g}", f"{x:.6g}", f"{x:.3f}", f"{x:.4f}"}
    return {f for f in forms if sum(c.isdigit() for c in f) >= 3}


@pytest.mark.parametrize("exercise", sorted(CASES))
def test_no_message_or_hint_gives_away_the_expected_value_or_the_solution(exercise):
    check, right, mistakes = CASES[exercise]
    solution = _solution_lines().get(exercise, [])
    expected = set().union(*(_printed_forms(a) for a in right))
    stub = tuple(... for _ in right)
    wrong = [tuple(a) for a, _ in mistakes] + [stub, tuple(0 for _ in right), tuple(-1.5 for _ in right)]

    def found(forms, text):
        return [f for f in forms if re.search(rf"(?<![\d.\-]){re.escape(f)}(?!\d)", text)]

    for answers in wrong:
        verdict = judged.verdict(check, *answers)
        if verdict.passed:
            continue
        # a hint never echoes the student's answer: nothing of the expected answer may appear in it; a
        # message may quote the student's own answer ("got …"), which can share digits with the right one
        echoed = set().union(*(_printed_forms(a) for a in answers))
        assert not found(expected, verdict.hint), f"{exercise}: the hint {verdict.hint!r} gives away the answer"
        # a dict of named answers (spot-the-flaw): no hint may contain any of the answers' words
        words = {v for a in right if isinstance(a, dict) for v in a.values() if isinstance(v, str)}
        assert not [w for w in words if w in verdict.hint], f"{exercise}: the hint {verdict.hint!r} names an answer"
        assert not found(expected - echoed, verdict.message), f"{exercise}: {verdict.message!r} gives away the answer"
        shown = verdict.message + " " + verdict.hint
        assert not [line for line in solution if line in shown], f"{exercise}: solution source in {shown!r}"
