"""Export buttons: the same table as CSV, Parquet and JSON.

The files are made when a button is clicked (Streamlit's deferred download data), not on every run of the page:
three encodings of every table on every page run were a good part of a stored view's server time."""
from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from backend.store.runs import EXPORT_FORMATS, export_runs

MIME = {"csv": "text/csv", "parquet": "application/octet-stream", "json": "application/json"}


def deferred_download(target, label: str, make: Callable[[], bytes | str], **button) -> None:
    """A download button whose file `make` builds on the click. The click does not rerun the page
    (on_click="ignore"): a rerun would replace the registered file maker while the browser asks for it, and on a
    busy server the download was lost."""
    target.download_button(label, make, on_click="ignore", **button)


def table_downloads(frame: pd.DataFrame, stem: str, key: str) -> None:
    columns = st.columns(len(EXPORT_FORMATS))
    for column, fmt in zip(columns, EXPORT_FORMATS):
        deferred_download(column, f"Export {fmt.upper()}", lambda fmt=fmt: export_runs(frame, fmt),
                          file_name=f"{stem}.{fmt}", mime=MIME[fmt], key=f"{key}-{fmt}", width="stretch")
