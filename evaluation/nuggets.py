"""The logic of ``manage.py nugget_eval`` (docs/nuggets.md): files in, a JSON-ready report out. No Django.

It joins the pure nugget metric (:mod:`metrics.nuggets`, :mod:`metrics.nugget_io`) and the pure statistics
(:mod:`stats.nuggets`), which may not import each other, so it lives here, one layer up; it imports nothing from
Django and opens no database connection.

Labellers: every labeller in the ``--labels`` files is a physician (human) except those named with ``--judge``
and ``matcher`` (the matcher's name, whether run here with ``--auto`` or brought in a file). With two or more
humans a ``consensus`` labeller is added: per nugget, :func:`stats.nuggets.consensus_label` of the humans who
labelled it. A labeller's answers are those it labelled at least one nugget of; its unlabelled nuggets there
count as not_support. The label files carry no sentence marks, so ``precision`` is left out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from metrics.nugget_io import Label, NuggetInputError, read_answers_jsonl, read_labels_jsonl, read_nuggets_jsonl
from metrics.nuggets import (
    DEFAULT_PARTIAL_THRESHOLD,
    DEFAULT_SUPPORT_THRESHOLD,
    IMPORTANCES,
    LABELS,
    SCORE_NAMES,
    EmbeddingMatcher,
    Nugget,
    importance_position,
    label_position,
    not_a_nugget,
    scores_from_counts,
    sentence_encoder,
)
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.nuggets import (
    judge_agreement,
    label_agreement,
    system_rank_correlation,
    system_scores,
    unit_consensus,
)

MATCHER = "matcher"
CONSENSUS = "consensus"
#: The scores compared at system level between each automatic labeller and the humans.
CORRELATED_SCORES = ("all", "vital", "all_strict", "vital_strict", "completeness")


def _lazy_model_encode() -> Callable:
    """The packaged model's encode, loaded on first use (threshold errors come before a model load)."""
    loaded: list[Callable] = []

    def encode(texts):
        if not loaded:
            loaded.append(sentence_encoder(None))
        return loaded[0](texts)

    return encode


def _read_labels(paths: Sequence[str], nuggets, answers, reserved: set[str]) -> list[Label]:
    labels: list[Label] = []
    where: dict[tuple, str] = {}
    for path in paths:
        for line, label in read_labels_jsonl(path, nuggets=nuggets, answers=answers, with_lines=True):
            if label.labeller in reserved:
                raise NuggetInputError(
                    path, f"the labeller name {label.labeller!r} is reserved", line=line, field="labeller"
                )
            key = (label.item_uid, label.system, label.nugget_id, label.labeller)
            if key in where:
                raise NuggetInputError(
                    path,
                    f"{label.labeller!r} already labelled nugget {label.nugget_id!r} of {label.system!r} on item "
                    f"{label.item_uid!r} in {where[key]}",
                    line=line,
                    field="labeller",
                )
            where[key] = f"{path}, line {line}"
            labels.append(label)
    return labels


def nugget_eval_report(
    nuggets_path: str,
    answers_path: str,
    label_paths: Sequence[str] = (),
    *,
    auto: bool = False,
    judges: Sequence[str] = (),
    support_threshold: float = DEFAULT_SUPPORT_THRESHOLD,
    partial_threshold: float = DEFAULT_PARTIAL_THRESHOLD,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    encode=None,
) -> dict:
    """``{"systems": {system: {labeller: {score: value, ..., "n_answers": n, "ci": {score: [low, high]}}}},
    "agreement": {...}, "notes": [...]}``.

    Raises :class:`metrics.nugget_io.NuggetInputError` on bad input, ValueError on bad thresholds. ``encode``:
    the matcher's encoder (tests pass a fake one); default, the packaged model loaded offline on first use.
    """
    matcher = None
    if auto:
        matcher = EmbeddingMatcher(
            encode or _lazy_model_encode(),
            support_threshold=support_threshold,
            partial_threshold=partial_threshold,
            name=MATCHER,
        )
    nuggets = read_nuggets_jsonl(nuggets_path)
    answers = read_answers_jsonl(answers_path, nuggets=nuggets)
    if not answers:
        raise NuggetInputError(answers_path, "has no answers")
    reserved = {CONSENSUS} | ({MATCHER} if auto else set())
    labels = _read_labels(label_paths, nuggets, answers, reserved)
    if matcher is not None:
        matches = matcher.match_many([(nuggets[a.item_uid], a.response) for a in answers])
        labels += [
            Label(a.item_uid, a.system, m.nugget_id, m.label, MATCHER)
            for a, found in zip(answers, matches, strict=True)
            for m in found
        ]
    notes: list[str] = []
    if not labels:
        notes.append("no labels: give --labels files or --auto")
    frame = label_frame(labels)
    named = set(frame["labeller"])
    unknown_judges = sorted(set(judges) - named)
    if unknown_judges:
        notes.append(f"--judge names no labeller in the label files: {', '.join(unknown_judges)}")
    automatic = sorted((named & set(judges)) | (named & {MATCHER}))
    humans = sorted(named - set(automatic))
    frame, per_answer = nugget_scores(frame, nuggets, humans)
    summary = nugget_summary(frame, per_answer, humans, automatic, n_resamples=n_resamples, seed=seed)
    settings = {"support_threshold": support_threshold, "partial_threshold": partial_threshold} if auto else None
    return {
        **summary,
        "matcher": settings,
        "n_items": len({a.item_uid for a in answers}),
        "n_answers": len(answers),
        "notes": notes,
    }


