"""Small exact tables shipped with the package; ``python -m dpcourse.data`` regenerates them.

``interval_errors.npz``: the tree panel's per-length error curves of notebook 03
(:func:`dpcourse.widgets.trees.write_table`).
"""
