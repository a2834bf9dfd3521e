"""Padding-free ("packed") inference for BERT-family sentence-transformers models such as all-MiniLM-L6-v2.

``SentenceTransformer.encode`` pads every batch to its longest text and runs each batch as one
``[batch, length, 384]`` tensor. On a CPU the linear layers (21.5 MFLOP of the model's ~22 per position) run fastest as
one tall matrix product, so this module lays the texts of a chunk end to end as ``[positions, 384]`` rows: every
position-wise operation (embeddings, the fused query/key/value projection, the attention output, the feed-forward
layers, the layer norms) runs once over the whole chunk with no padding rows, and only attention, the one
operation that mixes positions, runs per group of texts of equal length (texts are sorted by length, so each
group is a contiguous slice viewed as ``[texts, heads, length, head size]`` without a copy). Mean pooling and
L2 normalisation follow, as the model's Pooling and Normalize modules do.

The linear layers run through oneDNN's fused kernels where this torch has them (``torch.ops.mkldnn``, checked at
start): weights pre-packed once in oneDNN's blocked layout, GELU applied inside the up-projection and the residual
adds inside the two down-projections, so those element-wise passes cost no extra trip through memory
(bench/bench_scoring.py compares both paths). Otherwise, and under ``torch.autocast``, the model's own modules run.

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

#: The fused path's row counts are multiples of this (see :meth:`PackedBert._forward`).
ROW_STEP = 64


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


def _onednn_works(torch) -> bool:
    """True when this torch build has oneDNN's fused linear kernels and they compute what ``linear`` does.

    They are torch's private ops (``torch.ops.mkldnn``, what ``torch.compile`` emits on a CPU), so they are tried
    rather than assumed; without them :class:`PackedBert` runs the plain modules.
    """
    try:
        generator = torch.Generator().manual_seed(0)
        x, other = torch.randn(5, 8, generator=generator), torch.randn(5, 16, generator=generator)
        weight, bias = torch.randn(16, 8, generator=generator), torch.randn(16, generator=generator)
        with torch.inference_mode():
            packed = torch.ops.mkldnn._reorder_linear_weight(weight, 5)
            gelu = torch.ops.mkldnn._linear_pointwise(x, packed, bias, "gelu", [], "none")
            added = torch.ops.mkldnn._linear_pointwise.binary(x, other, packed, bias, "add")
            plain = torch.nn.functional.linear(x, weight, bias)
            return bool(
                torch.allclose(gelu, torch.nn.functional.gelu(plain), atol=1e-4)
                and torch.allclose(added, plain + other, atol=1e-4)
            )
    except (AttributeError, RuntimeError, NotImplementedError):
        return False


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
        self.fused = self.device.type == "cpu" and _onednn_works(torch)
        self._fused_layers = (
            [self._fused_weights(qkv_weight, qkv_bias, layer) for qkv_weight, qkv_bias, layer in self.layers]
            if self.fused
            else []
        )

    def _packed(self, weight, bias) -> tuple:
        """(weight, bias) of one linear map, the weight pre-packed in oneDNN's blocked layout for this chunk size."""
        return self._torch.ops.mkldnn._reorder_linear_weight(weight.detach(), self.chunk_positions), bias.detach()

    def _fused_weights(self, qkv_weight, qkv_bias, layer) -> tuple:
        """The layer's four linear maps as (weight, bias) pairs pre-packed in oneDNN's blocked layout."""
        packed = self._packed
        return (
            packed(qkv_weight, qkv_bias),
            packed(layer.attention.output.dense.weight, layer.attention.output.dense.bias),
            layer.attention.output.LayerNorm,
            packed(layer.intermediate.dense.weight, layer.intermediate.dense.bias),
            packed(layer.output.dense.weight, layer.output.dense.bias),
            layer.output.LayerNorm,
        )

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
        lengths = [len(seq) for seq in ids]
        # Under torch.autocast (the bench's bfloat16 check) the plain modules run, since autocast casts only them.
        fused = self.fused and not torch.is_autocast_enabled("cpu")
        # oneDNN keeps a compiled kernel per row count it has seen (up to 1,024 of them, each holding memory), so the
        # fused path rounds the rows up to a multiple of ROW_STEP with padding rows that no text reads: at most
        # chunk_positions / ROW_STEP row counts, whatever the job.
        padding = -sum(lengths) % ROW_STEP if fused else 0
        flat = torch.tensor(
            [token for seq in ids for token in seq] + [0] * padding, dtype=torch.long, device=self.device
        )
        positions = torch.cat([torch.arange(n, device=self.device) for n in [*lengths, padding]])
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
        if fused:
            for weights in self._fused_layers:
                hidden_states = self._fused_layer(hidden_states, groups, weights)
        else:
            for qkv_weight, qkv_bias, layer in self.layers:
                hidden_states = self._plain_layer(hidden_states, groups, qkv_weight, qkv_bias, layer)
        return hidden_states, groups

    def _attention(self, qkv, groups):
        """Attention of each group of equal-length texts: ``qkv`` ``[positions, 3·hidden]`` → ``[positions, hidden]``.

        The kernel returns each group's heads already laid out as ``[texts, length, heads, head size]``, so its
        rows are a view; one ``cat`` joins the groups (one copy, not one per group: on two busy cores each
        parallel copy costs a thread wake-up).
        """
        torch = self._torch
        attended = []
        for first, count, length in groups:
            rows = qkv[first : first + count * length]
            q, k, v = rows.view(count, length, 3, self.heads, self.head_size).permute(2, 0, 3, 1, 4)
            heads = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            attended.append(heads.transpose(1, 2).reshape(count * length, self.hidden))
        padding = qkv.shape[0] - sum(count * length for _, count, length in groups)
        if padding:
            attended.append(qkv.new_zeros((padding, self.hidden)))
        return torch.cat(attended) if len(attended) > 1 else attended[0]

    def _plain_layer(self, hidden_states, groups, qkv_weight, qkv_bias, layer):
        functional = self._torch.nn.functional
        context = self._attention(functional.linear(hidden_states, qkv_weight, qkv_bias), groups)
        attention_out = layer.attention.output
        hidden_states = attention_out.LayerNorm(attention_out.dense(context) + hidden_states)
        intermediate = functional.gelu(layer.intermediate.dense(hidden_states))
        return layer.output.LayerNorm(layer.output.dense(intermediate) + hidden_states)

    def linear_kernel(self, module) -> Callable:
        """``module`` (a ``torch.nn.Linear``) as the fused path runs its products: pre-packed weight, oneDNN's kernel.
        For timing that kernel on its own (bench/bench_scoring.py's ceiling); only where :attr:`fused` holds."""
        weight, bias = self._packed(module.weight, module.bias)
        linear = self._torch.ops.mkldnn._linear_pointwise
        return lambda x: linear(x, weight, bias, "none", [], "")

    def _fused_layer(self, hidden_states, groups, weights):
        """The same layer through oneDNN: pre-packed weights, GELU and the residual adds fused into the products."""
        linear = self._torch.ops.mkldnn._linear_pointwise
        (qkv_w, qkv_b), (out_w, out_b), out_norm, (up_w, up_b), (down_w, down_b), down_norm = weights
        context = self._attention(linear(hidden_states, qkv_w, qkv_b, "none", [], ""), groups)
        hidden_states = out_norm(linear.binary(context, hidden_states, out_w, out_b, "add"))
        intermediate = linear(hidden_states, up_w, up_b, "gelu", [], "none")  # "none": exact (erf) GELU, as BERT's
        return down_norm(linear.binary(intermediate, hidden_states, down_w, down_b, "add"))

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
