"""Every forward of a model runs while the calling thread holds that model's lock (backend/models/locks.py).

Every module of the tiny models (the norms, projections and lm_head the read-outs call one by one included)
records, at each forward, whether the thread running it holds the model's lock. Then every feature's verb runs
as `python -m backend ...` does (through `main`, in this process) on tiny settings, on a store of its own so that
nothing comes from the cache; the verbs only a page calls are called as the page calls them. A forward outside the
lock would let another session's hooks (an ablation, a steering vector) act on it. The sentence embedder, shared by
every session too, is checked against its own lock.
"""
from __future__ import annotations

from collections import Counter

import pytest
import torch
from torch import nn

from backend.__main__ import main
from backend.models import load, sentence_embedder
from backend.models.locks import model_lock
from backend.models.reduced import _copies
from backend.watermark import demo
from backend.watermark.estimate import expected_seconds
from backend.watermark.evaluation import EvalConfig, evaluate
from backend.watermark.generation import generate, make_request
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.sampling import SamplingConfig
from tests.mt.conftest import TINY_TSV

# qwen3 and gemma3: the q/k norms the FP8 observed logits run; gemma3: the post-norms DLA runs the MLP for
MODELS = ("tiny-llama", "tiny-qwen2", "tiny-qwen3", "tiny-gemma3")
PAIR = ["--base", "tiny-llama", "--reasoning", "tiny-qwen2"]
QUESTION = "Ava has 3 apples and gets 4 more. How many now?"
PROMPT = "The cat sat on the mat"
WATERMARKS = ("ipmark", "kgw", "hf-kgw", "synthid", "none")
TEXT = "The sea was calm that morning. Boats left the harbour early. Gulls followed them out past the rocks."
OTHER_TEXT = "Snow fell on the pass. The road was closed by noon. Nobody drove up until the plough came."  # not memoised
FILES = {"pairs.tsv": TINY_TSV, "pool.txt": "A cell divides.\nThe loop ends.\nRain falls on hills.\n",
         "heldout.jsonl": '{"text": "Two plus two is four.", "domain": "maths"}\n'
                          '{"text": "Cells divide.", "domain": "science"}\n',
         "problem.jsonl": '{"question": "2 + 3?", "answer": 5}\n'}
MT = ["--model", "tiny-llama", "--data", "{pairs.tsv}", "--prompts", "2", "--shots", "1", "--percent", "5"]
NAG = ["--model", "tiny-llama", "--top-k", "4", "--max-length", "16"]

