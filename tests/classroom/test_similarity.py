"""The similarity report: disguised copies found among 60 honest submissions, no honest pair flagged, the page
showing the pairs side by side as text, the course file's threshold, hostile answer cells."""

from __future__ import annotations

import os
import random
import shutil
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from dpcourse.classroom.course import Course, CourseError, load_course
from dpcourse.classroom.grading import similarity
from dpcourse.classroom.grading.plan import read_outline, source_exercises
from dpcourse.classroom.grading.reports import GradeRow
from dpcourse.classroom.grading.similarity import (
    ClassAnswers,
    compare_exercise,
    fingerprints,
    normalised_statements,
    read_answers,
    similarity_report,
)
from dpcourse.classroom.outputs import write_gradebook
from dpcourse.classroom.release import release_notebook

NOTEBOOK = "01_laplace_utility"
SOURCE = Path(__file__).resolve().parents[2] / "notebooks" / f"{NOTEBOOK}.ipynb"
STARTER = "n_office, alpha, beta, epsilon_office = 1_000_000, 0.01, 0.05, 0.5"

# --------------------------------------------------------------------------- honest variety
# Each exercise has several hand-written correct solutions; each student picks one and writes it in their own way:
# their own names, spacing, comments, literal spellings, loop bounds, and touches of their own (a print, an assert,
# an intermediate variable) drawn from independent choices.

LOOP = ["k", "K", "q", "n_q", "num", "count", "queries", "m", "kk", "nq", "c", "j"]
TEMP = ["bound", "err", "error", "rel_err", "value", "e", "loss", "worst", "tail", "lhs", "acc", "x"]
SPACE = [" ", ""]
COMMENTS = [
    "# union bound over the K answers",
    "# from the lecture: alpha >= K ln(K/beta) / (n eps)",
    "# TODO tidy",
    "# brute force is fine here",
    "# checked by hand",
    "# increase until the error bound breaks",
    "",
]
BOUNDS = ["1000", "2_000", "5000", "10_000", "20000", "50_000", "100000", "10**4", "10**5", "3000", "8000", "1500"]


def _op(r: random.Random, op: str) -> str:
    pad = r.choice(SPACE)
    return f"{pad}{op}{pad}"


class _Style:
    """How one student writes K ln(K/β)/(nε) ≤ α, the same way wherever they write it: the logarithm, where the
    denominator goes, which side of the comparison the error is on, with the helper variables that needs."""

    def __init__(self, r: random.Random, vectorised: bool):
        self.log = r.choice(["np.log({k} / beta)", "(np.log({k}) - np.log(beta))", "np.log({k} * (1 / beta))"])
        if not vectorised and r.random() < 0.4:
            self.log = self.log.replace("np.", "math.")
        self.setup = ["import math"] if "math." in self.log else []
        self.form = r.randrange(6)
        self.name = r.choice(["scale", "denom", "n_eps", "budget", "ne", "target", "allowed", "limit", "cap"])
        if self.form == 2:
            self.setup.append(f"{self.name} = n_office * epsilon_office")
        elif self.form == 4:
            self.setup.append(f"{self.name} = alpha * n_office * epsilon_office")
        elif self.form == 5:
            self.setup.append(f"{self.name} = 1 / (n_office * epsilon_office)")
        self.flipped = r.random() < 0.4

    def condition(self, k: str) -> str:
        log = self.log.format(k=k)
        lhs, rhs = [
            (f"{k} * {log} / (n_office * epsilon_office)", "alpha"),
            (f"{k} * {log} / n_office / epsilon_office", "alpha"),
            (f"{k} * {log} / {self.name}", "alpha"),
            (f"{k} * {log}", "alpha * n_office * epsilon_office"),
            (f"{log} * {k}", self.name),
            (f"{self.name} * {k} * {log}", "alpha"),
        ][self.form]
        return f"{rhs} >= {lhs}" if self.flipped else f"{lhs} <= {rhs}"


