"""The KGW watermark as `transformers` writes it (`WatermarkingConfig`), read by `transformers.WatermarkDetector`."""
from backend.watermark.hf_kgw.config import HFKGWConfig

__all__ = ["HFKGWConfig"]
