# The two commands of the README: `make run` and `make test`.
.PHONY: install run test prepare screenshots bench

install:
	./scripts/install.sh

prepare: install
	HF_HUB_OFFLINE=1 .venv/bin/python -m backend models prepare

run: prepare
	HF_HUB_OFFLINE=1 .venv/bin/python -m streamlit run app/main.py --server.port 8501

test: prepare
	HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q tests

# Screenshots for the README: the browser test on the embedded default model.
screenshots: prepare
	DASH_SCREENSHOT_DIR=assets/screenshots DASH_E2E_REAL_MODEL=1 HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q tests/e2e
