"""The judges' processes (issue 27, class 4): verdicts as in the grader's process, a budget per exercise that a
slow judge cannot exceed, a cap on records, and a killed judge replaced for the next submission."""

from __future__ import annotations

import sys
import time

from dpcourse.checks import exercise
from dpcourse.classroom.judge import MAX_RECORDS, JudgePool

SEED = 12345


def test_verdicts_match_the_exercise_judged_in_process():
    check = exercise("max-queries")
    right, wrong = check.evidence(538), check.evidence(5000)
    with JudgePool(1) as judges:
        verdicts = judges.judge("max-queries", SEED, [right, wrong])
    assert isinstance(verdicts, list)
    assert [v["status"] for v in verdicts] == ["passed", "failed"]
    assert verdicts[1]["message"] == check.verdict(wrong, seed=SEED).message


def test_at_most_max_records_are_judged_and_an_unknown_exercise_is_an_error():
    check = exercise("max-queries")
    with JudgePool(1) as judges:
        verdicts = judges.judge("max-queries", SEED, [check.evidence(538)] * (MAX_RECORDS + 5))
        unknown = judges.judge("no-such-exercise", SEED, [check.evidence(538)])
    assert isinstance(verdicts, list) and len(verdicts) == MAX_RECORDS
    assert isinstance(unknown, str) and "judge failed" in unknown


def test_a_judge_past_its_budget_is_stopped_and_replaced():
    sleeper = (sys.executable, "-c", "import sys, time\nfor line in sys.stdin:\n    time.sleep(60)")
    with JudgePool(1, seconds=1.0, command=sleeper) as judges:
        started = time.monotonic()
        first = judges.judge("max-queries", SEED, [{}])
        second = judges.judge("max-queries", SEED, [{}])
        elapsed = time.monotonic() - started
    assert isinstance(first, str) and "budget of 1 s" in first
    assert isinstance(second, str) and "budget" in second  # a new process, stopped in its turn
    assert elapsed < 30  # two budgets and two start-ups, not the sleeper's minute


def test_a_judge_that_dies_is_an_error_not_a_hang():
    dies = (sys.executable, "-c", "import sys\nsys.stdin.readline()\nsys.exit(3)")
    with JudgePool(1, seconds=30.0, command=dies) as judges:
        started = time.monotonic()
        answer = judges.judge("max-queries", SEED, [{}])
    assert isinstance(answer, str) and "ended without an answer" in answer
    assert time.monotonic() - started < 20
