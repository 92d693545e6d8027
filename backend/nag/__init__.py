"""NAG: neuron-activated graphs for target-oriented data selection (training-free, interpretable).

Pipeline: impact (impact.py) -> per-document top-K neurons (extract.py, cached per document by
featurecache.py) -> target profiles (targets.py, profile.py) -> ranking and budgeted selection of a
streamed pool (rank.py, scorers.py, select.py) -> the graph (graph.py), precision@k and the
deactivation check (evaluate.py's `deactivation_check`, over the zeroing in deactivate.py; the verb has its
own name so that `backend.nag.deactivate` stays the submodule).
"""
from backend.corpus.capped import POOL_UPLOAD, TARGET_UPLOAD, check_upload
from backend.corpus.documents import FORMATS, Document, Notices, documents_from_texts, iter_documents
from backend.nag import samples
from backend.nag.corpus_job import feature_job, rank_job
from backend.nag.deactivate import Deactivation, DeactivationConfig
from backend.nag.evaluate import Comparison, compare, deactivation_check, precision_curve, relevance
from backend.nag.extract import ExtractConfig
from backend.nag.graph import GraphConfig, NagGraph, build_graph
from backend.nag.impact import IMPACTS
from backend.nag.rank import RankConfig, Ranking, export_selected, rank
from backend.nag.scorers import SCORERS
from backend.nag.targets import TargetProfiles, TargetSet, target_profiles

__all__ = ["FORMATS", "IMPACTS", "POOL_UPLOAD", "SCORERS", "TARGET_UPLOAD", "Comparison", "Deactivation",
           "DeactivationConfig", "Document", "ExtractConfig", "GraphConfig", "NagGraph", "Notices", "RankConfig",
           "Ranking", "TargetProfiles", "TargetSet", "build_graph", "check_upload", "compare", "deactivation_check",
           "documents_from_texts", "export_selected", "feature_job", "iter_documents", "precision_curve", "rank", "relevance",
           "rank_job", "samples", "target_profiles"]
