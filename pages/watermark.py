"""Watermark: IPMark (sentence level, model + user identity) vs KGW; generate, detect, evaluate, registry."""
import pandas as pd
import streamlit as st

from app.figures import watermark as figs
from app.ui.corpus_jobs import corpus_jobs_panel
from app.ui.downloads import table_downloads
from app.ui.drilldown import clickable_chart
from app.ui.guarded import guarded
from app.ui.model_picker import current_model
from app.ui.numbers import readable
from app.ui.watermark_sentence import (GENERATED, candidates_view, piece_clicked, sentence_drilldown, sentence_table,
                                      token_drilldown)
from app.ui.watermark_text import clickable_text
from app.ui import watermark_stream as streaming
from app.ui.params import config_inputs, number_for, select_for
from app.ui.run import duration, expected_time, run_nice, run_verb
from app.ui.tabs import lazy_tabs
from app.ui.scope import registry_rights
from app.ui.text import literal, visible
from app.ui.uploads import PROMPT_MAX_CHARS
from backend.results import load_result
from backend.watermark import (BASELINE, MAX_BYTES, MAX_CHARS, METHODS,
                               SUFFIXES, DetectRequest, EvalConfig, GenerateRequest, IPMarkConfig, SamplingConfig, demo,
                               detect, evaluate_verb, expected_seconds, generate, human_texts, identities,
                               latest_evaluation, make_request, read_upload, scan, verdict_table, watermark_names)

st.title("Watermarks: who wrote this text?")
st.caption("IPMark-style sentence-level watermark carrying a model address and a user address, chosen among B "
           "candidate sentences by a semantic and a syntactic keyed bit; detection from text alone with "
           "hierarchical identity retrieval. KGW (token-level green list) as the baseline.")

# Who holds the keys: this server's own user (listening on this machine only) or an admin server. Anyone else gets
# verdicts only under registered keys, and generates only with the demo identity (backend.watermark.disclosure).
key_holder = registry_rights().allowed
if key_holder:  # a fresh registry gets the demo identity (public demo secret; removable, stays removed); a remote
    guarded(demo.ensure_demo)  # page writes no identity: its operator adds the demo (`watermark identity add-demo`)
models = guarded(identities.list_models) or []
users_by_model = guarded(identities.all_users_by_model) or {}
identity_choices = [(m.address, u, demo.tagged(f"{m.address}.{u} · {visible(m.name)}", m.address))
                    for m in models for u in users_by_model.get(m.address, [])[:200]
                    if key_holder or demo.is_demo(m.address)]

# Parsed once per uploaded file, not on every widget change (a long PDF takes seconds).
_read_upload = st.cache_data(max_entries=4, show_spinner="Reading the file…")(read_upload)


# ---------------------------------------------------------------- detect (the first tab: runs on first render)
def _load_example(example) -> None:
    """on_click of an example button: runs before the next run draws the widgets it sets."""
    st.session_state.update({"wm-source": "Paste", "wm-text": example.text, "wm-strip": "",
                             "wm-example": example.name})
    if example.method in METHODS and not METHODS.get(example.method).is_baseline:
        st.session_state["wm-detect-method"] = example.method  # its details and highlight open below the table


def examples_row() -> dict:
    """One button per shipped example text; returns them by name."""
    shipped = guarded(demo.examples) or []
    if shipped:
        st.caption("**Examples**: one click loads a text to check. The marked ones carry the **demo** identity's "
                   "keys (a public demo secret: anyone can write these marks, so they prove nothing about a person).")
        per_row = 2  # six buttons in one row cut their titles short ("IPMark, demo us…") at 1400 px
        for start in range(0, len(shipped), per_row):
            for col, example in zip(st.columns(per_row), shipped[start:start + per_row]):
                col.button(example.title, key=f"wm-example-{example.name}", on_click=_load_example, args=(example,),
                           help=example.note, width="stretch")
    return {e.name: e for e in shipped}


