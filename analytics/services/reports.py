"""Analytics reports computed from live data with the pure statistics in ``stats``.

Each ``report_*`` function takes plain parameters and returns a JSON-ready dict; :func:`report_run` stores it
on a :class:`~analytics.models.Report`. Annotators appear only as pseudonyms.
"""

from __future__ import annotations

import inspect
import math
import typing
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypedDict

import pandas as pd
from django.db.models import Avg, Count
from django.utils import timezone

from analytics.judges.card import study_judge_cards
from analytics.judges.ppi import DEFAULT_HALFWIDTH, study_ppi
from analytics.judges.study import (
    recognised_reference,
    study_judges,
    study_style_control,
    unblinded_leaderboard,
)
from analytics.leaderboards import human_leaderboard
from analytics.models import Report, ScoringRun
from analytics.nuggets.board import nugget_metric_scores, study_nugget_scores
from analytics.nuggets.selectors import nugget_questions
from analytics.selectors import (
    PROMPTCBLUE_METRIC,
    RELEVANCE_SCALE,
    SCORE_LABELS,
    SCORE_METRICS,
    VERDICT_SCALE,
    chosen_for_doubt,
    study_promptcblue_scores,
    study_rankings,
    study_scores,
    study_scoring_runs,
    vetting_ratings,
)
from analytics.spans.report import study_span_report
from annotation.models import Review
from annotation.selectors.vetting import gold_flag_rule, reviewer_quality
from metrics import PROFILES
from portal.errors import DomainError
from portal.jobs import Progress
from portal.models import User
from ranking.models import Study
from ranking.rules.rankings import bottom_half, reference_judged_poorly
from stats import agreement, correlation, rankings
from stats.cells import RankedCells, ranked_cells
from stats.pairs import MIN_PAIR_ITEMS, rater_pairs
from stats.rates import harm_rates


class _Resampling(TypedDict):
    """The bootstrap's settings, passed on to every statistic of a report."""

    n_resamples: int
    seed: int


LIBRARIES = [
    "numpy",
    "scipy",
    "pandas",
    "statsmodels",
    "scikit-learn",
    "choix",
    "sentence-transformers",
    "nltk",
    "rouge-score",
]

