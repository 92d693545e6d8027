"""Whether the bench-only trial int8 kernel (bench/int8_native.py) takes part in the tests."""
from __future__ import annotations

import os

from bench import int8_native


def trial_kernel_allowed() -> bool:
    """Only where this checkout has built it already (a bench run did) or with DASH_BUILD_TRIAL_KERNEL=1: its build
    takes 20-60 s, which `make test` on a fresh clone should not spend on a kernel the app does not use."""
    return int8_native.built() or os.environ.get("DASH_BUILD_TRIAL_KERNEL") == "1"
