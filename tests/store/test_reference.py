import gzip
import json
from dataclasses import dataclass

import numpy as np

from backend.__main__ import main as cli
from backend.store import ModelRef, cached
from backend.store.reference import export_reference, import_reference, read_reference

MODEL = ModelRef("tiny", "f00d")
OTHER = ModelRef("other", "beef")


@dataclass(frozen=True)
class Config:
    n: int


def _compute_in(store, monkeypatch, model, n):
    monkeypatch.setenv("DASH_STORE", str(store))
    return cached("demo", "run", model, Config(n), lambda: {"values": np.arange(float(n))})


def test_exported_artifacts_are_served_from_a_fresh_store_without_computing(tmp_path, monkeypatch):
    _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, 3)
    _compute_in(tmp_path / "a.duckdb", monkeypatch, OTHER, 3)
    out = tmp_path / "ref" / "embedded.jsonl.gz"
    assert export_reference([MODEL.fingerprint], out) == 1  # only the named model's artifacts

    monkeypatch.setenv("DASH_STORE", str(tmp_path / "b.duckdb"))
    done = import_reference(out.parent)
    assert (done.files, done.offered, done.imported, done.refused) == (1, 1, 1, 0)
    served = cached("demo", "run", MODEL, Config(3), lambda: (_ for _ in ()).throw(AssertionError("computed")))
    assert served.cached
    np.testing.assert_array_equal(served.value["values"], np.arange(3.0))
    assert import_reference(out.parent).imported == 0  # idempotent


def test_import_never_replaces_a_computed_artifact(tmp_path, monkeypatch):
    _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, 3)
    out = tmp_path / "ref" / "x.jsonl.gz"
    export_reference([MODEL.fingerprint], out)
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "b.duckdb"))
    cached("demo", "run", MODEL, Config(3), lambda: {"values": "computed here"})
    import_reference(out.parent)
    assert cached("demo", "run", MODEL, Config(3), lambda: None).value == {"values": "computed here"}


def test_an_artifact_shipped_in_two_files_is_imported_once_from_the_first(tmp_path, monkeypatch):
    _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, 3)
    first = tmp_path / "ref" / "a.jsonl.gz"
    export_reference([MODEL.fingerprint], first)
    row = read_reference(first)[0]
    with gzip.open(tmp_path / "ref" / "b.jsonl.gz", "wt") as f:  # the same key, another payload (an older copy)
        f.write(json.dumps({**row, "payload": row["payload"].replace("3", "9")}) + "\n")
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "b.duckdb"))
    done = import_reference(first.parent)
    assert (done.files, done.offered, done.imported) == (2, 2, 1)
    served = cached("demo", "run", MODEL, Config(3), lambda: (_ for _ in ()).throw(AssertionError("computed")))
    np.testing.assert_array_equal(served.value["values"], np.arange(3.0))


def test_a_row_whose_key_does_not_match_its_request_is_refused(tmp_path, monkeypatch):
    _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, 3)
    out = tmp_path / "ref" / "x.jsonl.gz"
    export_reference([MODEL.fingerprint], out)
    rows = read_reference(out)
    rows[0]["params"] = rows[0]["params"].replace("3", "4")  # served under n=3's key, it would lie about n=4
    with gzip.open(out, "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "b.duckdb"))
    done = import_reference(out.parent)
    assert (done.imported, done.refused) == (0, 1)


def test_export_is_byte_stable(tmp_path, monkeypatch):
    _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, 3)
    export_reference([MODEL.fingerprint], tmp_path / "1.jsonl.gz")
    export_reference([MODEL.fingerprint], tmp_path / "2.jsonl.gz")
    assert (tmp_path / "1.jsonl.gz").read_bytes() == (tmp_path / "2.jsonl.gz").read_bytes()


def test_cli_round_trip_and_bad_paths(tmp_path, monkeypatch, capsys):
    _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, 3)
    out = tmp_path / "ref" / "e.jsonl.gz"
    assert cli(["store", "reference-export", "--fingerprint", MODEL.fingerprint, "-o", str(out)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "b.duckdb"))
    assert cli(["--json", "store", "reference-import", "--directory", str(out.parent)]) == 0
    assert json.loads(capsys.readouterr().out)["imported"] == 1
    assert cli(["store", "reference-import", "--directory", str(tmp_path / "missing")]) == 2
    assert cli(["store", "reference-export", "--fingerprint", "x", "-o", str(tmp_path / "e.csv")]) == 2
    assert "error:" in capsys.readouterr().err


