"""Regenerate every shipped table: ``python -m dpcourse.data``."""

from ..exact import write_variant_loss_table
from ..factorization import write_all_range_table
from ..widgets.trees import write_table

print(f"wrote {write_table()}")
print(f"wrote {write_all_range_table()}")
print(f"wrote {write_variant_loss_table()}")