def _extras_max_queries(r: random.Random, style: _Style) -> list[str]:
    extras = []
    if r.random() < 0.2:
        extras.append(r.choice(["K_max = int(K_max)", "assert isinstance(K_max, int)", "assert K_max > 0"]))
    if r.random() < 0.4:
        extras.append(
            r.choice(['print("K_max =", K_max)', "print(K_max)", 'print(f"K_max: {K_max}")', "K_max", "display(K_max)"])
        )
    if r.random() < 0.3:
        extras.append(f"assert {style.condition('K_max')}")
    if r.random() < 0.2:
        extras.append(f"assert not ({style.condition('(K_max + 1)')})")
    return extras


def _own_check(r: random.Random, style: _Style) -> list[str]:
    """What most students add of their own once they see the number: a check with values they picked."""
    if r.random() < 0.15:
        return []
    low, high = r.randrange(100, 530), r.randrange(540, 5000)
    probe = r.randrange(300, 900)
    return r.choice(
        [
            [f"assert {low} < K_max < {high}"],
            [f"assert K_max >= {low}", f"assert K_max <= {high}"],
            [f"print({probe}, {style.condition(str(probe))})"],
            [f"print({probe}, {probe} * np.log({probe} / beta) / (n_office * epsilon_office))"],
            [f"for probe in ({probe}, {high}):", f"    print(probe, {style.condition('probe')})"],
        ]
    )


def _max_queries(r: random.Random) -> str:
    k, t = r.choice(LOOP), r.choice(TEMP)
    start, top = r.choice(["1", "1", "2", "10", "0 + 1", "5"]), r.choice(BOUNDS)
    family = r.randrange(6)
    style = _Style(r, vectorised=family == 2)
    if family == 0:  # the lecture's loop, grown one at a time
        step = r.choice([f"    {k} += 1", f"    {k} = 1 + {k}"])
        shape = r.randrange(3)
        if shape == 0:  # test the next K
            body = [f"{k} = {start}", f"while {style.condition(f'({k} + 1)')}:", step, f"K_max = {k}"]
        elif shape == 1:  # run one past, step back
            body = [f"{k} = {start}", f"while {style.condition(k)}:", step, f"K_max = {k} - 1"]
        else:  # an endless loop with a break
            body = [f"{k} = {start}", "while True:", f"    if not ({style.condition(f'({k} + 1)')}):", "        break"]
            body += [step, f"K_max = {k}"]
    elif family == 1:  # a for loop that stops at the first K too many
        step = r.choice(["", ", 1"])
        inner = r.choice(
            [
                [f"    if not ({style.condition(k)}):", f"        K_max = {k} - 1", "        break"],
                [f"    if {style.condition(k)}:", f"        K_max = {k}", "    else:", "        break"],
                [f"    if {style.condition(k)}:", f"        {t} = {k}", f"K_max = {t}"],
            ]
        )
        body = [f"for {k} in range({start}, {top}{step}):", *inner]
    elif family == 2:  # vectorised
        arr = r.choice(["ks", "K_values", "candidates", "grid", "Ks", "qs", "ns"])
        ok = r.choice(["ok", "mask", "fits", "good", "feasible", "valid"])
        body = [f"{arr} = np.arange({start}, {top})"]
        if r.random() < 0.5:
            body.append(f"{ok} = {style.condition(arr)}")
        else:
            body.append(f"{t} = {arr} * np.log({arr} / beta) / (n_office * epsilon_office)")
            body.append(f"{ok} = {t} <= alpha" if r.random() < 0.5 else f"{ok} = alpha >= {t}")
        body.append(
            r.choice(
                [
                    f"K_max = int({arr}[{ok}].max())",
                    f"K_max = int({arr}[{ok}][-1])",
                    f"K_max = int({arr}[np.nonzero({ok})[0][-1]])",
                    f"K_max = int(np.max({arr}[{ok}]))",
                    f"K_max = {arr}[{ok}].max().item()",
                    f"K_max = int({arr}[np.argmin({ok}) - 1])",
                ]
            )
        )
    elif family == 3:  # bisection
        lo, hi = r.choice([("lo", "hi"), ("low", "high"), ("a", "b"), ("left", "right"), ("L", "R")])
        mid = r.choice(["mid", "m", "middle", "half", "c"])
        split = r.choice([f"({lo} + {hi}) // 2", f"{lo} + ({hi} - {lo}) // 2", f"int(({lo} + {hi}) / 2)"])
        body = [
            f"{lo}, {hi} = {start}, {top}" if r.random() < 0.5 else f"{lo} = {start}\n{hi} = {top}",
            r.choice([f"while {hi} - {lo} > 1:", f"while {lo} + 1 < {hi}:"]),
            f"    {mid} = {split}",
            f"    if {style.condition(mid)}:",
            f"        {lo} = {mid}",
            "    else:",
            f"        {hi} = {mid}",
            f"K_max = {lo}",
        ]
    elif family == 4:  # a helper function
        fn = r.choice(["error_bound", "rel_error", "alpha_of", "worst_case", "f", "bound_for", "fits", "ok"])
        if r.random() < 0.5:
            body = [f"def {fn}({k}):", f"    return {style.condition(k)}"]
        else:  # the helper gives the error, the comparison is inline
            body = [f"def {fn}_value({k}):", f"    return {k} * {style.log.format(k=k)} / (n_office * epsilon_office)"]
            body += [f"def {fn}({k}):", f"    return {fn}_value({k}) <= alpha"]
        body.append(
            r.choice(
                [
                    f"K_max = max({k} for {k} in range({start}, {top}) if {fn}({k}))",
                    f"K_max = max(filter({fn}, range({start}, {top})))",
                    f"K_max = [{k} for {k} in range({start}, {top}) if {fn}({k})][-1]",
                    f"K_max = sum(1 for {k} in range({start}, {top}) if {fn}({k})) + {start} - 1",
                ]
            )
        )
    else:  # read off by hand: a short numeric answer, naturally identical
        body = [r.choice(["K_max = 538", "K_max = 538  # from the loop I ran above", "K_max=538", "K_max = int(538)"])]
        return "\n".join([STARTER, *body])
    lines = [STARTER, *style.setup, *body, *_extras_max_queries(r, style), *_own_check(r, style)]
    comment = r.choice(COMMENTS)
    if comment:
        lines.insert(r.randrange(1, len(lines) + 1), comment)
    return "\n".join(lines).replace(" = ", _op(r, "="))


