"""Every judge reads numbers through one typed conversion, and the probe records what an answer really holds.

For every exercise and every one of its answers: NumPy numbers of the right value pass; strings, booleans (Python
and NumPy), None and odd nested types are refused with a message naming what they are; and objects that lie (a
float or int subclass holding a wrong value whose ``__eq__``, ``__float__``, ``__int__``, ``__index__``,
``__array__`` or ``__repr__`` claim the right one, a string whose ``__array__`` returns the right answer, an
ndarray or list subclass whose methods show the right content) are judged on what they hold, and fail.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpcourse.checks import all_exercises
from dpcourse.checks._evidence import jsonable
from tests.checks.test_checks import CASES, GAU, LAP

# --------------------------------------------------------------------------- liars


class LyingFloat(float):
    """Holds a wrong value; every way of asking it says the right one."""

    def __new__(cls, held, claimed):
        self = super().__new__(cls, held)
        self.claimed = claimed
        return self

    def __eq__(self, other):
        return True

    __hash__ = float.__hash__

    def __float__(self):
        return float(self.claimed)

    def __repr__(self):
        return repr(self.claimed)

    __str__ = __repr__

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.claimed, dtype=dtype)


class LyingFloat64(np.float64):
    """The same lies, from a subclass of np.float64 (itself a subclass of float)."""

    def __new__(cls, held, claimed):
        self = super().__new__(cls, held)
        self.claimed = claimed
        return self

    def __eq__(self, other):
        return True

    __hash__ = float.__hash__

    def __float__(self):
        return float(self.claimed)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.claimed, dtype=dtype)

    def item(self):
        return float(self.claimed)


class LyingInt(int):
    def __new__(cls, held, claimed):
        self = super().__new__(cls, held)
        self.claimed = claimed
        return self

    def __eq__(self, other):
        return True

    def __lt__(self, other):
        return int(self.claimed) < other

    def __ge__(self, other):
        return int(self.claimed) >= other

    __hash__ = int.__hash__

    def __index__(self):
        return int(self.claimed)

    def __int__(self):
        return int(self.claimed)

    def __float__(self):
        return float(self.claimed)

    def __repr__(self):
        return repr(self.claimed)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.claimed, dtype=dtype)


class LyingStr(str):
    """A string whose ``__array__``, ``__float__``, ``strip`` and ``lower`` give the right answer."""

    def __new__(cls, held, claimed):
        self = super().__new__(cls, held)
        self.claimed = claimed
        return self

    def __eq__(self, other):
        return True

    __hash__ = str.__hash__

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.claimed, dtype=dtype)

    def __float__(self):
        return float(self.claimed)

    def strip(self, *args):
        return self.claimed if isinstance(self.claimed, str) else str(self.claimed)

    def lower(self):
        return self.strip()


class LyingArray(np.ndarray):
    """Holds wrong data; ``__array__``, ``tolist``, ``__iter__`` and ``__eq__`` show the right data."""

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.claimed, dtype=dtype)

    def tolist(self):
        return np.asarray(self.claimed).tolist()

    def __iter__(self):
        return iter(np.asarray(self.claimed))

    def __eq__(self, other):
        return np.ones(np.shape(self.claimed), dtype=bool)


def lying_array(held, claimed):
    array = np.asarray(held, dtype=float).view(LyingArray)
    array.claimed = claimed
    return array


class LyingList(list):
    def __init__(self, held, claimed):
        super().__init__(held)
        self.claimed = list(claimed)

    def __iter__(self):
        return iter(self.claimed)

    def __len__(self):
        return len(self.claimed)

    def __getitem__(self, i):
        return self.claimed[i]


class Pretender:
    """Not a number at all, but converts to the right one wherever asked."""

    def __init__(self, claimed):
        self.claimed = claimed

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.claimed, dtype=dtype)

    def __float__(self):
        return float(np.asarray(self.claimed).ravel()[0])

    def __iter__(self):
        return iter(np.asarray(self.claimed))

    def __len__(self):
        return len(np.atleast_1d(self.claimed))


# --------------------------------------------------------------------------- mutants of a right answer


def number_mutants(x):
    """(label, answer, passes) for a right number ``x``."""
    yield "np.float64", np.float64(x), True
    if float(x).is_integer():
        yield "np.int64", np.int64(x), True
        yield "lying int", LyingInt(2 * int(x) + 1, x), False
    yield "string", str(x), False
    yield "np.str_", np.str_(str(x)), False
    yield "True", True, False
    yield "np.True_", np.True_, False
    yield "None", None, False
    yield "list holding an object", [object()], False
    yield "lying float", LyingFloat(2 * float(x) + 1, x), False
    yield "lying np.float64 subclass", LyingFloat64(2 * float(x) + 1, x), False
    yield "string with __array__", LyingStr("x", x), False
    yield "pretender", Pretender(x), False


def array_mutants(a):
    array = np.asarray(a, dtype=float)
    yield "float64 array", array.copy(), True
    yield "list", array.tolist(), True
    yield "string array", array.astype(str), False
    yield "nested strings", np.asarray(array.astype(str), dtype=object).tolist(), False
    yield "boolean array", array.astype(bool), False
    yield "lying ndarray subclass", lying_array(array + 1, array), False
    yield "lying list subclass", LyingList((array + 1).tolist(), array.tolist()), False
    yield "pretender", Pretender(array), False
    yield "with None", [*array.tolist()[:-1], None], False


def string_mutants(s, wrong):
    yield "np.str_", np.str_(s), True
    yield "lying string", LyingStr(wrong, s), False
    yield "True", True, False
    yield "bytes", s.encode(), False


def index_mutants(k, m):
    """An AboveThreshold outcome (an index or None) and how it may be returned."""
    if k is None:
        yield "None", None, True
        return
    yield "np.int64", np.int64(k), True
    yield "np.intc", np.intc(k), True
    yield "string", str(k), False
    yield "boolean", bool(k), False
    yield "lying int", LyingInt(k + 100, k), False
    yield "float", float(k), False


def result_mutants(result):
    if isinstance(result, np.ndarray) and result.ndim:
        yield from array_mutants(result)
    else:
        yield from number_mutants(float(np.asarray(result)))


FLAW_WORDS = ("query noise", "output")


def mutants(exercise):
    """(label, answers, passes) for every answer position of ``exercise``."""
    check, right, _ = CASES[exercise]
    for position, answer in enumerate(right):
        for label, mutated, passes in _mutants_of(exercise, answer):
            answers = list(right)
            answers[position] = mutated
            yield f"answer {position + 1}: {label}", tuple(answers), passes


def _mutants_of(exercise, answer):
    if exercise == "implement":
        for label in ("np.int64", "np.intc", "string", "boolean", "lying int", "float"):
            yield label, _index_returning(answer, label), label in ("np.int64", "np.intc")
    elif callable(answer):
        args = _first_case(exercise)
        sample = answer(args[0], trials=args[1], rng=args[2]) if exercise == "audit-your-own" else answer(*args)
        for label, _, passes in result_mutants(sample):
            yield label, _returning(answer, label, exercise), passes
    elif isinstance(answer, dict):
        for key, value in answer.items():
            other = FLAW_WORDS[1 - FLAW_WORDS.index(value)]
            for label, mutated, passes in string_mutants(value, other):
                yield f"{key}: {label}", {**answer, key: mutated}, passes
        yield "dict with a lying get", _LyingDict({k: "output" for k in answer}, answer), False
    elif isinstance(answer, str):
        yield from string_mutants(answer, "laplace")
    elif hasattr(answer, "answers_d") or exercise == "audit-your-own":
        yield from _audit_result_mutants(answer)
    elif np.ndim(answer) == 0:
        yield from number_mutants(answer)
    else:
        yield from array_mutants(answer)


class _LyingDict(dict):
    def __init__(self, held, claimed):
        super().__init__(held)
        self.claimed = claimed

    def get(self, key, default=None):
        return self.claimed.get(key, default)

    def items(self):
        return self.claimed.items()

    def __getitem__(self, key):
        return self.claimed[key]


def _first_case(exercise):
    case = CASES[exercise][0].cases(None)[0]
    if exercise == "audit-your-own":
        answers, trials, seed = case
        return np.array(answers), trials, seed
    return case


def _returning(function, label, exercise):
    """``function`` with each result replaced by its mutant ``label``."""

    def mutate(result):
        return next(m for lab, m, _ in result_mutants(result) if lab == label)

    if exercise == "audit-your-own":
        return lambda answers, *, trials, rng: mutate(function(answers, trials=trials, rng=rng))
    return lambda *args: mutate(function(*args))


def _index_returning(function, label):
    def wrapped(answers, threshold, epsilon, rng):
        k = function(answers, threshold, epsilon, rng)
        return next((m for lab, m, _ in index_mutants(k, len(answers)) if lab == label), k)

    return wrapped


class _FakeAudit:
    def __init__(self, real, **changes):
        for field in ("p_value", "epsilon_lower_bound", "claimed_epsilon", "trials", "answers_d", "answers_d_prime"):
            setattr(self, field, getattr(real, field))
        self.flagged = real.flagged
        for name, value in changes.items():
            setattr(self, name, value)


def _audit_result_mutants(result):
    yield "the result itself", result, True
    yield "a copy with np.float64 fields", _FakeAudit(result, trials=np.float64(result.trials)), True
    yield "flagged as a string", _FakeAudit(result, flagged="True"), False
    yield "flagged as a lying str", _FakeAudit(result, flagged=LyingStr("False", True)), False
    yield "trials as a lying float", _FakeAudit(result, trials=LyingFloat(50.0, result.trials)), False
    yield "claimed ε as a string", _FakeAudit(result, claimed_epsilon="0.5"), False
    yield "answers as lying arrays", _FakeAudit(result, answers_d=lying_array([3.0] * 5, [1.0] * 5)), False


ALL = [(e, label, answers, passes) for e in sorted(CASES) for label, answers, passes in mutants(e)]


def test_every_exercise_is_covered():
    assert {e for e, *_ in ALL} == set(all_exercises())


@pytest.mark.parametrize("exercise, label, answers, passes", ALL, ids=[f"{e}-{lab}" for e, lab, *_ in ALL])
def test_an_answer_is_judged_on_what_it_holds(exercise, label, answers, passes):
    check = CASES[exercise][0]
    evidence = check.evidence(*answers)
    json.dumps(evidence)  # the evidence is plain JSON already
    verdict = check.verdict(evidence)
    shown = str(verdict)
    if passes:
        assert verdict.passed, shown
        return
    assert verdict.status == "failed", shown
    assert "could not judge" not in shown, shown  # refused by the judge itself, not by the safety net
    assert len(verdict.message) <= 400 and len(verdict.hint) <= 400


@pytest.mark.parametrize(
    "answer, kind",
    [
        ("538", "a string"),
        (True, "a boolean"),
        (np.True_, "a boolean"),
        (None, "None"),
        ([538, "538"], "a string"),
        ([[1.0], [True]], "a boolean"),
        ({"a": 1}, "a dict"),
        (object(), "object"),
        (LyingStr("x", 538), "a string"),
        (Pretender(538), "Pretender"),
    ],
)
def test_a_refusal_names_what_the_answer_is(answer, kind):
    check = CASES["max-queries"][0]
    verdict = check.verdict(check.evidence(answer))
    assert verdict.status == "failed" and kind in verdict.message, verdict


def test_the_evidence_holds_exact_types_and_the_values_held():
    assert jsonable(LyingFloat(1.0, 538)) == 1.0 and type(jsonable(LyingFloat(1.0, 538))) is float
    assert jsonable(LyingInt(3, 538)) == 3 and type(jsonable(LyingInt(3, 538))) is int
    assert type(jsonable(LyingStr("x", 538))) is str
    assert jsonable(lying_array([1.0, 2.0], [5.0, 5.0])) == [1.0, 2.0]
    assert jsonable(LyingList([1, 2], [5, 5])) == [1, 2]
    assert jsonable(_LyingDict({"a": 1}, {"a": 2})) == {"a": 1}
    assert jsonable(Pretender(538)) == {"unsupported": "Pretender"}
    assert jsonable(np.float64(0.25)) == 0.25 and type(jsonable(np.float64(0.25))) is float
    assert jsonable(np.array(7)) == 7 and jsonable(np.bool_(True)) is True
    assert jsonable(np.array(["a"])) == ["a"] and jsonable(np.array([1 + 2j]))["unsupported"].startswith("an array")
    nested = []
    for _ in range(100):
        nested = [nested]
    assert "nested" in json.dumps(jsonable(nested))
    assert "elements" in jsonable([[0.0] * 1000] * 200)[-1]["unsupported"]


def test_an_exception_whose_str_raises_is_still_described():
    class Nasty(Exception):
        def __str__(self):
            raise RuntimeError("no")

    def raises(*args):
        raise Nasty

    check = CASES["exact-tail-level"][0]
    verdict = check.verdict(check.evidence(raises))
    assert verdict.status == "failed" and "Nasty" in verdict.message


def test_a_students_long_answer_is_quoted_short():
    check = CASES["better-mechanism"][0]
    verdict = check.verdict(check.evidence("x" * 10_000, LAP, GAU))
    assert verdict.status == "failed" and len(verdict.message) < 300 and "…" in verdict.message
    check = CASES["spot-the-flaw"][0]
    verdict = check.verdict(check.evidence({"alg3": "y" * 10_000}))
    assert len(verdict.message) < 300 and "…" in verdict.message

    def one_parameter(k):
        return 0

    one_parameter.__name__ = "f" * 5000
    check = CASES["exact-tail-level"][0]
    verdict = check.verdict(check.evidence(one_parameter))
    assert "but the check calls it as" in verdict.message and len(verdict.message) <= 400
    check = CASES["decomposition"][0]
    verdict = check.verdict(check.evidence([(0, i) for i in range(60)]))
    assert verdict.status == "failed" and len(verdict.message) <= 400