def test_a_shipped_reference_artifact_is_what_the_code_computes_now(fresh_store):
    """The FP8 page's first view on the embedded model, recomputed here: same key, same numbers."""
    import pytest

    from backend.fp8.bounds import BoundsConfig, bounds
    from backend.models import embedded, load
    from backend.store import codec
    from backend.store.reference import REFERENCE_DIR

    if not embedded.is_prepared("smollm2-135m-instruct"):
        pytest.skip("embedded model not prepared (python -m backend models prepare)")
    handle = load("smollm2-135m-instruct")
    shipped = {row["key"]: row for path in REFERENCE_DIR.glob("*.jsonl.gz") for row in read_reference(path)}
    computed = bounds(handle, BoundsConfig())
    assert not computed.cached and computed.key in shipped  # keyed exactly like the page's own request
    reference = codec.loads(shipped[computed.key]["payload"])
    np.testing.assert_allclose(reference.layer_bound, computed.value.layer_bound, rtol=1e-4)
    np.testing.assert_allclose(reference.scale, computed.value.scale, rtol=1e-4)
    np.testing.assert_allclose(reference.observed, computed.value.observed, rtol=1e-3)


def test_an_import_that_dies_half_way_leaves_no_partial_reference(tmp_path, monkeypatch):
    """One transaction: a failure after some rows (here a row the table refuses) adds none of them."""
    import pytest

    from backend.store.artifacts import artifact_key
    from backend.store.db import connect

    for n in (1, 2, 3):
        _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, n)
    out = tmp_path / "ref" / "x.jsonl.gz"
    export_reference([MODEL.fingerprint], out)
    rows = read_reference(out)
    bad = {**rows[-1], "payload": None}  # NOT NULL: the insert of the last row fails
    bad["key"] = artifact_key(bad["feature"], bad["action"], bad["fingerprint"], bad["params"], bad["code_version"])
    with gzip.open(out, "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in [*rows[:-1], bad]))
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "b.duckdb"))
    with pytest.raises(Exception):
        import_reference(out.parent)
    with connect() as con:
        assert con.execute("SELECT count(*) FROM artifacts").fetchone()[0] == 0


def test_export_can_keep_only_some_kinds_of_artifact(tmp_path, monkeypatch):
    _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, 3)
    cached("demo", "other", MODEL, Config(3), lambda: {"values": np.arange(2.0)})
    out = tmp_path / "ref" / "sweep.jsonl.gz"
    assert export_reference([MODEL.fingerprint], out, actions=["demo:other"]) == 1
    assert [row["action"] for row in read_reference(out)] == ["other"]


def test_the_app_imports_the_shipped_artifacts_once_per_store(tmp_path, monkeypatch):
    from backend.store import reference

    _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, 3)
    out = tmp_path / "ref" / "embedded.jsonl.gz"
    export_reference([MODEL.fingerprint], out)
    fresh = tmp_path / "fresh.duckdb"
    monkeypatch.setenv("DASH_STORE", str(fresh))
    assert reference.ensure_reference(directory=out.parent).imported == 1
    assert reference.ensure_reference(directory=out.parent) is None  # once per process and store
    assert cached("demo", "run", MODEL, Config(3), lambda: {"values": "computed"}).cached


def test_a_store_that_cannot_take_them_is_left_to_the_store_notice(tmp_path, monkeypatch):
    from backend.store import reference
    from backend.store.db import StoreUnavailable

    def locked(*args, **kwargs):
        raise StoreUnavailable("locked by another process")

    monkeypatch.setattr(reference, "import_reference", locked)
    assert reference.ensure_reference(tmp_path / "locked.duckdb") is None
    assert tmp_path / "locked.duckdb" not in reference._ensured  # tried again on the next page view


def test_dash_reference_dir_names_the_folder_the_app_imports(tmp_path, monkeypatch):
    """An empty DASH_REFERENCE_DIR leaves a store without the shipped artifacts (the pages then compute their first
    views, which is what `bench/first_open.py --export-reference` ships); a folder of them imports those."""
    from backend.store import reference

    _compute_in(tmp_path / "a.duckdb", monkeypatch, MODEL, 3)
    out = tmp_path / "ref" / "embedded.jsonl.gz"
    export_reference([MODEL.fingerprint], out)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(reference.ENV_REFERENCE_DIR, str(tmp_path / "empty"))
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "bare.duckdb"))
    assert reference.ensure_reference().imported == 0
    monkeypatch.setenv(reference.ENV_REFERENCE_DIR, str(out.parent))
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "served.duckdb"))
    assert reference.ensure_reference().imported == 1
