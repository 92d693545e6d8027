"""Head scores equal their definitions computed from the model's own attention probabilities; on a repeated
random sequence the induction score reads the token after the first copy; the grid is the layer's patterns, or the
top heads' by a score."""
import numpy as np
import pytest
import torch

from backend.errors import UserError
from backend.internals.graph_config import GridConfig, HeadScoresConfig
from backend.models.hooks import eager_attention
from backend.internals.head_scores import compute_grid, compute_head_scores, repeated_random, target_mask

PROMPT = "the cat and the dog and the cat"


def _patterns(model, ids):
    with eager_attention(model), torch.no_grad():
        return torch.stack(model(input_ids=ids, output_attentions=True).attentions)[:, 0].numpy()  # [L, H, T, T]


def _by_definition(patterns, ids, score):
    """Per query: the attention mass on its score's targets, written out position by position."""
    per_query = []
    for i in range(len(ids)):
        if score == "previous":
            targets = [i - 1] if i > 0 else []
        elif score == "sink":
            targets = [0] if i > 0 else []
        elif score == "duplicate":
            targets = [j for j in range(i) if ids[j] == ids[i]]
        else:
            targets = sorted({j + 1 for j in range(i) if ids[j] == ids[i] and j + 1 < i})
        if targets:
            per_query.append(patterns[..., i, targets].sum(-1))
    return np.mean(per_query, axis=0)


@pytest.mark.parametrize("score", ["previous", "duplicate", "induction", "sink"])
def test_scores_follow_their_definitions(tiny_handle, score):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    result = compute_head_scores(model, tokenizer, HeadScoresConfig(prompt=PROMPT, score=score))
    ids = tokenizer(PROMPT)["input_ids"]
    expected = _by_definition(_patterns(model, torch.tensor([ids])), ids, score)
    assert result.scores.shape == (2, 4) and np.allclose(result.scores, expected, atol=1e-6)
    assert result.to_json()["scores"] == result.scores.tolist()


def test_induction_targets_on_a_repeated_sequence(tiny_handle):
    encoded = repeated_random(tiny_handle.model, tiny_handle.tokenizer, 6, seed=1)
    ids = encoded.ids[0].tolist()
    prefix = len(ids) - 12
    assert ids[prefix:prefix + 6] == ids[prefix + 6:]
    mask = target_mask(ids, "induction")
    for i in range(prefix + 7, len(ids)):  # the second copy looks at what followed its token in the first
        assert mask[i, i - 5] == 1
    assert compute_head_scores(tiny_handle.model, tiny_handle.tokenizer,
                               HeadScoresConfig(score="induction", repeat=6, seed=1)).tokens == encoded.tokens


def test_no_target_is_one_line(tiny_handle):
    with pytest.raises(UserError, match="no token occurs twice"):
        compute_head_scores(tiny_handle.model, tiny_handle.tokenizer, HeadScoresConfig(prompt="abc", score="duplicate"))


def test_grid_is_the_layers_patterns(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    result = compute_grid(model, tokenizer, GridConfig(prompt=PROMPT, layer=1))
    expected = _patterns(model, torch.tensor([tokenizer(PROMPT)["input_ids"]]))[1]
    assert np.allclose(result.patterns, expected, atol=1e-6)
    assert result.heads == ((1, 0), (1, 1), (1, 2), (1, 3))
    with pytest.raises(UserError, match="Layer 2 does not exist"):
        compute_grid(model, tokenizer, GridConfig(prompt=PROMPT, layer=2))


def test_grid_of_the_top_heads_by_a_score(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    scores = compute_head_scores(model, tokenizer, HeadScoresConfig(prompt=PROMPT, score="previous")).scores
    result = compute_grid(model, tokenizer, GridConfig(prompt=PROMPT, score="previous", top_k=3))
    assert len(result.heads) == 3 and result.layer == -1
    ranked = sorted(((layer, h) for layer in range(2) for h in range(4)), key=lambda lh: -scores[lh])
    assert [scores[lh] for lh in result.heads] == [scores[lh] for lh in ranked[:3]]
    patterns = _patterns(model, torch.tensor([tokenizer(PROMPT)["input_ids"]]))
    assert np.allclose(result.patterns, np.stack([patterns[lh] for lh in result.heads]), atol=1e-6)
