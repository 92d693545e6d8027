"""The catalogue of views: one entry per page, read by the navigation and by the Home page."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PAGES_DIR = Path(__file__).resolve().parent.parent / "pages"


@dataclass(frozen=True)
class View:
    title: str
    script: str  # file name in pages/
    icon: str
    summary: str
    finding: str  # the paper finding it reproduces ("" for tool pages)

    @property
    def path(self) -> Path:
        return PAGES_DIR / self.script


HOME = View("Home", "home.py", ":material/home:", "What each view does, the loaded model and the store.", "")
FEATURES: tuple[View, ...] = ()
TOOLS = (
    View("Runs", "runs.py", ":material/history:",
         "Every computation ever requested: filter, reopen, export (CSV/Parquet/JSON), delete.", ""),
)
