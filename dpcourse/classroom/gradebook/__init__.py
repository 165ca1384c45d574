"""From grade rows to a gradebook: the roster, course totals, the class summary and each student's feedback."""