def reference_labeller(humans: Sequence[str]) -> str | None:
    """The human labeller the automatic ones are held to: the consensus of two or more physicians, or the one."""
    return CONSENSUS if len(humans) >= 2 else (humans[0] if humans else None)


#: The columns of the label table the statistics take, in this order.
LABEL_COLUMNS = ["item_uid", "system", "nugget_id", "label", "labeller"]


def label_frame(labels: Sequence[Label]) -> pd.DataFrame:
    """Labels as the table the statistics take (:data:`LABEL_COLUMNS`)."""
    rows = [(x.item_uid, x.system, x.nugget_id, x.label, x.labeller) for x in labels]  # tuples: no asdict per row
    return pd.DataFrame(rows, columns=LABEL_COLUMNS)


#: Sentence marks per answer and labeller: (item_uid, system, labeller) → one bool per sentence, True = marked
#: wrong or unsupported.
Marks = Mapping[tuple[str, str, str], Sequence[bool]]


def nugget_scores(
    frame: pd.DataFrame,
    nuggets: Mapping[str, Sequence[Nugget]],
    humans: Sequence[str],
    *,
    marks: Marks | None = None,
    scored: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The label table with the ``consensus`` labeller added (two or more humans), and every answer's scores per
    labeller (columns system, labeller, item_uid and :data:`metrics.nuggets.SCORE_NAMES`).

    ``marks``: the humans' sentence marks, for ``precision``; the consensus marks a sentence that at least half
    of the humans who marked that answer marked (a split is settled towards the stricter reading, as
    :func:`stats.nuggets.consensus_label` does). ``scored``: score only these labellers' answers (the study
    report needs the consensus and the automatic labellers, not each physician: a quarter of the work)."""
    marks = dict(marks or {})
    if len(humans) >= 2:
        frame = pd.concat([frame, _consensus_frame(frame[frame["labeller"].isin(humans)])], ignore_index=True)
        marks.update(_consensus_marks(marks, set(humans)))
    kept = frame if scored is None else frame[frame["labeller"].isin(list(scored))]
    return frame, _per_answer(kept, nuggets, marks)


def nugget_summary(
    frame: pd.DataFrame,
    per_answer: pd.DataFrame,
    humans: Sequence[str],
    automatic: Sequence[str],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    correlated_systems: Sequence[str] | None = None,
) -> dict:
    """System means with intervals per labeller, and the agreement figures (the report's ``systems``,
    ``agreement`` and ``labellers``), from :func:`nugget_scores`' output. ``correlated_systems``: the systems
    the system-level rank correlations are over (default all; the portal leaves the reference answer out)."""
    table = system_scores(per_answer, n_resamples=n_resamples, seed=seed)
    answers = per_answer.groupby(["system", "labeller"]).size() if not per_answer.empty else {}
    systems = _systems(table, answers)
    kept = systems if correlated_systems is None else {s: systems[s] for s in correlated_systems if s in systems}
    agreement = _agreement(frame, kept, list(humans), list(automatic), n_resamples=n_resamples, seed=seed)
    return {
        "systems": systems,
        "agreement": agreement,
        "labellers": {"humans": list(humans), "automatic": list(automatic)},
    }


def _consensus_marks(marks: Marks, humans: set[str]) -> dict[tuple[str, str, str], list[bool]]:
    by_answer: dict[tuple[str, str], list[Sequence[bool]]] = defaultdict(list)
    for (item_uid, system, labeller), given in marks.items():
        if labeller in humans:
            by_answer[item_uid, system].append(given)
    out = {}
    for (item_uid, system), given in by_answer.items():
        n = min(len(g) for g in given)
        out[item_uid, system, CONSENSUS] = [2 * sum(bool(g[i]) for g in given) >= len(given) for i in range(n)]
    return out


def _consensus_frame(human: pd.DataFrame) -> pd.DataFrame:
    """The physicians' consensus label of every (item, system, nugget), sorted by those keys."""
    out = unit_consensus(human)[["item_uid", "system", "nugget_id", "label"]]
    out["labeller"] = CONSENSUS
    return out


