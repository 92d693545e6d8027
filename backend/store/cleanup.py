"""Deleting runs, and only what they alone computed.

A run uses its own artifact (runs.artifact_key) and everything it read or wrote inside (run_artifacts). Deleting
runs removes an artifact only when all of these hold: a deleted run used it, its origin is `computed`, and no
remaining run of any session uses it. Reference and imported artifacts, other sessions' results and artifacts
no deleted run touched are never removed. `preview_delete` answers the same question without deleting, so a
confirmation can say exactly what will go.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb

from backend.store.db import connect
from backend.store.origin import COMPUTED


@dataclass(frozen=True)
class Deletion:
    """What deleting some runs removes (or removed). missing: requested run ids not found (or not this session's).
    artifacts: keys of the artifacts removed; by_feature: how many of them per feature; kept: artifacts the
    deleted runs used that stay (reference, imported, or used by a remaining run)."""

    runs: tuple[str, ...]
    missing: tuple[str, ...]
    artifacts: tuple[str, ...]
    by_feature: Mapping[str, int]
    kept: int

    def describe(self) -> str:
        """One sentence for a confirmation or a flash message (present tense: what this deletion does)."""
        if not self.runs:
            return "No run to delete."
        parts = ", ".join(f"{n} {feature}" for feature, n in sorted(self.by_feature.items()))
        removed = f"{len(self.artifacts)} stored result(s) ({parts})" if self.artifacts else "no stored result"
        kept = f"; {self.kept} result(s) they used stay (shipped, imported or used by other runs)" if self.kept else ""
        return f"{len(self.runs)} run(s) and {removed}{kept}."

    def to_json(self) -> dict:
        return {"runs_deleted": list(self.runs), "missing": list(self.missing),
                "artifacts_removed": len(self.artifacts), "artifacts_removed_by_feature": dict(self.by_feature),
                "artifacts_kept": self.kept}


def preview_delete(run_ids: Sequence[str], session: str | None = None) -> Deletion:
    """What `delete_runs(run_ids, session)` would remove; deletes nothing."""
    with connect() as con:
        return _plan(con, run_ids, session)


def delete_runs(run_ids: Sequence[str], session: str | None = None) -> Deletion:
    """Delete these runs (only those of `session` when given) and the computed artifacts only they used."""
    with connect() as con:
        plan = _plan(con, run_ids, session)
        if plan.runs:
            con.execute("DELETE FROM run_artifacts WHERE run_id IN (SELECT unnest(?))", [list(plan.runs)])
            con.execute("DELETE FROM runs WHERE run_id IN (SELECT unnest(?))", [list(plan.runs)])
        if plan.artifacts:
            con.execute("DELETE FROM artifacts WHERE key IN (SELECT unnest(?))", [list(plan.artifacts)])
    return plan


def _plan(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], session: str | None) -> Deletion:
    requested = list(dict.fromkeys(run_ids))
    scope, args = ("AND session = ?", [session]) if session is not None else ("", [])
    runs = [row[0] for row in con.execute(f"SELECT run_id FROM runs WHERE run_id IN (SELECT unnest(?)) {scope} "
                                          "ORDER BY run_id", [requested, *args]).fetchall()]
    if not runs:
        return Deletion(runs=(), missing=tuple(requested), artifacts=(), by_feature={}, kept=0)
    rows = con.execute(
        """WITH uses AS (SELECT run_id, artifact_key FROM runs UNION SELECT run_id, artifact_key FROM run_artifacts),
                doomed AS (SELECT DISTINCT artifact_key FROM uses WHERE run_id IN (SELECT unnest($runs))),
                still AS (SELECT DISTINCT artifact_key FROM uses WHERE run_id NOT IN (SELECT unnest($runs)))
           SELECT a.key, a.feature, a.origin = $computed AND a.key NOT IN (SELECT artifact_key FROM still)
           FROM artifacts a JOIN doomed d ON a.key = d.artifact_key ORDER BY a.key""",
        {"runs": runs, "computed": COMPUTED}).fetchall()
    removed = [(key, feature) for key, feature, goes in rows if goes]
    return Deletion(runs=tuple(runs), missing=tuple(r for r in requested if r not in set(runs)),
                    artifacts=tuple(key for key, _ in removed), by_feature=dict(Counter(f for _, f in removed)),
                    kept=len(rows) - len(removed))
