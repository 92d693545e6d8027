"""The built-in strategies; importing this package registers them (listed in backend.features).

Import order is registration order, which is the order pages and `decode list` show.
"""
from backend.decoding.algorithms import basic  # noqa: F401  (registers on import)
from backend.decoding.algorithms import mh  # noqa: F401
from backend.decoding.algorithms import asmc  # noqa: F401
