"""ConvexBench on the decoding page: is a deeply composed expression convex, concave or neither?

`direct` asks about the whole expression; `decomposed` parses it with sympy and asks about one operator at a time,
combining the answers by the composition rules. Problems come from backend.tasks.convexity.
"""
from backend.decoding.convexity.judge import ModelJudge, OracleJudge, Question
from backend.decoding.convexity.run import (TASK, ConvexBatch, ConvexRow, ConvexSettings, answer, answer_on_model,
                                            run_convex_batch, typed_problem)
from backend.decoding.convexity.strategies import CONVEX_STRATEGIES, NodeJudgement

__all__ = ["CONVEX_STRATEGIES", "TASK", "ConvexBatch", "ConvexRow", "ConvexSettings", "ModelJudge", "NodeJudgement",
           "OracleJudge", "Question", "answer", "answer_on_model", "run_convex_batch", "typed_problem"]