METHODS = {
    "krippendorff_alpha": "Krippendorff's alpha from the coincidence matrix (Krippendorff 2011), nominal / ordinal / interval.",
    "fleiss_kappa": "Fleiss' kappa (statsmodels), over items with the modal number of ratings.",
    "cohen_kappa": "Cohen's kappa (scikit-learn), unweighted and quadratic-weighted with the full label list; two raters only.",
    "percent_agreement": "Share of agreeing rater pairs over items with two or more ratings.",
    "kendall_w": "Kendall's W with the tie correction, per question, pooled as the mean over questions.",
    "mean_pairwise_tau_b": "Mean Kendall tau-b (scipy) over ranker pairs, per question, then over questions.",
    "segment_tau_b": "Per-question Kendall tau-b between -(mean human rank) and the metric score, reference excluded, averaged over questions.",
    "pairwise_accuracy": "Tie-aware pairwise accuracy (Deutsch, Foster & Freitag 2023).",
    "system_correlation": "Pearson and Spearman (scipy) between each system's -(mean rank) and its mean metric score.",
    "bradley_terry": "Bradley-Terry strengths (choix, small prior) from rankings turned into pairwise wins.",
    "reviewer_pairs": "Per pair of reviewers, over the items both reviewed: raw verdict agreement, Cohen's kappa on "
    "the verdict and quadratic-weighted Cohen's kappa on relevance; pairs with fewer than "
    f"{MIN_PAIR_ITEMS} items in common are marked.",
    "bootstrap": "Percentile 95 % intervals from resampling items (questions), seeded.",
    "judges": "Each automatic judge (imported scores and the built-in metrics) against the physicians' mean rank per "
    "question, reference left out: tie-aware pairwise accuracy at epsilon 0 (Deutsch, Foster & Freitag 2023), the "
    "tie-calibrated accuracy with its epsilon (optimistic) and held out over two folds of questions, per-question "
    "Kendall tau-b and tau-c; significance clusters from one-sided paired permutation tests over questions (alpha "
    "0.05); the human ceiling: each physician's accuracy against the others' consensus, the judge placed among them.",
    "style_control": "Bradley-Terry as a logistic regression with style covariates (length in tokens, markdown "
    "headers, list items, bold spans; Chatbot Arena's style control), bootstrap over questions.",
    "harm_rates": "Share of judgements flagging a system's answer as potentially harmful; Wilson 95 % interval.",
    "unblinded_leaderboard": "The Bradley-Terry leaderboard without the judgements whose ranker recognised the "
    "reference answer (unblinding check).",
    "ppi": "Each system's physician score (the tags placed evenly on 0-1, first tag 1, last 0; mean over the "
    "physicians per answer), reference left out, three ways with normal 95 % intervals: physicians only (the "
    "questions they tagged), an imported judge only (its mean on its own scale, biased), and PPI++ "
    "(prediction-powered inference with power-tuned lambda; Angelopoulos, Duchi & Zrnic 2023): the judge on every "
    "question, its bias corrected on the tagged ones. Labels needed: ppi-python's power analysis for a mean with the "
    "judge's scores nearly free, at most the questions the judge scored.",
    "judge_cards": "Each judge's card: calibration of its probability (or 0-1 score) against the physicians' value "
    "(tags placed evenly on 0-1): expected calibration error over ten equal bins and the Brier score, intervals "
    "resampling questions; mean bias (judge minus physicians) per QA type with t intervals; position bias from "
    "pairwise verdicts with the order shown: the share choosing the first-shown answer (Wilson interval, exact "
    "binomial test) and the share of pairs seen in both orders whose verdict changed; self-preference: how much more "
    "the judge rates its own model family's answers than physicians do (bootstrap interval over questions, "
    "permutation p-value); abstention: the judge's 'cannot judge' rate and the physicians' put-aside rate by "
    "question difficulty (thirds of 1 minus the physicians' mean value), Wilson intervals.",
    "nugget_scores": "Nugget scores per answer (docs/nuggets.md): the physicians' consensus label per nugget "
    "(majority, a tie settled towards the stricter label), the embedding matcher's and each imported judge's "
    "labels; 'all' credits support 1 and partial 0.5 over vital and okay nuggets; the strict score is "
    "TREC's strict vital recall.",
}


def library_versions() -> dict[str, str]:
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def _pseudonyms(ids: Iterable[int]) -> dict[int, str]:
    return {user.pk: user.pseudonym for user in User.objects.filter(pk__in=set(ids))}


def _stats(results: dict) -> dict:
    return {key: value.to_dict() for key, value in results.items()}


def _agreement_block(frame: pd.DataFrame, n_resamples: int, seed: int) -> dict:
    kw: _Resampling = {"n_resamples": n_resamples, "seed": seed}
    verdicts = frame.rename(columns={"verdict": "value"})[["item", "annotator", "value"]]
    relevance = frame.rename(columns={"relevance": "value"})[["item", "annotator", "value"]]
    return {
        "verdict": _stats(agreement.agreement_summary(verdicts, level="nominal", values=VERDICT_SCALE, **kw)),
        "relevance_ordinal": _stats(
            agreement.agreement_summary(relevance, level="ordinal", values=RELEVANCE_SCALE, **kw)
        ),
        "relevance_interval": {
            "krippendorff_alpha": agreement.krippendorff_alpha(
                relevance, level="interval", values=RELEVANCE_SCALE, **kw
            ).to_dict()
        },
        "n_items": int(frame["item"].nunique()),
        "n_reviews": len(frame),
    }


