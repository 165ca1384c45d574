"""Regenerate every shipped table: ``python -m dpcourse.data``."""

from ..linear_queries import write_all_range_table
from ..svt import write_variant_loss_table
from ..widgets.trees import write_table

print(f"wrote {write_table()}")
print(f"wrote {write_all_range_table()}")
print(f"wrote {write_variant_loss_table()}")
