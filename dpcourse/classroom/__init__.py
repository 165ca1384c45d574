"""The classroom: what an instructor runs on top of the lectures' library.

- :mod:`dpcourse.classroom.release`: the students' copy (``python -m dpcourse release``);
- :mod:`dpcourse.classroom.collect`: an LMS's download (Canvas, Gradescope, folders) as one folder per
  student (``python -m dpcourse collect``), with :mod:`dpcourse.classroom.exports` reading each LMS's format;
- :mod:`dpcourse.classroom.plan`: reading a submission, matching its answers to the instructor's
  exercises and building the notebook that runs;
- :mod:`dpcourse.classroom.sandbox`: the sandbox (bubblewrap's command line, the refusal when there is
  none, resource limits) and the channel the results come back on;
- :mod:`dpcourse.classroom.worker`: the process that runs one notebook inside the sandbox;
- :mod:`dpcourse.classroom.judge`: the judges' own processes, with a budget per exercise;
- :mod:`dpcourse.classroom.judging`: evidence read back from a run, judged outside it;
- :mod:`dpcourse.classroom.reports`: grade rows, the CSV report, totals and merging;
- :mod:`dpcourse.classroom.course`: the course file (assignments, due times, points, late policy);
- :mod:`dpcourse.classroom.gradebook`: course totals, LMS imports, the class summary and feedback;
- :mod:`dpcourse.classroom.similarity`: answers that are suspiciously alike, for the class summary;
- :mod:`dpcourse.classroom.autograder`: the same grader as a Gradescope autograder
  (``python -m dpcourse gradescope build``);
- :mod:`dpcourse.classroom.cli`: the ``release``, ``collect``, ``grade`` and ``gradescope`` commands.

The classroom imports the library, the auditor and the checks; nothing below imports it.
"""
