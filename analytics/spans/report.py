"""The study report's hallucination-span sections (span studies only): how far the physicians agree on which
characters are hallucinated, and what they found per system and per QA type.

* Agreement (:func:`stats.spans.span_agreement`): mean pairwise character IoU and Krippendorff's alpha (nominal,
  over characters), overall and per system, over the answers two or more physicians read; intervals resample
  answers.
* Hallucination rate: the share of read answers with a hard-label span (more than half of the physicians marked
  some character), with Wilson's interval.
* Hallucinated share: per answer the hard-label characters over all its characters; the mean over answers with a
  bootstrap interval over answers.
* Kind mix: of all characters the physicians marked (each physician's marks counted), the share per kind.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from metrics.spans import KINDS
from ranking.models import Study
from ranking.selectors.spans import AnswerSpans, study_span_labels
from stats.bootstrap import bootstrap_sums, with_interval
from stats.rates import wilson_interval
from stats.results import StatResult, undefined
from stats.spans import span_agreement


def marks_matrix(answer: AnswerSpans) -> np.ndarray:
    """``(annotators, characters)``: True where that physician marked the character."""
    marks = np.zeros((answer.n_annotators, len(answer.text)), dtype=bool)
    for row, annotation in enumerate(answer.annotations):
        for span in annotation.spans:
            marks[row, span.start : span.end] = True
    return marks


def _agreement(answers: list[AnswerSpans], n_resamples: int, seed: int) -> dict:
    results = span_agreement([marks_matrix(a) for a in answers], n_resamples=n_resamples, seed=seed)
    return {name: result.to_dict() for name, result in results.items()}


def _rate(answers: list[AnswerSpans]) -> StatResult:
    n = len(answers)
    if not n:
        return undefined("hallucination_rate", "no answer has been read by a physician yet")
    k = sum(1 for a in answers if a.hard_labels)
    ci = wilson_interval(k, n)
    return StatResult("hallucination_rate", k / n, ci[0] if ci else None, ci[1] if ci else None, n_items=n)


def hard_share(answer: AnswerSpans) -> float:
    """Characters of the answer's hard labels over its characters."""
    return sum(end - start for start, end in answer.hard_labels) / len(answer.text)


def _share(answers: list[AnswerSpans], n_resamples: int, seed: int) -> StatResult:
    shares = np.array([hard_share(a) for a in answers if a.text], dtype=float)
    if not len(shares):
        return undefined("span_share", "no answer with text has been read by a physician yet")
    result = StatResult("span_share", float(shares.mean()), n_items=len(shares))
    if n_resamples > 0 and len(shares) > 1:
        n = len(shares)
        result = with_interval(
            result, bootstrap_sums(shares, lambda sums: sums[:, 0] / n, n_resamples=n_resamples, seed=seed)
        )
    return result


def kind_mix(answers: list[AnswerSpans]) -> dict:
    """``{"characters": marked characters, "shares": {kind: share}}`` (shares empty when nothing was marked)."""
    counts = dict.fromkeys(KINDS, 0)
    for a in answers:
        for annotation in a.annotations:
            for span in annotation.spans:
                counts[span.kind] = counts.get(span.kind, 0) + span.end - span.start
    total = sum(counts.values())
    return {"characters": total, "shares": {k: v / total for k, v in counts.items()} if total else {}}


def _analysis(answers: list[AnswerSpans], n_resamples: int, seed: int) -> dict:
    return {
        "n_answers": len(answers),
        "hallucination_rate": _rate(answers).to_dict(),
        "span_share": _share(answers, n_resamples, seed).to_dict(),
        "kind_mix": kind_mix(answers),
    }


def _grouped(answers: list[AnswerSpans], key: Callable[[AnswerSpans], str], block: Callable) -> dict:
    return {group: block([a for a in answers if key(a) == group]) for group in sorted({key(a) for a in answers})}


def study_span_report(study: Study, *, n_resamples: int = 1000, seed: int = 20250607) -> dict:
    """The report's ``spans`` section: ``n_answers`` (read by a physician), ``n_physicians``, ``agreement``
    (``overall`` and ``by_system``) and ``analysis`` (``overall``, ``by_system``, ``by_qa_type``)."""
    read = [a for a in study_span_labels(study) if a.n_annotators]
    physicians = {annotation.ranker_id for a in read for annotation in a.annotations}

    def agree(group: list[AnswerSpans]) -> dict:
        return _agreement(group, n_resamples, seed)

    def analyse(group: list[AnswerSpans]) -> dict:
        return _analysis(group, n_resamples, seed)

    return {
        "n_answers": len(read),
        "n_physicians": len(physicians),
        "agreement": {"overall": agree(read), "by_system": _grouped(read, lambda a: a.system, agree)},
        "analysis": {
            "overall": analyse(read),
            "by_system": _grouped(read, lambda a: a.system, analyse),
            "by_qa_type": _grouped(read, lambda a: a.qa_type, analyse),
        },
    }
