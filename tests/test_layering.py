"""The architecture's layers, read from the imports (function-level ones included):

- backend never imports streamlit, bench/ or training/; pages and figures never import torch or transformers;
- a feature package imports no other feature, except a declared plug-in (backend.features.PLUG_INS) through the
  host's declared plug-in face;
- no import cycles among backend modules, lazy ones and package __init__s included;
- a page imports only app/, its own feature's public face (the package `backend.<feature>`: what its __init__
  exports, submodules listed in its __all__ included) and the shared faces.
"""
import re
from pathlib import Path

from backend.features import FEATURES, PLUG_INS
from tests.support.imports import ROOT, cycles, exported_submodules, graph, imports_of, parsed

FEATURE_NAMES = {f.name for f in FEATURES}
FEATURE_OF_PACKAGE = {f.package.split(".")[1]: f.name for f in FEATURES}  # "internals" -> "inspect"
# The core packages' public faces a page may read besides its feature's: models (list, pick), the store (runs),
# settings and config helpers, the task generators the problem pickers draw from, the stored measured results.
SHARED_FACES = {"backend.models", "backend.store", "backend.params", "backend.tasks", "backend.config",
                "backend.results"}


def _files(*tops: str) -> list[Path]:
    return [p for top in tops for p in (ROOT / top).rglob("*.py")]


def _feature_of(module: str) -> str | None:
    parts = module.split(".")
    return FEATURE_OF_PACKAGE.get(parts[1]) if len(parts) > 1 and parts[0] == "backend" else None


def test_backend_never_imports_streamlit_bench_or_training():
    offenders = [str(e) for p in _files("backend") for e in imports_of(p)
                 if e.imported.split(".")[0] in {"streamlit", "bench", "training"}]
    assert not offenders


def test_the_app_never_imports_bench_or_training():
    """The product (backend, app, pages) reads measured results as data (backend.results), never from bench/."""
    offenders = [str(e) for p in _files("app", "pages") for e in imports_of(p)
                 if e.imported.split(".")[0] in {"bench", "training"}]
    assert not offenders


def test_the_product_never_reads_bench_results_by_path():
    """A path into bench/ (`"bench"` as a path part, or `bench/results`) in backend, app or pages is a read of
    benchmark output; stored results are published to data/results/ and read through backend.results."""
    import ast

    def code_strings(path: Path):  # string constants, docstrings and other bare string statements left out
        tree = parsed(path)
        prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
        return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                and id(n) not in prose]

    offenders = [f"{p.relative_to(ROOT)}:{node.lineno}" for p in _files("backend", "app", "pages")
                 for node in code_strings(p) if node.value == "bench" or "bench/results" in node.value]
    assert not offenders


def test_pages_and_figures_never_import_torch_or_transformers():
    files = _files("pages", "app")
    offenders = [str(e) for p in files for e in imports_of(p) if e.imported.split(".")[0] in {"torch", "transformers"}]
    assert files and not offenders


def test_a_feature_imports_another_only_through_a_declared_plug_in():
    faces = {f.name: {f"{f.package}.{m}" for m in f.plug_in_face} for f in FEATURES}
    plug_ins = {(p.module, p.host) for p in PLUG_INS}
    offenders = []
    for module, imported in graph("backend").items():
        own = _feature_of(module)
        for target in imported:
            other = _feature_of(target)
            if own and other and other != own and not ((module, other) in plug_ins and target in faces[other]):
                offenders.append(f"{module} -> {target}")
    assert not offenders, "declare a PlugIn in backend/features.py (with its reason) or move the shared code"


def test_every_declared_plug_in_is_used_and_names_a_real_host():
    edges = graph("backend")
    for plug_in in PLUG_INS:
        assert plug_in.host in FEATURE_NAMES and plug_in.reason
        assert any(_feature_of(t) == plug_in.host for t in edges[plug_in.module]), f"{plug_in.module} is stale"


def test_no_import_cycles_in_the_backend():
    assert cycles(graph("backend")) == []


def test_pages_import_only_app_their_feature_and_the_shared_faces():
    page_feature = {f.page: f.package for f in FEATURES}
    offenders = []
    for page in (ROOT / "pages").glob("*.py"):
        faces = SHARED_FACES | {page_feature.get(page.name)}
        allowed = faces | {sub for face in faces if face for sub in exported_submodules(face)}
        for edge in imports_of(page):
            top = edge.imported.split(".")[0]
            if top == "backend" and edge.imported not in allowed:
                offenders.append(f"pages/{page.name}:{edge.line} -> {edge.imported}")
            elif top in {"bench", "training", "pages"}:
                offenders.append(f"pages/{page.name}:{edge.line} -> {edge.imported}")
    assert not offenders


def test_every_feature_is_a_package_with_its_cli_page_and_registering_modules():
    import importlib

    for feature in FEATURES:
        assert (ROOT / "pages" / feature.page).exists(), feature.page
        assert hasattr(importlib.import_module(feature.cli), "add_commands"), feature.cli
        for module in feature.registering_modules:
            importlib.import_module(module)


