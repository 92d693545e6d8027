"""Task generators with exactly checkable answers (for fine-tuning and decoding benchmarks)."""
from backend.tasks.arithmetic import (Problem, check_answer, extract_answer, format_prompt, generate_problems,
                                      load_jsonl_problems, split_of)
from backend.tasks.problem_sets import PROBLEM_SETS, problem_set, problem_set_size, steps_of
from backend.tasks.uploads import MAX_BATCH_PROBLEMS, PROBLEM_UPLOAD, problems_from_file, problems_from_upload

__all__ = ["MAX_BATCH_PROBLEMS", "PROBLEM_SETS", "PROBLEM_UPLOAD", "Problem", "check_answer", "extract_answer",
           "format_prompt", "generate_problems", "load_jsonl_problems", "problem_set", "problem_set_size", "problems_from_file",
           "problems_from_upload", "split_of", "steps_of"]
