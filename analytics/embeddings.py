"""The metric's sentence embeddings kept in PostgreSQL (:class:`metrics.TextVectorStore`).

Why: every Celery worker has its own in-memory cache, lost on restart. With this store a release's reference
texts are encoded once for all workers and all later runs, the work done before a worker crash is kept, and the
texts of one scoring job can be encoded by several workers in parallel (:mod:`analytics.scoring.runs`). A vector
is the model's float32 output stored byte for byte, so a stored vector is exactly the one a worker computed.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.utils import timezone

from analytics.models import TextEmbedding
from metrics.encoder import DIM, Encoder

_BATCH = 1000  # keys per query / rows per insert
_DTYPE = np.dtype("<f4")


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class DatabaseTextStore:
    """Sentence embeddings in the ``TextEmbedding`` table; a row of the wrong size is treated as missing."""

    def get_many(self, model_key: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        by_digest = {text_sha256(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        for digest, blob in _stored(model_key, list(by_digest), "text_sha256", "vector"):
            vector = np.frombuffer(bytes(blob), dtype=_DTYPE)
            if vector.shape == (DIM,):
                found[by_digest[digest]] = vector.astype(np.float32)
        return found

    def put_many(self, model_key: str, vectors: Mapping[str, np.ndarray]) -> None:
        rows = [
            TextEmbedding(model_key=model_key, text_sha256=text_sha256(t), vector=np.asarray(v, dtype=_DTYPE).tobytes())
            for t, v in vectors.items()
        ]
        # A text stored meanwhile by another worker keeps its row (same model, same text, same vector).
        TextEmbedding.objects.bulk_create(rows, batch_size=_BATCH, ignore_conflicts=True)

    def missing(self, model_key: str, texts: Sequence[str]) -> list[str]:
        """Those of ``texts`` (distinct, in order) that have no stored vector."""
        by_digest = {text_sha256(t): t for t in texts}
        stored = {digest for (digest,) in _stored(model_key, list(by_digest), "text_sha256")}
        return [t for d, t in by_digest.items() if d not in stored]


def _stored(model_key: str, digests: list[str], *fields: str):
    """The stored rows (``fields`` of each) among ``digests``, queried in batches."""
    for start in range(0, len(digests), _BATCH):
        yield from TextEmbedding.objects.filter(
            model_key=model_key, text_sha256__in=digests[start : start + _BATCH]
        ).values_list(*fields)


def embeddings_prune(*, older_than_days: int) -> int:
    """Delete stored embeddings older than ``older_than_days``; return how many."""
    cutoff = timezone.now() - timedelta(days=older_than_days)
    deleted, _ = TextEmbedding.objects.filter(created_at__lt=cutoff).delete()
    return deleted


@functools.cache
def settings_encoder() -> Encoder:
    """The worker's sentence model, loaded once per process, with the embedding store when settings ask for it.
    Scoring and the nugget matcher share it, so a text encoded by either is not encoded again."""
    store = DatabaseTextStore() if settings.METRIC_EMBEDDING_STORE else None
    return Encoder(settings.METRIC_MODEL_PATH or None, cache_dir=settings.METRIC_CACHE_DIR, text_store=store)