def _workload(r: random.Random) -> str:
    arg = r.choice(["W", "W", "W", "workload"])
    t = r.choice(TEMP)
    family = r.randrange(5)
    if family == 0:
        body = [f"return np.abs({arg}).sum(axis=0).max()"]
    elif family == 1:
        body = [f"{t} = np.sum(np.abs({arg}), axis=0)", f"return float(np.max({t}))"]
    elif family == 2:
        body = [f"return np.linalg.norm({arg}, ord=1)"]
    elif family == 3:
        col = r.choice(["column", "col", "c", "u", "j"])
        body = [
            f"{arg} = np.asarray({arg})",
            f"return max(np.abs({arg}[:, {col}]).sum() for {col} in range({arg}.shape[1]))",
        ]
    else:
        body = [f"return np.max(np.sum(np.abs(np.asarray({arg}, dtype=float)), axis=0))"]
    if r.random() < 0.3:
        body.insert(0, r.choice(['"""Max column L1 norm."""', "# one person changes one count", "# column sums"]))
    return "\n".join([f"def workload_l1_sensitivity({arg}):", *("    " + line for line in body)])


def _exact_tail(r: random.Random) -> str:
    t = r.choice(TEMP)
    family = r.randrange(4)
    if family == 0:
        body = ["return -np.log(1 - (1 - beta) ** (1 / k)) * sensitivity / epsilon"]
    elif family == 1:
        body = [
            f"{t} = 1 - (1 - beta) ** (1 / k)",
            f"return sensitivity / epsilon * np.log(1 / {t})",
        ]
    elif family == 2:
        body = ["return (sensitivity / epsilon) * -np.log1p(-(1 - beta) ** (1.0 / k))"]
    else:
        body = ["p = (1 - beta) ** (1 / k)", "return -np.log(1 - p) * sensitivity / epsilon"]
    return "\n".join(["def exact_tail_level(k, beta, sensitivity, epsilon):", *("    " + line for line in body)])


def _icu_sensitivity(r: random.Random) -> str:
    return r.choice(
        ["icu_sensitivity = 10", "icu_sensitivity=10", "icu_sensitivity = 10  # T = 10 days", "icu_sensitivity = 10.0"]
    )


