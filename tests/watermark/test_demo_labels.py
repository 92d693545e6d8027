"""Issue 46 §5: "demo" labels every output of the demo identity (its key is public): the KGW --json, its
evidence line and a scan's rows."""
import json

import pandas as pd

from backend.__main__ import main
from backend.corpus.engine import EngineConfig
from backend.watermark.keys import DEMO_MODEL_ADDRESS
from backend.watermark.scan import ScanConfig, scan

TEXT = "The sea was calm that morning. Boats went out early and came back late. Nobody spoke of the storm."


def test_kgw_detection_of_the_demo_identity_says_demo(capsys):
    code = main(["watermark", "detect", "--method", "kgw", "--identity", str(DEMO_MODEL_ADDRESS), "--model-id",
                 "tiny-llama", "--text", TEXT, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["demo"] is True and report["model"] == DEMO_MODEL_ADDRESS
    code = main(["watermark", "detect", "--method", "kgw", "--identity", "1", "--model-id", "tiny-llama",
                 "--text", TEXT, "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["demo"] is False


def test_kgw_evidence_line_names_the_demo():
    from backend.models import load
    from backend.watermark.methods import DetectRequest, detect

    handle = load("tiny-llama")
    found = detect(TEXT, DetectRequest("kgw", model_address=DEMO_MODEL_ADDRESS, handle=handle))
    assert "demo identity" in found.evidence and found.demo
    assert "demo" not in detect(TEXT, DetectRequest("kgw", model_address=5, handle=handle)).evidence


def test_scan_rows_of_the_demo_identity_say_demo(tmp_path):
    """A KGW scan tests one key and names no model (its rows had model_name ""): the demo's rows say "demo"."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "docs.jsonl").write_text(json.dumps({"id": "one", "text": TEXT}) + "\n")
    scan(str(corpus), ScanConfig(method="kgw", model_address=DEMO_MODEL_ADDRESS, model_id="tiny-llama"),
         EngineConfig(), str(tmp_path / "rows.parquet"))
    row = pd.read_parquet(tmp_path / "rows.parquet").iloc[0]
    assert row["model_name"] == "demo"
