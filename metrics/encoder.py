"""Batched, cached access to all-MiniLM-L6-v2 (docs/metric.md §5.3–§5.5, "Speed" note at the top).

The public scorer calls ``SentenceTransformer.encode`` for every token of every pair and twice more for every
pair's two texts. The token embeddings it uses are *not contextual*: each WordPiece string is encoded on its
own as the one-word sentence ``[CLS] piece [SEP]``, mean-pooled and L2-normalised, so a token's vector depends
on the token string alone. :class:`Encoder` therefore encodes each distinct token string once per process
(a dictionary cache) and each distinct text once per call. It also keeps the embeddings of the last
``text_cache_size`` texts (LRU), so the references shared by several systems' submissions are encoded once.
For BERT models (all-MiniLM-L6-v2 is one) the texts go through :class:`~.packed.PackedBert`, which runs them end
to end without padding (``bench/bench_scoring.py`` compares it with ``SentenceTransformer.encode``); other
models go through ``encode`` in batches.
Token vectors come from the on-disk table of :mod:`.token_table` when one was built for the model (every token
the word layer can meet, encoded once at install time), else they are encoded on first use.
A ``text_store`` (any object with ``get_many`` / ``put_many``, see :class:`TextVectorStore`) extends the text cache
beyond the process: the portal passes one backed by PostgreSQL, so a release's references are encoded once
for every worker and every later run, and the texts of one scoring job can be encoded by several workers.
The numbers are those of the per-pair path up to float rounding (~1e-7);
``tests/metrics/test_semantic_model.py`` and ``test_packed.py`` check it.

Load one :class:`Encoder` per process (Celery worker, CLI run, bench) and pass it to every scoring call.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

from .packed import PackedBert, packable
from .resources import default_metric_cache_dir, resolve_device, resolve_model_path, weights_sha256
from .token_table import TokenTable, TokenTableProblem, load_table, table_path, vocabulary_sha256, vocabulary_tokens

DIM = 384


@dataclass
class EncoderStats:
    """How much work the encoder did: strings sent through the network, by kind."""

    token_strings_encoded: int = 0
    token_vectors_from_table: int = 0
    texts_encoded: int = 0
    texts_from_store: int = 0
    contextual_texts_encoded: int = 0
    encode_calls: int = 0


class TextVectorStore(Protocol):
    """Sentence embeddings kept outside the process, keyed by :attr:`Encoder.embedding_key` and the text."""

    def get_many(self, model_key: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those ``texts`` that have one (float32, ``[DIM]``)."""

    def put_many(self, model_key: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Keep these vectors (a text already stored keeps its vector)."""


#: Texts per ``encode`` call on a GPU (bench/bench_scoring.py --submission --batch-sizes measures the choice).
GPU_BATCH_SIZE = 128


def default_batch_size(device: str) -> int:
    """8 on the CPU; :data:`GPU_BATCH_SIZE` on a GPU, where a batch of 8 leaves the device idle between
    launches (sentence-transformers sorts each call's texts by length, so large batches waste little padding)."""
    return 8 if device == "cpu" else GPU_BATCH_SIZE


class Encoder:
    """The sentence-transformers model with a token-embedding cache and batched text encoding.

    ``model_path`` overrides ``$METRIC_MODEL_PATH`` and the packaged model (see :mod:`.resources`). The model is
    loaded from the local directory only; nothing is fetched from a hub. ``engine`` says how texts are run:
    ``"packed"`` (:class:`~.packed.PackedBert`, chunks of 2,048 positions, no padding) for BERT models on the
    CPU, else ``"sentence-transformers"`` (other models, a GPU ``device``, or ``packed=False``): ``encode`` in
    batches of ``batch_size`` (default :func:`default_batch_size`: 8 on a CPU, where larger ones are no faster
    and the smaller transient attention tensors keep the C heap from fragmenting in long jobs; larger on a GPU,
    where each batch is one round of kernel launches). ``token_table`` False ignores the on-disk token
    table; ``cache_dir`` overrides where it is looked for (:func:`~.resources.default_metric_cache_dir`).
    ``text_store`` (optional, settable later) is consulted for texts missing from the in-process cache, and
    receives every text this encoder encodes.
    """

    def __init__(
        self,
        model_path: str | os.PathLike | None = None,
        *,
        device: str | None = None,
        batch_size: int | None = None,
        token_batch_size: int = 256,
        text_cache_size: int = 20_000,
        packed: bool = True,
        token_table: bool = True,
        cache_dir: str | os.PathLike | None = None,
        text_store: TextVectorStore | None = None,
    ) -> None:
        self.model_path: Path = resolve_model_path(model_path)
        device = resolve_device(device)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(self.model_path), device=device, local_files_only=True)
        self.model.eval()
        self.tokenizer = self.model.tokenizer
        # The word layer and the IDF tokenise whole answers without truncation, as the public scorer does; the
        # tokenizer's one-time "longer than the specified maximum … indexing errors" warning does not apply there
        # (every text the model sees is truncated at max_seq_length), so it is marked as already given.
        if hasattr(self.tokenizer, "deprecation_warnings"):
            self.tokenizer.deprecation_warnings["sequence-length-is-longer-than-the-specified-maximum"] = True
        self.max_seq_length: int = int(self.model.max_seq_length)
        # On a GPU, padded batches are already fast and one kernel launch per length group would not be.
        use_packed = packed and device == "cpu" and packable(self.model)
        self._packed = PackedBert(self.model) if use_packed else None
        self.engine = "packed" if self._packed else "sentence-transformers"
        self.device = device
        self.batch_size = batch_size or default_batch_size(device)
        self.token_batch_size = token_batch_size
        self.stats = EncoderStats()
        self._token_cache: dict[str, np.ndarray] = {}
        self.text_cache_size = text_cache_size
        self._text_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._sha256: str | None = None
        self.use_token_table = token_table
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_metric_cache_dir()
        self._table: TokenTable | None = None
        self._table_checked = False
        self.token_table_problem: str | None = None
        self.text_store = text_store

    # -- identity ------------------------------------------------------------------------------------------
    @property
    def weights_sha256(self) -> str:
        if self._sha256 is None:
            self._sha256 = weights_sha256(self.model_path)
        return self._sha256

    @property
    def embedding_key(self) -> str:
        """What a text's sentence embedding depends on besides the text: the weights and the truncation length."""
        return f"{self.weights_sha256}:{self.max_seq_length}"

    # -- the on-disk token table -----------------------------------------------------------------------------
    def vocabulary_tokens(self) -> list[str]:
        """Every token string the word layer can meet: the alphanumeric vocabulary entries (:mod:`.token_table`)."""
        return vocabulary_tokens(self.tokenizer.get_vocab())

    @property
    def token_table_path(self) -> Path:
        return table_path(self.cache_dir, self.weights_sha256)

    def token_table(self) -> TokenTable | None:
        """The token table of this model, read on first use; None (with ``token_table_problem``) if unusable."""
        if not self.use_token_table:
            return None
        if not self._table_checked:
            self._table_checked = True
            try:
                self._table = load_table(
                    self.token_table_path,
                    weights_sha256=self.weights_sha256,
                    vocab_sha256=vocabulary_sha256(self.vocabulary_tokens()),
                )
            except TokenTableProblem as problem:
                self.token_table_problem = str(problem)
        return self._table

    def reset_token_table(self, cache_dir: str | os.PathLike | None = None, *, enabled: bool = True) -> None:
        """Look for the table again (in ``cache_dir`` if given) on next use, and forget cached token vectors."""
        if cache_dir is not None:
            self.cache_dir = Path(cache_dir)
        self.use_token_table = enabled
        self._table, self._table_checked, self.token_table_problem = None, False, None
        self._token_cache.clear()

    def describe_token_vectors(self) -> dict:
        """For the run record: whether token vectors came from the table (which) or were encoded in this run."""
        table = self.token_table()
        if table is not None:
            return table.describe()
        reason = "turned off" if not self.use_token_table else self.token_table_problem
        return {"source": "encoded in this run", "table_not_used": reason}

    # -- tokenisation ----------------------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[str]:
        """WordPiece pieces of ``text`` as ``AutoTokenizer.tokenize`` gives them (uncased, no truncation)."""
        return self.tokenizer.tokenize(text)

    def tokenize_many(self, texts: Sequence[str]) -> list[list[str]]:
        """:meth:`tokenize` of each text, in one batched call of the fast tokenizer."""
        if not texts:
            return []
        encoded = self.tokenizer(list(texts), add_special_tokens=False)
        return [encoded.tokens(i) for i in range(len(texts))]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """``[CLS] … [SEP]`` ids of each text, truncated at ``max_seq_length`` as ``SentenceTransformer`` does."""
        return self.tokenizer(list(texts), truncation=True, max_length=self.max_seq_length)["input_ids"]

    # -- raw encoding -----------------------------------------------------------------------------------------
    def _encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        self.stats.encode_calls += 1
        if self._packed is not None:
            return self._packed.sentence_embeddings(self.token_ids(texts))
        vectors = self.model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def _last_layer_states(self, texts: Sequence[str]) -> list[tuple[list[int], np.ndarray]]:
        """Each text's ids and last-layer states (one row per id, ``[CLS]``/``[SEP]`` included)."""
        ids = self.token_ids(texts)
        if not texts:
            return []
        self.stats.encode_calls += 1
        if self._packed is not None:
            return list(zip(ids, self._packed.token_states(ids), strict=True))
        states = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            output_value="token_embeddings",
            convert_to_numpy=False,
            show_progress_bar=False,
        )
        return [(seq, state.detach().cpu().numpy()[: len(seq)]) for seq, state in zip(ids, states, strict=True)]

    def encode_one(self, text: str) -> np.ndarray:
        """One text through the model on its own, as the public scorer does (reference path, no cache)."""
        self.stats.texts_encoded += 1
        return self._encode([text], 1)[0]

    def embed_texts(self, texts: Sequence[str], *, write_store: bool = True) -> np.ndarray:
        """Sentence embeddings (mean-pooled, L2-normalised, truncated at 256 pieces) of ``texts``, in order.

        Each distinct text is encoded once, in batches of ``batch_size``; the last ``text_cache_size`` texts are
        kept, so the references shared by several submissions of one release are encoded once. Texts not in
        that cache are looked up in the ``text_store`` first, and what is encoded is written to it (unless
        ``write_store`` is False: a caller that stores every vector itself).
        """
        missing = [t for t in dict.fromkeys(texts) if t not in self._text_cache]
        stored = self.text_store.get_many(self.embedding_key, missing) if self.text_store and missing else {}
        to_encode = [t for t in missing if t not in stored]
        self.stats.texts_from_store += len(stored)
        self.stats.texts_encoded += len(to_encode)
        fresh = dict(zip(to_encode, self._encode(to_encode, self.batch_size), strict=True))
        if self.text_store and fresh and write_store:
            self.text_store.put_many(self.embedding_key, fresh)
        fresh.update(stored)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            vector = fresh.get(text)
            if vector is None:
                vector = self._text_cache[text]
                self._text_cache.move_to_end(text)
            out[i] = vector
        for text, vector in fresh.items():
            self._text_cache[text] = vector
        while len(self._text_cache) > self.text_cache_size:
            self._text_cache.popitem(last=False)
        return out

    # -- non-contextual token vectors (cliniqlink-2025 word layer) ---------------------------------------------
    def prime_tokens(self, tokens: Iterable[str]) -> None:
        """Make every token string's vector available: from the token table, else encoded in large batches."""
        missing = {t for t in tokens if t not in self._token_cache}
        table = self.token_table()
        if table is not None and missing:
            found = {t: table.vectors[t] for t in missing if t in table.vectors}
            self._token_cache.update(found)
            self.stats.token_vectors_from_table += len(found)
            missing -= found.keys()
        if not missing:
            return
        missing = sorted(missing)
        self.stats.token_strings_encoded += len(missing)
        vectors = self.encode_token_strings(missing)
        for token, vector in zip(missing, vectors, strict=True):
            self._token_cache[token] = vector

    def encode_token_strings(self, tokens: Sequence[str]) -> np.ndarray:
        """Each token string through the model on its own (``[CLS] token [SEP]``), in large batches, no cache."""
        return self._encode(tokens, self.token_batch_size)

    def token_matrix(self, tokens: Sequence[str]) -> np.ndarray:
        """Stacked vectors of ``tokens`` (each encoded alone as ``[CLS] token [SEP]``), from the cache."""
        self.prime_tokens(tokens)
        if not tokens:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._token_cache[t] for t in tokens])

    @property
    def cached_tokens(self) -> int:
        return len(self._token_cache)

    def clear_token_cache(self) -> None:
        self._token_cache.clear()

    def clear_caches(self) -> None:
        """Forget every cached token and text vector (the next run starts cold)."""
        self._token_cache.clear()
        self._text_cache.clear()

    # -- contextual token states (paper profile word layer) -----------------------------------------------------
    def contextual_tokens(self, texts: Sequence[str]) -> list[tuple[list[str], np.ndarray]]:
        """For each text: its WordPiece pieces and their last-layer states from one forward pass.

        ``[CLS]``/``[SEP]`` are dropped; each state is L2-normalised; text beyond 256 pieces is truncated, as
        for the sentence layer. Distinct texts are encoded once, in batches.
        """
        unique = list(dict.fromkeys(texts))
        self.stats.contextual_texts_encoded += len(unique)
        special = set(self.tokenizer.all_special_tokens)
        by_text: dict[str, tuple[list[str], np.ndarray]] = {}
        for text, (ids, state) in zip(unique, self._last_layer_states(unique), strict=True):
            pieces = self.tokenizer.convert_ids_to_tokens(ids)
            matrix = state.astype(np.float32)
            keep = [i for i, p in enumerate(pieces) if p not in special]
            matrix = matrix[keep]
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = matrix / np.where(norms == 0, 1.0, norms)
            by_text[text] = ([pieces[i] for i in keep], matrix)
        return [by_text[t] for t in texts]


@cache
def shared_encoder(model_path: str | None = None, device: str | None = None) -> Encoder:
    """One :class:`Encoder` per process and (model path, device): for Celery workers and other long-lived callers.
    ``device`` None: ``$METRIC_DEVICE``, else cpu."""
    return Encoder(model_path, device=device)
