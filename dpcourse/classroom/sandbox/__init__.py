"""Where a submission runs: bubblewrap's sandbox or an unconfined process, and the worker inside it.

- :mod:`.runner`: choosing the sandbox and running one job in it, the result read back and verified;
- :mod:`.bubblewrap`: bubblewrap's command line (namespaces, read-only binds, tmpfs mounts, the seccomp filter);
- :mod:`.limits`: what a run may use, applied to its first process and its control group, and how many fit;
- :mod:`.users`: the user ids runs go by, and ending every process of one;
- :mod:`.worker`: the process inside the sandbox that runs one notebook and signs what it collected.

Nothing here judges an answer or knows a course: a run takes a notebook and gives back signed evidence.
"""
