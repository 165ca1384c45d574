"""The judges' processes (issue 27, class 4): verdicts as in the grader's process, a budget per exercise that a
slow judge cannot exceed, a cap on records, and a killed judge replaced for the next submission."""

from __future__ import annotations

import sys
import time

from dpcourse.checks import exercise
from dpcourse.classroom.grading.judge_pool import MAX_RECORDS, JudgePool

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


class _FixedJudges:
    """Stands in for a JudgePool: every exercise gets the same verdict."""

    def __init__(self, verdict: dict):
        self.verdict = verdict

    def judge(self, exercise, seed, records):
        return [dict(self.verdict) for _ in records]


def _planned(tmp_path):
    from dpcourse.classroom.grading import plan as plans
    from tests.classroom.grading_scenarios import NAME, right, write_course

    paths = write_course(tmp_path, {"ada": {NAME: right()}})
    sources, copies = plans.load_sources(tmp_path / "source")
    return plans.plan_submission(paths[0], plans.read_submission(paths[0]), "small", sources, copies)


def _result(plan):
    import json

    return {
        "skipped": {},
        "exercises": {
            ex: {
                "evidence": [json.dumps({"nonce": plan.nonces[ex], "records": [{"exercise": ex, "evidence": {}}]})],
                "solution_error": None,
            }
            for ex in plan.nonces
        },
    }


def test_partial_credit_counts_the_judges_share_only_where_the_course_allows_it(tmp_path):
    from dpcourse.classroom.grading.verdicts import judge_run

    plan = _planned(tmp_path)
    judges = _FixedJudges({"status": "failed", "message": "2 of 4 inputs right", "score": 0.5})
    rows = judge_run(plan, _result(plan), "", judges, frozenset({"exact-tail-level"}))
    points = {r.exercise: (r.status, r.points) for r in rows}
    assert points == {
        "max-queries": ("failed", 0.0),
        "icu-sensitivity": ("failed", 0.0),
        "exact-tail-level": ("failed", 0.5),
    }
    lying = _FixedJudges({"status": "failed", "score": 7.0})  # a share outside [0, 1) earns nothing
    assert {r.points for r in judge_run(plan, _result(plan), "", lying, frozenset(plan.nonces))} == {0.0}


def test_long_messages_are_cut_and_records_over_the_cap_are_not_judged(tmp_path):
    import json

    from dpcourse.classroom.grading.verdicts import MAX_MESSAGE, judge_run

    plan = _planned(tmp_path)
    rows = judge_run(plan, _result(plan), "", _FixedJudges({"status": "failed", "message": "x" * 900_000}))
    assert {len(r.message) for r in rows} == {MAX_MESSAGE}
    flood = _result(plan)
    ex = "max-queries"
    records = [{"exercise": ex, "evidence": {}}] * (MAX_RECORDS + 1)
    flood["exercises"][ex]["evidence"] = [json.dumps({"nonce": plan.nonces[ex], "records": records})]
    row = next(r for r in judge_run(plan, flood, "", _FixedJudges({"status": "passed"})) if r.exercise == ex)
    assert row.status == "errored" and f"{MAX_RECORDS + 1} times" in row.message
