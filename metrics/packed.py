"""Padding-free ("packed") inference for BERT-family sentence-transformers models such as all-MiniLM-L6-v2.

``SentenceTransformer.encode`` pads every batch to its longest text and runs each batch as one
``[batch, length, 384]`` tensor. On a CPU the linear layers (21.5 MFLOP of the model's ~22 per position) run fastest as
one tall matrix product, so this module lays the texts of a chunk end to end as ``[positions, 384]`` rows: every
position-wise operation (embeddings, the fused query/key/value projection, the attention output, the feed-forward
layers, the layer norms) runs once over the whole chunk with no padding rows, and only attention, the one
operation that mixes positions, runs per group of texts of equal length (texts are sorted by length, so each
group is a contiguous slice viewed as ``[texts, heads, length, head size]`` without a copy). Mean pooling and
L2 normalisation follow, as the model's Pooling and Normalize modules do.

It computes the same function as the model with the same weights (differences are float rounding, ~1e-7;
``tests/metrics/test_packed.py`` compares it with ``SentenceTransformer.encode`` on awkward texts).
:func:`packable` says which models it can run; :class:`~.encoder.Encoder` falls back to ``encode`` for the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import groupby

import numpy as np

#: Positions per forward chunk. Large enough for efficient matrix products, small enough to keep the transient
#: tensors small (the largest, the feed-forward activation, is 2048 × 1536 floats = 12.6 MB); ``bench/
#: bench_scoring.py --chunk-sizes`` compares sizes (docs/benchmarks-metric.md).
CHUNK_POSITIONS = 2048


def packable(st_model) -> bool:
    """True when ``st_model`` is Transformer(BERT, absolute positions, GELU) → mean Pooling → Normalize."""
    try:
        transformer, pooling, normalize = list(st_model)
        config = transformer.auto_model.config
    except (TypeError, ValueError, AttributeError):
        return False
    pooling_mode = getattr(pooling, "pooling_mode", None) or (
        "mean" if getattr(pooling, "pooling_mode_mean_tokens", False) else None
    )
    return (
        config.model_type == "bert"
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
        and config.hidden_act == "gelu"
        and pooling_mode == "mean"
        and type(normalize).__name__ == "Normalize"
    )


class PackedBert:
    """Runs a BERT sentence-transformers model over lists of token-id sequences without padding."""

    def __init__(self, st_model, *, chunk_positions: int = CHUNK_POSITIONS) -> None:
        import torch

        self._torch = torch
        bert = st_model[0].auto_model
        config = bert.config
        self.hidden = config.hidden_size
        self.heads = config.num_attention_heads
        self.head_size = self.hidden // self.heads
        self.chunk_positions = chunk_positions
        self.device = bert.device
        self.embeddings = bert.embeddings
        self.layers = []
        for layer in bert.encoder.layer:
            attention = layer.attention.self
            # One [3·hidden, hidden] projection instead of three: a third of the matrix-product calls.
            qkv_weight = torch.cat([attention.query.weight, attention.key.weight, attention.value.weight]).detach()
            qkv_bias = torch.cat([attention.query.bias, attention.key.bias, attention.value.bias]).detach()
            self.layers.append((qkv_weight, qkv_bias, layer))

    def _chunks(self, lengths: Sequence[int]) -> Iterator[list[int]]:
        """Indices of the sequences, shortest first, cut into chunks of at most ``chunk_positions`` positions."""
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        chunk: list[int] = []
        positions = 0
        for index in order:
            if chunk and positions + lengths[index] > self.chunk_positions:
                yield chunk
                chunk, positions = [], 0
            chunk.append(index)
            positions += lengths[index]
        if chunk:
            yield chunk

    def _forward(self, ids: list[list[int]]):
        """Last-layer states ``[positions, hidden]`` of the sequences laid end to end, and their length groups."""
        torch = self._torch
        functional = torch.nn.functional
        lengths = [len(seq) for seq in ids]
        flat = torch.tensor([token for seq in ids for token in seq], dtype=torch.long, device=self.device)
        positions = torch.cat([torch.arange(n, device=self.device) for n in lengths])
        emb = self.embeddings
        hidden_states = emb.LayerNorm(
            emb.word_embeddings(flat) + emb.position_embeddings(positions) + emb.token_type_embeddings.weight[0]
        )
        groups: list[tuple[int, int, int]] = []  # (first row, texts, length); the ids arrive sorted by length
        start = 0
        for length, same in groupby(lengths):
            count = len(list(same))
            groups.append((start, count, length))
            start += count * length
        for qkv_weight, qkv_bias, layer in self.layers:
            qkv = functional.linear(hidden_states, qkv_weight, qkv_bias)
            context = torch.empty_like(hidden_states)
            for first, count, length in groups:
                rows = slice(first, first + count * length)
                q, k, v = qkv[rows].view(count, length, 3, self.heads, self.head_size).permute(2, 0, 3, 1, 4)
                attended = functional.scaled_dot_product_attention(q, k, v)
                context[rows] = attended.transpose(1, 2).reshape(count * length, self.hidden)
            attention_out = layer.attention.output
            hidden_states = attention_out.LayerNorm(attention_out.dense(context) + hidden_states)
            intermediate = functional.gelu(layer.intermediate.dense(hidden_states))
            hidden_states = layer.output.LayerNorm(layer.output.dense(intermediate) + hidden_states)
        return hidden_states, groups

    def _run(self, ids: Sequence[list[int]], per_chunk: Callable) -> None:
        with self._torch.inference_mode():
            for chunk in self._chunks([len(seq) for seq in ids]):
                per_chunk(chunk, *self._forward([ids[i] for i in chunk]))

    def sentence_embeddings(self, ids: Sequence[list[int]]) -> np.ndarray:
        """Mean-pooled, L2-normalised embeddings ``[len(ids), hidden]`` (float32), in the order of ``ids``."""
        out = np.zeros((len(ids), self.hidden), dtype=np.float32)

        def pool(chunk, hidden_states, groups):
            torch = self._torch
            means = [hidden_states[f : f + c * n].view(c, n, self.hidden).mean(1) for f, c, n in groups]
            out[chunk] = torch.nn.functional.normalize(torch.cat(means), dim=1).cpu().numpy()

        self._run(ids, pool)
        return out

    def token_states(self, ids: Sequence[list[int]]) -> list[np.ndarray]:
        """Each sequence's last-layer states ``[length, hidden]`` (float32, not normalised), in the order of ``ids``."""
        out: list[np.ndarray | None] = [None] * len(ids)

        def split(chunk, hidden_states, groups):
            states = hidden_states.cpu().numpy()
            row = 0
            for index in chunk:
                n = len(ids[index])
                out[index] = states[row : row + n].copy()
                row += n

        self._run(ids, split)
        return out  # type: ignore[return-value]
