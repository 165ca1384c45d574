"""The learning management systems: reading what each hands out and writing what each takes in.

- :mod:`.archive`: reading an LMS's download without trusting it (sizes, names, links, metadata);
- :mod:`.collect`: an LMS's download as one folder per student (``python -m dpcourse collect``);
- :mod:`.canvas`: Canvas's REST API (``python -m dpcourse canvas pull|push``);
- :mod:`.feedback_zip`: feedback back to Canvas in one upload;
- :mod:`.gradescope`: the grader as a Gradescope autograder (``python -m dpcourse gradescope``).
"""
