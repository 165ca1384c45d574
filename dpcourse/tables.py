"""Tables in a notebook: rendered as HTML that fits a laptop's width, with the same numbers as plain text.

A notebook that prints a table with ``print`` gets a block of fixed-width text that wraps at about 100
characters in JupyterLab beside the file browser. :class:`Table` is shown by Jupyter as an HTML table (its
columns shrink to fit, long headers wrap inside their cell) and still carries a ``text/plain`` form: the
plain text is what nbval compares when it re-runs a notebook, and what a terminal shows.

>>> table = Table(["b", "error"], [[2, 0.5], [4, 0.25]], caption="one redraw")
>>> print(table)
one redraw
b  error
-  -----
2  0.5
4  0.25
>>> "<th>error</th>" in table._repr_html_()
True
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Table", "format_cell"]


def format_cell(value: Any) -> str:
    """One cell as text: integers as they are, other numbers to 4 significant digits, anything else with ``str``.

    Parameters
    ----------
    value : Any
        The cell: a bool (``True``/``False``), an int or NumPy integer, a float or NumPy float (``:.4g``),
        or anything else (``str``).

    Returns
    -------
    str
        The cell's text.
    """
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    return str(value)


@dataclass(frozen=True)
class Table:
    """A table for a notebook cell: HTML for the reader, aligned text for nbval and terminals.

    Parameters
    ----------
    header : sequence of str
        Column titles.
    rows : sequence of sequences
        One sequence per row, as many cells as ``header``; numbers are formatted by ``formatter``.
    caption : str, optional
        A line above the table.
    formatter : callable, optional
        Turns a cell into text; :func:`format_cell` by default.

    Raises
    ------
    ValueError
        If a row has a different number of cells from ``header``.
    """

    header: Sequence[str]
    rows: Sequence[Sequence[Any]]
    caption: str = ""
    formatter: Callable[[Any], str] = field(default=format_cell, repr=False)

    def __post_init__(self) -> None:
        for index, row in enumerate(self.rows):
            if len(row) != len(self.header):
                raise ValueError(
                    f"rows[{index}] has {len(row)} cells; expected {len(self.header)}, one per column of header"
                )

    def cells(self) -> list[list[str]]:
        """Every row's cells as text.

        Returns
        -------
        list of list of str
            One list per row, each cell turned into text by ``formatter``.
        """
        return [[self.formatter(value) for value in row] for row in self.rows]

    def __str__(self) -> str:
        lines = [list(map(str, self.header)), ["-" * len(str(title)) for title in self.header], *self.cells()]
        widths = [max(len(line[column]) for line in lines) for column in range(len(self.header))]
        text = [
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in lines
        ]
        return "\n".join(([self.caption] if self.caption else []) + text)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(str(title))}</th>" for title in self.header)
        rows = ("".join(f"<td>{html.escape(cell)}</td>" for cell in row) for row in self.cells())
        body = "".join(f"<tr>{row}</tr>" for row in rows)
        caption = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        return f'<table class="dpcourse-table">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
