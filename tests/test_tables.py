"""dpcourse.tables: the HTML and the plain text of a table hold the same cells, escaped, aligned."""

import numpy as np
import pytest

from dpcourse.tables import Table, format_cell


def test_plain_text_is_aligned_and_html_holds_the_same_cells():
    table = Table(["b", "error at d = 1024"], [[4, 0.123456], [16, np.float64(2.5e-5)]], caption="trees")
    lines = str(table).splitlines()
    assert lines[0] == "trees"
    assert lines[1].index("error") == lines[3].index("0.1235") == lines[4].index("2.5e-05")
    page = table._repr_html_()
    for cell in ("<td>4</td>", "<td>0.1235</td>", "<td>2.5e-05</td>", "<caption>trees</caption>"):
        assert cell in page


def test_cells_are_escaped_in_html():
    page = Table(["<b>"], [["a & <i>b</i>"]])._repr_html_()
    assert "<b>" not in page.replace("<tbody>", "") and "&lt;i&gt;" in page and "&amp;" in page


def test_a_row_of_the_wrong_length_names_it():
    with pytest.raises(ValueError, match=r"rows\[1\] has 1 cells; expected 2"):
        Table(["a", "b"], [[1, 2], [3]])


@pytest.mark.parametrize(
    "value, text", [(3, "3"), (np.int64(7), "7"), (True, "True"), (0.000123456, "0.0001235"), ("x", "x")]
)
def test_format_cell(value, text):
    assert format_cell(value) == text
