"""NAG: rank a candidate pool by neuron-activated-graph similarity to target examples, and show why."""
import dataclasses

import streamlit as st

from app.figures.findings import nag_finding
from app.figures.nag import (deactivation_figure, distance_histogram, graph_figure, precision_figure,
                             profile_concentration, profile_heatmap, profile_neurons)
from app.ui.corpus_jobs import corpus_jobs_panel
from app.ui.downloads import table_downloads
from app.ui.drilldown import clickable_chart
from app.ui.guarded import guarded
from app.ui.model_picker import current_model
from app.ui.nag_drilldown import FIRST_GRAPH, neuron_drilldown
from app.ui.params import number_for, select_for, slider_for
from app.ui.run import ASK, STORED_FIRST, STORED_ONLY, expected_time_from_runs, run_verb
from app.ui.tabs import lazy_tabs
from app.ui.inspect_link import inspect_button
from app.ui.text import literal
from app.ui.uploads import PASTED_TARGETS_MAX_CHARS, within_caps
from backend.nag import (FORMATS, IMPACTS, POOL_UPLOAD, SCORERS, TARGET_UPLOAD, DeactivationConfig, GraphConfig,
                         Notices, RankConfig, TargetSet, build_graph, check_upload, compare, deactivation_check,
                         documents_from_texts, export_selected, feature_job, iter_documents, precision_curve, rank,
                         rank_job, relevance, samples, target_profiles)

st.title("NAG: neuron-activated graphs")
st.caption("Each target example is characterised by its top-K highest-impact MLP neurons per layer; their "
           "frequencies form the target profile (the NAG). Candidates are ranked by how much of the profile their "
           "own top-K neurons cover, and selected up to a token budget.")

handle = current_model()
if handle is None:
    st.stop()
st.caption(f"Model: **{literal(handle.display_name)}** · {handle.info.n_layers} layers × {handle.info.intermediate_size} "
           "MLP neurons")

UPLOAD_TYPES = ["jsonl", "json", "csv", "parquet", "txt"]
left, right = st.columns(2)
with left:
    st.subheader("Targets")
    target_mode = st.radio("Target examples", ["Sample domains", "Upload", "Paste"], horizontal=True,
                           key="nag-target-mode", persist_state="session")
    target_sets: list[TargetSet] = []
    if target_mode == "Sample domains":
        chosen = st.multiselect("Domains (several = multi-target, each gets a budget share)", samples.domains(),
                                default=samples.domains()[:1], key="nag-domains", persist_state="session")
        target_sets = [TargetSet(d, tuple(samples.sample_targets(d))) for d in chosen]
    elif target_mode == "Upload":
        upload = st.file_uploader("Target examples (JSONL/CSV/Parquet/TXT)", type=UPLOAD_TYPES, key="nag-tgt-up",
                                  max_upload_size=TARGET_UPLOAD.upload_mb,
                                  help=f"{TARGET_UPLOAD.describe().capitalize()}.")
        split = st.checkbox("One target set per 'domain' label", value=True, key="nag-split", persist_state="session")
        if upload is not None and within_caps(upload, lambda data, name: check_upload(data, name, TARGET_UPLOAD)):
            notices = Notices()
            docs = guarded(lambda: list(iter_documents(upload, name=upload.name, notices=notices)))
            for message in notices.messages("targets"):
                st.info(literal(message))
            if docs:
                groups = {}
                for doc in docs:
                    groups.setdefault(doc.domain if split and doc.domain else upload.name.rsplit(".", 1)[0],
                                      []).append(doc)
                target_sets = [TargetSet(name, tuple(group)) for name, group in groups.items()]
    else:
        pasted = st.text_area("One target example per line", key="nag-paste",
                              persist_state="session", max_chars=PASTED_TARGETS_MAX_CHARS,
                              value="The enzyme was measured with a spectrophotometer at three temperatures.")
        docs = documents_from_texts(pasted.splitlines(), prefix="pasted")
        target_sets = [TargetSet("pasted", tuple(docs))] if docs else []
