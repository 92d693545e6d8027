"""Corpora for the corpus-job tests: a few hundred tiny documents in JSONL / Parquet / TXT shards."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

WORDS = ("cell protein gene enzyme membrane code function loop variable compiler market price trade bank "
         "river mountain rain forest music rhythm song guitar").split()


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30))) + "."


def write_corpus(directory: Path, n_docs: int = 240, n_shards: int = 6, seed: int = 0) -> Path:
    """`n_shards` shards (JSONL, Parquet and TXT in turn) holding `n_docs` documents with unique ids."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    per = n_docs // n_shards
    for s in range(n_shards):
        rows = [{"id": f"s{s}-d{i}", "text": text(rng), "domain": WORDS[s % 4]} for i in range(per)]
        kind = ("jsonl", "parquet", "txt")[s % 3]
        path = directory / f"part-{s:02d}.{kind}"
        if kind == "jsonl":
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        elif kind == "parquet":
            pq.write_table(pa.Table.from_pylist(rows), path)
        else:
            path.write_text("".join(r["text"] + "\n" for r in rows))
    return directory


def write_single(path: Path, n_docs: int = 200, seed: int = 0) -> Path:
    """One JSONL file (what `nag rank --engine local` reads)."""
    rng = random.Random(seed)
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": text(rng), "domain": WORDS[i % 3]}) + "\n"
                            for i in range(n_docs)))
    return path


def add_bad_shards(directory: Path) -> list[str]:
    """A non-UTF-8 shard, an empty one and one with the wrong schema; returns their names."""
    (directory / "bad-bytes.txt").write_bytes(b"fine line\n\xff\xfe broken \x80\n")
    (directory / "empty.jsonl").write_text("")
    (directory / "wrong-schema.jsonl").write_text(json.dumps({"body": "no text field"}) + "\n")
    return ["bad-bytes.txt", "empty.jsonl", "wrong-schema.jsonl"]