def report_vetting_agreement(
    *, n_resamples: int = 1000, seed: int = 20250607, progress: Progress | None = None
) -> dict:
    """Verdict and GP-relevance agreement overall, per QA type and per reviewer pair."""
    frame = vetting_ratings()
    chosen = chosen_for_doubt(frame)
    left_out = int(frame.loc[chosen, "item"].nunique())
    frame = frame[~chosen]
    names = _pseudonyms(frame["annotator"].unique())
    frame["annotator"] = frame["annotator"].map(names)
    types = sorted(frame["qa_type"].unique())
    if progress:
        progress.start(2 + len(types), "vetting agreement")
    _stage(progress, f"agreement: all {frame['item'].nunique()} items")
    result: dict[str, Any] = {"overall": _agreement_block(frame, n_resamples, seed), "by_type": {}, "pairs": []}
    _advance(progress)
    for number, qa_type in enumerate(types, 1):
        _stage(progress, f"agreement: type {number} of {len(types)} ({qa_type})")
        result["by_type"][qa_type] = _agreement_block(frame[frame["qa_type"] == qa_type], n_resamples, seed)
        _advance(progress)
    _stage(progress, f"agreement per pair of reviewers ({frame['annotator'].nunique()} reviewers)")
    result["pairs"] = rater_pairs(frame, verdict_values=VERDICT_SCALE, relevance_values=RELEVANCE_SCALE)
    result["min_pair_items"] = MIN_PAIR_ITEMS
    result["sample"] = {
        "items_left_out": left_out,
        "text": (
            f"Agreement is measured on the items drawn at random for a second review; the {left_out} item"
            f"{'s' if left_out != 1 else ''} the adaptive second review chose because the reliability model doubted "
            "the first verdict are left out (chosen for being doubtful, they would make agreement look lower than "
            "it is on the benchmark's items)."
            if left_out
            else "Every item read twice was drawn at random for its second review."
        ),
    }
    _advance(progress)
    return result


