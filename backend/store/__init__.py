"""DuckDB artifact store: cached results keyed by feature/model/config/code version, and run history."""
from backend.store.artifacts import Computed, ModelRef, Stored, cached, latest, status
from backend.store.runs import RunFilter, delete_runs, export_result, export_runs, list_runs, reopen

__all__ = ["Computed", "ModelRef", "RunFilter", "Stored", "cached", "delete_runs", "export_result", "export_runs",
           "latest", "list_runs", "reopen", "status"]
