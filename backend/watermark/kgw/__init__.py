"""KGW token-level green-list watermark (the baseline)."""
from backend.watermark.kgw.config import KGWConfig

__all__ = ["KGWConfig"]
