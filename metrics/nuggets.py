"""Nugget-based answer evaluation: scores from nugget labels, and the automatic embedding matcher (docs/nuggets.md).

A *nugget* is one atomic, checkable fact of the reference answer, marked ``vital``, ``okay`` or ``avoid`` (a
claim that must not appear). A labeller (a physician, the matcher, an external judge) labels each nugget of an
answer ``support``, ``partial`` or ``not_support``; :func:`answer_scores` turns those labels into the scores of
the TREC RAG nugget evaluation (Pradeep et al. 2024: ``all``, ``vital``, their strict forms) plus
``completeness``, ``avoid_hits`` (HealthBench's negative criteria) and sentence ``precision`` (BioACE).

The matcher (:class:`EmbeddingMatcher`) follows BioACE (Gupta et al., NLM): split the answer into sentences,
embed nuggets and sentences, match them one to one with the largest total cosine (Hungarian method), and label a
nugget by its matched sentence's cosine: ``>= support_threshold`` (0.75) support, ``>= partial_threshold``
partial, else not_support.

Pure: no Django. The sentence splitter is deterministic (the ranking page stores its output per answer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

IMPORTANCES = ("vital", "okay", "avoid")
LABELS = ("support", "partial", "not_support")
LABEL_CREDIT = {"support": 1.0, "partial": 0.5, "not_support": 0.0}
#: BioACE's threshold: a nugget is supported when its best sentence has cosine >= 0.75.
DEFAULT_SUPPORT_THRESHOLD = 0.75
#: Partial support: 0.6. With all-MiniLM-L6-v2, paraphrases of one clinical fact land around 0.6-0.75 while
#: sentences on the same topic that state a different fact sit mostly below 0.6 (checked on the fixtures and the
#: benchmark's synthetic answers); 0.6 keeps "partial" for a restated or narrowed fact rather than a topic match.
DEFAULT_PARTIAL_THRESHOLD = 0.6

SCORE_NAMES = ("all", "vital", "all_strict", "vital_strict", "completeness", "avoid_hits", "precision")
SCORE_LABELS = {
    "all": "All nuggets",
    "vital": "Vital nuggets",
    "all_strict": "All nuggets, strict",
    "vital_strict": "Strict vital recall",
    "completeness": "Completeness",
    "avoid_hits": "Avoid nuggets hit",
    "precision": "Sentence precision",
}
#: Scores where higher is worse (pages sort and colour them the other way).
LOWER_IS_BETTER = frozenset({"avoid_hits"})


@dataclass(frozen=True)
class Nugget:
    """One atomic fact of an item's reference answer; ``id`` unique within the item."""

    id: str
    text: str
    importance: str


@dataclass(frozen=True)
class NuggetMatch:
    """A matcher's label for one nugget, with the evidence sentence (``sentence_index`` None: no sentence)."""

    nugget_id: str
    label: str
    sentence_index: int | None
    sentence: str
    similarity: float | None


def split_sentences(text: str) -> list[str]:
    """The answer's sentences, deterministically: lines and list bullets first, then Chinese 。！？； and English
    Punkt (``punkt_tab/english`` from the project's offline NLTK data; never downloaded). Stripped, no empties."""
    raise NotImplementedError


def answer_scores(
    nuggets: Sequence[Nugget],
    labels: Mapping[str, str],
    *,
    sentence_marks: Sequence[bool] | None = None,
) -> dict[str, float | int | None]:
    """Every :data:`SCORE_NAMES` score of one answer from its nugget labels (unlabelled nugget = not_support).

    ``sentence_marks[i]`` True: sentence i was marked wrong or unsupported. A score whose denominator is 0 is None.
    """
    raise NotImplementedError


class NuggetMatcher(Protocol):
    """A pluggable automatic labeller: labels every nugget of an item against one answer."""

    name: str

    def match(self, nuggets: Sequence[Nugget], answer: str) -> list[NuggetMatch]: ...


Encode = Callable[[Sequence[str]], np.ndarray]


class EmbeddingMatcher:
    """BioACE-style one-to-one matching of nuggets to answer sentences by cosine similarity (module docstring).

    ``encode`` maps texts to L2-normalised vectors, one row per text (see :func:`sentence_encoder`).
    """

    def __init__(
        self,
        encode: Encode,
        *,
        support_threshold: float = DEFAULT_SUPPORT_THRESHOLD,
        partial_threshold: float = DEFAULT_PARTIAL_THRESHOLD,
        name: str = "matcher",
    ) -> None:
        raise NotImplementedError

    def match(self, nuggets: Sequence[Nugget], answer: str) -> list[NuggetMatch]:
        """One :class:`NuggetMatch` per nugget, in the nuggets' order."""
        raise NotImplementedError

    def match_many(self, pairs: Sequence[tuple[Sequence[Nugget], str]]) -> list[list[NuggetMatch]]:
        """:meth:`match` for many (nuggets, answer) pairs, encoding all their texts in one batched call."""
        raise NotImplementedError


def sentence_encoder(encoder=None) -> Encode:
    """The ``encode`` callable of :class:`EmbeddingMatcher` over the project's model.

    ``encoder``: a :class:`metrics.encoder.Encoder` (its cached, batched ``embed_texts``), a sentence-transformers
    model (``encode(..., normalize_embeddings=True)``), or None: the process's shared Encoder of the packaged
    all-MiniLM-L6-v2, loaded offline.
    """
    raise NotImplementedError
