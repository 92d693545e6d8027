"""A tiny parallel set (short words, so few-shot prompts fit the tiny models' 256-byte context)."""
from __future__ import annotations

import pytest

from backend.mt.data import parse_upload

TINY_TSV = """en\tfr\tde\tsplit
cat\tchat\tKatze\theads
dog\tchien\tHund\theads
house\tmaison\tHaus\theads
tree\tarbre\tBaum\theads
water\teau\tWasser\theads
bread\tpain\tBrot\theads
sun\tsoleil\tSonne\tevaluate
book\tlivre\tBuch\tevaluate
car\tvoiture\tAuto\tevaluate
"""


@pytest.fixture(scope="session")
def tiny_data():
    return parse_upload(TINY_TSV.encode(), "tiny.tsv")