def _per_answer(frame: pd.DataFrame, nuggets: Mapping[str, Sequence[Nugget]], marks: Marks) -> pd.DataFrame:
    """Every answer's scores per labeller (:func:`metrics.nuggets.answer_scores` for each (system, labeller,
    item), in the order the answers first appear in ``frame``; a later label of the same nugget replaces an
    earlier one). Counted with numpy and scored by :func:`metrics.nuggets.scores_from_counts` at once: a large
    study has 320,000 such answers."""
    columns = ["system", "labeller", "item_uid", *SCORE_NAMES]
    if frame.empty:
        return pd.DataFrame(columns=columns).astype({name: float for name in SCORE_NAMES})
    system, systems = pd.factorize(frame["system"])
    labeller, labellers = pd.factorize(frame["labeller"])
    item, items = pd.factorize(frame["item_uid"])
    nugget, nugget_ids = pd.factorize(frame["nugget_id"])
    # each row's answer, the answers numbered in the order they first appear
    key = (system * len(labellers) + labeller) * len(items) + item
    _, first, answer_of_key = np.unique(key, return_index=True, return_inverse=True)
    number = np.empty(len(first), dtype=np.int64)
    number[np.argsort(first, kind="stable")] = np.arange(len(first))
    answer = number[answer_of_key]
    firsts = np.sort(first)  # each answer's first row, in answer order
    importance, per_importance = _importances(item, items, nugget, nugget_ids, nuggets)
    if (importance < 0).any():
        raise not_a_nugget(nugget_ids[nugget[int(np.flatnonzero(importance < 0)[0])]])
    label = pd.Index(LABELS).get_indexer(frame["label"])
    if (label < 0).any():
        row = int(np.flatnonzero(label < 0)[0])
        label_position(nugget_ids[nugget[row]], frame["label"].iloc[row])  # raises, naming the nugget and label
    labelled = answer * len(nugget_ids) + nugget
    _, last_reversed = np.unique(labelled[::-1], return_index=True)
    if len(last_reversed) < len(labelled):  # the same nugget labelled twice for one answer: the last label counts
        kept = np.sort(len(labelled) - 1 - last_reversed)
        answer, importance, label = answer[kept], importance[kept], label[kept]
    cells = len(IMPORTANCES) * len(LABELS)
    counts = np.bincount(answer * cells + importance * len(LABELS) + label, minlength=len(first) * cells)
    counts = counts.reshape(len(first), len(IMPORTANCES), len(LABELS))
    # a nugget without a label is not_support
    counts[:, :, LABELS.index("not_support")] += per_importance[item[firsts]] - counts.sum(axis=2)
    answers = list(zip(systems[system[firsts]], labellers[labeller[firsts]], items[item[firsts]], strict=True))
    given = [marks.get((uid, sys_, who)) for sys_, who, uid in answers]
    marked = np.array([sum(map(bool, m)) if m else 0 for m in given], dtype=np.int64)
    sentences = np.array([len(m) if m else 0 for m in given], dtype=np.int64)
    scores = scores_from_counts(counts, marked=marked, sentences=sentences)
    out = pd.DataFrame(
        {
            "system": [a[0] for a in answers],
            "labeller": [a[1] for a in answers],
            "item_uid": [a[2] for a in answers],
            **{name: scores[name] for name in SCORE_NAMES},
        }
    )
    return out[columns]


