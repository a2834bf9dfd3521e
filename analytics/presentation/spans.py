"""Hallucination spans for people: an answer cut into highlighted segments (built here, escaped by the template;
no markup from user text), the per-physician marks in words, and the detector leaderboard's plot."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from metrics.spans import KIND_LABELS
from ranking.selectors.spans import AnswerSpans
from stats import plots
from stats.plots import BarChart

#: Shading steps of the soft labels: a character's share of physicians falls in one of these (upper bounds).
SHADE_STEPS = (0.25, 0.5, 0.75, 1.0)
SHADE_LEGEND = (
    ("shade-1", "up to a quarter of the physicians"),
    ("shade-2", "up to half"),
    ("shade-3", "up to three quarters"),
    ("shade-4", "more than three quarters"),
)


def shade_class(prob: float) -> str:
    """The CSS class of a share (``""`` for none): five classes, no inline style (the CSP forbids it)."""
    if prob <= 0:
        return ""
    for step, limit in enumerate(SHADE_STEPS, start=1):
        if prob <= limit + 1e-9:
            return f"shade-{step}"
    return "shade-4"


def segments(text: str, soft: Iterable[dict], hard: Iterable[Sequence[int]]) -> list[dict]:
    """``text`` cut at every label boundary: ``{"text", "css", "share", "hard"}`` per piece, in order."""
    soft, hard = list(soft), [tuple(h) for h in hard]
    cuts = {0, len(text)}
    for run in soft:
        cuts |= {run["start"], run["end"]}
    for start, end in hard:
        cuts |= {start, end}
    cuts = sorted(c for c in cuts if 0 <= c <= len(text))
    pieces = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        share = max((r["prob"] for r in soft if r["start"] <= start < r["end"]), default=0.0)
        is_hard = any(s <= start < e for s, e in hard)
        css = " ".join(c for c in (shade_class(share), "hard" if is_hard else "") if c)
        pieces.append({"text": text[start:end], "css": css, "share": share, "hard": is_hard})
    return pieces


def hard_spans_in_words(
    text: str, soft: Iterable[dict], hard: Iterable[Sequence[int]], *, physicians: bool = True
) -> list[str]:
    """The text alternative of the highlighting: each hard-label span quoted with where it is and how sure."""
    soft = list(soft)
    out = []
    for start, end in hard:
        shares = [r["prob"] for r in soft if r["start"] < end and start < r["end"]]
        if not shares:
            how = ""
        elif physicians:
            how = f", marked by up to {round(100 * max(shares))} % of the physicians"
        else:
            how = f", probability up to {max(shares):.2f}"
        out.append(f"“{text[start:end]}” (characters {start + 1}–{end}{how})")
    return out


def kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


def answer_view(answer: AnswerSpans, names: dict[int, str], predictions: dict[str, object]) -> dict:
    """One answer of the per-item page: its highlighted text, each physician's marks and each detector's."""
    soft, hard = answer.soft_labels, answer.hard_labels
    marks = [
        {
            "name": names[a.ranker_id],
            "spans": [
                {"text": answer.text[s.start : s.end], "kind": kind_label(s.kind), "note": s.note, "at": s.start + 1}
                for s in a.spans
            ],
        }
        for a in answer.annotations
    ]
    detectors = [
        {
            "name": name,
            "segments": segments(answer.text, p.soft_labels, p.hard_labels),
            "in_words": hard_spans_in_words(answer.text, p.soft_labels, p.hard_labels, physicians=False),
        }
        for name, p in predictions.items()
    ]
    return {
        "system": answer.system,
        "is_reference": answer.is_reference,
        "n_annotators": answer.n_annotators,
        "segments": segments(answer.text, soft, hard),
        "in_words": hard_spans_in_words(answer.text, soft, hard),
        "marks": marks,
        "detectors": detectors,
    }


def detector_chart(board: dict) -> BarChart:
    """The detectors' mean IoU with intervals, best first."""
    bars = tuple(plots.stat_bar(row["name"], row["iou"]) for row in board["detectors"])
    return BarChart(
        "Hallucination detectors against the physicians",
        "Mean character IoU of the hard labels (1 = the same characters)",
        bars,
        n_unit="answers",
        caption="Whiskers: 95 % bootstrap interval over answers. n: answers read by a physician and predicted.",
    )
