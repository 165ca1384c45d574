"""What a student can read in ``dpcourse.checks`` gives no answer for less work than solving (issue 38, class 9)."""

from __future__ import annotations

import hashlib
import inspect
import itertools
import time
from pathlib import Path

from dpcourse.checks import _svt_variants_noisy_max, svt_variants
from tests.checks.test_checks import AUDITED, FLAWS

ROOT = Path(__file__).resolve().parents[2]


def test_spot_the_flaws_digests_give_the_key_in_16_hashes_as_the_guide_says():
    """The instructors' guide says so: the digests are no dearer to invert than asking the check 16 times."""
    page = " ".join((ROOT / "book" / "instructors" / "grading.md").read_text().split())
    assert "finds the key in at most 16 hashes" in page and "no cheaper than asking the check 16 times" in page
    start = time.perf_counter()
    found, hashes = None, 0
    for options in itertools.product(svt_variants._OPTIONS, repeat=len(svt_variants._FLAW_DIGESTS)):
        hashes += len(options)
        guess = dict(zip(svt_variants._FLAW_DIGESTS, options, strict=True))
        if all(svt_variants._is_flaw(key, answer) for key, answer in guess.items()):
            found = guess
            break
    assert found == FLAWS and hashes <= 16 * len(svt_variants._FLAW_DIGESTS)
    per_line = sum(
        hashlib.sha256(f"{svt_variants._SALT}|{key}|{option}".encode()).hexdigest() == digest
        for key, digest in svt_variants._FLAW_DIGESTS.items()
        for option in svt_variants._OPTIONS
    )
    assert per_line == 4 and time.perf_counter() - start < 1.0  # 8 hashes find all four lines


def test_no_function_of_the_audit_check_passes_as_the_students_mechanism():
    """The judge reruns the audit on a noisy maximum of its own; that one must not be the exercise's answer."""
    tried = 0
    readable = [(module, item) for module in (svt_variants, _svt_variants_noisy_max) for item in vars(module).values()]
    for module, item in readable:
        if not inspect.isfunction(item) or item.__module__ != module.__name__:
            continue
        name = f"{module.__name__}.{item.__name__}"
        try:
            mechanism = item(2 / svt_variants.AUDIT_YOUR_OWN["epsilon"])
        except Exception:  # noqa: BLE001 - not a factory of mechanisms
            continue
        if not callable(mechanism):
            continue
        tried += 1
        exercise = svt_variants.audit_your_own
        verdict = exercise.verdict(exercise.evidence(mechanism, AUDITED, seed=11), seed=11)
        assert verdict.status == "failed", name
    assert tried >= 1  # the judge's own sampler was among them