def method_settings(key: str) -> dict:
    """The settings of the methods whose keys are settings, not identities (transformers' KGW, SynthID), shown like
    every method's config; the verdicts, the details and generation use them. Method name -> config."""
    free = [m for m in METHODS if m.identity_free and m.config is not None]
    found = {}
    with st.expander("Settings of " + ", ".join(m.name for m in free) + " (keys, green-list ratio, n-gram length)"):
        for col, m in zip(st.columns(len(free)), free):
            col.caption(f"**{m.label}**")
            found[m.name] = guarded(lambda m=m, col=col: config_inputs(m.config, key=f"{key}-{m.field}",
                                                                       container=col))
    return {name: config for name, config in found.items() if config is not None}


SCORE_HELP = ("Each method's own statistic, for ranking texts (ROC curves), never for the verdict: IPMark: -log10 p "
              "of the best identity's total evidence, uncorrected; KGW, transformers' KGW and SynthID: z-score of the "
              "green tokens or g-values. The verdict is taken on the corrected p.")


VERDICT_ROW_PX = 96  # four lines of a wrapped cell


def verdicts_view(text: str, prompt: str, address: int, handle, configs: dict | None = None):
    """Every method that can judge the text, in one table (backend.watermark.verdicts)."""
    # kept for this text, model, settings and registry: a rerun (any widget) does not judge the same text again
    key = ("wm-verdicts", hash(text), prompt, address, getattr(handle, "fingerprint", ""), repr(configs), len(models),
           sum(len(u) for u in users_by_model.values()), key_holder)
    if st.session_state.get("wm-verdicts-key") != key:
        judged = run_verb(lambda progress: verdict_table(text, handle, prompt=prompt or None, model_address=address,
                                                         configs=configs, progress=progress, key_holder=key_holder),
                          label="Judging the text with every method")
        st.session_state["wm-verdicts-table"] = None if judged is None else judged.value
        st.session_state["wm-verdicts-key"] = key
    table = st.session_state["wm-verdicts-table"]
    if table is None:
        return None
    if not table.rows:
        st.info("No method can judge this text without an identity to test: add the demo identity or register one "
                "(Registry tab).")
    frame = pd.DataFrame([{"method": r.label, "verdict": r.verdict, "what it means": r.meaning,
                           "score": round(r.score, 3), "p (corrected)": r.p_value,
                           "corrected over": r.corrected_over or "one key tested",
                           "scored": "" if r.scored is None else f"{r.scored:,} {r.scored_unit}",
                           "identity": r.identity} for r in table.rows])
    if table.rows:  # p as 9.3e-10 / < 1e-300 (a float column printed 1e-39 as a row of zeros); exports keep it
        # rows tall enough to wrap (Streamlit wraps a cell's text past 4 rem): "what it means" was cut to one line
        st.dataframe(readable(frame), hide_index=True, width="stretch", key="wm-verdicts", row_height=VERDICT_ROW_PX,
                     column_config={
                         "what it means": st.column_config.TextColumn(width="large"),
                         "score": st.column_config.NumberColumn(help=SCORE_HELP),
                         "p (corrected)": st.column_config.TextColumn(help="The p-value the verdict is taken on, "
                                                                           "corrected for the keys compared (see "
                                                                           "'corrected over').")})
    if table.skipped:
        st.caption("Not in the table: " + "; ".join(f"{s.label}: {s.reason}" for s in table.skipped))
    return table


