"""Every token vector the ``cliniqlink-2025`` word layer can ask for, encoded once per model and kept on disk.

The word layer (docs/metric.md §5.3) keeps only the WordPiece pieces for which ``str.isalnum()`` is true and encodes
each one on its own as the sentence ``[CLS] piece [SEP]``. A piece is a vocabulary entry (``##`` continuations
and ``[UNK]`` are not alphanumeric), so the token strings it can ever meet are the model's alphanumeric
vocabulary entries: 23,502 of all-MiniLM-L6-v2's 30,522, each re-tokenising to three positions. docs/metric.md's
speed note says each distinct token "needs encoding once per run (or once ever, cached)": this is "once ever".
The table is built at install time (``scripts/build_token_table.py``, run by ``make``; about 70,000 positions, too
many to encode at every start), keyed by the SHA-256 of the model's weights and of the vocabulary, and the
:class:`~.encoder.Encoder` reads it instead of encoding tokens. A table that is missing, stale (other weights
or vocabulary) or unreadable is not used, with the reason recorded; tokens are then encoded as before. The
vectors are those of the same encoder (float rounding aside, ~1e-7), which the tests check.

Pure module: numpy only, no Django.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Bumped when the file layout changes; a table of another version is rebuilt, never misread.
FORMAT_VERSION = 1
#: Tokens per encoder call while building (progress is reported after each).
BUILD_BATCH = 2048


def vocabulary_tokens(vocab: Iterable[str]) -> list[str]:
    """The vocabulary entries the word layer can produce (alphanumeric pieces), sorted."""
    return sorted(piece for piece in vocab if piece.isalnum())


def vocabulary_sha256(tokens: Sequence[str]) -> str:
    """SHA-256 of the token strings (one per line), so a changed vocabulary invalidates the table."""
    return hashlib.sha256("\n".join(tokens).encode("utf-8")).hexdigest()


def table_path(cache_dir: str | os.PathLike, weights_sha256: str) -> Path:
    """Where the table of the model with these weights lives in ``cache_dir``."""
    return Path(cache_dir) / f"token-vectors-{weights_sha256[:16]}.npz"


@dataclass(frozen=True)
class TokenTable:
    """Token string → vector (float32 row views into one array), with where it came from."""

    path: Path
    vectors: Mapping[str, np.ndarray]
    meta: dict

    def describe(self) -> dict:
        """What the scoring run record says about the token vectors it used."""
        return {"source": "table", "file": self.path.name, "tokens": len(self.vectors), "built_with": self.meta}


class TokenTableProblem(Exception):
    """The table on disk cannot be used; the message says why (recorded in the run record)."""


def build_table(
    tokens: Sequence[str],
    encode: Callable[[Sequence[str]], np.ndarray],
    path: str | os.PathLike,
    *,
    weights_sha256: str,
    vocab_sha256: str,
    meta: Mapping | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Encode ``tokens`` with ``encode`` (each as its own sentence) and write the table to ``path`` atomically.

    ``progress(done, total)`` is called after every batch. The file is written beside its final name and renamed
    into place, so a reader never sees half a table and an interrupted build leaves the old one intact.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = []
    for start in range(0, len(tokens), BUILD_BATCH):
        parts.append(np.asarray(encode(tokens[start : start + BUILD_BATCH]), dtype=np.float32))
        if progress:
            progress(min(start + BUILD_BATCH, len(tokens)), len(tokens))
    vectors = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
    # ``meta`` adds provenance (engine, torch version); it cannot override the keys the loader checks.
    header = {
        **dict(meta or {}),
        "format": FORMAT_VERSION,
        "weights_sha256": weights_sha256,
        "vocab_sha256": vocab_sha256,
    }
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, tokens=np.array(tokens, dtype=str), vectors=vectors, meta=np.array(json.dumps(header)))
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the table is read by other users (the image's worker)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_table(path: str | os.PathLike, *, weights_sha256: str, vocab_sha256: str) -> TokenTable:
    """Read the table at ``path`` if it was built for these weights and this vocabulary.

    Raises :class:`TokenTableProblem` naming the reason otherwise (missing, unreadable, other format, other
    weights, other vocabulary, vectors of the wrong shape); the caller then encodes tokens itself.
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            tokens = [str(t) for t in data["tokens"]]
            vectors = np.asarray(data["vectors"], dtype=np.float32)
    except FileNotFoundError as exc:
        raise TokenTableProblem(f"no token table at {path}") from exc
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:  # a damaged or foreign file
        raise TokenTableProblem(f"token table {path} is unreadable ({exc})") from exc
    if meta.get("format") != FORMAT_VERSION:
        raise TokenTableProblem(f"token table {path} has format {meta.get('format')!r}, expected {FORMAT_VERSION}")
    if meta.get("weights_sha256") != weights_sha256:
        raise TokenTableProblem(f"token table {path} was built for other model weights")
    if meta.get("vocab_sha256") != vocab_sha256:
        raise TokenTableProblem(f"token table {path} was built for another vocabulary")
    if vectors.ndim != 2 or vectors.shape[0] != len(tokens) or not np.isfinite(vectors).all():
        raise TokenTableProblem(f"token table {path} holds {vectors.shape} vectors for {len(tokens)} tokens")
    return TokenTable(path, dict(zip(tokens, vectors, strict=True)), meta)
