"""Model-family knowledge lives in backend/models/architecture.py alone: no other backend module names transformers'
module attributes (`self_attn`, `c_attn`, `mlp.down_proj`, `transformer.h`, ...), GPT-2's `Conv1D`, or a model type.

A new family is then one module's work; a feature asks `architecture` for "layer i's MLP down projection" (and for
the weight's layout: `weight_out_in`, `output_axis`) instead of spelling where it lives.
"""
import ast
import re
from pathlib import Path

from tests.support.imports import ROOT

ARCHITECTURE = ROOT / "backend" / "models" / "architecture.py"
# Where the parts of a decoder live in transformers' Llama-like and GPT-2 models (attribute names).
FAMILY_ATTRIBUTES = {
    "self_attn", "q_proj", "k_proj", "v_proj", "o_proj", "mlp", "gate_proj", "up_proj", "down_proj",
    "input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm",
    "rotary_emb", "transformer", "c_attn", "c_proj", "c_fc", "ln_1", "ln_2", "ln_f",
}  # (q_norm / k_norm are also architecture.QKWeights' fields, which its readers may read)
FAMILY_NAMES = {"Conv1D"}  # GPT-2's transposed linear layer
MODEL_TYPES = {"gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma3_text"}
# The paths the issue names, checked in the whole text (comments and docstrings included).
FAMILY_PATHS = re.compile(r"\bc_attn\b|\bself_attn\b|\bmlp\.down_proj\b|\btransformer\.h\b")


def backend_modules() -> list[Path]:
    return sorted(p for p in (ROOT / "backend").rglob("*.py") if p != ARCHITECTURE)


def prose_ids(tree: ast.AST) -> set[int]:
    """Docstrings and other bare string statements: prose, which may name a module to explain it."""
    return {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}


def family_knowledge(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line what` of each piece of family knowledge in a module's code (prose aside)."""
    tree = ast.parse(path.read_text())
    prose = prose_ids(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in FAMILY_ATTRIBUTES:
            found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Name) and node.id in FAMILY_NAMES:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.ImportFrom) and any(a.name in FAMILY_NAMES for a in node.names):
            found.append((node.lineno, f"import from {node.module}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose \
                and node.value.strip(". ") in FAMILY_ATTRIBUTES | MODEL_TYPES:  # a lookup by name, not a sentence
            found.append((node.lineno, repr(node.value)))
    return [f"{path.relative_to(root)}:{line} {what}" for line, what in sorted(found)]


def test_no_backend_module_but_architecture_names_a_family_attribute():
    offenders = [hit for path in backend_modules() for hit in family_knowledge(path)]
    assert not offenders, "ask backend.models.architecture instead: " + "; ".join(offenders)


def test_no_backend_module_but_architecture_spells_a_family_path():
    offenders = [f"{p.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1} {m.group()}"
                 for p in backend_modules() for text in [p.read_text()] for m in FAMILY_PATHS.finditer(text)]
    assert not offenders, offenders


def test_the_checks_find_each_kind_of_family_knowledge(tmp_path):
    """A check that finds nothing proves nothing: each kind it names is found in a sample, prose is not."""
    sample = tmp_path / "sample.py"
    sample.write_text('"""Prose may say self_attn, o_proj and gpt2."""\n'
                      "from transformers.pytorch_utils import Conv1D\n"
                      "w = block.mlp.down_proj.weight\n"
                      'norm = getattr(block, "post_feedforward_layernorm", None)\n'
                      'gpt2 = model.config.model_type == "gpt2"\n'
                      "transposed = isinstance(module, Conv1D)\n"
                      'text = "a sentence about the mlp is not a lookup"\n')
    assert family_knowledge(sample, tmp_path) == [
        "sample.py:2 import from transformers.pytorch_utils", "sample.py:3 .down_proj", "sample.py:3 .mlp",
        "sample.py:4 'post_feedforward_layernorm'", "sample.py:5 'gpt2'", "sample.py:6 Conv1D"]
    assert FAMILY_PATHS.search("x = layer.self_attn") and FAMILY_PATHS.search("model.transformer.h[0]")
    assert not FAMILY_PATHS.search("my_self_attention, transformer.hidden")
