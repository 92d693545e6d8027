"""The prompts of RC's reasoning-summary cycles, per chat format.

With a chat template (the model's own) the summary request is the cycle's own conversation (its prompt as the
user turn, its reasoning as the assistant turn) and then the instruction as a second user turn; a restart is one
user turn holding the question and the latest summary. Without one (a base model, or `--no-chat`) the same
pieces are joined as plain text:

    summary:  {cycle prompt}\\n\\n{reasoning}\\n\\n{instruction}\\n
    restart:  {prompt}\\n\\n{RESTART_HEADING}\\n{summary}\\n\\n{RESTART_INSTRUCTION}
"""
from __future__ import annotations

import torch

DEFAULT_SUMMARY_INSTRUCTION = ("Summarise your work above in a few lines: the numbers found so far and what is "
                               "left to compute. Do not solve the rest.")
RESTART_HEADING = "A summary of your earlier work on this problem:"
RESTART_INSTRUCTION = "Continue from this summary and finish the solution."


def uses_chat(tokenizer, chat: bool) -> bool:
    return bool(chat and getattr(tokenizer, "chat_template", None))


def _encode(tokenizer, turns: list[tuple[str, str]], chat: bool) -> torch.Tensor:
    """Token ids `[1, T]` of (role, text) turns, ending where the model writes next."""
    if uses_chat(tokenizer, chat):
        return tokenizer.apply_chat_template([{"role": r, "content": t} for r, t in turns],
                                             add_generation_prompt=True, return_tensors="pt",
                                             return_dict=True)["input_ids"]
    text = "\n\n".join(t for _, t in turns)
    return tokenizer(text + "\n" if turns[-1][0] == "user" and len(turns) > 1 else text,
                     return_tensors="pt")["input_ids"]


def summary_ids(tokenizer, cycle_prompt: str, reasoning: str, instruction: str, chat: bool) -> torch.Tensor:
    """The request to summarise one's own reasoning trace; `cycle_prompt` is what the cycle reasoned from (the
    question, then the question with the previous summary), so a summary can carry the earlier ones forward."""
    return _encode(tokenizer, [("user", cycle_prompt), ("assistant", reasoning), ("user", instruction)], chat)


def restart_text(prompt: str, summary: str) -> str:
    return f"{prompt}\n\n{RESTART_HEADING}\n{summary}\n\n{RESTART_INSTRUCTION}"


def restart_ids(tokenizer, prompt: str, summary: str, chat: bool) -> torch.Tensor:
    """The next cycle's reasoning prompt: the question and the previous cycle's summary, nothing else."""
    return _encode(tokenizer, [("user", restart_text(prompt, summary))], chat)
