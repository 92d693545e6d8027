"""DuckDB artifact store: cached results keyed by feature/model/config/code version, and run history."""
from backend.store.artifacts import Computed, ModelRef, NotStored, Stored, cached, latest, stored_only, while_waiting
from backend.store.cleanup import Deletion, delete_runs, preview_delete
from backend.store.codec import to_jsonable
from backend.store.runs import RunFilter, count_runs, export_result, export_runs, list_runs, reopen, result_json
from backend.store.stats import StoreStatus, status

__all__ = ["Computed", "Deletion", "ModelRef", "NotStored", "RunFilter", "StoreStatus", "Stored", "cached",
           "count_runs", "delete_runs", "export_result", "export_runs", "latest", "list_runs", "preview_delete", "reopen",
           "result_json", "status", "stored_only", "to_jsonable", "while_waiting"]
