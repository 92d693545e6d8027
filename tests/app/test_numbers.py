"""p-values read at a glance: scientific where small, '< 1e-300' where they underflow; exports keep the numbers."""
import math

import pandas as pd

from app.ui.numbers import is_p_column, readable
from backend.significance import format_p


def test_p_values_are_written_in_scientific_notation_where_small():
    assert format_p(0.016) == "0.016"
    assert format_p(9.3e-10) == "9.3e-10"
    assert format_p(1e-39) == "1.0e-39"
    assert format_p(0.0) == "< 1e-300" and format_p(1e-320) == "< 1e-300"
    assert format_p(None) == "–" and format_p(math.nan) == "–"
    assert format_p(0.5) == "0.5" and format_p(0.00099) == "9.9e-04"


def test_tables_show_p_columns_as_text_and_leave_the_rest():
    frame = pd.DataFrame({"method": ["a", "b"], "score": [3.612, 0.1], "p (corrected)": [9e-10, 1e-39],
                          "McNemar p": [0.049, None]})
    shown = readable(frame)
    assert list(shown["p (corrected)"]) == ["9.0e-10", "1.0e-39"]
    assert list(shown["McNemar p"]) == ["0.049", "–"]
    assert shown["score"].tolist() == [3.612, 0.1]
    assert frame["p (corrected)"].tolist() == [9e-10, 1e-39], "the frame for exports is untouched"
    assert is_p_column("p_value") and is_p_column("p") and not is_p_column("perplexity")
