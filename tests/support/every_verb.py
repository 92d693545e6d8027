"""Every verb of every feature on tiny settings: the commands (each feature's CLI verbs, as `python -m backend`
runs them) and the calls only a page makes, with the files they read. The tests that need every verb to run
(tests/test_every_verb.py) and bench/verb_snapshot.py share this list."""
from __future__ import annotations

from pathlib import Path

from backend.decoding import DecodeConfig
from backend.decoding.run import run_history, run_key
from backend.corpus.engine import EngineConfig
from backend.models import load
from backend.nag import samples
from backend.nag.corpus_job import feature_job, rank_job
from backend.nag.rank import RankConfig
from backend.nag.targets import TargetSet
from backend.watermark import demo
from backend.watermark.estimate import expected_seconds
from backend.watermark.evaluation import EvalConfig, evaluate
from backend.watermark.examples import ExampleSpec, example_verb
from backend.watermark.generation import generate, make_request
from backend.watermark.length import generate_path
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
         # its own texts: the embedder memoises sentences, so `watermark scan` on pool.txt still runs a forward
         "embed_pool.txt": "Stars burn for ages.\nA kettle boils.\n",
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
    "nag rank embedding": ["nag", "rank", *NAG, "--pool", "{embed_pool.txt}", "--target-domain", "science", "--method",
                           "embedding", "--out", "{scores.parquet}"],
    "nag rank": ["nag", "rank", *NAG, "--pool", "{pool.txt}", "--target-domain", "science", "--out",
                 "{scores.parquet}"],
    "nag graph": ["nag", "graph", *NAG, "--target-domain", "maths"],
    "nag neuron": ["nag", "neuron", *NAG, "--pool", "{pool.txt}", "--layer", "0", "--neuron", "2", "--contexts", "2"],
    "nag deactivate": ["nag", "deactivate", *NAG, "--target-domain", "maths", "--n-random", "1", "--heldout",
                       "{heldout.jsonl}"],
    "disagree analyze": ["disagree", "analyze", "--question", QUESTION, "--answer", "7", *PAIR,
                         "--max-new-tokens", "4"],
    "disagree analyze batch": ["disagree", "analyze", "--n", "1", "--difficulty", "1", *PAIR, "--max-new-tokens", "4"],
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
PAGE = {  # verbs only a page calls (or the CLI calls with settings too large for this test), called as it does,
    # each given the {placeholder} names of command_names
    **{f"watermark generate {method} (page)": lambda names, method=method: generate(load("tiny-llama"), make_request(
        "Say hi.", method, *demo.first_try_identity(), SamplingConfig(max_sentences=1, max_sentence_tokens=8),
        IPMarkConfig(n_candidates=2))) for method in WATERMARKS},
    # a particle drill-down decodes a run again only when the stored run predates the particle history
    "decode run-history": lambda names: run_history(load("tiny-llama"), run_key("Hi", DecodeConfig(
        strategy="asmc", n=2, max_new_tokens=3))),
    "watermark estimate (page)": lambda names: expected_seconds(load("tiny-llama"), "kgw", 3, 1),
    "watermark evaluate": lambda names: evaluate(load("tiny-llama"), EvalConfig(
        n_prompts=1, n_users=1, sampling=SamplingConfig(max_sentences=1, max_sentence_tokens=8),
        attacks=(("lm_paraphrase", 1.0),), methods=("kgw",))),  # IPMark's detection: its own verb above
    # scripts/watermark_examples.py and bench/watermark_length.py
    "watermark example (script)": lambda names: _example(load("tiny-llama")),
    "watermark length path (bench)": lambda names: generate_path(load("tiny-llama"), make_request(
        "Say hi.", "ipmark", *demo.first_try_identity(), SamplingConfig(max_sentences=1, max_sentence_tokens=8),
        IPMarkConfig(n_candidates=2))),
    # `nag rank --engine ray` without Ray (tests/corpus/test_ray.py runs Ray): the feature job on the local engine
    "nag rank-job (local engine)": lambda names: _rank_job(load("tiny-llama"), str(names["pool.txt"])),
}


def _example(handle):
    demo.add_demo()
    return example_verb(handle, ExampleSpec(name="kgw", method="kgw", prompt="Say hi.", n_candidates=2,
                                            sampling=SamplingConfig(max_sentences=1, max_sentence_tokens=8)))


def _rank_job(handle, pool: str):
    config = RankConfig(top_k=4, max_length=16)
    job = feature_job(handle, pool, config, EngineConfig(engine="local"))
    return rank_job(handle, job.job_id, [TargetSet("maths", tuple(samples.sample_targets("maths")))], config)
# verbs that read weights or text only: no forward at all (kept true here, so a forward they gain is checked)
# the page's generation estimate reads the generations timed before it here (a model never timed is probed with one
# forward under its lock: tests/estimates/test_calibrate.py)
NO_FORWARD = {"fp8 concentration", "watermark detect kgw", "watermark detect hf-kgw", "watermark detect synthid",
              "watermark estimate (page)"}


def command_names(folder: Path) -> dict[str, object]:
    """Write FILES into `folder`; what each {placeholder} of a command stands for."""
    for name, text in FILES.items():
        (folder / name).write_text(text)
    model_address, user_address = demo.first_try_identity()
    return {**{name: folder / name for name in FILES}, "scan.parquet": folder / "scan.parquet",
            "scores.parquet": folder / "scores.parquet", "identity": f"{model_address}.{user_address}"}


def argv_of(verb: str, names: dict[str, object]) -> list[str]:
    return [str(names[arg[1:-1]]) if arg.startswith("{") else arg for arg in CLI[verb]]