def _icu_epsilon(r: random.Random) -> str:
    return r.choice(
        [
            "icu_epsilon = np.log(30 / 0.05) * 10 / 10",
            "icu_epsilon = np.log(600)",
            "icu_epsilon = math.log(30 / 0.05)",
            "icu_epsilon = np.log(30/0.05)",
            "icu_epsilon = float(np.log(30 / 0.05))",
        ]
    )


HONEST = {
    "max-queries": _max_queries,
    "workload-sensitivity": _workload,
    "exact-tail-level": _exact_tail,
    "icu-sensitivity": _icu_sensitivity,
    "icu-epsilon": _icu_epsilon,
}

# --------------------------------------------------------------------------- the copies, disguised by hand
# Five honest students wrote answers of their own (below); five more students handed in disguised copies of them.

ORIGINALS = {
    ("honest-03", "max-queries"): f"""{STARTER}

def worst_error(k):
    # the union bound over k Laplace answers, as a fraction of n
    return k * np.log(k / beta) / (n_office * epsilon_office)

low, high = 1, 100_000
while high - low > 1:
    middle = (low + high) // 2
    if worst_error(middle) <= alpha:
        low = middle
    else:
        high = middle
K_max = low
print("largest K:", K_max, "error", worst_error(K_max))
""",
    ("honest-17", "max-queries"): f"""{STARTER}
candidates = np.arange(1, 5001)
scale = 1.0 / (n_office * epsilon_office)
bounds = candidates * np.log(candidates / beta) * scale
within = bounds <= alpha
K_max = int(candidates[within][-1])
assert bounds[K_max] > alpha  # the next K is over
""",
    ("honest-29", "workload-sensitivity"): """def workload_l1_sensitivity(W):
    W = np.asarray(W, dtype=float)
    best = 0.0
    for column in range(W.shape[1]):
        total = 0.0
        for row in range(W.shape[0]):
            total += abs(W[row, column])
        if total > best:
            best = total
    return best
""",
    ("honest-41", "exact-tail-level"): """def exact_tail_level(k, beta, sensitivity, epsilon):
    scale = sensitivity / epsilon
    # each of the k answers must stay within t with probability (1 - beta) ** (1 / k)
    per_answer_failure = 1.0 - (1.0 - beta) ** (1.0 / k)
    level = -scale * np.log(per_answer_failure)
    return float(level)
""",
    ("honest-52", "max-queries"): f"""{STARTER}
import math

def relative_error(num_queries):
    return num_queries * math.log(num_queries / beta) / (n_office * epsilon_office)

feasible = [q for q in range(1, 2_000) if relative_error(q) <= alpha]
K_max = max(feasible)
print(f"K_max = {{K_max}}, error at K_max + 1: {{relative_error(K_max + 1):.5f}}")
""",
}

COPIES = {
    # renamed, reformatted, comments gone, the helper moved below the bounds, 100_000 written 10**5
    ("copier-a", "honest-03", "max-queries"): f"""{STARTER}
lo,hi=1,10**5
def err(q): return q*np.log(q/beta)/(n_office*epsilon_office)
while hi-lo>1:
  m=(lo+hi)//2
  if err(m)<=alpha: lo=m
  else: hi=m
K_max=lo
print('K is', K_max, 'with error', err(K_max))
""",
    # independent statements reordered, renamed, 1.0 written 1e0 and 5001 as 5_001, a comment added
    ("copier-b", "honest-17", "max-queries"): f"""{STARTER}
# scale first, then the grid of K
factor = 1e0 / (n_office * epsilon_office)
Ks = np.arange(1, 5_001)
errs = (Ks * np.log(Ks / beta)) * factor
mask = (errs <= alpha)
K_max = int(Ks[mask][-1])
assert errs[K_max] > alpha
""",
    # renamed, += written out, 0.0 written 0., comments added
    ("copier-c", "honest-29", "workload-sensitivity"): """def workload_l1_sensitivity(W):
    # make it an array first
    W = np.asarray(W, dtype=float)
    m = 0.
    for j in range(W.shape[1]):   # each column = one person
        s = 0.
        for i in range(W.shape[0]):
            s = s + abs(W[i, j])
        if s > m:
            m = s
    return m
""",
    # the two independent first lines swapped, renamed, 1.0 written 1, comment gone
    ("copier-d", "honest-41", "exact-tail-level"): """def exact_tail_level(k, beta, sensitivity, epsilon):
    fail = 1 - (1 - beta) ** (1 / k)
    b = sensitivity / epsilon
    t = -b * np.log(fail)
    return float(t)
""",
    # the import moved, renamed, 2_000 written 2e3 in an int(), a different message
    ("copier-e", "honest-52", "max-queries"): f"""{STARTER}
def rel(n):
    return n*math.log(n/beta)/(n_office*epsilon_office)
import math
ok = [x for x in range(1, 2000) if rel(x) <= alpha]
K_max = max(ok)
print(f"answer {{K_max}} (next: {{rel(K_max + 1):.3f}})")
""",
}


