"""Score one ClinIQLink submission: per item, per type, and the public summary (docs/metric.md §2.4, §3–§6).

A run has three passes, so that one very large submission can be scored by several workers:

1. :func:`scoring_state`: the submission-wide part, computed once — the IDF table over every answer (§5.3) and
   the paragraph baseline from a seeded sample (§5.5) — as a small JSON-serialisable :class:`ScoringState`;
2. :func:`score_slice`: the open-ended items ``[start, stop)`` of the submission (in :data:`OPEN_TYPES` order)
   scored with that state: word, sentence and paragraph layers, BLEU/ROUGE/METEOR, the multi-hop penalty;
3. :func:`combine_slices`: every slice's records, in order, with the closed-ended types (cheap, scored here)
   into the per-type results and the public summary.

:func:`score_submission` is the three passes over one slice holding every item, so a split run and a run in
one process share every line of scoring code, and give the same numbers.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .closed import TypeResult, kept_indices, score_list, score_multiple_choice, score_true_false
from .encoder import Encoder, shared_encoder
from .normalise import clean_response
from .open_ended import OPEN_TYPES, OpenItem, prepare_items
from .profiles import Profile, get_profile
from .resources import DEFAULT_STOPWORD_VERSION, library_versions, stopwords
from .semantic import (
    Baseline,
    IdfTable,
    SemanticConfig,
    SemanticScorer,
    baseline_sample,
    build_idf,
    embedded_texts,
    paragraph_baseline,
)
from .summary import QA_TYPES, TEXT_METRICS, SubmissionScore, build_summary, mean_or_none, mean_or_zero
from .text_metrics import PendingTextScores, TextMetrics, shared_text_metrics

__all__ = ["QA_TYPES", "TEXT_METRICS", "ScoringState", "SubmissionScore", "build_summary", "combine_slices",
           "score_slice", "score_submission", "scoring_state"]  # fmt: skip

Progress = Callable[[str, int, int], None]
#: One scored open-ended item of a slice: its QA type and its record (JSON-serialisable).
SliceRecord = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class ScoringState:
    """The submission-wide part of a run (pass 1): what every slice needs besides its own items.

    ``idf_df`` is None when no open-ended item is compared (no IDF is then built, as before the split);
    ``n_open`` counts the open-ended items, the index space of the slices.
    """

    profile: str
    seed: int | None
    stopwords_version: int
    idf_answers: int
    idf_df: dict[str, int] | None
    idf_unseen: float
    baseline: float
    baseline_source: str
    n_open: int

    @property
    def idf(self) -> IdfTable | None:
        return None if self.idf_df is None else IdfTable(self.idf_answers, self.idf_df, self.idf_unseen)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ScoringState:
        return cls(**data)


def idf_corpus(inputs_by_type: Mapping[str, Sequence[dict]]) -> list[str]:
    """§5.3: the ``answer`` field of every input of every loaded type (lists joined by spaces), non-empty ones.

    MC items contribute nothing (no ``answer`` key); inverse types contribute their *false* answers.
    """
    corpus = []
    for qa_type in QA_TYPES:
        for item in inputs_by_type.get(qa_type) or []:
            answer = item.get("answer", "") if isinstance(item, dict) else ""
            if isinstance(answer, list):
                answer = " ".join(str(a) for a in answer)
            if answer:
                corpus.append(str(answer))
    return corpus


class _Job:
    """One process's share of a scoring run: the profile, the lazily loaded model and NLTK data, progress."""

    def __init__(self, profile: str | Profile, seed: int | None, encoder: Encoder | None,
                 text_metrics: TextMetrics | None, stopwords_version: int, model_path: Any,
                 progress: Progress | None, text_workers: int = 1) -> None:  # fmt: skip
        self.profile, self.seed = get_profile(profile), seed
        self.text_workers = text_workers
        self.stopwords_version, self.progress = stopwords_version, progress
        self._encoder, self._model_path, self._text_metrics = encoder, model_path, text_metrics

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = shared_encoder(str(self._model_path) if self._model_path else None)
        return self._encoder

    @property
    def text_metrics(self) -> TextMetrics:
        if self._text_metrics is None:
            self._text_metrics = shared_text_metrics()
        return self._text_metrics

    def state(self, inputs_by_type: Mapping[str, Sequence[dict]], responses_by_type: Mapping[str, Sequence[Any]]):
        """Pass 1: the IDF table and the paragraph baseline, from the whole submission."""
        inputs, responses, _ = usable_submission(inputs_by_type, responses_by_type)
        corpus = idf_corpus(inputs_by_type)
        items, compared = compared_items(inputs, responses)
        if self.profile.fixed_baseline is not None:
            baseline = Baseline(
                self.profile.fixed_baseline, f"fixed {self.profile.fixed_baseline} ({self.profile.name})"
            )
        else:  # the public scorer estimates it at start-up whenever >= 100 answers are loaded
            baseline = paragraph_baseline(corpus, self.encoder if len(corpus) >= 100 else None, seed=self.seed)
        idf = build_idf(corpus, self.encoder.tokenize, unseen=self.profile.unseen_idf) if compared else None
        return ScoringState(
            profile=self.profile.name,
            seed=self.seed,
            stopwords_version=self.stopwords_version,
            idf_answers=len(corpus),
            idf_df=idf.df if idf else None,
            idf_unseen=idf.unseen if idf else 1.0,
            baseline=baseline.value,
            baseline_source=baseline.source,
            n_open=sum(len(its) for its in items.values()),
        )

    def slice(self, inputs_by_type, responses_by_type, state: ScoringState, start: int, stop: int):
        """Pass 2: the records of open-ended items ``[start, stop)``."""
        self._check(state)
        inputs, responses, _ = usable_submission(inputs_by_type, responses_by_type)
        items, _ = compared_items(inputs, responses)
        mine = [(t, it) for t in items for it in items[t]][start:stop]
        compared = [it for _, it in mine if not it.question_echo and not it.error]
        scored: dict[int, tuple] = {}
        if compared:
            config = semantic_config(self.profile)
            scorer = SemanticScorer(self.encoder, state.idf, stopwords(self.stopwords_version), state.baseline, config)
            pairs = [(it.expected, it.prediction) for it in compared]
            # Started before the model's work, so that worker processes (if any) score them meanwhile.
            with PendingTextScores(self.text_metrics, pairs, self.text_workers) as pending:
                scores = scorer.score_pairs(pairs, progress=self._ticker("semantic", len(pairs)))
                metrics = pending.collect(self._ticker("bleu/rouge/meteor", len(pairs)))
            scored = {id(it): (s, m) for it, s, m in zip(compared, scores, metrics, strict=True)}
        return [(t, item_record(t, it, scored.get(id(it)))) for t, it in mine]

    def _check(self, state: ScoringState) -> None:
        if state.profile != self.profile.name:
            raise ValueError(f"the state was computed for profile {state.profile!r}, not {self.profile.name!r}")

    def _ticker(self, stage: str, total: int) -> Callable[[int], None]:
        done = 0
        if self.progress:
            self.progress(stage, 0, total)

        def tick(n: int) -> None:
            nonlocal done
            done += n
            if self.progress:
                self.progress(stage, done, total)

        return tick

    def combine(self, inputs_by_type, responses_by_type, state: ScoringState, records: Sequence[SliceRecord]):
        """Pass 3: the closed-ended types, and every slice's records into the per-type results and the summary."""
        self._check(state)
        inputs, responses, notes = usable_submission(inputs_by_type, responses_by_type)
        if len(records) != state.n_open:
            raise ValueError(f"the slices hold {len(records)} open-ended items; the submission has {state.n_open}")
        prof = self.profile
        per_type: dict[str, TypeResult] = {}
        if "true_false" in inputs:
            per_type["true_false"] = score_true_false(inputs["true_false"], responses["true_false"])
        if "multiple_choice" in inputs:
            per_type["multiple_choice"] = score_multiple_choice(inputs["multiple_choice"], responses["multiple_choice"])
        if "list" in inputs:
            per_type["list"] = score_list(inputs["list"], responses["list"], macro=prof.list_macro)
        by_type: dict[str, list[dict]] = {t: [] for t in OPEN_TYPES if t in inputs}
        for qa_type, record in records:
            by_type[qa_type].append(record)
        per_type.update({t: type_result(t, recs) for t, recs in by_type.items()})
        for result in per_type.values():
            notes.extend(f"{result.qa_type}: {n}" for n in result.notes)
        enc, text = self._encoder, self._text_metrics
        run = {
            "profile": prof.name,
            "profile_settings": prof.as_dict(),
            "seed": state.seed,
            "baseline": state.baseline,
            "baseline_source": state.baseline_source,
            "idf_answers": state.idf_answers,
            "stopwords_version": state.stopwords_version,
            "model_path": str(enc.model_path) if enc else None,
            "weights_sha256": enc.weights_sha256 if enc else None,
            "encoder_engine": enc.engine if enc else None,
            # The paper profile's word layer uses contextual states from the texts' own pass, never this table.
            "token_vectors": enc.describe_token_vectors() if enc and not prof.contextual_tokens else None,
            "text_metrics": text.describe() if text else None,
            "libraries": library_versions(),
            "python": platform.python_version(),
        }
        return SubmissionScore(build_summary(per_type, prof), per_type, run, notes)


