"""Read a notebook's stored prose and printed output, for the claims tests (``tests/test_claims_NN.py``).

nbval (``make nbtest``) checks that each stored output is what the code prints today; the claims
tests check that the prose says what those outputs, or the package, show. Each claims test names
the sentence it backs (a phrase that must stay in the markdown, so that rewording a claim sends
the writer to its test) and asserts the numbers behind it, so a sentence that the numbers
contradict fails.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat

NOTEBOOKS = Path(os.environ.get("DPCOURSE_NOTEBOOKS", Path(__file__).resolve().parents[2] / "notebooks"))
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:e[-+]?\d+)?", re.IGNORECASE)


def _squash(text: str) -> str:
    return " ".join(text.split())


class StoredNotebook:
    """One notebook as stored: markdown by cell id, printed text by cell id."""

    def __init__(self, filename: str):
        self.path = NOTEBOOKS / filename
        self.notebook = nbformat.read(self.path, as_version=4)
        self.cells = {cell.get("id"): cell for cell in self.notebook.cells}

    def prose(self, cell_id: str) -> str:
        cell = self.cells[cell_id]
        assert cell.cell_type == "markdown", f"cell {cell_id} is not markdown"
        return _squash(cell.source)

    def printed(self, cell_id: str) -> str:
        cell = self.cells[cell_id]
        assert cell.cell_type == "code", f"cell {cell_id} is not code"
        return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")

    def printed_lines(self, cell_id: str) -> list[str]:
        return [line for line in self.printed(cell_id).splitlines() if line.strip()]

    def states(self, cell_id: str, *phrases: str) -> None:
        """Assert that each phrase (whitespace-normalised) is in the markdown cell: the claim under test."""
        text = self.prose(cell_id)
        for phrase in phrases:
            assert _squash(phrase) in text, f"cell {cell_id} no longer says {phrase!r}: update its claims test"


def numbers(text: str) -> list[float]:
    """Every number in a line of printed text, in order (thousands separators allowed)."""
    return [float(token.replace(",", "")) for token in _NUMBER.findall(text) if any(ch.isdigit() for ch in token)]


def number_after(text: str, label: str) -> float:
    """The first number that follows ``label`` in ``text``."""
    index = text.index(label) + len(label)
    return numbers(text[index:])[0]
