"""The public scorer's per-pair encoding path, kept as a reference (docs/metric.md §5, "Speed").

For every pair it encodes the expected and the predicted WordPiece tokens (one ``encode`` call per side), the
two filtered texts for the sentence layer and the same two texts again for the paragraph layer — six model
calls per pair, no cache — exactly like ``evaluate_open_ended`` in ``submission/evaluate.py``. It exists to
check that :class:`metrics.semantic.SemanticScorer` gives the same numbers (tests/metrics/test_semantic_model.py)
and to time the batched path against it (bench/bench_scoring.py); the portal never runs it.
"""

from __future__ import annotations

import numpy as np

from metrics.encoder import Encoder
from metrics.semantic import IdfTable, SemanticScore, alnum_pieces, combine, content_only, cosine, paragraph_layer


def _encode(encoder: Encoder, texts: list[str]) -> np.ndarray:
    encoder.stats.encode_calls += 1
    return np.asarray(encoder.model.encode(texts, convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)


def naive_word_layer(encoder: Encoder, expected: str, prediction: str, idf: IdfTable) -> float:
    """``compute_word_level_similarity``: tokens of each side encoded in one call per side, every pair."""
    exp_tokens = alnum_pieces(encoder.tokenize(expected))
    pred_tokens = alnum_pieces(encoder.tokenize(prediction))
    if not exp_tokens or not pred_tokens:
        return 0.0
    exp_w = np.array([idf.weight(t) for t in exp_tokens])
    pred_w = np.array([idf.weight(t) for t in pred_tokens])
    exp_emb, pred_emb = _encode(encoder, exp_tokens), _encode(encoder, pred_tokens)
    exp_emb /= np.linalg.norm(exp_emb, axis=1, keepdims=True)
    pred_emb /= np.linalg.norm(pred_emb, axis=1, keepdims=True)
    sims = pred_emb @ exp_emb.T
    precision = (sims.max(axis=1) * pred_w).sum() / pred_w.sum()
    recall = (sims.max(axis=0) * exp_w).sum() / exp_w.sum()
    return 0.0 if precision + recall == 0 else float(2 * precision * recall / (precision + recall))


def naive_semantic(
    encoder: Encoder, expected: str, prediction: str, idf: IdfTable, stop: frozenset[str], baseline: float
) -> SemanticScore:
    """``evaluate_open_ended`` as the public code runs it, one pair at a time (cliniqlink-2025 profile)."""
    exp_raw, pred_raw = expected.strip(), prediction.strip()
    exp_f, pred_f = content_only(exp_raw, stop), content_only(pred_raw, stop)
    word = naive_word_layer(encoder, exp_f, pred_f, idf)
    sentence = cosine(_encode(encoder, [exp_f])[0], _encode(encoder, [pred_f])[0])
    paragraph = paragraph_layer(cosine(_encode(encoder, [exp_f])[0], _encode(encoder, [pred_f])[0]), baseline)
    exact = exp_raw.lower() == pred_raw.lower()
    return SemanticScore(1.0 if exact else combine(word, sentence, paragraph), word, sentence, paragraph, exact)
