"""The three-layer open-ended semantic score (docs/metric.md §5.2–§5.6).

    s = max(0, 0.4·word + 0.4·sentence + 0.2·paragraph − 0.25);   s ≥ 0.95 → 1.0 (unreachable, §5.2.5)
    exact (case-insensitive, trimmed) match → 1.0                   (§5.2.3)

* **content filter** (§5.2.2): whitespace split; drop tokens whose lower case is an NLTK English stop word
  (negations included: "does not cause" ≡ "causes") or that are all ASCII punctuation.
* **word** (§5.3): WordPiece pieces of the filtered strings, kept only if ``str.isalnum()`` (every ``##`` piece
  and punctuation dropped); IDF-weighted greedy alignment, F1 of P = Σ idf·max cos / Σ idf and R alike;
  ``idf = ln((N+1)/(df+1)) + 1`` over the ``answer`` fields of every loaded input, unseen tokens 1.0.
  cliniqlink-2025: each piece's vector is its own sentence embedding (non-contextual); paper: the contextual
  last-layer state of the piece in one forward pass of the text, every non-special piece kept.
* **sentence** (§5.4): cosine of the mean-pooled embeddings of the filtered strings (truncated at 256 pieces).
* **paragraph** (§5.5): ``max(0, (cos − b)/(1 − b))``; cliniqlink-2025 reuses the sentence cosine (filtered
  strings), paper encodes the raw strings. ``b`` = 0.3 below 100 IDF answers, else the mean cosine of 50 pairs
  of a ``random.Random(seed).sample`` of 100 answers (the public code uses the unseeded global ``random``).
* **multi-hop inverse penalty** (§5.6): × 1, 0.7, 0.3, 0.3·2^−(d−2) for step distance d; none if unparseable;
  an item whose distance makes the public code's factor overflow (d > 1025) is dropped, as there.
"""

from __future__ import annotations

import math
import random
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .encoder import Encoder

ASCII_PUNCT = frozenset(string.punctuation)
BASELINE_FALLBACK = 0.3
BASELINE_MIN_ANSWERS = 100


def content_only(text: str, stop: frozenset[str]) -> str:
    """§5.2.2 ``_content_only``: drop stop words (by lower case) and all-punctuation tokens; keep the rest as is."""
    return " ".join(t for t in text.split() if t.lower() not in stop and not all(ch in ASCII_PUNCT for ch in t))


def alnum_pieces(pieces: Iterable[str]) -> list[str]:
    """§5.3 token filter: only pieces with ``str.isalnum()`` survive (``##`` continuations and punctuation go)."""
    return [p for p in pieces if p.isalnum()]


# -- IDF ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IdfTable:
    """``idf = ln((N+1)/(df+1)) + 1``; ``unseen`` is the weight of a token absent from the corpus."""

    n_docs: int
    df: dict[str, int]
    unseen: float = 1.0

    def weight(self, token: str) -> float:
        df = self.df.get(token)
        return self.unseen if df is None else math.log((self.n_docs + 1) / (df + 1)) + 1.0


def build_idf(answers: Sequence[str], tokenize: Callable[[str], list[str]], *, unseen: str = "one") -> IdfTable:
    """IDF over ``answers`` (raw, not stop-word filtered); df counts answers whose piece *set* has the token.

    ``unseen="one"``: the public scorer's weight 1.0 for unseen tokens (the minimum, §5.3 / §7.1);
    ``unseen="formula"``: the paper's formula with df = 0, i.e. ``ln(N+1) + 1``.
    """
    df: dict[str, int] = {}
    for answer in answers:
        for token in set(tokenize(answer)):
            df[token] = df.get(token, 0) + 1
    n = len(answers)
    weight = 1.0 if unseen == "one" else math.log(n + 1) + 1.0
    return IdfTable(n, df, weight)


# -- paragraph baseline --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Baseline:
    value: float
    source: str


def baseline_sample(answers: Sequence[str], seed: int | None) -> list[str]:
    """The 100 answers whose raw embeddings give the baseline (§5.5); empty below 100 answers."""
    if len(answers) < BASELINE_MIN_ANSWERS:
        return []
    return random.Random(seed).sample(list(answers), BASELINE_MIN_ANSWERS)