def test_tokens_are_drawn_only_by_the_kernel():
    """One sampler: `torch.multinomial` over next-token distributions lives in backend/models/kernel.py (`draw`);
    the only other draw is particle resampling, which picks rows, not tokens."""
    allowed = {ROOT / "backend" / "models" / "kernel.py", ROOT / "backend" / "decoding" / "resampling.py"}
    offenders = [str(p.relative_to(ROOT)) for p in _files("backend") if p not in allowed
                 and "multinomial(" in p.read_text()]
    assert not offenders, offenders


def test_reduced_precision_reaches_only_generation():
    """Interpretability (hooks, patching, attribution, lens) always runs in the model's reference precision: the
    reduced-precision copies are built only inside the kernel (a decoder's `precision=`, the checked chunks' draft),
    and only the generation-only features (decoding strategies, watermark sampling) pass a precision to it."""
    models = ROOT / "backend" / "models"
    builders = [str(p.relative_to(ROOT)) for p in _files("backend") if "reduced_copy(" in p.read_text()
                and p.parent != models]
    assert not builders, builders
    passes = re.compile(r"PRECISIONS|\bprecision=(\w+\.)?precision\b")  # a config's field, or passing it on
    passing = {p.relative_to(ROOT).parts[1] for p in _files("backend") if p.parent != models
               and passes.search(p.read_text())}
    assert passing <= {"decoding", "watermark"}, passing


def test_logits_processors_have_transformers_signature():
    """The kernel's one extension point is transformers' `(input_ids, scores) -> scores`: no module declares a
    processor type of its own with the arguments the other way round."""
    offenders = [str(p.relative_to(ROOT)) for p in _files("backend")
                 if "Processor = Callable" in p.read_text() and p != ROOT / "backend" / "models" / "kernel.py"]
    assert not offenders, offenders


def test_no_product_text_names_a_benchmark_script():
    """What the product says to a user names a page or a CLI verb, never a bench/ script: string literals in app/ and
    pages/ (docstrings and comments aside) do not mention bench/."""
    import ast

    offenders = []
    for path in _files("app", "pages"):
        tree = parsed(path)
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                      and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        offenders += [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree)
                      if isinstance(node, ast.Constant) and isinstance(node.value, str) and "bench/" in node.value
                      and id(node) not in docstrings]
    assert not offenders, offenders


# The watermark methods that are transformers' own (its WatermarkingConfig / SynthIDTextWatermarkingConfig and their
# detectors): their adapters are the only modules outside backend/models that may import transformers.
TRANSFORMERS_ADAPTERS = {"backend/watermark/hf_kgw/config.py", "backend/watermark/hf_kgw/detect.py",
                         "backend/watermark/synthid/config.py"}


def test_only_the_models_package_and_the_library_watermark_adapters_import_transformers():
    offenders = sorted({str(p.relative_to(ROOT)) for p in _files("backend") for e in imports_of(p)
                        if e.imported.split(".")[0] == "transformers"
                        and not str(p.relative_to(ROOT)).startswith("backend/models/")
                        and str(p.relative_to(ROOT)) not in TRANSFORMERS_ADAPTERS})
    assert not offenders, offenders


# ---------------------------------------------------------------- one loop, one stop rule, one name each
DECODER_METHODS = {"step", "extend", "prefill", "prefill_many"}
DECODER_MAKERS = {"start", "start_many", "follow", "IncrementalDecoder"}


def decoder_calls_outside_the_kernel(path: Path) -> list[str]:
    """`file:line` of each place that builds an `IncrementalDecoder` or feeds a decoder tokens itself: a method of
    DECODER_METHODS called on a name bound to a decoder (`start(...)`, `start_many(...)`, `follow(...)`) or on an
    attribute named like one (`self.decoder`, `follower.decoder`)."""
    import ast

    tree = parsed(path)

    def maker(node) -> str | None:
        f = node.func if isinstance(node, ast.Call) else None
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None

    decoders = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and maker(n.value) in DECODER_MAKERS
                for t in n.targets if isinstance(t, ast.Name)}
    found = []
    for n in ast.walk(tree):
        if maker(n) == "IncrementalDecoder":
            found.append(n.lineno)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in DECODER_METHODS:
            receiver = n.func.value
            if (isinstance(receiver, ast.Name) and receiver.id in decoders) or \
                    (isinstance(receiver, ast.Attribute) and "decoder" in receiver.attr.lower()):
                found.append(n.lineno)
    return [f"{path.relative_to(ROOT)}:{line}" for line in sorted(found)]


