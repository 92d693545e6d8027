"""Streamlit front end: navigation, shared widgets and plotly figures. No computation lives here."""
