"""Where an artifact came from. Clean-up removes only what a run computed: shipped reference artifacts and
artifacts a user imported are never removed by deleting runs."""
from __future__ import annotations

REFERENCE = "reference"  # shipped in data/reference, imported by `models prepare` / the app's first open
COMPUTED = "computed"    # written by a computation in this store (`cached`, `cached_many`)
IMPORTED = "imported"    # brought in by a user (`python -m backend store import`)
ORIGINS = (REFERENCE, COMPUTED, IMPORTED)