def _importances(item, items, nugget, nugget_ids, nuggets) -> tuple[np.ndarray, np.ndarray]:
    """Each label row's nugget importance (its place in IMPORTANCES; -1 for a nugget its item does not have) and
    each item's number of nuggets of each importance. The (item, nugget) pairs are looked up as one integer each:
    nugget keys may be unique across a study, so an items × keys table could take gigabytes."""
    column_of = {nugget_id: j for j, nugget_id in enumerate(nugget_ids)}
    per_importance = np.zeros((len(items), len(IMPORTANCES)), dtype=np.int64)
    pairs: dict[int, int] = {}
    for i, uid in enumerate(items):
        for n in nuggets[uid]:
            position = importance_position(n)
            per_importance[i, position] += 1
            if n.id in column_of:
                pairs[i * len(nugget_ids) + column_of[n.id]] = position
    where = pd.Index(list(pairs), dtype=np.int64).get_indexer(item * len(nugget_ids) + nugget)
    lookup = np.append(np.array(list(pairs.values()), dtype=np.int64), -1)  # where = -1 reads the last: -1
    return lookup[where], per_importance


def _finite(value) -> float | None:
    """A figure for the JSON: the float itself, in full (programs read it; the text and the pages round for
    people), or None where it is undefined (never NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _systems(table: pd.DataFrame, answers) -> dict:
    """Per system and labeller: each score's mean and interval, and ``n_answers``, the number of the labeller's
    answers of the system (``answers``, by (system, labeller)): not the most any one score rests on, which
    undercounted answers whose every share is undefined."""
    systems: dict[str, dict[str, dict]] = {}
    for (system, labeller), group in table.groupby(["system", "labeller"], sort=True):
        entry: dict = {}
        intervals: dict = {}
        for row in group.itertuples(index=False):
            if row.score == "precision" and row.n_answers == 0:
                continue  # no sentence marks in these files: precision is not reported rather than null
            entry[row.score] = _finite(row.mean)
            if row.ci_low is not None and row.ci_high is not None:
                intervals[row.score] = [_finite(row.ci_low), _finite(row.ci_high)]
        entry["n_answers"] = int(answers[system, labeller])
        entry["ci"] = intervals
        systems.setdefault(str(system), {})[str(labeller)] = entry
    return systems


def _finite_figures(figures: dict) -> dict:
    """Every float of a nested dict as :func:`_finite` gives it (numpy floats become plain ones)."""
    out = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            out[key] = _finite_figures(value)
        elif isinstance(value, float | np.floating):
            out[key] = _finite(value)
        else:
            out[key] = value
    return out


def _agreement(frame, systems, humans, automatic, *, n_resamples, seed) -> dict:
    notes = []
    if len(humans) >= 2:
        alpha = label_agreement(frame, labellers=humans, n_resamples=n_resamples, seed=seed)
        human_alpha = {
            "value": _finite(alpha.value),
            "ci_low": _finite(alpha.ci_low),
            "ci_high": _finite(alpha.ci_high),
            "n_units": alpha.n_items,
            "n_labellers": alpha.n_raters,
            "note": alpha.undefined_reason,
        }
    else:
        human_alpha = None
        notes.append(f"{len(humans)} human labeller(s): agreement between humans needs two")
    versus = {}
    if humans and automatic:
        versus = judge_agreement(frame, automatic, humans, n_resamples=n_resamples, seed=seed)
        versus = _finite_figures(versus)
    elif automatic:
        notes.append("no human labels: the automatic labellers cannot be compared with physicians")
    reference = reference_labeller(humans)
    correlation = {}
    if reference is not None:
        for judge in automatic:
            correlation[judge] = {}
            for score in CORRELATED_SCORES:
                auto = {s: by[judge].get(score) for s, by in systems.items() if judge in by}
                human = {s: by[reference].get(score) for s, by in systems.items() if reference in by}
                auto = {s: v for s, v in auto.items() if v is not None}
                human = {s: v for s, v in human.items() if v is not None}
                correlation[judge][score] = _finite_figures(system_rank_correlation(auto, human))
    return {
        "human_alpha": human_alpha,
        "judges": versus.get("judges", {}),
        "human_ceiling": versus.get("human_ceiling"),
        "system_rank_correlation": correlation,
        "reference": reference,
        "notes": notes,
    }
