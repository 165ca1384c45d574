"""Feedback on the commonest mistakes (course issue #29, item 4): each is named, counted under its name, shown
with the inputs it was run on, and hinted at without the fix itself; the "not attempted" line reads right in
plain text and in HTML."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from dpcourse.checks import _core, pmw, svt_variants, trees
from dpcourse.checks import above_threshold as at
from dpcourse.pmw import pmw_notes_alpha
from tests.checks import judged
from tests.checks.test_checks import AUDITED, CASES, noisy_max_index

ROOT = Path(__file__).resolve().parents[2]
EXERCISE_MODULES = ("laplace", "rr_vs_laplace", "trees", "above_threshold", "svt_variants", "pmw")
IMPLEMENT_INPUTS = r"with answers=\[[-\d., ]+\], threshold=[-\d.]+, epsilon=[\d.]+"


# ---------------------------------------------------------------------------- 04 Ex. 1: AboveThreshold's slips


def _above_threshold(answers, threshold, epsilon, rng, *, threshold_noise, query_noise, stop=True):
    """AboveThreshold, each noise drawn by ``noise(rng, epsilon)`` (None: none); ``stop=False`` runs to the end."""
    noisy_threshold = threshold + (threshold_noise(rng, epsilon) if threshold_noise else 0.0)
    found = None
    for i, answer in enumerate(answers):
        if answer + (query_noise(rng, epsilon) if query_noise else 0.0) >= noisy_threshold:
            found = i
            if stop:
                break
    return found


def _lap(factor):
    return lambda rng, epsilon: rng.laplace(0.0, factor / epsilon)


def _slip(**kw):
    return lambda answers, threshold, epsilon, rng: _above_threshold(answers, threshold, epsilon, rng, **kw)


SLIPS = {
    "swapped": (_slip(threshold_noise=_lap(4.0), query_noise=_lap(2.0)), "the two noise scales are swapped"),
    "both 4/ε": (_slip(threshold_noise=_lap(4.0), query_noise=_lap(4.0)), "both Lap(4/ε)"),
    "no threshold noise": (_slip(threshold_noise=None, query_noise=_lap(4.0)), "the threshold has no noise"),
    "no query noise": (_slip(threshold_noise=_lap(2.0), query_noise=None), "the query answers have no noise"),
    "scale as loc": (
        _slip(threshold_noise=lambda rng, e: rng.laplace(2.0 / e), query_noise=lambda rng, e: rng.laplace(4.0 / e)),
        "the mean (loc)",
    ),
    "no stop": (_slip(threshold_noise=_lap(2.0), query_noise=_lap(4.0), stop=False), "returns the last"),
}


@pytest.mark.parametrize("slip", sorted(SLIPS))
@pytest.mark.parametrize("seed", [None, 0, 1])
def test_implement_names_each_plausible_slip_with_its_inputs(slip, seed):
    function, phrase = SLIPS[slip]
    verdict = judged.verdict(at.implementation, function, seed=seed)
    assert verdict.status == "failed" and phrase in verdict.mistake and phrase in verdict.message, verdict
    assert re.match(IMPLEMENT_INPUTS, verdict.message), verdict.message  # the inputs come first, in short form
    assert "frequency" not in verdict.message  # not the generic "outcome k came out with frequency …"


def test_the_right_implementation_passes_where_the_new_slips_are_told_apart():
    right = CASES["implement"][1][0]
    for seed in (None, 0, 1):
        assert judged.verdict(at.implementation, right, seed=seed).passed


def test_an_odd_return_value_is_a_named_mistake_and_shows_the_inputs():
    verdict = at.implementation.verdict(at.implementation.evidence(lambda answers, threshold, epsilon, rng: -1))
    assert verdict.mistake == "an outcome that is neither an index nor None"
    assert re.search(IMPLEMENT_INPUTS, verdict.message), verdict.message


def test_an_unexplained_wrong_distribution_still_shows_its_inputs():
    def answers_reversed(answers, threshold, epsilon, rng):
        return CASES["implement"][1][0](answers[::-1], threshold, epsilon, rng)

    verdict = at.implementation.verdict(at.implementation.evidence(answers_reversed))
    assert verdict.status == "failed" and re.search(IMPLEMENT_INPUTS, verdict.message), verdict.message


# ---------------------------------------------------------------------------- 06 Ex. 3: choosing α

LOGS = np.log(3 * 1000 / 0.05) * np.log(2**16) / (10**8 * 1.0)


def test_choose_alpha_names_512_outside_the_cube_root_and_calls_it_absurd():
    slipped = 512 * np.cbrt(LOGS)
    assert slipped > 1  # the notes' slip gives an α no error bound on a fraction can have
    verdict = pmw.choose_alpha.verdict(pmw.choose_alpha.evidence(slipped))
    assert "512 is outside the cube root" in verdict.mistake and "512 is outside" in verdict.message
    assert "absurd" in verdict.message
    assert "under the cube root" in verdict.hint and "8·" not in verdict.hint


@pytest.mark.parametrize("alpha", [1.0001, 3.0, 250.0])
def test_choose_alpha_flags_any_alpha_above_one_as_absurd(alpha):
    verdict = pmw.choose_alpha.verdict(pmw.choose_alpha.evidence(alpha))
    assert verdict.status == "failed" and verdict.mistake == "an α above 1"
    assert "absurd" in verdict.message and "says nothing" in verdict.message


def test_choose_alpha_below_one_is_not_called_absurd():
    right = pmw_notes_alpha(**pmw.ALPHA_EXERCISE)
    for got in (0.5, 11 * right / 8, np.cbrt(256 * LOGS)):
        verdict = pmw.choose_alpha.verdict(pmw.choose_alpha.evidence(got))
        assert verdict.status == "failed" and "absurd" not in verdict.message
    assert pmw.choose_alpha.verdict(pmw.choose_alpha.evidence(-0.1)).mistake == "an α that is not positive"


# ---------------------------------------------------------------------------- hints point, they do not fix


def _verdict(check, *answers):
    return judged.verdict(check, *answers)


@pytest.mark.parametrize(
    "check, answers, mistake_phrase, fixes",
    [
        (trees.strategy_sensitivities, (64, 7), "binary tree", ["log₄ d + 1", "log_4 d + 1", "log_4", "levels:"]),
        (trees.strategy_sensitivities, (64, 3), "off-by-one", ["log₄ d + 1", "log_4 d + 1", "+ 1 of them"]),
        (trees.small_error, (3 * CASES["small-error"][1][0],), "total", ["divide by", "divided by", "/ 3", "mean"]),
        (svt_variants.audit_your_own, (noisy_max_index, AUDITED), "index of the maximum", ["np.max", "argmax"]),
        (trees.decomposition, ([(3, 0), (1, 2), (2, 2), (12, 0)],), "(index, level)", ["swap"]),
    ],
)
def test_a_hint_points_at_where_to_look_not_at_the_fix(check, answers, mistake_phrase, fixes):
    verdict = _verdict(check, *answers)
    assert mistake_phrase in verdict.message and verdict.hint, verdict
    assert not [fix for fix in fixes if fix in verdict.hint], verdict.hint


def test_no_hint_of_decomposition_shows_a_node_of_the_answer():
    answer = CASES["decomposition"][1][0]
    verdict = _verdict(trees.decomposition, [[0, 3, 1]])
    assert verdict.status == "failed"
    assert not [node for node in answer if str(node) in verdict.hint], verdict.hint


def test_no_hint_of_any_named_mistake_states_the_right_value_or_formula():
    """The formulas the old hints gave as the fix: none is left in any hint a named mistake shows."""
    fixes = ["2b²", "ln(p/p′)", "√s/n", "s/n", "K/n", "Lap(2cΔ/ε₂)", "ln(3|Q|/β)/(nα)", "α²/8 − α²/16", "np.log"]
    for exercise, (check, _, mistakes) in CASES.items():
        for answers, _ in mistakes:
            hint = _verdict(check, *answers).hint
            assert not [fix for fix in fixes if fix in hint], (exercise, hint)


# ---------------------------------------------------------------------------- a named mistake is counted by name


@pytest.mark.parametrize("exercise, index", [(e, i) for e in sorted(CASES) for i in range(len(CASES[e][2]))])
def test_every_mistake_a_check_names_is_counted_under_its_name(exercise, index):
    check, _, mistakes = CASES[exercise]
    answers, phrase = mistakes[index]
    verdict = _verdict(check, *answers)
    assert verdict.status == "failed" and verdict.mistake, (exercise, phrase, verdict)


def test_the_named_mistakes_the_class_summary_showed_as_other_wrong_answers():
    argmax = _verdict(svt_variants.audit_your_own, noisy_max_index, AUDITED)
    assert argmax.mistake == "the index of the maximum"
    for seed in (0, 1):
        graded = svt_variants.audit_your_own.verdict(
            svt_variants.audit_your_own.evidence(noisy_max_index, AUDITED, seed=seed), seed=seed
        )
        assert graded.mistake == "the index of the maximum", graded
    assert _verdict(at.large_loss_pair, [0, 0], [3, 0]).mistake == "not a neighbouring pair"


def _unnamed_wrongs(module: str) -> list[str]:
    """The ``Wrong(…)`` calls of a check module and of its private helpers (``_<module>_*.py``) that give no mistake
    (neither a third argument nor ``mistake=``)."""
    folder = ROOT / "dpcourse" / "checks"
    files = [folder / f"{module}.py", *sorted(folder.glob(f"_{module}_*.py"))]
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in files]
    return [
        ast.unparse(node.args[0]) if node.args else ""
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "Wrong"
        and len(node.args) < 3
        and not any(keyword.arg == "mistake" for keyword in node.keywords)
    ]


# The only failures left unnamed: evidence the check cannot read, and the catch-all for what no named mistake fits.
_GENERIC = ("could not read", "unreadable", "came out with frequency", "do not follow", "expected a function")


@pytest.mark.parametrize("module", EXERCISE_MODULES)
def test_every_wrong_a_judge_raises_names_its_mistake_unless_it_is_generic(module):
    unnamed = [text for text in _unnamed_wrongs(module) if not any(phrase in text for phrase in _GENERIC)]
    assert not unnamed, f"{module}: Wrong without a mistake: {unnamed}"


# ---------------------------------------------------------------------------- "not attempted" reads right


def test_the_not_attempted_line_has_no_markdown_in_text_and_code_in_html():
    verdict = _core.Verdict("implement", "not attempted")
    (line,) = verdict.lines()
    assert "`" not in line and "“raise NotImplementedError”" in line and "“...”" in line
    shown = verdict._repr_html_()
    assert "`" not in shown
    assert "<code>raise NotImplementedError</code>" in shown and "<code>...</code>" in shown
    assert str(verdict) == line


def test_a_failed_verdict_escapes_the_students_text_in_html():
    verdict = _core.Verdict("x", "failed", "got <code>1</code>", "hint")
    assert verdict.lines()[0] == "✗ x: got <code>1</code>"  # the student's text, as it is
    assert "&lt;code&gt;1&lt;/code&gt;" in verdict._repr_html_() and "<code>" not in verdict._repr_html_()


# ---------------------------------------------------------------------------- issue 39, item 4: 04's vector answers


def test_small_pmf_says_when_the_entries_do_not_add_up_to_1_and_otherwise_which_entry_is_off():
    right = np.array(CASES["small-pmf"][1][0], dtype=float)
    unnormalised = at.small_pmf.verdict(at.small_pmf.evidence((right * 1.1).tolist()))
    assert unnormalised.status == "failed" and "add up to 1.1, not 1" in unnormalised.message
    assert unnormalised.mistake == "probabilities that do not add up to 1"
    one_off = right + [0.0, 0.01, -0.01]  # still sums to 1
    shown = at.small_pmf.verdict(at.small_pmf.evidence(one_off.tolist()))
    assert shown.status == "failed" and "Pr[⊥⊤] and Pr[⊥⊥] are off; Pr[⊤] is right" in shown.message
    assert f"{right[1]:.4f}" not in shown.message  # the right value is never shown


def test_ns_scales_names_the_entry_off_and_diagnoses_the_other_allocation_truthfully():
    got = at.ns_scales.verdict(at.ns_scales.evidence([12.0, 24.0, 24.0]))  # Lap(cΔ/ε₂): c values cost all of ε₂
    assert "half what" not in got.message and "spend all of ε₂" in got.message and "ε₂/2" in got.message
    off = at.ns_scales.verdict(at.ns_scales.evidence([12.0, 30.0, 48.0]))
    assert off.message.endswith("the query scale is off; the threshold scale and the value scale are right")


def test_em_epsilon_calls_1_52_the_monotone_variants_answer_and_the_prompt_names_the_mechanism():
    import nbformat

    got = pmw.em_epsilon.verdict(pmw.em_epsilon.evidence(1.52))
    assert got.status == "failed" and "monotone variant" in got.message and "right for that mechanism" in got.message
    cells = nbformat.read(ROOT / "notebooks" / "06_private_mw.ipynb", as_version=4).cells
    prompt = next(c.source for c in cells if c.cell_type == "markdown" and "Store it in `epsilon_em`" in c.source)
    assert "2\\Delta u" in prompt and "monotone" in prompt


def test_the_passes_of_max_queries_and_sample_size_say_what_is_true():
    from dpcourse.checks import laplace, rr_vs_laplace

    shown = laplace.max_queries.verdict(laplace.max_queries.evidence(538)).message
    assert "each within" not in shown and "all 538 answers within" in shown and "at once" in shown
    sizes = rr_vs_laplace._sample_sizes()
    answers = (int(np.ceil(sizes["laplace"])), int(np.ceil(sizes["rr"])))
    shown = rr_vs_laplace.sample_size.verdict(rr_vs_laplace.sample_size.evidence(*answers)).message
    assert "Laplace's n grows like |Q|·ln|Q|" in shown


def test_mw_steps_first_example_is_the_notebooks_own_not_a_lectures():
    """No lecture (../shared/seeds) has p̃ = (¼, …), q = (1, 1, 0, 0), y = 0.8: neither the prompt nor the check calls
    it the lecture's example."""
    import inspect

    import nbformat

    cells = nbformat.read(ROOT / "notebooks" / "06_private_mw.ipynb", as_version=4).cells
    prompt = next(c.source for c in cells if c.cell_type == "markdown" and "Write `mw_step(" in c.source)
    assert "this notebook's own small example" in prompt and "lecture's example" not in prompt
    assert "lecture's example" not in inspect.getsource(pmw)
