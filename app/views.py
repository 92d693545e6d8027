"""The catalogue of views: one entry per page, read by the navigation and by the Home page.

A feature view appears once its script exists in pages/, so a feature lands by adding its page.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PAGES_DIR = Path(__file__).resolve().parent.parent / "pages"


@dataclass(frozen=True)
class View:
    title: str
    script: str  # file name in pages/
    icon: str
    summary: str
    finding: str  # the paper finding it reproduces ("" for tool pages)

    @property
    def path(self) -> Path:
        return PAGES_DIR / self.script

    @property
    def url_path(self) -> str:
        return self.script.removesuffix(".py")


HOME = View("Home", "home.py", ":material/home:", "What each view does, the loaded model and the store.", "")
_ALL_FEATURES = (
    View("MT heads", "mt_heads.py", ":material/translate:",
         "Attention-head maps for target-language and sentence-equivalence heads; steering vectors from ~1% of "
         "heads; instruction-free translation; head ablation.",
         "Translation decomposes into language identification and sentence equivalence, each carried by a sparse "
         "set of heads; steering ~1% of heads translates without instructions."),
    View("NAG", "nag.py", ":material/hub:",
         "Neuron-activated graphs of high-impact MLP neurons; target-oriented ranking of candidate documents.",
         "A sparse set of high-impact neurons characterises a target; ranking data by NAG similarity selects "
         "useful training data without training."),
    View("Disagreement", "disagreement.py", ":material/compare_arrows:",
         "Token-level disagreement between a base and a reasoning model; one-token guided intervention; "
         "entropy-aware distillation signals.",
         "Base-vs-reasoning divergence concentrates on few early 'planning' tokens; a one-token takeover there "
         "recovers much of the reasoning model's accuracy."),
    View("Decoding", "decoding.py", ":material/alt_route:",
         "Greedy, sampling, best-of-n, Metropolis-Hastings power sampling and adaptive SMC side by side, with ESS "
         "collapse plots.",
         "Sampling from p^alpha improves reasoning; SMC with cache-coherent resampling matches MH at far lower "
         "latency, and ESS collapse predicts failure."),
    View("Watermark", "watermark.py", ":material/fingerprint:",
         "Hierarchical personalised sentence-level watermark (model and user identity), KGW baseline, "
         "upload-and-check detection, attacks.",
         "Sentence-level semantic+syntactic watermark bits identify both the model and the user, robustly "
         "and with little quality loss."),
    View("FP8 bounds", "fp8_bounds.py", ":material/functions:",
         "Spectral bounds on attention logits per head and geometry-aware FP8 scale factors.",
         "Rank-aware spectral bounds give overflow-safe FP8 attention scales without observing activations."),
)
FEATURES: tuple[View, ...] = tuple(v for v in _ALL_FEATURES if v.path.exists())
TOOLS = (
    View("Runs", "runs.py", ":material/history:",
         "Every computation ever requested: filter, reopen, export (CSV/Parquet/JSON), delete.", ""),
)
