"""Corpus-scale jobs: a corpus of shards, processed shard by shard locally or on Ray, with per-shard Parquet
outputs registered in the DuckDB store (so a re-run resumes and a finished job can be opened again).

Modules: documents (the streaming document reader, JSONL / CSV / Parquet / TXT, used by NAG pools and targets and
the watermark scan), shards (CORPUS = a file, a directory or a glob of JSONL / Parquet / TXT shards), engine
(EngineConfig, process_shard, the local loop), ray_engine (the Ray Data actor pool), dispatch (runs a job's shards on
one of them), output (atomic Parquet shard files), jobs (the job
registry and `run_job`, which skips the shards already done).
"""
