"""Grading a batch of submissions: plan each run, run it in the sandbox, judge the evidence outside, report.

- :mod:`.plan`: reading a submission and matching its answers to the instructor's exercises;
- :mod:`.run`: the batch (:func:`~.run.grade`): every submission in its own sandbox, one row per exercise;
- :mod:`.verdicts`: the evidence a run sent back, judged into grade rows;
- :mod:`.judge_pool`: the judges' own processes, with a budget per exercise;
- :mod:`.reports`: grade rows, the CSV report, its journal (resuming) and merging shards;
- :mod:`.similarity`: answers that are suspiciously alike.
"""