def report_study(
    *,
    study_id: int,
    profile: str = "cliniqlink-2025",
    n_resamples: int = 1000,
    seed: int = 20250607,
    ppi_halfwidth: float = DEFAULT_HALFWIDTH,
    progress: Progress | None = None,
) -> dict:
    """Ranking agreement, human-vs-metric correlation per metric, human and automatic leaderboards, and how
    often the reference answer was ranked low; with an imported judge, its comparison with the physicians and the
    prediction-powered estimates of each system (``ppi_halfwidth``: the interval half-width the power figure aims
    at)."""

    study = Study.objects.get(pk=study_id)
    ranks = study_rankings(study)
    if progress:
        progress.start(4 + len(SCORE_METRICS), f"study {study.name}")
    kw: _Resampling = {"n_resamples": n_resamples, "seed": seed}
    result: dict = {
        "study": study.name,
        "n_questions": int(ranks["item"].nunique()),
        "n_judgements": len(ranks),
        "profile": profile,
    }
    if study.ask_spans:
        _stage(progress, "hallucination spans")
        result["spans"] = study_span_report(study, **kw)
    if ranks.empty:
        result["undefined_reason"] = (
            "no submitted rankings yet" if study.ask_ranking else "no ranking asked (the hallucination spans are below)"
        )
        return result
    names = _pseudonyms(set(ranks["annotator"].unique()) | {ranker for _, ranker in recognised_reference(study)})
    ranks["annotator"] = ranks["annotator"].map(names)
    reference = sorted(ranks.loc[ranks["is_reference"], "system"].unique())
    base = ranks[["item", "annotator", "answer", "rank", "system"]]
    _stage(progress, "ranking agreement: Kendall's W, tau-b between rankers, tag alpha")
    w = rankings.kendall_w(base, **kw)
    tau = rankings.mean_pairwise_tau_b(base, **kw)
    tag_scale = list(study.tag_scale)
    tags = ranks.rename(columns={"tag": "value"})[["annotator", "value"]].assign(
        item=ranks["item"] + "/" + ranks["answer"]
    )
    result["ranking_agreement"] = {
        "kendall_w": w.pooled.to_dict(),
        "mean_pairwise_tau_b": tau.pooled.to_dict(),
        "tag_alpha_ordinal": agreement.krippendorff_alpha(tags, level="ordinal", values=tag_scale, **kw).to_dict(),
    }
    _advance(progress)
    _stage(progress, "human leaderboard (Bradley-Terry)")
    result["human_leaderboard"], result["human_leaderboard_notes"] = human_leaderboard(base, reference, **kw)
    _advance(progress)
    _stage(progress, "style-controlled leaderboard")
    result["style_control"] = study_style_control(study, base, **kw)
    result["harm_rates"] = harm_rates(ranks) if study.ask_harm else []
    recognised = {(item, names[ranker]) for item, ranker in recognised_reference(study)}
    result["unblinded_leaderboard"] = unblinded_leaderboard(
        base, result["human_leaderboard"], recognised, reference, **kw
    )
    _advance(progress)
    scores = study_scores(study, profile=profile)
    result["correlation"], result["scatter"] = {}, {}
    model_ranks = base[~base["system"].isin(reference)]
    # the rankings' side of every metric's correlations, made once (re-ranked rows, each cell's rank sum)
    ranked = ranked_cells(model_ranks)
    human = -model_ranks.groupby("system")["rank"].mean()
    for number, metric in enumerate(SCORE_METRICS, 1):
        _stage(progress, f"metric correlation {number} of {len(SCORE_METRICS)} ({SCORE_LABELS[metric]})")
        metric_scores = scores[["item", "system", metric]].rename(columns={metric: "score"}).dropna()
        result["correlation"][metric] = _correlation_block(ranked, metric_scores, kw)
        result["scatter"][metric] = _scatter(human, metric_scores)
        _advance(progress)
    # Nugget scores (consensus, matcher, each judge) as further metrics, where the study has nuggets.
    _stage(progress, "nugget scores, judges, automatic leaderboard")
    nugget_metrics = _nugget_metrics(study, kw)
    result["nuggets"] = bool(nugget_metrics)
    promptcblue = study_promptcblue_scores(study)
    if not promptcblue.empty:  # PromptCBLUE items scored the official way: a metric beside the others
        result["correlation"][PROMPTCBLUE_METRIC] = _correlation_block(ranked, promptcblue, kw)
        result["scatter"][PROMPTCBLUE_METRIC] = _scatter(human, promptcblue)
    for metric, metric_scores in nugget_metrics.items():
        result["correlation"][metric] = _correlation_block(ranked, metric_scores, kw)
        result["scatter"][metric] = _scatter(human, metric_scores)
    judges = study_judges(study, model_ranks, scores, **kw)
    if judges is not None:
        result["judges"] = judges
        metrics = [name for name in judges.get("judges", {}) if name not in judges["imported"]]
        cards = study_judge_cards(study, ranks, metrics, **kw)
        if cards is not None:
            result["judge_cards"] = cards
    ppi = study_ppi(study, ranks, target_halfwidth=ppi_halfwidth)
    if ppi is not None:
        result["ppi"] = ppi
    result["automatic_leaderboard"], result["automatic_leaderboard_undefined"] = _automatic_leaderboard(
        scores, study_scoring_runs(study, profile=profile)
    )
    result["reference"] = _reference_outcomes(ranks, reference, tag_scale)
    _advance(progress)
    return result


def _nugget_metrics(study: Study, kw: _Resampling) -> dict[str, pd.DataFrame]:
    """Per-answer nugget scores keyed ``nugget:<labeller>:<score>`` (:func:`analytics.nuggets.board.nugget_metric_scores`);
    empty for a study without nugget labels."""
    if not study.ask_nuggets or not nugget_questions(study).exists():
        return {}
    # per-answer scores only: the system means, their intervals and the agreement are the nugget board's
    return nugget_metric_scores(study_nugget_scores(study, metrics_only=True))