def detect_tab() -> None:
    # The text and its settings are kept for the whole browser session ("session", not "page"): a user who pastes a
    # text, looks at another page and comes back finds it, and its verdicts, still here (not the default text).
    shipped = examples_row()
    source = st.radio("Text", ["Paste", "Upload"], horizontal=True, key="wm-source", persist_state="session")
    text = None
    if source == "Upload":
        upload = st.file_uploader(f"{', '.join(SUFFIXES)} (at most {MAX_BYTES // 2**20} MB)",
                                  type=[s.lstrip(".") for s in SUFFIXES], key="wm-upload",
                                  max_upload_size=MAX_BYTES // 2**20)  # refused in the browser, before it is sent
        if upload is not None:
            text = guarded(lambda: _read_upload(upload.name, upload.getvalue()))
    else:
        if "wm-text" not in st.session_state:  # the Generate tab puts its watermarked text here
            st.session_state["wm-text"] = human_texts()[0]
        text = st.text_area("Paste text to check", None, height=160, key="wm-text", persist_state="session",
                            max_chars=MAX_CHARS)  # the same cap as an uploaded file's text
    example = shipped.get(st.session_state.get("wm-example", ""))
    if example is not None and source == "Paste" and text == example.text:
        st.caption(f"Example: {literal(example.title)} · {literal(example.note)}")
    c1, c2, c3 = st.columns([2, 1, 1])
    prompt = c1.text_input("Prompt to strip (optional)", "", key="wm-strip", persist_state="session")
    settings = method_settings("wm-detect")
    addresses = [m.address for m in models]
    names = {m.address: demo.tagged(f"{m.address} · {visible(m.name)}", m.address) for m in models}
    keyed = [m for m in METHODS if m.needs_identity_to_detect]
    address = c3.selectbox(f"Key of model identity ({', '.join(m.name for m in keyed)})", addresses,
                           format_func=names.get, key="wm-detect-address",
                           persist_state="session") if keyed and addresses else 0
    if text is None:
        return
    handle = current_model()
    st.markdown("**Verdict of every method that can judge this text**")
    if not key_holder:
        st.caption(WITHHELD_NOTE)
    table = verdicts_view(text, prompt, address or 0, handle, settings)
    if example is not None and example.model_id and handle is not None and example.model_id != handle.id:
        st.caption(f"This example was written by {literal(example.model_id)}; token-level methods tokenise it with "
                   f"{literal(handle.display_name)}'s tokenizer and their scores assume it: select that model to "
                   "read its marks.")
    method = METHODS.get(select_for(DetectRequest, "method", "Details of", labels=METHODS.labels(), container=c2,
                                    key="wm-detect-method", persist_state="session"))
    if method.needs_identity_to_detect and not addresses:
        st.info("Register a model identity first (Registry tab).")
    elif handle is not None or not method.needs_model_to_detect:
        done = {r.method: r.detection for r in (table.rows if table is not None else ())}
        found = done.get(method.name) or _detected(text, DetectRequest(
            method.name, prompt=prompt or None, model_address=address if method.needs_identity_to_detect else 0,
            config=settings.get(method.name), handle=handle, key_holder=key_holder))
        if found is not None:
            family = "" if found.p_family is None else f" · p = {found.p_family:.2g}" + (  # the verdict's own p
                f", {found.corrected_over}" if found.corrected_over else
                f" (best of {found.compared:,} keys)" if found.compared > 1 else "")
            (st.success if found.flagged else st.info)(
                f"**{found.verdict}** · {literal(found.identified())} · {literal(found.evidence)}{literal(family)}")
            if found.normalisation:
                st.caption(f"{found.normalisation} before detection (every method reads the cleaned text).")
            columns = st.columns(len(found.levels) + 1)
            for col, lv in zip(columns, found.levels):  # raw z of the best identity, p corrected for the keys
                col.metric(f"z ({lv.level})", f"{lv.z:.2f}", figs.p_text(lv), delta_color="off",
                           help=f"Raw score of the best of {lv.compared:,} keys; one-key p = {lv.p_value:.2g} "
                                "(uncorrected, not a p-value for a searched key)" if lv.compared > 1 else None)
            if found.keys_evaluated:
                columns[-1].metric("keys scored", f"{found.keys_evaluated:,}", f"{found.seconds * 1000:.0f} ms",
                                   delta_color="off")
            st.plotly_chart(figs.level_evidence(found), width="stretch", key="wm-levels")
            # every scored piece of the text opens on a click: a token (token-level methods) or a sentence (IPMark)
            clickable_text(found.pieces, f"wm-text-{method.name}", piece_clicked(found.pieces, method.identifies_users))
            if not method.identifies_users and found.pieces:
                token_drilldown(found)
            if method.identifies_users:  # sentences carry the model or the user key: show which, and their bits
                st.caption(("Green: both bits 1 · pale green: one bit · red: none · grey: too short to carry bits. "
                            if found.flagged else "Not flagged: no sentence is coloured as evidence (the bits under "
                            "the best-guess identity are in the table; hover a sentence). ")
                           + "p-values are exact (binomial convolution with the variance of the weighted score) and "
                           "decided one level at a time: the model over the registered models only, then its user "
                           "over that model's users only, so more users never weaken a model verdict.")
                clicked = clickable_chart(figs.sentence_contributions(found.units), key="wm-sentences")
                sentence_drilldown(found.units, clicked, found.report, text)
            if found.units:
                table = sentence_table(found.units)
                st.dataframe(table, hide_index=True, width="stretch")
                table_downloads(table, "watermark-sentences", key="wm-sent-export")


def _detected(text: str, request: DetectRequest):
    """The detail method's detection when the verdict table has none (e.g. a method that needs settings)."""
    computed = run_verb(lambda progress: detect(text, request), label=f"Detecting with {request.method}")
    return None if computed is None else computed.value


WITHHELD_NOTE = ("This server is reachable from other machines and you do not hold its keys: under a registered "
                 "identity's key you see the verdict (and, for a flagged text, its corrected p and the identity), "
                 "never a score, bits or green counts of a text not flagged - those would teach forging the mark - "
                 "and keyed verdicts are limited per minute. The demo identity and the methods keyed by the settings "
                 "above use public keys: everything is shown for them, and anyone can write their marks.")


# ---------------------------------------------------------------- generate
def _expected_text(handle, method: str, candidates: int, sentences: int) -> str:
    """'Expected: about N s (basis)': this machine's rate for generations on this model, at the current load."""
    stated = guarded(lambda: expected_seconds(handle, method, candidates, sentences, nice=run_nice()))
    if stated is None:
        return ""
    return f"Expected: {duration(stated.seconds)} at the current load ({stated.basis})."


def generate_tab() -> None:
    handle = current_model()
    if handle is not None:
        st.caption(f"Model: **{literal(handle.display_name)}**")
    if not key_holder:
        st.caption("This server is reachable from other machines: generating with a registered identity is as "
                   "privileged as creating one, so only the demo identity (a public key) is offered here.")
    if not identity_choices:
        st.info("Register a model identity and at least one user (Registry tab) to generate watermarked text.")
    elif handle is not None:
        # Outside the form: picking a method resets the length to the one its own detector needs.
        gmethod = select_for(GenerateRequest, "method", "Method", labels=METHODS.labels(), options=watermark_names(),
                             key="wm-gen-method")
        chosen = METHODS.get(gmethod)
        with st.form("wm-generate"):
            gprompt = st.text_area("Prompt", "Describe a rainy day in a big city.", key="wm-prompt",
                                   persist_state="session",
                                   max_chars=PROMPT_MAX_CHARS)
            c1, c2, c3, c4 = st.columns(4)
            pick = c1.selectbox("Identity", range(len(identity_choices)), format_func=lambda i: identity_choices[i][2],
                                key="wm-gen-identity", persist_state="session")
            n_sent = number_for(SamplingConfig, "max_sentences", "Sentences", container=c2, max_value=50,
                                value=chosen.sentences_to_flag, key=f"wm-gen-sentences-{gmethod}",
                                help=f"{chosen.label} is flagged by its own detector at about "
                                     f"{chosen.sentences_to_flag} sentences on the embedded model; fewer may not be.")
            b = number_for(IPMarkConfig, "n_candidates", "B (candidates)", container=c3, max_value=32,
                           key="wm-gen-candidates") if chosen.ranks_candidates else 1
            with_plain = c4.checkbox("Also unwatermarked", value=False, key="wm-gen-plain", persist_state="session",
                                     help="Write the same prompt without a watermark beside it (doubles the time).")
            precision = select_for(SamplingConfig, "precision", "Weights", container=c4, key="wm-gen-precision",
                                   labels={"reference": "reference", "int8": "int8 copy (faster)",
                                           "bf16": "bf16 copy (faster)", "packed": "reference, packed (faster)"})
            gsettings = method_settings("wm-gen")
            go_button = st.form_submit_button("Generate", type="primary")
        st.caption("Length each method needs for its own detector to flag the text at the first try (embedded model): "
                   + ", ".join(f"{m.label} about {m.sentences_to_flag} sentences" for m in METHODS
                               if not m.is_baseline) + ". " + _expected_text(handle, gmethod, int(b), int(n_sent)))
        if go_button:
            model_address, user_address, _ = identity_choices[pick]
            sampling = SamplingConfig(max_sentences=int(n_sent), precision=precision)
            columns = st.columns(2) if with_plain else [st.container()]
            labels = (chosen.label, "Unwatermarked")
            streaming.start()
            for index, (column, meth) in enumerate(zip(columns, (gmethod, BASELINE))):
                column.markdown(f"**{labels[index]}**")
                with column:
                    request = guarded(lambda meth=meth: make_request(gprompt, meth, model_address, user_address,
                                                                     sampling, IPMarkConfig(n_candidates=int(b)),
                                                                     *gsettings.values(), key_holder=key_holder))
                    if request is None:
                        continue
                    box, stream = streaming.streamer(index, labels[index], request, handle, key_holder)
                    done = run_verb(lambda p, r=request, s=stream: generate(handle, r, s, p),
                                    label=f"Generating ({meth}, {_expected_text(handle, meth, int(b), int(n_sent))})")
                    if done is None:
                        streaming.failed()
                        continue
                    streaming.finished(index, labels[index], box, done.value, request, handle, key_holder)
                if done.value.context_note():  # the context rule ended the text early
                    column.info(done.value.context_note())
                if meth != BASELINE:  # the Detect tab opens on this text, its method and its key
                    with column:
                        candidates_view(done.value)
                    st.session_state[GENERATED] = done.value  # the Detect tab's sentences show their candidates
                    st.session_state.update({"wm-text": done.value.text, "wm-source": "Paste",
                                             "wm-detect-method": meth})
                    if chosen.needs_identity_to_detect:
                        st.session_state["wm-detect-address"] = model_address
            st.caption("The watermarked text is now the default of the Detect tab.")
        else:
            streaming.kept_partial()  # a stopped generation keeps what it had shown, marked partial


# ---------------------------------------------------------------- evaluate
def evaluate_tab() -> None:
    handle = current_model()
    result = guarded(lambda: latest_evaluation(handle)) if handle is not None else None
    if handle is not None:
        expected_time(evaluate_verb, handle, EvalConfig())
    if handle is not None and st.button("Run the evaluation (minutes to hours on CPU)", key="wm-eval"):
        done = run_verb(evaluate_verb, handle, EvalConfig(), label="Evaluating")
        result = done.value if done is not None else result
    if result is None:
        st.info("No stored evaluation for this model yet: run it here or with "
                "`python -m backend watermark evaluate --json`.")
    else:
        st.caption(f"Model: **{result.model_name}** · {result.quality[0].n} prompts · {result.n_users} users")
        evaluated = list(dict.fromkeys(d.method for d in result.detection))
        for col, name in zip(st.columns(max(len(evaluated), 1)), evaluated):
            col.plotly_chart(figs.roc_curves(result, name), width="stretch", key=f"wm-roc-{name}")
        attacks = pd.DataFrame([d.__dict__ for d in result.detection])
        st.dataframe(attacks, hide_index=True, width="stretch")
        table_downloads(attacks, "watermark-attacks", key="wm-att-export")
        c1, c2 = st.columns(2)
        c1.plotly_chart(figs.perplexity_bars(result), width="stretch", key="wm-ppl")
        c2.plotly_chart(figs.attribution_curve(result), width="stretch", key="wm-attr")
    by_length = load_result("watermark_length") or {}  # stored results, published by the benchmarks
    st.plotly_chart(figs.length_curve(by_length), width="stretch", key="wm-length")
    if by_length:
        st.caption("Measured on the embedded model: the candidate sets sampled for each generated text (B = 8, "
                   "writing continued past the end of answer) are replayed with the keys of every user of its model, "
                   "each user's keyed choice picking among the same candidates.")
    bench = load_result("watermark") or {}
    if bench.get("latency"):
        st.plotly_chart(figs.latency_chart(bench["latency"]), width="stretch", key="wm-latency")


# ---------------------------------------------------------------- registry
def identity_forms() -> None:
    c1, c2, c3 = st.columns(3)
    with c1.form("wm-add-model"):
        name = st.text_input("Model name", "my-model")
        if st.form_submit_button("Add model"):
            added = guarded(lambda: identities.add_model(name))
            if added:
                st.success(f"Model {added.address} added")
    with c2.form("wm-add-user"):
        owner = st.number_input("Model address", 1, 2**31 - 1, 1)
        label = st.text_input("User label", "alice")
        if st.form_submit_button("Add user"):
            added = guarded(lambda: identities.add_user(int(owner), label))
            if added:
                st.success(f"User {added.full_address} added")
    with c3.form("wm-bulk"):  # capped and confirmed: each user is one more key every detection scores
        bulk_owner = st.number_input("Model address ", 1, 2**31 - 1, 1)
        cap = identities.PAGE_MAX_BULK
        count = st.number_input(f"Users to create (at most {cap:,} at a time)", 1, cap, 1000, key="wm-bulk-count",
                                persist_state="session")
        sure = st.checkbox("Add them: every detection of this model will search these users too",
                           key="wm-bulk-confirm", persist_state="session")
        if st.form_submit_button("Bulk-create users"):
            if not sure:
                st.warning("Tick the confirmation to add the users.")
            else:
                n = guarded(lambda: identities.bulk_add_users(int(bulk_owner), min(int(count), cap), "bulk"))
                if n:
                    st.success(f"{n:,} users added")


def registry_tab() -> None:
    frame = guarded(identities.summary_frame)
    if frame is not None:  # which secret each identity's keys derive from, in the table and its exports
        frame["keys from"] = ["demo secret (public)" if demo.is_demo(a) else "master secret" for a in frame["address"]]
        st.plotly_chart(figs.registry_bars(frame), width="stretch", key="wm-registry")
        st.dataframe(frame.assign(name=frame["name"].map(visible)), hide_index=True, width="stretch")
        table_downloads(frame, "watermark-identities", key="wm-reg-export")
    rights = registry_rights()  # the registry is the server's: pages write it where the server allows
    if rights.allowed:
        identity_forms()
    else:
        st.info(literal(rights.reason))
    st.caption("Keys are derived with HMAC from a master secret kept outside git (data/secrets/, owner-only) or "
               "given by DASH_WATERMARK_SECRET; it is never shown, logged or exported.")
    if any(demo.is_demo(m.address) for m in models):
        st.caption(f"The **demo** identity (model {demo.DEMO_MODEL_ADDRESS}, two users) derives its keys from a public "
                   "demo secret so the shipped example texts verify: anyone can write its marks.")
        if rights.allowed and st.button("Remove the demo identity", key="wm-demo-remove"):
            guarded(demo.remove_demo)
            st.rerun()
    elif rights.allowed and st.button("Add the demo identity", key="wm-demo-add", help="A model identity and two users "
                                      "whose keys come from a public demo secret, for trying the example texts"):
        guarded(demo.add_demo)
        st.rerun()


lazy_tabs({"Detect": detect_tab, "Generate": generate_tab, "Evaluate": evaluate_tab, "Registry": registry_tab},
          key="wm-tab")
if key_holder:  # a scan's rows carry every document's keyed evidence: a thousand oracle queries at once
    corpus_jobs_panel("watermark-scan", lambda corpus, progress: scan(corpus, progress=progress), key="wm-jobs")
else:
    st.caption("Corpus scans under the registered keys are run by this server's operator (`python -m backend "
               "watermark scan`): each row would show a document's keyed evidence.")
