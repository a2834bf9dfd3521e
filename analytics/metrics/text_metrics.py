"""BLEU, ROUGE and METEOR beside the semantic score (METRIC.md §6).

Both strings are stripped and lower-cased; no stop-word removal.

* tokens: ``nltk.word_tokenize`` (Punkt ``punkt_tab/english`` sentence split, then NLTK's Treebank word
  tokenizer);
* BLEU: ``sentence_bleu([ref], hyp, smoothing_function=SmoothingFunction().method1)``, cumulative BLEU-4;
* METEOR: ``meteor_score([ref], hyp)`` with NLTK's defaults (α 0.9, β 3, γ 0.5; exact, Porter stem and WordNet
  3.0 synonym matches);
* ROUGE: ``(ROUGE-1 F + ROUGE-L F) / 2`` of ``rouge_score.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)``.

**Quirk of the public code (§6, §7.11), not reproduced:** all three sit in one ``try`` and all become 0.0 when
any fails (WordNet or punkt_tab missing). Here a metric that cannot be computed is ``None`` and
:attr:`TextMetrics.status` says why; the others are still computed.

The NLTK resources are read from the directory built by ``scripts/build_nltk_data.py`` (``$NLTK_DATA`` or
``<project>/var/nltk_data``), searched first; that directory is appended to ``nltk.data.path`` because NLTK's
path sandbox opens nothing outside it.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .resources import default_nltk_data_dir

BUILD_HINT = "build it with `python scripts/build_nltk_data.py` (needs Debian wordnet-base + wordnet-sense-index)"


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
        self._rouge = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
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
                reader = WordNetCorpusReader(root, None)
                reader.synsets("dog")
        except (LookupError, OSError, ValueError, AssertionError) as exc:
            return MetricStatus(False, f"WordNet at {root} unreadable: {type(exc).__name__}: {exc}")
        self._wordnet = reader
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

    def score(self, expected: str, prediction: str) -> dict[str, float | None]:
        """``{"bleu", "rouge", "meteor"}`` for one pair; ``None`` for a metric whose resources are missing."""
        from nltk.translate.bleu_score import sentence_bleu
        from nltk.translate.meteor_score import meteor_score

        expected = expected.strip().lower()
        prediction = prediction.strip().lower()
        rouge = self._rouge.score(expected, prediction)
        out: dict[str, float | None] = {
            "bleu": None,
            "rouge": (rouge["rouge1"].fmeasure + rouge["rougeL"].fmeasure) / 2.0,
            "meteor": None,
        }
        if self._sentence_tokenizer is None:
            return out
        ref, hyp = self.word_tokenize(expected), self.word_tokenize(prediction)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NLTK warns on zero n-gram overlaps; method1 smoothing handles it
            out["bleu"] = float(sentence_bleu([ref], hyp, smoothing_function=self._smoothing))
        if self._wordnet is not None:
            out["meteor"] = float(meteor_score([ref], hyp, wordnet=self._wordnet))
        return out


@cache
def shared_text_metrics(nltk_data_dir: str | None = None) -> TextMetrics:
    """One :class:`TextMetrics` per process and NLTK data directory (WordNet loads in a few seconds)."""
    return TextMetrics(nltk_data_dir)