CLI = {  # verb -> its command line ({file} names a file of FILES, {identity} the demo identity's first user)
    "models generate": ["models", "generate", "Hi", "--model", "tiny-llama", "--max-new-tokens", "3"],
    "inspect lens": ["inspect", "lens", "--prompt", PROMPT, "--model", "tiny-llama", "--top-k", "3"],
    "inspect dla": ["inspect", "dla", "--prompt", PROMPT, "--model", "tiny-llama", "--target", "a"],
    "inspect attention": ["inspect", "attention", "--prompt", PROMPT, "--model", "tiny-llama", "--layer", "1"],
    "inspect head": ["inspect", "head", "--prompt", PROMPT, "--model", "tiny-llama", "--layer", "0", "--top-k", "3"],
    "inspect attribute": ["inspect", "attribute", "--prompt", PROMPT, "--model", "tiny-llama", "--steps", "4"],
    "inspect attribute generate": ["inspect", "attribute", "--prompt", PROMPT, "--model", "tiny-gemma3",
                                   "--generate", "2", "--method", "ablation"],
    "inspect dla gemma3": ["inspect", "dla", "--prompt", PROMPT, "--model", "tiny-gemma3"],
    "inspect head gemma3": ["inspect", "head", "--prompt", PROMPT, "--model", "tiny-gemma3", "--layer", "1"],
    "inspect graph gemma3": ["inspect", "graph", "--prompt", PROMPT, "--model", "tiny-gemma3"],
    "inspect graph per head": ["inspect", "graph", "--prompt", PROMPT, "--model", "tiny-qwen3", "--per-head"],
    "inspect node": ["inspect", "node", "--prompt", PROMPT, "--model", "tiny-gemma3", "--layer", "1", "--stage", "mid"],
    "inspect heads": ["inspect", "heads", "--prompt", PROMPT, "--model", "tiny-llama", "--score", "induction",
                      "--repeat", "6"],
    "inspect grid": ["inspect", "grid", "--prompt", PROMPT, "--model", "tiny-llama", "--layer", "1"],
    "inspect patch": ["inspect", "patch", "--clean", PROMPT, "--corrupted", "The dog sat on the mat", "--model",
                      "tiny-llama", "--target", "a", "--contrast", "e", "--site", "head"],
    "inspect patch gemma3": ["inspect", "patch", "--clean", PROMPT, "--corrupted", "The dog sat on the mat",
                             "--model", "tiny-gemma3", "--target", "a", "--contrast", "e"],
    "inspect ablate": ["inspect", "ablate", "--prompt", PROMPT, "--model", "tiny-llama", "--heads", "1.2",
                       "--neurons", "0:3", "--mlps", "1", "--generate", "2"],
    "inspect steer": ["inspect", "steer", "--model", "tiny-llama", "--layer", "1", "--coefficients", "0,4",
                      "--max-new-tokens", "2"],
    "fp8 bounds": ["fp8", "bounds", "--model", "tiny-qwen3", "--texts", "1", "--max-tokens", "16"],
    "fp8 bounds gemma3": ["fp8", "bounds", "--model", "tiny-gemma3", "--texts", "1", "--max-tokens", "16"],
    "fp8 head": ["fp8", "head", "--model", "tiny-llama", "--layer", "1", "--head", "2", "--texts", "1",
                 "--max-tokens", "16"],
    "fp8 simulate": ["fp8", "simulate", "--model", "tiny-llama", "--steps", "4", "--spike-step", "2", "--texts", "1",
                     "--max-tokens", "16"],
    "fp8 concentration": ["fp8", "concentration", "--model", "tiny-llama"],
    "decode run": ["decode", "run", "--model", "tiny-llama", "--strategy", "asmc", "--n", "2", "--max-new-tokens",
                   "3"],
    "decode run int8": ["decode", "run", "--model", "tiny-llama", "--strategy", "best_of_n", "--n", "2",
                        "--max-new-tokens", "3", "--precision", "int8"],
    "decode particle": ["decode", "particle", "--model", "tiny-llama", "--prompt", "Hi", "--n", "2",
                        "--max-new-tokens", "3", "--block-size", "1", "--step", "1", "--particle", "1"],
    "decode compare": ["decode", "compare", "--model", "tiny-llama", "--strategies",
                       "greedy,sampling,low_temp,best_of_n,mh,asmc", "--n", "2", "--problems", "1",
                       "--max-new-tokens", "4", "--block-size", "2", "--mh-steps", "1"],
    "decode compare rc": ["decode", "compare", "--model", "tiny-llama", "--strategies", "rc", "--jsonl",
                          "{problem.jsonl}", "--max-new-tokens", "4", "--option", "summary_tokens=3", "--option",
                          "cycles=2", "--option", 'summary_instruction="Sum up."'],
    "decode run guided": ["decode", "run", "--model", "tiny-llama", "--strategy", "guided", "--max-new-tokens", "4",
                          "--option", 'reasoning_model="tiny-qwen2"', "--option", "calibration_problems=2"],
    "decode compare convexbench": ["decode", "compare", "--task", "convexbench", "--model", "tiny-llama",
                                   "--strategies", "direct,decomposed", "--depth", "1", "--problems", "1"],
    "mt heads": ["mt", "heads", *MT],
    "mt head": ["mt", "head", *MT, "--pair", "en-de", "--layer", "0", "--head", "1", "--top-k", "3"],
    "mt steer": ["mt", "steer", *MT, "--sentences", "1"],
    "mt ablate": ["mt", "ablate", *MT, "--sentences", "1", "--random", "1"],
    "mt evaluate": ["mt", "evaluate", *MT, "--sentences", "1", "--random", "1"],
    "nag extract": ["nag", "extract", *NAG, "--corpus", "{pool.txt}"],
    "nag rank": ["nag", "rank", *NAG, "--pool", "{pool.txt}", "--target-domain", "science", "--out",
                 "{scores.parquet}"],
    "nag graph": ["nag", "graph", *NAG, "--target-domain", "maths"],
    "nag neuron": ["nag", "neuron", *NAG, "--pool", "{pool.txt}", "--layer", "0", "--neuron", "2", "--contexts", "2"],
    "nag deactivate": ["nag", "deactivate", *NAG, "--target-domain", "maths", "--n-random", "1", "--heldout",
                       "{heldout.jsonl}"],
    "disagree analyze": ["disagree", "analyze", "--question", QUESTION, "--answer", "7", *PAIR,
                         "--max-new-tokens", "4"],
    "disagree position": ["disagree", "position", *PAIR, "--question", QUESTION, "--max-new-tokens", "4",
                          "--position", "1", "--cal-n", "2", "--difficulty", "1"],
    "disagree intervene": ["disagree", "intervene", "--question", QUESTION, "--budget", "20", "--cal-n", "2",
                           "--difficulty", "1", *PAIR, "--max-new-tokens", "4"],
    "disagree sweep": ["disagree", "sweep", "--n", "1", "--rates", "10", "--policies", "guided,entropy,random,early",
                       "--cal-n", "2", "--difficulty", "1", *PAIR, "--max-new-tokens", "4"],
    "disagree eopd": ["disagree", "eopd", "--n", "1", "--difficulty", "1", *PAIR, "--max-new-tokens", "4"],
    "disagree learnability": ["disagree", "learnability", *PAIR, "--n", "2", "--max-new-tokens", "4",
                              "--sketch-dim", "0", "--layers", "1"],
    "watermark generate": ["watermark", "generate", "Say hi.", "--method", "none", "--model-id", "tiny-llama",
                           "--sentences", "1"],
    **{f"watermark detect {method}": ["watermark", "detect", "--method", method, "--text", TEXT, "--identity",
                                      "{identity}", "--model-id", "tiny-llama"] for method in WATERMARKS[:-1]},
    "watermark detect (every method)": ["watermark", "detect", "--text", OTHER_TEXT, "--model-id", "tiny-llama"],
    "watermark attack lm_paraphrase": ["watermark", "attack", "lm_paraphrase", "--text", "The sea was calm.", "--model-id",
                                       "tiny-llama"],
    "watermark scan": ["watermark", "scan", "--corpus", "{pool.txt}", "--out", "{scan.parquet}", "--model-id",
                       "tiny-llama"],
}
PAGE = {  # verbs only a page calls (or the CLI calls with settings too large for this test), called as it does
    **{f"watermark generate {method} (page)": lambda method=method: generate(load("tiny-llama"), make_request(
        "Say hi.", method, *demo.first_try_identity(), SamplingConfig(max_sentences=1, max_sentence_tokens=8),
        IPMarkConfig(n_candidates=2))) for method in WATERMARKS},
    "watermark estimate (page)": lambda: expected_seconds(load("tiny-llama"), "kgw", 3, 1),
    "watermark evaluate": lambda: evaluate(load("tiny-llama"), EvalConfig(
        n_prompts=1, n_users=1, sampling=SamplingConfig(max_sentences=1, max_sentence_tokens=8),
        attacks=(("lm_paraphrase", 1.0),), methods=("kgw",))),  # IPMark's detection: its own verb above
}
# verbs that read weights or text only: no forward at all (kept true here, so a forward they gain is checked)
NO_FORWARD = {"fp8 concentration", "watermark detect kgw", "watermark detect hf-kgw", "watermark detect synthid"}


