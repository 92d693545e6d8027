"""Backend of the interpretability and decoding dashboard: plain Python, no Streamlit."""
