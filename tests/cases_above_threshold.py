"""Test cases for the exercises of notebook 04 added after the first three (checks: ``dpcourse.checks.above_threshold``).

Same form as ``tests/test_checks.py``'s ``CASES``, which merges this dict into its own: exercise id →
(check, right answer (args), [(wrong answer (args), what the message must say)]).
"""

from __future__ import annotations

CASES: dict = {}
