"""The learning management systems: reading what each hands out and writing what each takes in.

One place per platform, holding both directions: :mod:`.canvas` (its download, REST API, gradebook import and
feedback upload), :mod:`.gradescope` (its export, the autograder, its grade import) and :mod:`.folders` (plain
``DIR/<student>/*.ipynb``). What they share:

- :mod:`.archive`: reading a download without trusting it (sizes, names, links, budgets);
- :mod:`.claims`: who each file belongs to (the roster matched to the LMS's identities);
- :mod:`.pipeline`: ranking each student's files and writing the kept ones;
- :mod:`.collected`: the rows of ``collected.csv``;
- :mod:`.collect`: ``collect_canvas``, ``collect_gradescope``, ``collect_folders`` and :func:`~.collect.collect`.
"""
