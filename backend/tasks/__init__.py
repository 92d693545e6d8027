"""Task generators with exactly checkable answers (for fine-tuning and decoding benchmarks)."""
from backend.tasks.arithmetic import (Problem, check_answer, extract_answer, format_prompt, generate_problems,
                                      load_jsonl_problems, split_of)
from backend.tasks.problem_sets import PROBLEM_SETS, problem_set, problem_set_size

__all__ = ["PROBLEM_SETS", "Problem", "check_answer", "extract_answer", "format_prompt", "generate_problems",
           "load_jsonl_problems", "problem_set", "problem_set_size", "split_of"]
