"""Regenerate every shipped table: ``python -m dpcourse.data``."""

from ..widgets.trees import write_table

print(f"wrote {write_table()}")
