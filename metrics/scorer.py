"""Score one ClinIQLink submission: per item, per type, and the public summary (docs/metric.md §2.4, §3–§6).

``overall_effectiveness`` = unweighted mean of TF accuracy, ``multiple_choice_average``,
``list_overall_macro_avg_f1_score`` and the four per-type mean semantic scores (§2.4).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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
    SemanticConfig,
    SemanticScorer,
    baseline_sample,
    build_idf,
    embedded_texts,
    paragraph_baseline,
)
from .text_metrics import TextMetrics, shared_text_metrics

#: The public scorer's type order (``QA_FILES``); it fixes the order of the IDF corpus and the baseline sample.
QA_TYPES = ("true_false", "multiple_choice", "list", "short", "multi_hop", "short_inverse", "multi_hop_inverse")
TEXT_METRICS = ("bleu", "rouge", "meteor")

Progress = Callable[[str, int, int], None]


@dataclass
class SubmissionScore:
    """Everything one scoring run produced. ``summary`` has the public summary keys; ``run`` the run record."""

    summary: dict[str, Any]
    per_type: dict[str, TypeResult]
    run: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def item_rows(self, submission: str = "") -> list[dict[str, Any]]:
        """One row per item in the shape of ``metric-reference/expected.jsonl``."""
        rows = []
        for qa_type in QA_TYPES:
            result = self.per_type.get(qa_type)
            for item in result.items if result else []:
                row = {"submission": submission, "qa_type": qa_type, "index": item["index"],
                       "paragraph_id": item["paragraph_id"]}  # fmt: skip
                if qa_type in OPEN_TYPES:
                    row.update({k: item[k] for k in ("semantic", "word", "sentence", "paragraph", *TEXT_METRICS)})
                    if qa_type == "multi_hop_inverse":
                        row.update(predicted_step=item["predicted_step"], step_distance=item["step_distance"])
                elif qa_type == "list":
                    row.update(precision=item["precision"], recall=item["recall"], f1=item["f1"])
                else:
                    row["correct"] = item["correct"]
                rows.append(row)
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "run": self.run, "notes": self.notes,
                "per_type": {t: r.summary for t, r in self.per_type.items()}}  # fmt: skip


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


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    if any(v is None for v in values):
        return None
    return _mean(values)  # type: ignore[arg-type]


class _Job:
    """State of one scoring run (kept small; ``score_submission`` is the entry point)."""

    def __init__(self, profile: Profile, seed: int | None, encoder: Encoder | None, text_metrics: TextMetrics | None,
                 stopwords_version: int, model_path: Any, progress: Progress | None) -> None:  # fmt: skip
        self.profile, self.seed = profile, seed
        self.stopwords_version, self.progress = stopwords_version, progress
        self._encoder, self._model_path, self._text_metrics = encoder, model_path, text_metrics
        self.notes: list[str] = []

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

    def open_types(self, inputs: Mapping[str, list], responses: Mapping[str, list[str]], corpus: list[str]):
        items, compared = compared_items(inputs, responses)
        if self.profile.fixed_baseline is not None:
            baseline = Baseline(
                self.profile.fixed_baseline, f"fixed {self.profile.fixed_baseline} ({self.profile.name})"
            )
        else:  # the public scorer estimates it at start-up whenever >= 100 answers are loaded
            baseline = paragraph_baseline(corpus, self.encoder if len(corpus) >= 100 else None, seed=self.seed)
        if not compared:
            return {t: self._type_result(t, its, []) for t, its in items.items()}, baseline
        tokenize = self.encoder.tokenize
        idf = build_idf(corpus, tokenize, unseen=self.profile.unseen_idf)
        config = semantic_config(self.profile)
        scorer = SemanticScorer(self.encoder, idf, stopwords(self.stopwords_version), baseline.value, config)
        pairs = [(it.expected, it.prediction) for it in compared]
        done = 0
        if self.progress:
            self.progress("semantic", 0, len(pairs))

        def tick(n: int) -> None:
            nonlocal done
            done += n
            if self.progress:
                self.progress("semantic", done, len(pairs))

        scores = scorer.score_pairs(pairs, progress=tick)
        metrics = []
        for i, (expected, prediction) in enumerate(pairs, 1):
            metrics.append(self.text_metrics.score(expected, prediction))
            if self.progress and (i % 256 == 0 or i == len(pairs)):
                self.progress("bleu/rouge/meteor", i, len(pairs))
        by_item = {id(it): (s, m) for it, s, m in zip(compared, scores, metrics, strict=True)}
        return {t: self._type_result(t, its, [by_item.get(id(it)) for it in its]) for t, its in items.items()}, baseline

    def _type_result(self, qa_type: str, items: list[OpenItem], scored: list) -> TypeResult:
        records, notes = [], []
        for item, result in zip(items, scored or [None] * len(items), strict=True):
            record: dict[str, Any] = {"index": item.index, "paragraph_id": item.paragraph_id,
                                      "expected": item.expected, "predicted": item.prediction,
                                      "question_echo": item.question_echo}  # fmt: skip
            if item.error:  # dropped as the public scorer drops it: in no mean, average or rate of the type
                record.update(semantic=None, word=None, sentence=None, paragraph=None, exact_match=False,
                              bleu=None, rouge=None, meteor=None, skipped=True, error=item.error)  # fmt: skip
                notes.append(item.error)
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
            records.append(record)
        kept = [records[i] for i in kept_indices(records)]
        semantic = [r["semantic"] for r in records if not r.get("skipped")]
        summary: dict[str, Any] = {
            "semantic_match_score": float(np.mean(semantic)) if qa_type == "multi_hop_inverse" and semantic
            else _mean(semantic),
            **{f"avg_{m}": _mean_or_none([r[m] for r in kept]) for m in TEXT_METRICS},
        }  # fmt: skip
        if qa_type == "multi_hop_inverse":
            rates = [1.0 if r["step_correct"] else 0.0 for r in kept]
            summary["step_identification_rate"] = float(np.mean(rates)) if rates else 0.0
        return TypeResult(qa_type, summary, records, notes)


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
) -> SubmissionScore:
    """Score a submission given as ``{qa_type: inputs}`` and ``{qa_type: responses}`` (harness layout, §2.3).

    Types absent from ``inputs_by_type`` are skipped (the public scorer reports 0 for them). A type whose
    responses and inputs differ in length scores 0 with empty results, as in the public scorer, and a note
    says so. Pass one :class:`Encoder` and one :class:`TextMetrics` to reuse the loaded model and NLTK data
    across calls; without them the process-wide ``shared_encoder()`` / ``shared_text_metrics()`` are used,
    loaded only when needed (open-ended items, or ≥ 100 IDF answers for the baseline).
    ``progress(stage, done, total)`` is called as open-ended pairs are scored.
    """
    prof = get_profile(profile)
    unknown = sorted(set(inputs_by_type) - set(QA_TYPES))
    if unknown:
        raise ValueError(f"unknown QA type(s) {unknown}; expected some of {list(QA_TYPES)}")
    job = _Job(prof, seed, encoder, text_metrics, stopwords_version, model_path, progress)
    inputs, responses, job.notes = usable_submission(inputs_by_type, responses_by_type)
    corpus = idf_corpus(inputs_by_type)
    per_type: dict[str, TypeResult] = {}
    if "true_false" in inputs:
        per_type["true_false"] = score_true_false(inputs["true_false"], responses["true_false"])
    if "multiple_choice" in inputs:
        per_type["multiple_choice"] = score_multiple_choice(inputs["multiple_choice"], responses["multiple_choice"])
    if "list" in inputs:
        per_type["list"] = score_list(inputs["list"], responses["list"], macro=prof.list_macro)
    open_results, baseline = job.open_types(inputs, responses, corpus)
    per_type.update(open_results)
    for result in per_type.values():
        job.notes.extend(f"{result.qa_type}: {n}" for n in result.notes)

    run = {
        "profile": prof.name,
        "profile_settings": prof.as_dict(),
        "seed": seed,
        "baseline": baseline.value,
        "baseline_source": baseline.source,
        "idf_answers": len(corpus),
        "stopwords_version": stopwords_version,
        "model_path": str(job._encoder.model_path) if job._encoder else None,
        "weights_sha256": job._encoder.weights_sha256 if job._encoder else None,
        "encoder_engine": job._encoder.engine if job._encoder else None,
        # The paper profile's word layer uses contextual states from the texts' own pass, never this table.
        "token_vectors": job._encoder.describe_token_vectors() if job._encoder and not prof.contextual_tokens else None,
        "text_metrics": job._text_metrics.describe() if job._text_metrics else None,
        "libraries": library_versions(),
        "python": platform.python_version(),
    }
    return SubmissionScore(build_summary(per_type, prof), per_type, run, job.notes)


def build_summary(per_type: Mapping[str, TypeResult], profile: Profile) -> dict[str, Any]:
    """The public ``overall_evaluation_results.json`` keys, in its order, without the per-type dumps (§2.4)."""
    from .closed import LIST_EMPTY, MC_EMPTY

    def part(qa_type: str) -> dict[str, Any]:
        return per_type[qa_type].summary if qa_type in per_type else {}

    tf, mc, lst = part("true_false"), {**MC_EMPTY, **part("multiple_choice")}, {**LIST_EMPTY, **part("list")}
    semantic = {t: part(t).get("semantic_match_score", 0.0) for t in OPEN_TYPES}
    overall = float(np.mean([tf.get("accuracy", 0.0), mc["multiple_choice_average"],
                             lst["list_overall_macro_avg_f1_score"], *semantic.values()]))  # fmt: skip
    tf_invalid = tf.get("true_false_invalid_count", 0)
    s: dict[str, Any] = {
        "overall_effectiveness": overall,
        "true_false_accuracy": tf.get("accuracy", 0.0),
        "multiple_choice_accuracy": 0.0 if profile.summary_key_bug else mc["multiple_choice_average"],
        "list_macro_f1_score": 0.0 if profile.summary_key_bug else lst["list_overall_macro_avg_f1_score"],
        "total_invalid_close_ended": tf_invalid + mc["multiple_choice_invalid_count"] + lst["list_invalid_count"],
        "true_false_invalid_count": tf_invalid,
        "multiple_choice_invalid_count": mc["multiple_choice_invalid_count"],
        "list_invalid_count": lst["list_invalid_count"],
        **{f"{t}_semantic_match_score": semantic[t] for t in OPEN_TYPES},
        "multiple_choice_match_metrics": {f"{m}_match": mc[f"multiple_choice_{m}_match"]
                                          for m in ("full", "letter", "mixed")},
        "list_match_metrics": {f"{m}_match": lst[f"list_{m}_match"] for m in ("full", "letter", "mixed")},
        "multi_hop_inverse_step_identification_rate": part("multi_hop_inverse").get("step_identification_rate", 0.0),
    }  # fmt: skip
    s.update({k: mc[k] for k in MC_EMPTY if k != "multiple_choice_invalid_count"})
    s.update({k: lst[k] for k in LIST_EMPTY if k != "list_invalid_count"})
    per_open = {t: {f"avg_{m}": part(t).get(f"avg_{m}", 0.0) for m in ("bleu", "meteor", "rouge")}
                for t in OPEN_TYPES}  # fmt: skip
    s["open_ended_metrics_per_type"] = per_open
    s["open_ended_metrics_overall"] = {m: _mean_or_none([v[m] for v in per_open.values()])
                                       for m in ("avg_bleu", "avg_meteor", "avg_rouge")}  # fmt: skip
    stats = {}
    for t in OPEN_TYPES:
        records = per_type[t].items if t in per_type else []
        values = [records[i]["semantic"] for i in kept_indices(records)]
        if values:
            arr = np.array(values)
            stats[t] = {"min": float(arr.min()), "p25": float(np.percentile(arr, 25)),
                        "median": float(np.median(arr)), "p75": float(np.percentile(arr, 75)),
                        "max": float(arr.max())}  # fmt: skip
    s["open_ended_stats"] = stats
    return s
