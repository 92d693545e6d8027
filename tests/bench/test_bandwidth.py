"""The bandwidth bound's weight bytes (bench/bandwidth.py) on the tiny models and their reduced copies."""
from backend.models.reduced import reduced_copy
from bench.bandwidth import bytes_per_token


def _bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def test_a_step_reads_every_weight_but_the_input_embedding_table(tiny_handle):
    model = tiny_handle.model
    head, embedding = model.get_output_embeddings(), model.get_input_embeddings()
    unique = {id(p): p for p in model.parameters()}
    if head.weight is not embedding.weight:  # untied: the table is looked up one row a token, not read whole
        unique.pop(id(embedding.weight))
    floats = [b for b in model.buffers() if b.is_floating_point()]  # e.g. rotary frequencies: read too
    assert bytes_per_token(model) == _bytes(unique.values()) + _bytes(floats)


def test_reduced_copies_read_fewer_bytes(tiny_handle):
    model = tiny_handle.model
    fp32 = bytes_per_token(model)
    bf16, int8 = bytes_per_token(reduced_copy(model, "bf16")), bytes_per_token(reduced_copy(model, "int8"))
    head = model.get_output_embeddings().weight
    layers = fp32 - _bytes([head])  # what the copies round: every linear layer but the head (and the norms)
    assert int8 < bf16 < fp32
    assert bf16 > _bytes([head]) + layers / 2 * 0.9  # roughly halved layers, the fp32 head kept
    assert bytes_per_token(reduced_copy(model, "int8", round_head=True)) < int8