def honest_answers(seed: int = 40, students: int = 60) -> dict[str, dict[str, str]]:
    """Student → exercise → answer, for 60 honest students, five of them with the originals above."""
    r = random.Random(seed)
    answers = {f"honest-{i:02d}": {ex: make(r) for ex, make in HONEST.items()} for i in range(students)}
    for (student, exercise), text in ORIGINALS.items():
        answers[student][exercise] = text
    return answers


def class_answers(seed: int = 40) -> dict[str, dict[str, str]]:
    answers = honest_answers(seed)
    r = random.Random(seed + 1)
    for (copier, _, exercise), text in COPIES.items():
        answers[copier] = {ex: make(r) for ex, make in HONEST.items()}  # honest elsewhere
        answers[copier][exercise] = text
    return answers


EXPECTED = {(*sorted((original, copier)), exercise) for copier, original, exercise in COPIES}


def flagged(answers: dict[str, dict[str, str]], stubs: dict[str, str], threshold: float = 0.8) -> set[tuple]:
    found = set()
    for exercise in HONEST:
        result = compare_exercise({s: a[exercise] for s, a in answers.items()}, stubs[exercise], threshold=threshold)
        found |= {(p.first, p.second, exercise) for p in result.pairs}
    return found


@pytest.fixture(scope="module")
def stubs() -> dict[str, str]:
    source = released_source()
    released = release_notebook(source)
    return {ex.exercise: released.cells[ex.solution].source for ex in source_exercises(source)}


def released_source():
    return nbformat.read(SOURCE, as_version=4)


def write_submissions(root: Path, answers: dict[str, dict[str, str]]) -> list[Path]:
    """One notebook per student: the released notebook with their answers in its answer cells."""
    source = released_source()
    exercises = {ex.exercise: ex.solution for ex in source_exercises(source)}
    paths = []
    for student, theirs in answers.items():
        nb = release_notebook(source)
        for exercise, text in theirs.items():
            nb.cells[exercises[exercise]].source = text
        path = root / student / f"{NOTEBOOK}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
        paths.append(path)
    return paths


# --------------------------------------------------------------------------- the tests