with right:
    st.subheader("Candidate pool")
    pool_mode = st.radio("Pool", ["Sample pool (250 docs, 5 domains)", "Upload"], horizontal=True,
                         key="nag-pool-mode", persist_state="session")
    pool, pool_name = samples.pool_path(), None
    if pool_mode == "Upload":
        pool_upload = st.file_uploader("Candidate corpus (JSONL/CSV/Parquet/TXT; streamed)", type=UPLOAD_TYPES,
                                       key="nag-pool-up", max_upload_size=POOL_UPLOAD.upload_mb,
                                       help=f"{POOL_UPLOAD.describe().capitalize()}.")
        if pool_upload is not None and not within_caps(
                pool_upload, lambda data, name: check_upload(data, name, POOL_UPLOAD)):
            pool_upload = None
        pool, pool_name = (pool_upload, pool_upload.name) if pool_upload is not None else (None, None)
    with st.expander("Settings"):
        c1, c2, c3 = st.columns(3)
        # the page caps what the CLI leaves open: widths and lengths a CPU ranks in seconds
        method = select_for(RankConfig, "method", "Ranking", labels=SCORERS.labels(), container=c1, key="nag-method")
        impact = select_for(RankConfig, "impact", "Neuron impact", labels=IMPACTS.labels(), container=c2,
                            key="nag-impact")
        top_k = number_for(RankConfig, "top_k", "Top-K per layer", container=c3, max_value=256, key="nag-k")
        budget = slider_for(RankConfig, "budget", "Token budget (share of pool)", container=c1, min_value=0.01,
                            step=0.01, key="nag-budget")
        quality = slider_for(RankConfig, "quality_weight", "Quality weight", container=c2, step=0.05,
                             key="nag-quality")
        max_length = number_for(RankConfig, "max_length", "Max tokens per document", container=c3, min_value=8,
                                max_value=4096, key="nag-maxlen")
    st.caption(f"Uploads: {', '.join(FORMATS)} with a 'text' field (optional 'id', 'domain', 'quality'); "
               "TXT = one document per line.")

if target_sets and target_sets[0].documents:  # "Inspect this prompt" (app/ui/inspect_link.py)
    inspect_button(target_sets[0].documents[0].text, key="nag-inspect", label="Inspect the first target example")
if not target_sets or pool is None:
    st.info("Choose target examples and a candidate pool.")
    st.stop()

config = RankConfig(method=method, impact=impact, top_k=int(top_k), max_length=int(max_length), budget=float(budget),
                    quality_weight=float(quality))


def _open_nag_job(job_id: str) -> None:
    """A finished feature job re-ranked against the targets chosen above (no document runs through the model)."""
    done = run_verb(lambda progress: rank_job(handle, job_id, target_sets, config, progress),
                    label="Re-ranking the corpus job")
    if done is not None:
        st.dataframe(done.value.to_frame().head(200), hide_index=True, width="stretch")
        table_downloads(done.value.to_frame(), f"nag-job-{job_id}", key=f"nag-job-{job_id}-export")


corpus_jobs_panel("nag-features", lambda corpus, progress: feature_job(handle, corpus, config, progress=progress),
                  key="nag-jobs", open_job=_open_nag_job)


def partial_ranking(so_far) -> None:
    """The documents ranked so far, while the pool is scored (and under a Stop's notice)."""
    st.caption("Partial ranking: the documents scored so far, ranked among themselves (the budget is a share of "
               "their tokens); the whole pool's ranking replaces it.")
    st.dataframe(so_far.to_frame(), hide_index=True, width="stretch",
                 column_config={"preview": st.column_config.TextColumn(width="large")})


computed = run_verb(lambda progress: rank(handle, pool, target_sets, config, pool_name, progress),
                    label="Ranking the pool", when=ASK, partial=partial_ranking)
if computed is None:
    st.stop()
ranking = computed.value
for message in ranking.notices:
    st.info(literal(message))

