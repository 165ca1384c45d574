"""``python -m dpcourse.classroom.lms.gradescope build|run``: what Gradescope's ``run_autograder`` calls."""

import sys

from ...cli.gradescope import main

sys.exit(main())
