# The two commands of the README: `make run` and `make test`.
.PHONY: install run test prepare screenshots bench

install:
	./scripts/install.sh

prepare: install
	HF_HUB_OFFLINE=1 .venv/bin/python -m backend models prepare

# Listens on 127.0.0.1 only; DASH_ADDRESS=0.0.0.0 exposes it (no authentication: put a proxy in front).
DASH_ADDRESS ?= 127.0.0.1

run: prepare
	HF_HUB_OFFLINE=1 .venv/bin/python -m streamlit run app/main.py --server.port 8501 --server.address $(DASH_ADDRESS)

test: prepare
	HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q tests

# Screenshots for the README: the browser test on the embedded default model.
screenshots: prepare
	DASH_SCREENSHOT_DIR=assets/screenshots DASH_E2E_REAL_MODEL=1 HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q tests/e2e/test_browser.py
