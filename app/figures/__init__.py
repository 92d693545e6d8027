"""Pure functions from backend results to plotly figures (testable without Streamlit)."""
