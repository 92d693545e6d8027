"""Streamlit entry point: `streamlit run app/main.py`."""
from __future__ import annotations

import gc
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `streamlit run` puts app/ on the path, not the repository root
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

# The first run in a server process imports the backend (torch, transformers): ~500k objects that live as long as
# the process. Python's collector ran a dozen full collections over them meanwhile (about 3 s of the first page
# opened); none run during these imports, and the objects are frozen afterwards so later collections skip them.
_FIRST_RUN = "backend.features" not in sys.modules
if _FIRST_RUN:
    gc.disable()
from app.model_choice import recommended_model  # noqa: E402
from app.session import open_page_on  # noqa: E402
from app.ui.guarded import guarded  # noqa: E402
from app.ui.model_picker import model_picker  # noqa: E402
from app.ui.run import pin_running_status, unclaimed_stop_notices  # noqa: E402
from app.ui.scope import browser_scope  # noqa: E402
from app.views import FEATURES, HOME, TOOLS  # noqa: E402
from backend.features import load_all  # noqa: E402
from backend.store.db import store_notice  # noqa: E402
from backend.store.reference import ensure_reference  # noqa: E402

load_all()  # every feature's variants registered before any page lists them
if _FIRST_RUN:
    gc.freeze()
    gc.enable()

# A local icon: a material-symbol icon would be fetched from a font CDN by every visitor's browser.
st.set_page_config(page_title="Interpretability & decoding dashboard", page_icon=str(ROOT / "assets" / "icon.png"), layout="wide")


def _page(view, default=False):
    return st.Page(view.path, title=view.title, icon=view.icon, default=default, url_path=view.url_path)


sections = {"": [_page(HOME, default=True)], "Views": [_page(v) for v in FEATURES], "Tools": [_page(v) for v in TOOLS]}
pin_running_status()
navigation = st.navigation({name: pages for name, pages in sections.items() if pages})
browser_scope()  # runs recorded during this script run belong to this browser session
# A page may open on a model of its own (MT heads: the embedded model that translates; Decoding: the model that
# solves its arithmetic problems); every other page opens on the default (or on the user's own pick)
open_page_on(guarded(lambda: recommended_model(f"{navigation.url_path}.py")))
model_picker()
ensure_reference()  # the shipped first views, whichever store this server was pointed at
notice = store_notice()
if notice:
    st.warning(notice, icon=":material/database:")
stop_notices = st.container()  # the top of the page: a Stop that no computation on it claimed is said here
navigation.run()
with stop_notices:
    unclaimed_stop_notices()
