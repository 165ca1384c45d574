"""Judgements the check tests share: each (exercise, answers, seed) is probed and judged once per process.

Several tests read the same judgement: that a named mistake fails on a grading seed, that it is named, that its
message shows the input in short form. Probing ``implement`` runs the student's function up to 40,000 times, so the
evidence and the verdict of each are kept here, per process (pytest-xdist's ``--dist loadfile`` gives each test
file to one worker, and files that land in the same worker share them too). Both are deterministic in the answers
and the seed: the probe passes each call an rng seeded from its case.

The answers are told apart by identity, and kept alive here so that no other object takes their ``id``. A test
that times the judge, or gives it evidence of its own, calls the check itself.
"""

from __future__ import annotations

import copy

from dpcourse.checks import Exercise, Verdict

_JUDGED: dict[tuple, tuple[tuple, dict, Verdict]] = {}


def _judged(check: Exercise, answers: tuple, seed: int | None) -> tuple[tuple, dict, Verdict]:
    key = (check.exercise, tuple(id(answer) for answer in answers), seed)
    if key not in _JUDGED:
        evidence = check.evidence(*answers, seed=seed)
        kept = copy.deepcopy(evidence)  # as the probe gave it, whatever the judge does with its copy
        _JUDGED[key] = (answers, kept, check.verdict(evidence, seed=seed))
    return _JUDGED[key]


def evidence(check: Exercise, *answers: object, seed: int | None = None) -> dict:
    """``check.evidence(*answers, seed=seed)``, probed once per process (a fresh copy each call)."""
    return copy.deepcopy(_judged(check, answers, seed)[1])


def verdict(check: Exercise, *answers: object, seed: int | None = None) -> Verdict:
    """``check.verdict(check.evidence(*answers, seed=seed), seed=seed)``, judged once per process."""
    return _judged(check, answers, seed)[2]
