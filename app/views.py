"""The catalogue of views: one entry per page, read by the navigation and by the Home page.

Feature views follow the one list of features (backend.features.FEATURES: its order, its page scripts); this
module adds how each is presented. A feature view appears once its script exists in pages/.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backend.features import FEATURES as BACKEND_FEATURES

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


@dataclass(frozen=True)
class Look:
    """How a feature's view is presented; its script is the feature's page (backend.features)."""

    title: str
    icon: str
    summary: str
    finding: str


_LOOKS = {
    "mt": Look("MT heads", ":material/translate:",
         "Attention-head maps for target-language and sentence-equivalence heads; steering vectors from ~1% of "
         "heads; instruction-free translation; head ablation.",
         "Translation decomposes into language identification and sentence equivalence, each carried by a sparse "
         "set of heads; steering ~1% of heads translates without instructions."),
    "nag": Look("NAG", ":material/hub:",
         "Neuron-activated graphs of high-impact MLP neurons; target-oriented ranking of candidate documents.",
         "A sparse set of high-impact neurons characterises a target; ranking data by NAG similarity selects "
         "useful training data without training."),
    "disagreement": Look("Disagreement", ":material/compare_arrows:",
         "Token-level disagreement between a base and a reasoning model; one-token guided intervention; "
         "entropy-aware distillation signals.",
         "Base-vs-reasoning divergence concentrates on few early 'planning' tokens; a one-token takeover there "
         "recovers much of the reasoning model's accuracy."),
    "decoding": Look("Decoding", ":material/alt_route:",
         "Greedy, sampling, best-of-n, Metropolis-Hastings power sampling and adaptive SMC side by side, with ESS "
         "collapse plots.",
         "Sampling from p^alpha improves reasoning; SMC with cache-coherent resampling matches MH at far lower "
         "latency, and ESS collapse predicts failure."),
    "watermark": Look("Watermark", ":material/fingerprint:",
         "Hierarchical personalised sentence-level watermark (model and user identity), KGW baseline, "
         "upload-and-check detection, attacks.",
         "Sentence-level semantic+syntactic watermark bits identify both the model and the user, robustly "
         "and with little quality loss."),
    "fp8": Look("FP8 bounds", ":material/functions:",
         "Spectral bounds on attention logits per head and geometry-aware FP8 scale factors.",
         "Rank-aware spectral bounds give overflow-safe FP8 attention scales without observing activations."),
    "inspect": Look("Inspect", ":material/search_insights:",
         "Any prompt, looked inside: logit lens, direct logit attribution to every head and MLP, attention "
         "patterns; click a head to see what it attends to and what it writes.", ""),
}
_ALL_FEATURES = tuple(View(_LOOKS[f.name].title, f.page, _LOOKS[f.name].icon, _LOOKS[f.name].summary,
                           _LOOKS[f.name].finding) for f in BACKEND_FEATURES)
FEATURES: tuple[View, ...] = tuple(v for v in _ALL_FEATURES if v.path.exists())
TOOLS = (
    View("Runs", "runs.py", ":material/history:",
         "Every computation ever requested: filter, reopen, export (CSV/Parquet/JSON), delete.", ""),
)
