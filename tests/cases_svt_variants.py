"""Test cases for the exercises of notebook 05 added after the first three (checks: ``dpcourse.checks.svt_variants``).

Same form as ``tests/test_checks.py``'s ``CASES``, which merges this dict into its own: exercise id →
(check, right answer (args), [(wrong answer (args), what the message must say)]).
"""

from __future__ import annotations

CASES: dict = {}