def item_record(qa_type: str, item: OpenItem, result: tuple | None) -> dict[str, Any]:
    """One open-ended item's record: its layers and text metrics (``result``), or why it has none."""
    record: dict[str, Any] = {"index": item.index, "paragraph_id": item.paragraph_id, "expected": item.expected,
                              "predicted": item.prediction, "question_echo": item.question_echo}  # fmt: skip
    if item.error:  # dropped as the public scorer drops it: in no mean, average or rate of the type
        record.update(semantic=None, word=None, sentence=None, paragraph=None, exact_match=False,
                      bleu=None, rouge=None, meteor=None, skipped=True, error=item.error)  # fmt: skip
    elif result is None:  # question echo (§5.1): 0 and BLEU/ROUGE/METEOR 0, nothing compared
        record.update(semantic=0.0, word=None, sentence=None, paragraph=None, exact_match=False,
                      bleu=0.0, rouge=0.0, meteor=0.0)  # fmt: skip
    else:
        sem, metrics = result
        record.update(semantic=sem.semantic, word=sem.word, sentence=sem.sentence,
                      paragraph=sem.paragraph, exact_match=sem.exact_match, **metrics)  # fmt: skip
    if qa_type == "multi_hop_inverse":
        record.update(expected_step=item.expected_step, predicted_step=item.predicted_step,
                      step_distance=item.step_distance, step_correct=None if item.error else item.step_correct,
                      unpenalised_semantic=record["semantic"])  # fmt: skip
        if not item.error:
            record["semantic"] = record["semantic"] * item.penalty
    return record


