"""Names vulture (the dead-code finder, tests/test_dead_code.py) reports as unused that are used where it cannot
see, each with why. Never imported: vulture reads it beside the code (bare names, `_.attribute` for attributes).
A name that is really dead is deleted, not listed here; a function only tests call is dead unless a user calls it.
"""
# ruff: noqa
# mypy: ignore-errors

# The browser harness (app/server.py) is the tests' and benches' own: tests/e2e and bench/ call these.
visit_by_sidebar
click_chart_point
count_script_runs

# Settings written on other libraries' objects, read by those libraries.
_.enable_progress_bars  # Ray Data's DataContext (backend/corpus/ray_engine.py)
_.print_on_execution_start  # Ray Data's DataContext
_.do_sample  # transformers' GenerationConfig (backend/models/loading.py)
_.base_model_name_or_path  # peft's LoraConfig, saved with the adapter (scripts/train_reasoning_adapter.py)
attrib  # the XML parser's target interface: start(tag, attrib) (backend/watermark/docx_text.py)

# Fields of results: serialised with the result (to_json / Arrow / bench JSON) and read by users of that output.
proposal_tokens  # backend/decoding/result.py
likelihood_ratio  # backend/disagreement/learnability_stats.py
underflow_geometry  # backend/fp8/simulate.py
underflow_delayed
n_scores
sentence_chrf  # backend/mt/conditions.py
computed_runs  # backend/store/stats.py
cached_runs
ppl_mean  # backend/watermark/evaluation.py (bench/report_sections read the rows)
ppl_median
sentences_mean
words_mean
tpr_decision
fpr_decision
detect_ms
surviving_models  # backend/watermark/retrieval.py
norm_eps  # backend/models/architecture.py: the attention input norm's parts, with its weight and bias

# Declarations that the contract and layering tests read: the declaration is the rule they hold the code to.
plug_in_face  # backend/features.py: what a plug-in may import (tests/test_layering.py)
host  # backend/features.py: PlugIn.host
keeps  # backend/mt/prompts.py: what a head type's corruption keeps (tests/mt/test_contracts.py)
_.held_here  # backend/models/locks.py: whether this thread holds the model lock (every-forward-locked test)
registries  # backend/variants.py: every registry of variants, iterated by tests/test_variants.py
_.unregister  # backend/variants.py: Registry.unregister, for a variant registered for a while (tests' throwaways)
patch_one  # backend/mt/patching.py: the literal one-head reference tests/mt/test_patching.py checks the batched
# patching against (the head drill-down now reads the batched one; the module stays as is: the head maps read it)

# Variants registered at import: the registry holds them, the module name is only a handle.
HF_KGW  # backend/watermark/hf_kgw/method.py
IPMARK  # backend/watermark/ipmark/method.py
KGW  # backend/watermark/kgw/method.py
SYNTHID  # backend/watermark/synthid/method.py

# Verb.store_key (backend/verbs.py): the key a request would be stored under, computing nothing; the verb contract
# (tests/test_every_verb.py) checks a stopped run stored nothing under it.
_.store_key
