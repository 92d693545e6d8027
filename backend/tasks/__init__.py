"""Task generators with exactly checkable answers (for fine-tuning and decoding benchmarks)."""
from backend.tasks.arithmetic import (
    Problem,
    check_answer,
    extract_answer,
    format_prompt,
    generate_problems,
    load_jsonl_problems,
    split_of,
)

__all__ = [
    "Problem",
    "check_answer",
    "extract_answer",
    "format_prompt",
    "generate_problems",
    "load_jsonl_problems",
    "split_of",
]
