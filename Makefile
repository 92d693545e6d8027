# The two commands of the README: `make run` and `make test`.
.PHONY: install run test test-seconds prepare screenshots bench

install:
	./scripts/install.sh

prepare: install
	HF_HUB_OFFLINE=1 .venv/bin/python -m backend models prepare

# Listens on 127.0.0.1 only; DASH_ADDRESS=0.0.0.0 exposes it (no authentication: put a proxy in front).
DASH_ADDRESS ?= 127.0.0.1

run: prepare
	HF_HUB_OFFLINE=1 .venv/bin/python -m streamlit run app/main.py --server.port 8501 --server.address $(DASH_ADDRESS)

# Two worker processes (pytest-xdist), each with its own store and temp folder; a test file stays on one
# worker and the browser tests share one, longest groups first (tests/support/scheduling.py, named in
# tests/conftest.py). TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2

test: prepare
	HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup tests

# Re-records each test file's seconds (tests/support/file_seconds.json), from which `make test` hands out the
# longest groups first (tests/support/scheduling.py). Run it on an idle machine after adding slow tests.
test-seconds: prepare
	DASH_RECORD_TEST_SECONDS=1 HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup tests

# Screenshots for the README: the browser tests on the embedded default model (every page's first view, and
# Inspect with a head's drill-down open); each first view's headings are recorded beside its picture. On a fresh
# store at a relative path, as a new user's (the reference first views only; no machine's absolute path on Home).
SCREENSHOT_STORE = data/screenshots.duckdb
screenshots: prepare
	rm -rf $(SCREENSHOT_STORE) $(SCREENSHOT_STORE).wal $(SCREENSHOT_STORE).wanted $(SCREENSHOT_STORE).locks
	DASH_STORE=$(SCREENSHOT_STORE) DASH_SCREENSHOT_DIR=assets/screenshots DASH_E2E_REAL_MODEL=1 HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q tests/e2e/test_browser.py tests/e2e/test_inspect.py
