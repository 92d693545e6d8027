"""Base vs. reasoning model: where the two disagree, and what a one-token intervention there recovers (the
reasoning adapter they load is trained by training/adapter.py, outside the product)."""