names = [t.name for t in target_sets]


def ranking_finding() -> None:
    """The first view's finding in words: NAG's precision@10 on the labelled pool against chance and, when it is
    stored, the embedding baseline (the Baselines tab computes it)."""
    if config.method != "nag" or not ranking.labelled or not set(ranking.target_names) & set(ranking.domains):
        return
    embedding = run_verb(lambda p: rank(handle, pool, target_sets, dataclasses.replace(config, method="embedding"),
                                        pool_name, p), label="Embedding baseline", when=STORED_ONLY)
    st.info(nag_finding(precision_curve(ranking, (10,)), int(relevance(ranking).sum()), len(ranking.ids),
                        precision_curve(embedding.value, (10,)) if embedding is not None else None,
                        ", ".join(ranking.target_names)))


def ranking_tab() -> None:
    ranking_finding()
    chosen = ranking.selected_by >= 0
    m1, m2, m3 = st.columns(3)
    m1.metric("Selected documents", f"{int(chosen.sum())} / {len(ranking.ids)}")
    m2.metric("Tokens used / budget", f"{sum(ranking.used_tokens):,} / {ranking.budget_tokens:,}")
    m3.metric("Targets", literal(", ".join(ranking.target_names)))
    st.plotly_chart(distance_histogram(ranking), width="stretch", key="nag-hist")
    frame = ranking.to_frame()
    st.dataframe(frame, hide_index=True, width="stretch",
                 column_config={"preview": st.column_config.TextColumn(width="large")})
    table_downloads(frame, "nag-ranking", key="nag-ranking-export")
    st.markdown("**Selected subset (full texts)**")
    e1, e2 = st.columns(2)
    for column, fmt in ((e1, "jsonl"), (e2, "parquet")):
        data = guarded(lambda fmt=fmt: export_selected(pool, ranking, fmt, pool_name))
        if data is not None:
            column.download_button(f"Export selected ({fmt.upper()})", data, file_name=f"nag-selected.{fmt}",
                                   key=f"nag-selected-{fmt}", width="stretch")


def profiles_of_targets():
    """The target sets' neuron profiles (Profile and Graph tabs): stored features at once, others computed with
    progress and Stop; None after an error or a Stop shown on the page."""
    computed = run_verb(lambda progress: target_profiles(handle, target_sets, config.extract, progress),
                        label="Target profiles", when=STORED_FIRST)
    return None if computed is None else computed.value


def profile_tab() -> None:
    profiles = profiles_of_targets()
    if profiles is not None:
        which = st.selectbox("Target set", range(len(names)), format_func=lambda i: names[i], key="nag-prof-t",
                             persist_state="session")
        clicked = clickable_chart(profile_heatmap(profiles, which), key="nag-heatmap")
        shown = [(layer, int(n)) for layer, row in enumerate(profile_neurons(profiles, which)) for n in row]
        neuron_drilldown(handle, clicked, pool, pool_name, target_sets, config, key="nag-heatmap-drill", shown=shown)
        st.plotly_chart(profile_concentration(profiles), width="stretch", key="nag-concentration")


