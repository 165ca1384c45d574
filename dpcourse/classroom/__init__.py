"""The classroom: what an instructor runs on top of the lectures' library, laid out by role.

- :mod:`dpcourse.classroom.release`: the students' copy (``python -m dpcourse release``);
- :mod:`dpcourse.classroom.sandbox`: where a submission runs (bubblewrap, limits) and the worker inside;
- :mod:`dpcourse.classroom.grading`: plan, run and judge a batch, the grade report, similar answers;
- :mod:`dpcourse.classroom.course`: the course file (assignments, due times, points, late policy);
- :mod:`dpcourse.classroom.gradebook`: course totals, the class summary and feedback;
- :mod:`dpcourse.classroom.lms`: each LMS's download and upload (Canvas, Gradescope, folders);
- :mod:`dpcourse.classroom.cli`: the commands (``release``, ``collect``, ``grade``, ``canvas``, ``feedback``,
  ``gradescope``).

The classroom imports the library, the auditor and the checks; nothing below imports it.
"""
