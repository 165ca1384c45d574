"""Where a submission runs: bubblewrap's sandbox or an unconfined process, and the worker inside it.

- :mod:`.runner`: choosing the sandbox, its command line, its limits and running one job in it;
- :mod:`.worker`: the process inside the sandbox that runs one notebook and signs what it collected.

Nothing here judges an answer or knows a course: a run takes a notebook and gives back signed evidence.
"""
