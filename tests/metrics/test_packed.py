"""The padding-free encoder (metrics/packed.py) computes what SentenceTransformer.encode computes."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.packed import PackedBert, packable

# Awkward inputs: empty, whitespace at the ends, accents, CJK, a text past the 256-piece truncation, a piece
# alone (as the word layer sends tokens), repeats of one length (one attention group) and many lengths.
AWKWARD = [
    "",
    "  leading and trailing spaces  ",
    "Über café naïve 5α-reductase",
    "中文 测试 糖尿病",
    "word " * 400,
    "ex",
    "renal",
    "liver",
    "Greater than 1 g/day of protein excretion is indicative of glomerular pathology.",
    "Isoniazid (INH) can cause peripheral neuropathy; pyridoxine prevents it.",
    "\tnewline\ninside\n",
] + [f"sentence number {i} about hepatic {'and renal ' * i}function" for i in range(12)]


def _reference(encoder, texts, **kwargs):
    return encoder.model.encode(texts, batch_size=4, show_progress_bar=False, **kwargs)


def test_model_is_packable_and_the_encoder_uses_it(encoder):
    assert packable(encoder.model)
    assert encoder.engine == "packed"


@pytest.mark.parametrize("chunk_positions", [2048, 37])  # 37: chunks end mid-group and single long texts overflow
def test_sentence_embeddings_match_sentence_transformers(encoder, chunk_positions):
    packed = PackedBert(encoder.model, chunk_positions=chunk_positions)
    got = packed.sentence_embeddings(encoder.token_ids(AWKWARD))
    expected = _reference(encoder, AWKWARD, convert_to_numpy=True)
    assert got.shape == expected.shape == (len(AWKWARD), 384)
    assert np.abs(got - expected).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_order_is_kept_whatever_the_length_sort(encoder):
    packed = PackedBert(encoder.model)
    forward = packed.sentence_embeddings(encoder.token_ids(AWKWARD))
    backward = packed.sentence_embeddings(encoder.token_ids(AWKWARD[::-1]))
    assert np.abs(forward - backward[::-1]).max() < 1e-6
    # Distinct texts give distinct vectors: a mix-up of rows would show here.
    assert np.abs(forward[5] - forward[6]).max() > 1e-2


def test_token_states_match_sentence_transformers(encoder):
    packed = PackedBert(encoder.model, chunk_positions=64)
    ids = encoder.token_ids(AWKWARD)
    got = packed.token_states(ids)
    expected = _reference(encoder, AWKWARD, output_value="token_embeddings", convert_to_numpy=False)
    for seq, mine, theirs in zip(ids, got, expected, strict=True):
        theirs = theirs.detach().cpu().numpy()[: len(seq)]
        assert mine.shape == theirs.shape == (len(seq), 384)
        assert np.abs(mine - theirs).max() < 1e-4


def test_truncation_matches_the_models_256_pieces(encoder):
    (ids,) = encoder.token_ids(["word " * 400])
    assert len(ids) == encoder.max_seq_length == 256


def test_other_models_fall_back_to_encode(encoder):
    assert not packable(list(encoder.model)[:2])  # no Normalize module: not the architecture PackedBert runs
    assert not packable(object())


def test_the_sentence_transformers_engine_gives_the_same_vectors(encoder):
    from metrics import Encoder

    plain = Encoder(encoder.model_path, packed=False)
    assert plain.engine == "sentence-transformers"
    texts = AWKWARD[:10]
    assert np.abs(plain.embed_texts(texts) - encoder.embed_texts(texts)).max() < 1e-5
    assert np.abs(plain.token_matrix(["renal", "ex"]) - encoder.token_matrix(["renal", "ex"])).max() < 1e-5


def test_fused_onednn_layers_compute_what_the_plain_modules_compute(encoder):
    packed = PackedBert(encoder.model)
    assert packed.fused  # this torch has oneDNN's fused linear kernels: the fast path is the one tested above
    ids = encoder.token_ids(AWKWARD)
    fused = packed.sentence_embeddings(ids)
    packed.fused = False
    plain = packed.sentence_embeddings(ids)
    assert np.abs(fused - plain).max() < 1e-5


def test_without_onednn_kernels_the_plain_modules_run(encoder, monkeypatch):
    import metrics.packed

    monkeypatch.setattr(metrics.packed, "_onednn_works", lambda torch: False)
    packed = PackedBert(encoder.model, chunk_positions=37)
    assert not packed.fused
    got = packed.sentence_embeddings(encoder.token_ids(AWKWARD))
    assert np.abs(got - _reference(encoder, AWKWARD, convert_to_numpy=True)).max() < 1e-5


def test_batched_tokenisation_matches_one_text_at_a_time(encoder):
    texts = AWKWARD + ["[CLS] [SEP] [MASK] tokens", "  two  spaces  "]
    assert encoder.tokenize_many(texts) == [encoder.tokenize(t) for t in texts]
    assert encoder.tokenize_many([]) == []


def test_fused_chunks_come_in_a_bounded_set_of_row_counts(encoder):
    from metrics.packed import ROW_STEP

    packed = PackedBert(encoder.model)
    ids = encoder.token_ids(AWKWARD[:5])
    with torch_inference():
        hidden_states, groups = packed._forward(sorted(ids, key=len))
    assert hidden_states.shape[0] % ROW_STEP == 0  # oneDNN compiles one kernel per row count: keep them few
    assert sum(count * length for _, count, length in groups) == sum(map(len, ids))


def torch_inference():
    import torch

    return torch.inference_mode()


def test_linear_kernel_computes_what_the_linear_layer_does(encoder):
    """The kernel the scoring bench times for its ceiling is the fused path's own product, and gives the layer's
    result."""
    import torch

    packed = PackedBert(encoder.model, chunk_positions=64)
    if not packed.fused:
        pytest.skip("this torch build has no oneDNN fused linear kernels")
    layer = encoder.model[0].auto_model.encoder.layer[0].intermediate.dense
    x = torch.randn(64, layer.in_features)
    with torch.inference_mode():
        got, expected = packed.linear_kernel(layer)(x), layer(x)
    assert got.shape == expected.shape == (64, layer.out_features)
    assert (got - expected).abs().max().item() < 1e-4