def test_every_disguised_copy_is_found_and_no_honest_pair_is_flagged(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(SOURCE, source)
    answers = class_answers()
    assert len([s for s in answers if s.startswith("honest")]) == 60
    paths = write_submissions(tmp_path / "submissions", answers)
    read = read_answers(paths, source=source)
    report = similarity_report(read, threshold=0.8)
    found = {(p.first, p.second, p.exercise) for p in report.pairs}
    assert found == EXPECTED
    by_exercise = {e.exercise: e for e in report.exercises}
    assert by_exercise["icu-sensitivity"].compared == 0  # `icu_sensitivity = 10`: naturally alike, never compared
    assert by_exercise["max-queries"].answers == 65 and by_exercise["max-queries"].compared >= 30


@pytest.mark.parametrize("seed", range(1, 6))
def test_other_draws_of_honest_variety_flag_no_honest_pair_and_still_find_the_copies(seed, stubs):
    assert flagged(class_answers(seed), stubs) == EXPECTED


def test_a_short_numeric_answer_identical_across_the_class_is_never_a_pair(stubs):
    answers = {f"s{i}": f"{STARTER}\nK_max = 538" + ("  # by hand" if i % 3 else "") for i in range(60)}
    answers.update({"t0": f"{STARTER}\nK_max=538", "t1": f"{STARTER}\nK_max = 538.0"})
    result = compare_exercise(answers, stubs["max-queries"])
    assert result.pairs == [] and result.compared == 0 and result.answers == 62


def test_two_identical_answers_in_a_small_class_are_a_pair_but_the_stub_and_starter_code_are_not(stubs):
    original = ORIGINALS[("honest-29", "workload-sensitivity")]
    stub = stubs["workload-sensitivity"]
    pairs = compare_exercise({"ada": original, "bob": original, "cy": stub, "dee": stub}, stub).pairs
    assert [(p.first, p.second, p.score) for p in pairs] == [("ada", "bob", 1.0)]
    assert "the text is the same but for spacing" in pairs[0].explanation
    assert fingerprints(stub) and not fingerprints(stub) - fingerprints(stub + "\n")  # the stub excludes itself


def test_normalisation_sets_aside_names_literals_comments_layout_and_order():
    assert normalised_statements("x = 1e3  # a comment\ny = x") == normalised_statements("total=1000.0\nother = total")
    assert normalised_statements("a = 10**5") == normalised_statements("a = 100_000")
    assert normalised_statements("s += abs(v)") == normalised_statements("s = s + abs(v)")
    assert sorted(normalised_statements("a = 1\nb = 2")) == sorted(normalised_statements("b = 2\na = 1"))
    assert normalised_statements("x = np.log(y)") != normalised_statements("x = math.log(y)")  # what it calls stays


def test_the_explanation_says_what_is_alike():
    copy = COPIES[("copier-d", "honest-41", "exact-tail-level")]
    original = ORIGINALS[("honest-41", "exact-tail-level")]
    (pair,) = compare_exercise({"a": original, "b": copy}).pairs
    assert pair.score == 1.0
    assert pair.explanation.startswith(f"{pair.shared} of the {pair.either} normalised 5-token runs")
    assert "the same statements in another order" in pair.explanation


@pytest.mark.parametrize(
    "hostile",
    [
        "def f(:\n    return",  # a syntax error
        "%timeit x = 1\n!rm -rf /\nx = (",  # magics and an unclosed bracket
        "x = " + "-" * 50_000 + "1",  # too deep for the parser and the walk
        "x = (" * 300 + "1" + ")" * 300,
        "x = 10 ** 10 ** 10 ** 10",  # folded in floats: overflow, not a hang
        "x = 1" + "0" * 5_000,  # an integer literal past int's digit limit
        "'''unterminated",
        "\x00\x1b[31m<script>alert(1)</script>",
        "x = 1\n" * 100_000,  # past the size cap
    ],
)
def test_a_hostile_answer_never_breaks_the_comparison(hostile, stubs):
    answers = {"evil": hostile, "twin": hostile, "honest": ORIGINALS[("honest-29", "workload-sensitivity")]}
    result = compare_exercise(answers, stubs["workload-sensitivity"])
    assert result.answers <= 3
    assert len(fingerprints(hostile)) <= similarity.MAX_FINGERPRINTS


def distinct_answer(i: int) -> str:
    """An answer of five lines whose numbers are its own."""
    return f"v = {i}\nw = v * {i + 0.5}\nu = np.sqrt(w + {i * 3})\nz = u - {i * 7}\nprint(z, w / {i + 2}, {i * 5})"


def test_pairs_are_found_without_comparing_every_pair_of_a_large_class():
    # 3,000 distinct answers: each pair compared would be 4.5 million Jaccard indices; the inverted index visits
    # only pairs that share an uncommon fingerprint (here the one planted copy).
    answers = {f"s{i}": distinct_answer(i) for i in range(3_000)}
    answers["copy"] = answers["s1234"].replace("v", "q")
    result = compare_exercise(answers)
    assert [(p.first, p.second) for p in result.pairs] == [("copy", "s1234")]


def test_a_bad_threshold_is_refused_naming_it():
    with pytest.raises(ValueError, match="threshold"):
        compare_exercise({}, threshold=0)
    with pytest.raises(ValueError, match="threshold"):
        compare_exercise({}, threshold=1.5)
    with pytest.raises(TypeError, match="threshold"):
        compare_exercise({}, threshold="0.8")


# --------------------------------------------------------------------------- the course file


def _outline(tmp_path: Path) -> dict[str, dict[str, float]]:
    source = tmp_path / "source"
    source.mkdir(exist_ok=True)
    shutil.copy(SOURCE, source)
    return read_outline(source)


COURSE = f"""
[assignments.week1]
notebooks = ["{NOTEBOOK}"]
due = 2026-10-05T23:59:00-04:00
"""


def test_the_threshold_comes_from_the_course_file_and_defaults_to_0_8(tmp_path):
    outline = _outline(tmp_path)
    path = tmp_path / "course.toml"
    path.write_text(COURSE + "\n[similarity]\nthreshold = 0.65\n")
    assert load_course(path, outline).similarity_threshold == 0.65
    path.write_text(COURSE)
    assert load_course(path, outline).similarity_threshold == similarity.DEFAULT_THRESHOLD == 0.8
    assert Course.from_outline(outline).similarity_threshold == 0.8


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[similarity]\nthreshold = 0", "similarity.threshold: must be a number more than 0 and at most 1, got 0"),
        ("[similarity]\nthreshold = 1.5", "similarity.threshold: must be a number more than 0 and at most 1, got 1.5"),
        ('[similarity]\nthreshold = "high"', "similarity.threshold: must be a number more than 0"),
        ("[similarity]\nthreshhold = 0.8", "similarity.threshhold: unknown key (allowed: threshold)"),
        ("similarity = 0.8", "similarity: must be a table"),
    ],
)
def test_a_bad_similarity_key_is_refused_in_one_line_naming_it(tmp_path, text, message):
    path = tmp_path / "course.toml"
    path.write_text(COURSE + "\n" + text + "\n" if text.startswith("[") else text + "\n" + COURSE)
    with pytest.raises(CourseError, match=message.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)")):
        load_course(path, _outline(tmp_path))


