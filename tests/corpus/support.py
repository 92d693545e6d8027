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


def add_bad_shards(directory: Path) -> list[str]:
    """A non-UTF-8 shard, an empty one and one with the wrong schema; returns their names."""
    (directory / "bad-bytes.txt").write_bytes(b"fine line\n\xff\xfe broken \x80\n")
    (directory / "empty.jsonl").write_text("")
    (directory / "wrong-schema.jsonl").write_text(json.dumps({"body": "no text field"}) + "\n")
    return ["bad-bytes.txt", "empty.jsonl", "wrong-schema.jsonl"]


class CountTask:
    """A model-free task for the job machinery: one row (id, characters) per document. Each shard it runs is
    logged in `log_dir`; `fail_on` (a shard name) raises there once (a crash), `kill_on` ends the worker
    process there once (a killed Ray worker; never with the local engine). Neither is part of the key, so a
    re-run is the same job."""

    fingerprint = "count-v1"

    def __init__(self, log_dir: Path, fail_on: str = "", kill_on: str = "") -> None:
        self.log_dir, self.fail_on, self.kill_on = str(log_dir), fail_on, kill_on

    def key(self) -> dict:
        return {"task": "count"}

    def open(self):
        return self

    def run(self, shard):
        import os

        from backend.corpus.documents import iter_documents

        once = Path(self.log_dir) / f"once-{shard.name}"
        if shard.name in (self.fail_on, self.kill_on) and not once.exists():
            once.write_text("")
            if shard.name == self.kill_on:
                os._exit(1)
            raise RuntimeError("crash while processing " + shard.name)
        rows = [{"id": d.id, "chars": len(d.text)} for d in iter_documents(shard.path)]
        with open(Path(self.log_dir) / "processed.log", "a") as log:
            log.write(shard.name + "\n")
        return pa.Table.from_pylist(rows, schema=pa.schema([("id", pa.string()), ("chars", pa.int64())])), []


def processed(log_dir: Path) -> list[str]:
    log = Path(log_dir) / "processed.log"
    return log.read_text().split() if log.exists() else []
