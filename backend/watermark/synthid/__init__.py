"""SynthID-Text as `transformers` writes it (`SynthIDTextWatermarkingConfig`), detected by its g-value score."""
from backend.watermark.synthid.config import SynthIDConfig

__all__ = ["SynthIDConfig"]
