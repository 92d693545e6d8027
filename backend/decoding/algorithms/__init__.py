"""The built-in strategies; importing this package registers them (listed in backend.features).

Import order is registration order, which is the order pages and `decode list` show.
"""
from backend.decoding.algorithms import basic
from backend.decoding.algorithms import mh
from backend.decoding.algorithms import asmc
from backend.decoding.algorithms import rc

__all__ = ["basic", "mh", "asmc", "rc"]  # imported for their registration
