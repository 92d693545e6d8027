"""Numbers in tables as a researcher reads them at a glance; exports are made from the unformatted frame."""
from __future__ import annotations

import pandas as pd

from backend.significance import format_p


def is_p_column(name: str) -> bool:
    """A column holding p-values, by the names the pages use ("p", "p (corrected)", "McNemar p", "p_value")."""
    words = str(name).lower().replace("_", " ").replace("-", " ").split()
    return bool(words) and (words[0] == "p" or words[-1] == "p" or "p value" in " ".join(words))


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy for display: p-value columns as "9.3e-10" / "< 1e-300" text (a float column printed 1e-39 as a row
    of zeros). Pass the original frame to the download buttons, which keep full precision."""
    shown = frame.copy()
    for column in shown.columns:
        if is_p_column(column) and pd.api.types.is_numeric_dtype(shown[column]):
            shown[column] = [format_p(None if pd.isna(v) else float(v)) for v in shown[column]]
    return shown
