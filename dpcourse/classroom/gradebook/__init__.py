"""From grade rows to a gradebook.

- :mod:`.roster`: who the students are and when each handed in (the roster, ``collected.csv``, file times);
- :mod:`.totals`: what each student scored on each assignment, late penalties, ``<report>_totals.csv``;
- :mod:`.render`: what the class got wrong: the terminal summary, the summary page, the templates;
- :mod:`.feedback`: one Markdown feedback file per student and graded notebook.

Each LMS's grade import is its platform's (:mod:`dpcourse.classroom.lms`); :mod:`dpcourse.classroom.outputs`
writes them all.
"""
