"""What importing :mod:`dpcourse.plotting` does outside a kernel: ``rcParams`` from ``STYLE`` and nothing else."""

import subprocess
import sys

CHECK = """
import gc, matplotlib as mpl
before = dict(mpl.rcParams)
from dpcourse import plotting
changed = {k for k, v in mpl.rcParams.items() if before.get(k) != v}
assert changed <= set(plotting.STYLE), changed - set(plotting.STYLE)
assert gc.get_freeze_count() == 0  # the garbage collector is frozen only in a kernel, after the importing cell
print("ok")
"""


def test_importing_plotting_outside_a_kernel_only_sets_the_style():
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
