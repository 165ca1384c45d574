"""Gradescope: its export read, the grader as its autograder, its grade import.

- :mod:`.autograder`: ``python -m dpcourse gradescope build`` and what ``run_autograder`` calls
  (``python -m dpcourse.classroom.lms.gradescope.autograder run``);
- :mod:`.staging`: a submission's files, read within caps, staged for grading;
- :mod:`.results`: the ``results.json`` a student sees;
- :mod:`.export`: the zip of *Export Submissions* and its ``submission_metadata.yml``, read without trusting it;
- :mod:`.grades`: the grade import CSV a grading run writes.
"""