def paragraph_baseline(answers: Sequence[str], encoder: Encoder | None, *, seed: int | None) -> Baseline:
    """§5.5 ``para_baseline``: 0.3 below 100 answers; else mean cosine of the raw embeddings of 50 pairs
    (items 1–50 against 51–100) of ``random.Random(seed).sample(answers, 100)``.

    The public code samples with the unseeded global ``random`` (quirk §5.5 / §8); here the seed is explicit.
    """
    if len(answers) < BASELINE_MIN_ANSWERS:
        return Baseline(BASELINE_FALLBACK, f"fallback 0.3 ({len(answers)} answers < {BASELINE_MIN_ANSWERS})")
    if encoder is None:
        raise ValueError("an encoder is needed to estimate the paragraph baseline from ≥ 100 answers")
    sample = baseline_sample(answers, seed)
    vectors = encoder.embed_texts(sample)
    sims = [cosine(a, b) for a, b in zip(vectors[:50], vectors[50:], strict=True)]
    return Baseline(float(sum(sims) / len(sims)), f"seeded sample of 100 of {len(answers)} answers (seed {seed})")


# -- layer arithmetic -----------------------------------------------------------------------------------------------
def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of two vectors, as sklearn's ``cosine_similarity`` computes it (rows normalised, float32)."""
    return float((_unit_rows(a[None, :]) @ _unit_rows(b[None, :]).T)[0, 0])


@dataclass(frozen=True)
class WordSide:
    """One text as the word layer reads it: its alnum pieces' unit vectors and IDF weights (built once per text)."""

    unit_vectors: np.ndarray  # [pieces, DIM] float32, rows L2-normalised
    weights: np.ndarray  # [pieces] float64

    @classmethod
    def of(cls, tokens: Sequence[str], vectors: np.ndarray, idf: IdfTable) -> WordSide:
        unit = _unit_rows(np.asarray(vectors, dtype=np.float32))
        return cls(unit, np.array([idf.weight(t) for t in tokens], dtype=np.float64))


def aligned_f1(pred: WordSide, ref: WordSide) -> float:
    """§5.3 IDF-weighted greedy alignment F1 of two sides; 0 when either has no token.

    The similarity matrix is one float32 product in torch, on the thread pool the model already uses: numpy's
    BLAS would start a second pool whose spinning threads slow the next forward pass on a small machine.
    """
    if not len(pred.weights) or not len(ref.weights):
        return 0.0
    import torch

    with torch.autocast("cpu", enabled=False):  # float32 whatever the caller's autocast (the bench's bfloat16 check)
        sims = torch.from_numpy(pred.unit_vectors).mm(torch.from_numpy(ref.unit_vectors).T).numpy()
    precision = (sims.max(axis=1) * pred.weights).sum() / pred.weights.sum()
    recall = (sims.max(axis=0) * ref.weights).sum() / ref.weights.sum()
    if precision + recall == 0:
        return 0.0
    return float(2 * precision * recall / (precision + recall))


def paragraph_layer(raw_cosine: float, baseline: float) -> float:
    """§5.5 ``max(0, (cos − b) / (1 − b))``."""
    return max(0.0, (raw_cosine - baseline) / (1 - baseline))


def combine(word: float, sentence: float, paragraph: float, offset: float = 0.25) -> float:
    """§5.2.5 ``max(0, 0.4·W + 0.4·S + 0.2·P − offset)``, snapped to 1.0 at ≥ 0.95 (never reached with 0.25)."""
    score = max(0.0, 0.4 * word + 0.4 * sentence + 0.2 * paragraph - offset)
    return 1.0 if score >= 0.95 else score


#: The largest step distance the public code turns into a factor. It computes ``0.3 / (2 ** (d - 2))``: the
#: integer ``2 ** (d - 2)`` cannot become a float from ``2 ** 1024`` on, so for d ≥ 1026 it raises
#: OverflowError and its per-item handler drops the item (§5.6). Checked before any power is built, so an
#: answer naming step 10^10 costs nothing (the public code builds the huge integer ``2 ** d`` first).
MAX_STEP_DISTANCE = 1025


