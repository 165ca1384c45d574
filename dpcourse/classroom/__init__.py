"""The classroom: what an instructor runs on top of the lectures' library, laid out by role.

Floors, lowest first (a module imports only its own group and the floors below; ``tests/test_layout.py``):

- :mod:`dpcourse.classroom.io` (atomic writes, safe CSV cells, printable text, capped reads) and
  :mod:`dpcourse.classroom.validation` (the one time parser, numbers, ids, time zones);
- :mod:`dpcourse.classroom.release`: the students' copy; :mod:`dpcourse.classroom.sandbox`: where a submission
  runs (bubblewrap, limits, user ids) and the worker inside;
- :mod:`dpcourse.classroom.grading`: plan, run and judge a batch, the grade report, similar answers;
- :mod:`dpcourse.classroom.course`: the course file (assignments, due times, points, late policy);
- :mod:`dpcourse.classroom.gradebook`: the roster, course totals, the class summary and feedback;
- :mod:`dpcourse.classroom.lms`: each LMS's download and upload (Canvas, Gradescope, folders), and beside it
  :mod:`dpcourse.classroom.marking`: written answers marked by hand (the marks database and the marking app);
- :mod:`dpcourse.classroom.outputs`: every file of a grading run beside its report;
- :mod:`dpcourse.classroom.cli`: the commands (``release``, ``collect``, ``grade``, ``gradescope``, ``feedback``,
  ``canvas``, ``mark``), which only parse and call.

The classroom imports the library, the auditor and the checks; nothing below imports it.
"""
