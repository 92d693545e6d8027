"""Training code, outside the product: the LoRA reasoning adapters the Disagreement and Decoding pages load
(scripts/train_reasoning_adapter.py runs it). backend/ never imports this package (tests/test_layering.py)."""