def step_penalty(distance: int | None) -> float:
    """§5.6 factor for step distance d: 1 (d = 0 or unparseable), 0.7, 0.3, then 0.3·2^−(d−2).

    Raises OverflowError, as the public code does, for d > :data:`MAX_STEP_DISTANCE`; the caller drops the item.
    """
    if distance is None or distance == 0:
        return 1.0
    if distance == 1:
        return 0.7
    if distance == 2:
        return 0.3
    if distance > MAX_STEP_DISTANCE:
        raise OverflowError(
            f"step distance {distance} exceeds {MAX_STEP_DISTANCE}: the penalty 0.3/2^(d-2) is not a float"
        )
    return 0.3 / (2 ** (distance - 2))


# -- batched pair scoring ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SemanticScore:
    semantic: float
    word: float
    sentence: float
    paragraph: float
    exact_match: bool


@dataclass(frozen=True)
class SemanticConfig:
    """What differs between profiles in the semantic score (see :mod:`.profiles`)."""

    contextual_tokens: bool = False
    paragraph_on_raw: bool = False
    offset: float = 0.25


def embedded_texts(
    pairs: Sequence[tuple[str, str]], stop: frozenset[str], config: SemanticConfig
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """The pairs stripped (``raw``) and content-filtered, and the texts whose sentence embeddings the sentence and
    paragraph layers use: the filtered strings, and with ``paragraph_on_raw`` the raw ones too."""
    raw = [(str(e).strip(), str(p).strip()) for e, p in pairs]
    filtered = [(content_only(e, stop), content_only(p, stop)) for e, p in raw]
    texts = [t for pair in filtered for t in pair]
    if config.paragraph_on_raw:
        texts += [t for pair in raw for t in pair]
    return raw, filtered, texts


class SemanticScorer:
    """Scores many (expected, prediction) pairs with one encoder pass per chunk of pairs.

    All texts of a chunk are embedded in one batched call, and all their WordPiece pieces are looked up in the
    encoder's token cache (each distinct piece encoded once per process).
    """

    def __init__(
        self,
        encoder: Encoder,
        idf: IdfTable,
        stop: frozenset[str],
        baseline: float,
        config: SemanticConfig = SemanticConfig(),
        chunk_size: int = 2048,
    ) -> None:
        self.encoder, self.idf, self.stop, self.baseline = encoder, idf, stop, baseline
        self.config, self.chunk_size = config, chunk_size

    def score_pairs(
        self, pairs: Sequence[tuple[str, str]], progress: Callable[[int], None] | None = None
    ) -> list[SemanticScore]:
        out: list[SemanticScore] = []
        for start in range(0, len(pairs), self.chunk_size):
            chunk = pairs[start : start + self.chunk_size]
            out.extend(self._score_chunk(chunk))
            if progress:
                progress(len(chunk))
        return out

    def _score_chunk(self, pairs: Sequence[tuple[str, str]]) -> list[SemanticScore]:
        raw, filtered, texts = embedded_texts(pairs, self.stop, self.config)
        vectors = self.encoder.embed_texts(texts)
        sentence_vec = {t: vectors[i] for i, t in enumerate(texts)}

        word_scores = self._word_layers(filtered)
        out = []
        for (e_raw, p_raw), (e_f, p_f), word in zip(raw, filtered, word_scores, strict=True):
            sentence = cosine(sentence_vec[e_f], sentence_vec[p_f])
            para_cos = cosine(sentence_vec[e_raw], sentence_vec[p_raw]) if self.config.paragraph_on_raw else sentence
            paragraph = paragraph_layer(para_cos, self.baseline)
            exact = e_raw.lower() == p_raw.lower()
            semantic = 1.0 if exact else combine(word, sentence, paragraph, self.config.offset)
            out.append(SemanticScore(semantic, word, sentence, paragraph, exact))
        return out

    def _word_layers(self, filtered: Sequence[tuple[str, str]]) -> list[float]:
        distinct = list(dict.fromkeys(t for pair in filtered for t in pair))
        if self.config.contextual_tokens:
            states = dict(zip(distinct, self.encoder.contextual_tokens(distinct), strict=True))
        else:
            pieces = {t: alnum_pieces(ps) for t, ps in zip(distinct, self.encoder.tokenize_many(distinct), strict=True)}
            self.encoder.prime_tokens(p for ps in pieces.values() for p in ps)
            states = {t: (ps, self.encoder.token_matrix(ps)) for t, ps in pieces.items()}
        sides = {t: WordSide.of(tokens, matrix, self.idf) for t, (tokens, matrix) in states.items()}
        return [aligned_f1(sides[p_f], sides[e_f]) for e_f, p_f in filtered]