def type_result(qa_type: str, records: list[dict[str, Any]]) -> TypeResult:
    """An open-ended type's summary from its items' records, in order (§3.2: later paragraph ids win)."""
    kept = [records[i] for i in kept_indices(records)]
    semantic = [r["semantic"] for r in records if not r.get("skipped")]
    summary: dict[str, Any] = {
        "semantic_match_score": float(np.mean(semantic)) if qa_type == "multi_hop_inverse" and semantic
        else mean_or_zero(semantic),
        **{f"avg_{m}": mean_or_none([r[m] for r in kept]) for m in TEXT_METRICS},
    }  # fmt: skip
    if qa_type == "multi_hop_inverse":
        rates = [1.0 if r["step_correct"] else 0.0 for r in kept]
        summary["step_identification_rate"] = float(np.mean(rates)) if rates else 0.0
    return TypeResult(qa_type, summary, records, [r["error"] for r in records if r.get("error")])


def usable_submission(
    inputs_by_type: Mapping[str, Sequence[dict]], responses_by_type: Mapping[str, Sequence[Any]]
) -> tuple[dict[str, list], dict[str, list[str]], list[str]]:
    """Per type present: the inputs and the cleaned responses (§3.1); a type whose lengths differ gets none (it
    scores 0, as in the public scorer) and a note."""
    inputs: dict[str, list] = {}
    responses: dict[str, list[str]] = {}
    notes: list[str] = []
    for qa_type in QA_TYPES:
        if qa_type not in inputs_by_type:
            continue
        items, resp = list(inputs_by_type[qa_type]), list(responses_by_type.get(qa_type) or [])
        if len(items) != len(resp):
            notes.append(f"{qa_type}: {len(items)} inputs but {len(resp)} responses; the type scores 0")
            inputs[qa_type], responses[qa_type] = [], []
            continue
        inputs[qa_type], responses[qa_type] = items, [clean_response(r) for r in resp]
    return inputs, responses, notes


def compared_items(
    inputs: Mapping[str, list], responses: Mapping[str, list[str]]
) -> tuple[dict[str, list[OpenItem]], list[OpenItem]]:
    """The open-ended items per type, and those actually compared (not question echoes, §5.1, nor items the
    public scorer drops, §5.6)."""
    items = {t: prepare_items(t, inputs[t], responses[t]) for t in OPEN_TYPES if t in inputs}
    return items, [it for t in items for it in items[t] if not it.question_echo and not it.error]


def semantic_config(profile: Profile) -> SemanticConfig:
    return SemanticConfig(profile.contextual_tokens, profile.paragraph_on_raw, profile.offset)


def embedding_texts(
    inputs_by_type: Mapping[str, Sequence[dict]],
    responses_by_type: Mapping[str, Sequence[Any]],
    *,
    profile: str | Profile = "cliniqlink-2025",
    seed: int | None = 0,
    stopwords_version: int = DEFAULT_STOPWORD_VERSION,
) -> list[str]:
    """Every text whose sentence embedding :func:`score_submission` will ask the encoder for (the baseline sample,
    the sentence and paragraph layers' texts), distinct, in order; no model needed.

    Encoding these into the encoder's text store beforehand (several workers, one chunk each) leaves the scoring
    run nothing to encode but the paper profile's contextual token states and any missing token vectors.
    """
    prof = get_profile(profile)
    inputs, responses, _ = usable_submission(inputs_by_type, responses_by_type)
    texts = baseline_sample(idf_corpus(inputs_by_type), seed) if prof.fixed_baseline is None else []
    _, compared = compared_items(inputs, responses)
    pairs = [(it.expected, it.prediction) for it in compared]
    texts += embedded_texts(pairs, stopwords(stopwords_version), semantic_config(prof))[2]
    return list(dict.fromkeys(texts))