def test_no_decoder_is_stepped_outside_the_kernel():
    """One token loop: outside backend/models a feature starts a decoder (`start`, `start_many`, `follow`) and hands
    it to `kernel.decode` with a policy; it never steps, extends or prefills one itself."""
    offenders = [hit for p in _files("backend", "app", "pages", "bench", "scripts")
                 if not str(p.relative_to(ROOT)).startswith("backend/models/")
                 for hit in decoder_calls_outside_the_kernel(p)]
    assert not offenders, offenders


# Reads of the tokenizer's eos / special ids outside backend/models that are not about stopping, with the reason.
NOT_STOPPING = {"backend/nag/extract.py": "the pad id of teacher-forced batches (masked)",
                "backend/disagreement/learnability.py": "the training target ends with the eos the adapter was "
                                                        "trained with (a target, not a stop)",
                "backend/internals/head_scores.py": "the induction test's random tokens leave special ids out (no stop)",
                "backend/internals/attribution_methods.py": "the attribution baseline's token (inseq's: unk, else pad, "
                                                          "else eos) and the special tokens it keeps"}


def test_stopping_reads_only_the_one_stop_rule():
    """What ends a sequence is `backend.models.rules.stop_ids` (eos, generation-config eos ids, chat end-of-turn) plus
    a feature's own stops passed as data: no other product module reads the tokenizer's eos or special ids itself
    (bench/ may: it hands the same stop ids to `transformers.generate` as its `eos_token_id`)."""
    offenders = [str(p.relative_to(ROOT)) for p in _files("backend", "app", "pages")
                 if not str(p.relative_to(ROOT)).startswith("backend/models/")
                 and str(p.relative_to(ROOT)) not in NOT_STOPPING
                 and any(name in p.read_text() for name in ("eos_token_id", "all_special_ids"))]
    assert not offenders, offenders


def definitions_of(name: str, kind: str) -> list[str]:
    import re

    pattern = re.compile(rf"^\s*{kind} {name}\b", re.MULTILINE)
    return sorted(str(p.relative_to(ROOT)) for p in _files("backend", "app", "pages", "bench", "scripts")
                  for _ in pattern.finditer(p.read_text()))


def test_the_core_names_mean_one_thing():
    """One `Decoded` (the kernel's rows), one `decode` (the kernel's loop), one `stop_ids` (the stop rule)."""
    assert definitions_of("Decoded", "class") == ["backend/models/kernel.py"]
    assert definitions_of("decode", "def") == ["backend/models/kernel.py"]
    assert definitions_of("stop_ids", "def") == ["backend/models/rules.py"]


def test_a_verb_name_is_not_also_a_helper_name():
    """`generate` and `trace` name feature verbs (Watermark's, Disagreement's) and nothing else: the kernel's plain
    generation is `generate_text`, MT's steered line `generate_line`, the hooks' forward `capture`."""
    for name in ("generate", "trace"):
        found = definitions_of(name, "def")
        assert len(found) <= 1 and not any(path.startswith("backend/models/") for path in found), (name, found)
    assert definitions_of("capture", "def") == ["backend/models/hooks.py"]


# ---------------------------------------------------------------- the store's tables behind store functions
SQL_METHODS = {"execute", "executemany", "sql"}  # DuckDB's ways to run a statement
CONNECTIONS = {"connect", "connect_with"}  # backend.store.db's transactions


def sql_outside_the_store(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line what` of each place a module runs SQL itself: a DuckDB statement (`.execute(`, `.executemany(`,
    `.sql(`), a `duckdb` import, or a store transaction opened with `backend.store.db.connect` / `connect_with`."""
    import ast

    found = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_METHODS:
            found.append((node.lineno, f".{node.func.attr}("))
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "duckdb" for a in node.names):
            found.append((node.lineno, "import duckdb"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "duckdb":
            found.append((node.lineno, "from duckdb"))
        elif isinstance(node, ast.ImportFrom) and node.module == "backend.store.db" \
                and CONNECTIONS & {a.name for a in node.names}:
            found.append((node.lineno, "a store connection"))
    return [f"{path.relative_to(root)}:{line} {what}" for line, what in sorted(found)]


def test_only_the_store_runs_sql():
    """Features reach the store's tables through functions of backend/store named for what they do (the cache,
    runs, listing, the identity and corpus-job tables), never through SQL of their own."""
    store = ROOT / "backend" / "store"
    offenders = [hit for p in _files("backend", "app", "pages") if store not in p.parents
                 for hit in sql_outside_the_store(p)]
    assert not offenders, offenders


def test_the_sql_check_finds_each_way_in(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import duckdb\n"
                      "from backend.store.db import StoreUnavailable, connect\n"
                      "with connect() as con:\n"
                      "    con.execute('SELECT 1')\n"
                      "duckdb.sql('SELECT 2')\n"
                      "from backend.store.db import StoreUnavailable\n")
    assert sql_outside_the_store(sample, tmp_path) == [
        "sample.py:1 import duckdb", "sample.py:2 a store connection", "sample.py:4 .execute(", "sample.py:5 .sql("]