def test_the_shipped_course_file_sets_the_threshold():
    notebooks = SOURCE.parent
    course = load_course(notebooks / "course.toml", read_outline(notebooks))
    assert course.similarity_threshold == 0.8


# --------------------------------------------------------------------------- the class summary


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[str] = []
        self._in_pre = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "pre":
            self._in_pre = True
            self.cells.append("")

    def handle_endtag(self, tag):
        if tag == "pre":
            self._in_pre = False

    def handle_data(self, data):
        if self._in_pre:
            self.cells[-1] += data


SCRIPT = "<script>alert('copied')</script>"


def summary_page(tmp_path: Path, answers: ClassAnswers | None, course: Course | None = None) -> str:
    rows = [GradeRow(s, NOTEBOOK, "max-queries", "passed", points=1.0, max_points=1.0) for s in ("ada", "bob", "cy")]
    outline = {NOTEBOOK: {"max-queries": 1.0}}
    report = tmp_path / "grades.csv"
    _, text = write_gradebook(rows, outline, report=report, course=course, answers=answers)
    return (tmp_path / "grades_summary.html").read_text(), text


def test_the_summary_shows_ranked_pairs_side_by_side_as_text(tmp_path):
    original = ORIGINALS[("honest-52", "max-queries")] + f'# {SCRIPT}\nnote = """{SCRIPT}"""\n'
    copy = COPIES[("copier-e", "honest-52", "max-queries")] + f'note = "{SCRIPT}"\n'
    near = original.replace("2_000", "3000").replace("K_max + 1", "K_max + 2")
    answers = ClassAnswers(
        {(NOTEBOOK, "max-queries"): {"ada": original, "bob": copy, "cy": near}},
        {(NOTEBOOK, "max-queries"): STARTER + "\nK_max = ...  # your answer"},
    )
    outline = {NOTEBOOK: {"max-queries": 1.0}}
    lenient = Course(Course.from_outline(outline).assignments, similarity_threshold=0.4)
    page, text = summary_page(tmp_path, answers, lenient)
    parsed = _Page()
    parsed.feed(page)
    assert "script" not in parsed.tags  # the student's <script> is text
    assert "&lt;script&gt;alert(&#39;copied&#39;)&lt;/script&gt;" in page
    report = similarity_report(answers, threshold=0.4)
    ranked = [(p.first, p.second) for p in report.pairs]
    assert ranked == [("ada", "bob"), ("ada", "cy"), ("bob", "cy")]
    assert report.pairs[0].score > report.pairs[1].score > report.pairs[2].score
    # each pair is two <pre> cells side by side, in rank order, holding the answers exactly as written
    expected = [answers.answers[(NOTEBOOK, "max-queries")][s] for pair in ranked for s in pair]
    assert parsed.cells == expected
    assert "not a penalty" in text and "never a" in page and "penalty by itself" in page
    assert page.index("1. " + NOTEBOOK) < page.index("2. " + NOTEBOOK)