def _checked(inputs_by_type: Mapping[str, Sequence[dict]]) -> None:
    unknown = sorted(set(inputs_by_type) - set(QA_TYPES))
    if unknown:
        raise ValueError(f"unknown QA type(s) {unknown}; expected some of {list(QA_TYPES)}")


def scoring_state(
    inputs_by_type: Mapping[str, Sequence[dict]],
    responses_by_type: Mapping[str, Sequence[Any]],
    *,
    profile: str | Profile = "cliniqlink-2025",
    seed: int | None = 0,
    encoder: Encoder | None = None,
    stopwords_version: int = DEFAULT_STOPWORD_VERSION,
    model_path: Any = None,
) -> ScoringState:
    """Pass 1 of a split run: the submission-wide state every slice is scored with."""
    _checked(inputs_by_type)
    job = _Job(profile, seed, encoder, None, stopwords_version, model_path, None)
    return job.state(inputs_by_type, responses_by_type)


def score_slice(
    inputs_by_type: Mapping[str, Sequence[dict]],
    responses_by_type: Mapping[str, Sequence[Any]],
    state: ScoringState,
    start: int,
    stop: int,
    *,
    profile: str | Profile = "cliniqlink-2025",
    encoder: Encoder | None = None,
    text_metrics: TextMetrics | None = None,
    model_path: Any = None,
    progress: Progress | None = None,
    text_workers: int = 1,
) -> list[SliceRecord]:
    """Pass 2: the records of the open-ended items ``[start, stop)`` (of ``state.n_open``, in type order);
    ``text_workers`` as for :func:`score_submission`."""
    _checked(inputs_by_type)
    job = _Job(profile, state.seed, encoder, text_metrics, state.stopwords_version, model_path, progress,
               text_workers)  # fmt: skip
    return job.slice(inputs_by_type, responses_by_type, state, start, stop)


def combine_slices(
    inputs_by_type: Mapping[str, Sequence[dict]],
    responses_by_type: Mapping[str, Sequence[Any]],
    state: ScoringState,
    records: Sequence[SliceRecord],
    *,
    profile: str | Profile = "cliniqlink-2025",
    encoder: Encoder | None = None,
    text_metrics: TextMetrics | None = None,
) -> SubmissionScore:
    """Pass 3: every slice's records, concatenated in slice order, into the result of the whole run
    (``encoder`` and ``text_metrics``, when given, are described in the run record)."""
    _checked(inputs_by_type)
    job = _Job(profile, state.seed, encoder, text_metrics, state.stopwords_version, None, None)
    return job.combine(inputs_by_type, responses_by_type, state, records)


def score_submission(
    inputs_by_type: Mapping[str, Sequence[dict]],
    responses_by_type: Mapping[str, Sequence[Any]],
    *,
    profile: str | Profile = "cliniqlink-2025",
    seed: int | None = 0,
    encoder: Encoder | None = None,
    text_metrics: TextMetrics | None = None,
    stopwords_version: int = DEFAULT_STOPWORD_VERSION,
    model_path: Any = None,
    progress: Progress | None = None,
    text_workers: int = 1,
) -> SubmissionScore:
    """Score a submission given as ``{qa_type: inputs}`` and ``{qa_type: responses}`` (harness layout, §2.3).

    Types absent from ``inputs_by_type`` are skipped (the public scorer reports 0 for them). A type whose
    responses and inputs differ in length scores 0 with empty results, as in the public scorer, and a note
    says so. Pass one :class:`Encoder` and one :class:`TextMetrics` to reuse the loaded model and NLTK data
    across calls; without them the process-wide ``shared_encoder()`` / ``shared_text_metrics()`` are used,
    loaded only when needed (open-ended items, or ≥ 100 IDF answers for the baseline).
    ``progress(stage, done, total)`` is called as open-ended pairs are scored. ``text_workers`` > 1 scores
    BLEU/ROUGE/METEOR in that many worker processes while this one runs the model (same numbers; for a machine
    with cores to spare, such as a GPU box; not from inside a daemonic process such as a Celery prefork worker).
    """
    _checked(inputs_by_type)
    job = _Job(profile, seed, encoder, text_metrics, stopwords_version, model_path, progress, text_workers)
    state = job.state(inputs_by_type, responses_by_type)
    records = job.slice(inputs_by_type, responses_by_type, state, 0, state.n_open)
    return job.combine(inputs_by_type, responses_by_type, state, records)
