"""IPMark-style hierarchical personalised sentence-level watermark (model and user identity)."""
from backend.watermark.ipmark.config import IPMarkConfig

__all__ = ["IPMarkConfig"]