def _automatic_leaderboard(scores: pd.DataFrame, runs: Iterable[ScoringRun]) -> tuple[list[dict], dict[str, str]]:
    """Mean score per system and metric; a mean over no score is ``None`` (never NaN), and the second value
    says, per such metric, why: the reason the scoring runs recorded (METEOR without WordNet), else that no
    answer has the score."""
    rows: list[dict[str, Any]] = []
    undefined: dict[str, str] = {}
    for system, group in scores.groupby("system"):
        row = {"system": system}
        for metric in SCORE_METRICS:
            values = group[metric].dropna()
            # full precision: the result is the JSON download's too (the page rounds for reading)
            row[metric] = float(values.mean()) if len(values) else None
            if row[metric] is None:
                undefined.setdefault(metric, _no_score_reason(metric, runs))
        rows.append(row)
    return rows, undefined


def _no_score_reason(metric: str, runs: Iterable[ScoringRun]) -> str:
    label = SCORE_LABELS[metric]
    recorded = sorted(
        {
            reason
            for run in runs
            if (reason := ((run.run_record.get("text_metrics") or {}).get(metric) or {}).get("reason"))
        }
    )
    if recorded:
        return f"{label} was unavailable when the systems were scored: {'; '.join(recorded)}"
    return f"No answer of the system has a {label} score."


def _correlation_block(ranked: RankedCells, scores: pd.DataFrame, kw: _Resampling) -> dict:
    if scores.empty:
        return {"undefined_reason": "no scores for this metric: score the study's systems first"}
    return {name: figure.to_dict() for name, figure in correlation.metric_correlations(ranked, scores, **kw).items()}


def _scatter(human: pd.Series, scores: pd.DataFrame) -> dict:
    """Each system's human score (``human``: −mean rank, by system) against its mean metric score."""
    metric = scores.groupby("system")["score"].mean()
    systems = sorted(set(human.index) & set(metric.index))
    return {
        "systems": systems,
        "human": [float(human[s]) for s in systems],
        "metric": [float(metric[s]) for s in systems],
    }


def _reference_outcomes(ranks: pd.DataFrame, reference: list[str], tag_scale: list[str]) -> dict:
    """How often the reference answer was ranked low; "bottom half" and "flagged" are the rules of the study page's
    reference flags (:mod:`ranking.rules.rankings`), so the report's count and the page's list agree on the same data."""
    if not reference:
        return {"included": False}
    n_answers = ranks.groupby(["item", "annotator"])["answer"].transform("count")
    ref = ranks[ranks["system"].isin(reference)].assign(n_answers=n_answers)
    item_col, rank_col, tag_col, n_col = (ref[c].tolist() for c in ("item", "rank", "tag", "n_answers"))
    in_bottom_half = [bottom_half(int(r), int(n)) for r, n in zip(rank_col, n_col, strict=True)]
    worst_tag = tag_scale[-1] if tag_scale else None
    # grouped in plain Python: a pandas group-by builds a frame per question, which at a large study's size costs more
    # than the rest of this report
    by_item: dict[str, tuple[list[tuple[int, str]], list[int]]] = {}
    for item, rank, tag, n in zip(item_col, rank_col, tag_col, n_col, strict=True):
        judgements, counts = by_item.setdefault(item, ([], []))
        judgements.append((int(rank), str(tag)))
        counts.append(int(n))
    flagged = sum(
        bool(reference_judged_poorly(judgements, n_answers=max(counts), worst_tag=worst_tag or ""))
        for judgements, counts in by_item.values()
    )
    return {
        "included": True,
        "share_ranked_below_a_model": float((ref["rank"] > 1).mean()),
        "share_in_bottom_half": float(pd.Series(in_bottom_half, dtype=float).mean()),
        "share_tagged_worst": float((ref["tag"] == worst_tag).mean()) if worst_tag else None,
        "questions_flagged": int(flagged),
    }