def graph_tab() -> None:
    profiles = profiles_of_targets()
    if profiles is not None:
        n_layers = handle.info.n_layers
        g1, g2 = st.columns(2)
        which = g1.selectbox("Target set", range(len(names)), format_func=lambda i: names[i], key="nag-graph-t",
                             persist_state="session")
        layers = g2.slider("Layers", 0, n_layers - 1, (0, n_layers - 1), key="nag-graph-layers",
                           persist_state="session")
        g3, g4, g5, g6 = st.columns(4)
        # the first view (FIRST_GRAPH): a readable graph at first sight, a slider for more
        most = slider_for(GraphConfig, "max_nodes", "Neurons shown (heaviest)", container=g6, min_value=10,
                          max_value=400, value=FIRST_GRAPH.max_nodes, step=10, key="nag-graph-max",
                          persist_state="session")
        per_layer = slider_for(GraphConfig, "max_nodes_per_layer", "Neurons per layer", container=g3, max_value=40,
                               value=FIRST_GRAPH.max_nodes_per_layer, key="nag-graph-n", persist_state="session")
        min_weight = slider_for(GraphConfig, "min_weight", "Min node weight", container=g4, max_value=0.2,
                                value=FIRST_GRAPH.min_weight, step=0.005, key="nag-graph-w", persist_state="session")
        min_edge = slider_for(GraphConfig, "min_edge_weight", "Min co-activation (share of targets)", container=g5,
                              value=FIRST_GRAPH.min_edge_weight, step=0.05, key="nag-graph-e",
                              persist_state="session")
        graph = guarded(lambda: build_graph(profiles, which, GraphConfig(layers[0], layers[1], min_weight,
                                                                          per_layer, min_edge, most)))
        if graph is not None:
            st.caption(f"The {len(graph.layers)} heaviest neurons (at most {per_layer} per layer), laid out by layer; "
                       f"edges where both neurons are in their layer's top-K for at least {min_edge:.0%} of the "
                       "target documents. The sliders show more.")
            clicked = clickable_chart(graph_figure(graph), key="nag-graph")
            neuron_drilldown(handle, clicked, pool, pool_name, target_sets, config, key="nag-graph-drill",
                             shown=list(zip(graph.layers.tolist(), graph.neurons.tolist())))


def partial_comparison(so_far) -> None:
    """The methods compared so far, while the others rank the pool (and under a Stop's notice)."""
    st.dataframe(so_far.rows(), hide_index=True, width="stretch")


def baselines_tab() -> None:
    if not ranking.labelled or not set(ranking.target_names) & set(ranking.domains):
        st.info("Precision@k needs a pool with 'domain' labels that match the target set names "
                "(e.g. the sample pool with sample domains).")
    elif st.button("Compare NAG vs random vs embedding", key="nag-compare"):
        computed = run_verb(lambda progress: compare(handle, pool, target_sets, config, pool_name=pool_name,
                                                     progress=progress), label="NAG vs random vs embedding",
                            partial=partial_comparison)
        if computed is not None:
            comparison = computed.value
            st.plotly_chart(precision_figure(comparison), width="stretch", key="nag-precision")
            st.dataframe(comparison.rows(), hide_index=True, width="stretch")
            st.caption(f"{comparison.relevant} target-domain documents in the pool; random = one seeded draw.")


def deactivation_tab() -> None:
    st.caption("Zero the up-projection rows of the heaviest NAG neurons (same count per layer) and compare the "
               "held-out loss increase with zeroing as many random neurons. Held-out text: the sample set "
               "(5 labelled domains).")
    d1, d2, d3 = st.columns(3)
    which = d1.selectbox("Target set", range(len(names)), format_func=lambda i: names[i], key="nag-deact-t",
                        persist_state="session")
    share = number_for(DeactivationConfig, "share", "Share of all MLP neurons", container=d2, min_value=0.0001,
                       max_value=0.05, step=0.0005, format="%.4f", key="nag-share", persist_state="session")
    n_random = number_for(DeactivationConfig, "n_random", "Random draws", container=d3, min_value=1, max_value=10,
                          key="nag-nrand", persist_state="session")
    expected_time_from_runs("nag", "deactivate", handle.fingerprint)
    if st.button("Run deactivation check", key="nag-deact"):
        result = run_verb(lambda progress: deactivation_check(
            handle, target_sets, samples.heldout(), config.extract,
            DeactivationConfig(float(share), int(n_random)), which, progress), label="Deactivation")
        if result is not None:
            st.plotly_chart(deactivation_figure(result.value), width="stretch", key="nag-deact-fig")
            st.json(result.value.summary())


lazy_tabs({"Ranking": ranking_tab, "Profile": profile_tab, "Graph": graph_tab, "Baselines": baselines_tab,
           "Deactivation": deactivation_tab}, key="nag-tab")
