"""Parallel sentence sets: the shipped EN/FR/DE/ES file and user uploads (TSV, CSV, JSONL).

A set is a table with one column per language (ISO code) and a split per row: `heads` rows give
demonstrations and head-finding prompts, `evaluate` rows are held out for scoring generations.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import random
from dataclasses import dataclass

from backend.config import settings
from backend.errors import UserError
from backend.jsonlines import json_objects
from backend.upload_caps import LineCaps, check_lines

SPLITS = ("heads", "evaluate")
MAX_ROWS = 2000  # larger uploads are sampled down to this many rows (seeded)
MAX_BYTES = 20 * 2**20
# Checked on the bytes before decoding: parsing holds several copies of the text (str, rows, dicts), so the
# file's size bounds the request's memory; a sentence is far under 64 KB.
UPLOAD_CAPS = LineCaps("The parallel-sentence file", max_lines=200_000, max_line_bytes=64 * 2**10,
                       max_bytes=MAX_BYTES)
MIN_ROWS = 4
LANGUAGE_NAMES = {
    "en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "pl": "Polish", "ru": "Russian", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
    "ar": "Arabic", "tr": "Turkish", "sv": "Swedish", "da": "Danish", "no": "Norwegian", "fi": "Finnish",
    "cs": "Czech", "el": "Greek", "hu": "Hungarian", "ro": "Romanian", "uk": "Ukrainian", "ca": "Catalan",
}
_NON_LANGUAGE_COLUMNS = {"id", "split", "topic", "source", "note", "notes", "comment"}


@dataclass(frozen=True)
class ParallelSet:
    """Aligned sentences. `columns[lang][i]` is row i in `lang`; `splits[i]` is `heads` or `evaluate`."""

    name: str
    languages: tuple[str, ...]
    ids: tuple[str, ...]
    splits: tuple[str, ...]
    columns: dict[str, tuple[str, ...]]
    notices: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        """Content hash: part of every cache key, so an edited upload is never served stale results."""
        text = json.dumps([self.languages, self.ids, self.splits, [self.columns[lang] for lang in self.languages]])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self, split: str) -> list[int]:
        return [i for i, s in enumerate(self.splits) if s == split]

    def text(self, lang: str, row: int) -> str:
        return self.columns[lang][row]

    def check_pair(self, src: str, tgt: str) -> None:
        for lang in (src, tgt):
            if lang not in self.languages:
                raise UserError(f"Language {lang!r} is not in the data set {self.name!r} "
                                f"(it has {', '.join(self.languages)}).")
        if src == tgt:
            raise UserError("Source and target language must differ.")
        for split in SPLITS:
            if len(self.rows(split)) < 2:
                raise UserError(f"The data set needs at least 2 rows in the {split!r} split.")


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)


def builtin() -> ParallelSet:
    """The shipped set (data/mt/parallel.tsv)."""
    path = settings().data_dir / "mt" / "parallel.tsv"
    return parse_upload(path.read_bytes(), path.name, name="built-in EN/FR/DE/ES (160 sentences)")


def _decode(raw: bytes) -> tuple[str, list[str]]:
    if b"\x00" in raw[:4096]:
        if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
            return raw.decode("utf-16"), ["The file was UTF-16; it was read as such."]
        raise UserError("This looks like a binary file, not a text table of sentences.")
    try:
        return raw.decode("utf-8-sig"), []
    except UnicodeDecodeError as err:
        # Mixed encodings: mostly UTF-8 with some Latin-1/Windows-1252 lines. Decode line by line.
        lines, fixed = [], 0
        for line in raw.splitlines(keepends=True):
            try:
                lines.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                lines.append(line.decode("cp1252", errors="replace"))
                fixed += 1
        return "".join(lines), [f"The file is not valid UTF-8 (first bad byte at offset {err.start}); "
                                f"{fixed} line(s) were read as Windows-1252. Check accented characters."]


def _records(text: str, filename: str) -> list[dict[str, str]]:
    lower = filename.lower()
    if lower.endswith((".jsonl", ".json", ".ndjson")):
        records = []
        for _, obj in json_objects(text.splitlines(), filename, '{"en": "...", "fr": "..."}'):
            records.append({str(k).strip().lower(): "" if v is None else str(v) for k, v in obj.items()})
        return records
    if lower.endswith(".tsv") or lower.endswith(".txt"):
        delimiter = "\t"
    elif lower.endswith(".csv"):
        delimiter = ","
    else:
        delimiter = "\t" if text.split("\n", 1)[0].count("\t") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        table = [row for row in reader]
    except csv.Error as err:
        raise UserError(f"{filename} could not be read as a table: {err}.") from None
    table = [row for row in table if any(cell.strip() for cell in row)]
    if not table:
        raise UserError(f"{filename} is empty.")
    header = [cell.strip().lower() for cell in table[0]]
    return [dict(zip(header, row)) for row in table[1:]]


def parse_upload(raw: bytes, filename: str, name: str | None = None, seed: int = 0) -> ParallelSet:
    """Parse a sentence-pair file. Raises UserError with a human message for anything unusable."""
    check_lines(raw, UPLOAD_CAPS)
    if not raw.strip():
        raise UserError(f"{filename} is empty.")
    text, notices = _decode(raw)
    records = _records(text, filename)
    keys = list(dict.fromkeys(k for rec in records for k in rec))
    languages = tuple(k for k in keys if k and k not in _NON_LANGUAGE_COLUMNS)
    if not records:
        raise UserError(f"{filename} has a header but no sentence rows.")
    if not languages:
        raise UserError(f"{filename} has no language columns. Name one column per language by its ISO code, "
                        "e.g. a header line `en<TAB>fr`.")
    if len(languages) < 2:
        raise UserError(f"{filename} has only one language column ({languages[0]!r}); sentence pairs need two, "
                        "e.g. `en` and `fr`.")
    bad = [lang for lang in languages if not (2 <= len(lang) <= 8 and lang.replace("-", "").replace("_", "").isalpha())]
    if bad:
        raise UserError(f"Column(s) {', '.join(map(repr, bad))} do not look like language codes; name language "
                        "columns by ISO code (en, fr, de, …) and keep only id/split/topic besides them.")
    kept = [rec for rec in records if all((rec.get(lang) or "").strip() for lang in languages)]
    dropped = len(records) - len(kept)
    if dropped:
        notices.append(f"{dropped} row(s) with an empty or missing sentence were skipped.")
    if len(kept) < MIN_ROWS:
        raise UserError(f"{filename} has {len(kept)} complete row(s) with all of {', '.join(languages)}; "
                        f"at least {MIN_ROWS} are needed.")
    if len(kept) > MAX_ROWS:
        notices.append(f"{filename} has {len(kept):,} rows; a random sample of {MAX_ROWS:,} (seed {seed}) is used.")
        kept = random.Random(seed).sample(kept, MAX_ROWS)
    splits = _splits(kept, notices)
    ids = tuple((rec.get("id") or "").strip() or f"r{i + 1:05d}" for i, rec in enumerate(kept))
    columns = {lang: tuple(" ".join(rec[lang].split()) for rec in kept) for lang in languages}
    return ParallelSet(name=name or filename, languages=languages, ids=ids, splits=splits, columns=columns,
                       notices=tuple(notices))


def _splits(records: list[dict[str, str]], notices: list[str]) -> tuple[str, ...]:
    given = [(rec.get("split") or "").strip().lower() for rec in records]
    if all(s in SPLITS for s in given) and all(s in given for s in SPLITS):
        return tuple(given)
    # No usable split column: hold out every third row, deterministic and spread over the file.
    if any(given):
        notices.append("The split column needs the values 'heads' and 'evaluate'; a 2:1 split was made instead.")
    return tuple("evaluate" if i % 3 == 2 else "heads" for i in range(len(records)))