class Forwards:
    """Every module forward of the instrumented models: a count per verb, and the modules run without the lock."""

    def __init__(self) -> None:
        self.owners: dict[int, tuple] = {}  # id(module) -> (model id, module name, whether this thread holds the lock)
        self.verb = ""
        self.ran: Counter = Counter()
        self.unlocked: dict[str, set[str]] = {}
        self.unknown: dict[str, set[str]] = {}
        self.models: dict[str, tuple[nn.Module, object]] = {}

    def own(self, model_id: str, model: nn.Module, held_here) -> None:
        self.models[model_id] = (model, held_here)
        for name, module in model.named_modules():
            self.owners[id(module)] = (model_id, name or "(the whole model)", held_here)

    def own_reduced_copies(self) -> None:
        """A reduced-precision copy (backend/models/reduced.py, built when a verb first asks) runs under its source
        model's lock: its modules are the source's, for this record."""
        for model_id, (model, held_here) in self.models.items():
            for kind, copy in _copies.get(model, {}).items():
                for name, module in copy.named_modules():
                    self.owners.setdefault(id(module), (model_id, f"{kind} copy: {name}", held_here))

    def __call__(self, module: nn.Module, args) -> None:
        owner = self.owners.get(id(module))
        if owner is None:
            self.own_reduced_copies()
            owner = self.owners.get(id(module))
        if owner is None:  # a model (or a module) the test did not instrument
            self.unknown.setdefault(self.verb, set()).add(type(module).__name__)
            return
        model_id, name, held_here = owner
        self.ran[self.verb] += 1
        if not held_here():
            self.unlocked.setdefault(self.verb, set()).add(f"{model_id}: {name}")


