"""What the server exposes by default: loopback only, and uploads no larger than a feature accepts."""
import tomllib
from pathlib import Path

import pytest

from app.server import running_app
from backend.corpus.capped import POOL_UPLOAD, TARGET_UPLOAD
from backend.mt.data import UPLOAD_CAPS as MT_UPLOAD
from backend.tasks.uploads import PROBLEM_UPLOAD
from backend.watermark.uploads import MAX_BYTES as WATERMARK_MAX_BYTES

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())


def test_config_binds_loopback_and_caps_uploads():
    assert CONFIG["server"]["address"] == "127.0.0.1"
    caps = (POOL_UPLOAD, TARGET_UPLOAD, MT_UPLOAD, PROBLEM_UPLOAD)
    largest = max(WATERMARK_MAX_BYTES, *(c.max_bytes for c in caps))
    assert CONFIG["server"]["maxUploadSize"] * 10**6 >= largest
    assert CONFIG["server"]["maxUploadSize"] < 200  # Streamlit's default, which no feature accepts
    assert "--server.address $(DASH_ADDRESS)" in (ROOT / "Makefile").read_text()


def _listening_addresses(port: int) -> set[str]:
    """Local addresses listening on `port`, read from the kernel's socket tables (no traffic is sent)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def test_a_started_app_listens_on_loopback_only():
    if not Path("/proc/net/tcp").exists():
        pytest.skip("no /proc socket tables on this system")
    with running_app(start_timeout_s=120) as (url, _):
        port = int(url.rsplit(":", 1)[1])
        assert _listening_addresses(port) == {"0100007F"}  # 127.0.0.1, little-endian hex; no 0.0.0.0 or ::


def _bare_values(path: Path) -> list[int]:
    """Lines of `path` holding a value on its own (what Streamlit's magic would write to the page): not a call,
    not a docstring."""
    import ast

    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        body = getattr(node, "body", None)
        for i, statement in enumerate(body if isinstance(body, list) else []):
            value = getattr(statement, "value", None)
            docstring = (i == 0 and isinstance(value, ast.Constant) and isinstance(value.value, str)
                         and isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)))
            if isinstance(statement, ast.Expr) and not isinstance(value, ast.Call) and not docstring:
                lines.append(statement.lineno)
    return lines


def test_page_scripts_are_not_parsed_for_magic_and_none_needs_it():
    # Streamlit's magic parses each page script with ast.parse, whose state CPython 3.11 shares between threads:
    # beside another parse it raised SystemError "AST constructor recursion depth mismatch" in a page
    assert CONFIG["runner"]["magicEnabled"] is False
    scripts = [ROOT / "app" / "main.py", *sorted((ROOT / "pages").glob("*.py"))]
    assert {str(p.relative_to(ROOT)): _bare_values(p) for p in scripts if _bare_values(p)} == {}