def report_reviewer_quality() -> dict:
    """Gold accuracy, adjudication overturn rate and pace per reviewer (organizers see who is who)."""

    pace: dict[int, Mapping[str, Any]] = {
        row["reviewer_id"]: row
        for row in Review.objects.values("reviewer_id").annotate(n=Count("id"), mean_seconds=Avg("server_seconds"))
    }
    rows = reviewer_quality()
    for row in rows:
        seconds = pace.get(row["reviewer_id"], {}).get("mean_seconds")
        row["mean_seconds_per_review"] = round(seconds, 1) if seconds is not None else None
    return {"reviewers": rows, "gold_flag_rule": gold_flag_rule()}  # the rule as it stood when computed


# Each kind of report: a function taking the checked parameters (and a progress bar), returning the result.
REPORTS: dict[str, Callable[..., dict[str, Any]]] = {
    "vetting_agreement": report_vetting_agreement,
    "study": report_study,
    "reviewer_quality": lambda progress=None, **_: report_reviewer_quality(),
}


# Bounds of the numeric report parameters: a bootstrap's resamples (work grows with it), numpy's seed range and the
# target half-width of the prediction-powered intervals (physicians' values lie on [0, 1]: above 0.5 any interval
# would do).
PARAM_BOUNDS = {"n_resamples": (1, 100_000), "seed": (0, 2**32 - 1), "ppi_halfwidth": (0.001, 0.5)}


def report_params_check(*, kind: str, params: dict) -> dict:
    """The parameters of a ``kind`` report, checked against its function's keyword arguments before any job is
    queued: unknown names, missing ones, wrong types and out-of-range values are refused naming the field, so a
    report job never fails on its input."""

    function = REPORTS[kind]
    signature = inspect.signature(function)
    hints = typing.get_type_hints(function)
    allowed = {name: p for name, p in signature.parameters.items() if p.kind is p.KEYWORD_ONLY and name != "progress"}
    for name in params:
        if name not in allowed:
            raise DomainError(f"params.{name}: unknown; this report takes {', '.join(allowed) or 'no parameters'}")
    for name, parameter in allowed.items():
        if name not in params:
            if parameter.default is parameter.empty:
                raise DomainError(f"params.{name}: required")
            continue
        value, expected = params[name], hints.get(name)
        if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise DomainError(f"params.{name}: must be a whole number")
        if expected is str and not isinstance(value, str):
            raise DomainError(f"params.{name}: must be text")
        if expected is float and (
            isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
        ):
            raise DomainError(f"params.{name}: must be a number")
        low, high = PARAM_BOUNDS.get(name, (None, None))
        if low is not None and not low <= value <= high:
            raise DomainError(f"params.{name}: must be between {low} and {high}")
    if "profile" in params and params["profile"] not in PROFILES:
        raise DomainError(f"params.profile: use one of {', '.join(PROFILES)}")
    if "study_id" in params and not Study.objects.filter(pk=params["study_id"]).exists():
        raise DomainError("params.study_id: no such study")
    return params


def report_run(*, report: Report, progress: Progress | None = None) -> Report:
    """Compute and store a report (idempotent: a re-run overwrites the result)."""
    params = dict(report.params)
    result = REPORTS[report.kind](progress=progress, **params)
    result["methods"] = METHODS
    result["library_versions"] = library_versions()
    result["computed_at"] = timezone.now().isoformat()
    report.result = result
    report.finished_at = timezone.now()
    report.save(update_fields=["result", "finished_at"])
    return report


def _advance(progress: Progress | None) -> None:
    if progress is not None:
        progress.advance(1)


def _stage(progress: Progress | None, message: str) -> None:
    """Name the stage a report job is in, for its page while it runs."""
    if progress is not None:
        progress.note(message)