@pytest.fixture(scope="module")
def forwards(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("every-forward")
        patch.setenv("DASH_STORE", str(folder / "store.duckdb"))  # a store of its own: every verb computes
        patch.setenv("DASH_WATERMARK_SECRET", "a fixed secret for the lock test")
        for name, text in FILES.items():
            (folder / name).write_text(text)
        model_address, user_address = demo.first_try_identity()
        names = {**{name: folder / name for name in FILES}, "scan.parquet": folder / "scan.parquet",
                 "scores.parquet": folder / "scores.parquet",
                 "identity": f"{model_address}.{user_address}"}
        record = Forwards()
        for model_id in MODELS:
            model = load(model_id).model
            record.own(model_id, model, lambda lock=model_lock(model): lock.held_here)
        embedder = sentence_embedder.get_embedder()
        embedder.clear_memo()  # sentences another test embedded in this process would skip the forward
        record.own("minilm", embedder.model, sentence_embedder._lock._is_owned)
        hook = nn.modules.module.register_module_forward_pre_hook(record)
        try:
            yield record, names
        finally:
            hook.remove()


def test_the_record_tells_a_forward_outside_the_lock_from_one_inside(forwards):
    record, _ = forwards
    model, ids = load("tiny-llama").model, torch.tensor([[1, 2, 3]])
    record.verb = "a forward under the lock"
    with model_lock(model):
        model(input_ids=ids)
    assert record.ran.pop(record.verb) > 0 and record.verb not in record.unlocked
    record.verb = "a bare forward"
    model(input_ids=ids)
    assert record.ran.pop(record.verb) > 0
    assert {"tiny-llama: (the whole model)", "tiny-llama: lm_head", "tiny-llama: model.norm"} <= \
        record.unlocked.pop(record.verb)


@pytest.mark.parametrize("verb", [*CLI, *PAGE])
def test_every_forward_of_the_verb_holds_the_model_lock(forwards, capsys, verb):
    record, names = forwards
    record.verb = verb
    if verb in CLI:
        code = main([str(names[arg[1:-1]]) if arg.startswith("{") else arg for arg in CLI[verb]])
        assert code == 0, capsys.readouterr().err
    else:
        PAGE[verb]()
    assert not record.unlocked.get(verb), f"forwards outside the model lock: {sorted(record.unlocked[verb])}"
    assert not record.unknown.get(verb), f"forwards of modules of no instrumented model: {record.unknown[verb]}"
    assert (record.ran[verb] == 0) == (verb in NO_FORWARD), record.ran[verb]