def test_the_page_uses_the_course_threshold_and_says_when_nothing_was_compared(tmp_path):
    original, copy = ORIGINALS[("honest-52", "max-queries")], COPIES[("copier-e", "honest-52", "max-queries")]
    answers = ClassAnswers({(NOTEBOOK, "max-queries"): {"ada": original, "bob": copy}}, {})
    (pair,) = similarity_report(answers).pairs
    assert 0.8 <= pair.score < 0.99  # the copier changed the message
    outline = {NOTEBOOK: {"max-queries": 1.0}}
    strict = Course(Course.from_outline(outline).assignments, similarity_threshold=0.99)
    page, text = summary_page(tmp_path, answers, strict)
    assert "No pair of answers is that alike." in page and "or above 99%" in page and "similar" not in text
    page, text = summary_page(tmp_path, answers)  # without a course file: 0.8
    assert "No pair of answers is that alike." not in page and "or above 80%" in page
    assert "similar answers: 1 pairs at or above 80%" in text
    page, _ = summary_page(tmp_path, None)
    assert "Not compared in this run" in page


def test_answers_are_read_as_the_grader_reads_them_and_a_bad_file_is_left_out(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(SOURCE, source)
    original = ORIGINALS[("honest-29", "workload-sensitivity")]
    root = tmp_path / "submissions"
    paths = write_submissions(root, {"ada": {"workload-sensitivity": original}, "bob": {}})
    older = root / "ada" / f"{NOTEBOOK} (1).ipynb"  # the browser's copy number: the later download, graded
    nb = release_notebook(released_source())
    index = {ex.exercise: ex.solution for ex in source_exercises(released_source())}["workload-sensitivity"]
    nb.cells[index].source = "def workload_l1_sensitivity(W):\n    return 7"
    nbformat.write(nb, older)
    (root / "cy").mkdir()
    (root / "cy" / f"{NOTEBOOK}.ipynb").write_text("{ not json")
    (root / "dee").mkdir()
    (root / "dee" / f"{NOTEBOOK}.ipynb").symlink_to(paths[0])  # a link out of her folder: never read
    files = [*paths, older, root / "cy" / f"{NOTEBOOK}.ipynb", root / "dee" / f"{NOTEBOOK}.ipynb"]
    for path in files:
        os.utime(path, (1_000_000_000, 1_000_000_000))  # the same time: the copy number decides, as in grade
    read = read_answers(files, source=source)
    assert read.answers == {
        (NOTEBOOK, "workload-sensitivity"): {"ada": "def workload_l1_sensitivity(W):\n    return 7"}
    }
    assert "raise NotImplementedError" in read.stubs[(NOTEBOOK, "workload-sensitivity")]  # bob's stub: no answer


def test_the_page_shows_at_most_100_pairs_and_says_how_many_more(tmp_path):
    answers = {f"s{i:03d}{side}": distinct_answer(i) for i in range(103) for side in "ab"}
    report = ClassAnswers({(NOTEBOOK, "max-queries"): answers}, {})
    assert len(similarity_report(report).pairs) == 103
    page, text = summary_page(tmp_path, report)
    assert page.count("<pre>") == 2 * similarity.MAX_PAIRS_SHOWN
    assert "3 more pairs are at or above the threshold and not shown (the 100 most alike are)" in page
    assert "similar answers: 103 pairs at or above 80%" in text
