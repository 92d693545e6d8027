"""DuckDB artifact store: cached results keyed by feature/model/config/code version, and run history."""
from backend.store.artifacts import Computed, ModelRef, NotStored, Stored, cached, latest, status, stored_only, while_waiting
from backend.store.runs import RunFilter, delete_runs, export_result, export_runs, list_runs, reopen

__all__ = ["Computed", "ModelRef", "NotStored", "RunFilter", "Stored", "cached", "delete_runs", "export_result", "export_runs",
           "latest", "list_runs", "reopen", "status", "stored_only", "while_waiting"]
