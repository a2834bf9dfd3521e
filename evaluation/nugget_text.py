"""The ``nugget_eval`` report (:func:`evaluation.nuggets.nugget_eval_report`) as tables for a terminal."""

from __future__ import annotations

from evaluation.nuggets import CONSENSUS, CORRELATED_SCORES
from metrics.nuggets import SCORE_LABELS, SCORE_NAMES


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Columns padded to their widest cell; the first two (names) left-aligned, the figures right-aligned."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = (c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def format_text(report: dict) -> str:
    """The report as readable tables."""
    scores = [s for s in SCORE_NAMES if any(s in e for by in report["systems"].values() for e in by.values())]
    header = ["System", "Labeller", *(SCORE_LABELS[s] for s in scores), "Answers"]
    rows = [
        [system, labeller, *(_fmt(entry.get(s)) for s in scores), str(entry["n_answers"])]
        for system, by in report["systems"].items()
        for labeller, entry in by.items()
    ]
    out = [f"Nugget scores ({report['n_answers']} answers to {report['n_items']} items; means over answers)", ""]
    out += _table(header, rows) if rows else ["(no labels)"]
    agreement = report["agreement"]
    out += ["", "Agreement"]
    alpha = agreement["human_alpha"]
    if alpha is not None:
        ci = f" [{_fmt(alpha['ci_low'])}, {_fmt(alpha['ci_high'])}]" if alpha["ci_low"] is not None else ""
        why = f" ({alpha['note']})" if alpha["note"] else ""
        out.append(
            f"  Physicians, Krippendorff's alpha (ordinal): {_fmt(alpha['value'])}{ci}{why}, "
            f"over {alpha['n_units']} nuggets labelled by two or more of {alpha['n_labellers']} physicians"
        )
    ceiling = agreement["human_ceiling"]
    if agreement["judges"]:
        out.append(f"  Against the physicians' {'consensus' if agreement['reference'] == CONSENSUS else 'labels'}:")
        rows = [
            [name, "", _fmt(f["kappa"]), _fmt(f["macro_f1"]), *(_fmt(f["f1"][label]) for label in f["f1"]), str(f["n"])]
            for name, f in agreement["judges"].items()
        ]
        if ceiling and ceiling["per_human"]:
            rows += [
                [name, "(physician, vs the others)", _fmt(f["kappa"]), _fmt(f["macro_f1"]),
                 *(_fmt(f["f1"][label]) for label in f["f1"]), str(f["n"])]
                for name, f in ceiling["per_human"].items()
            ]  # fmt: skip
        header = ["Labeller", "", "Kappa", "Macro-F1", "F1 support", "F1 partial", "F1 not support", "Nuggets"]
        out += ["    " + line for line in _table(header, rows)]
    correlations = agreement["system_rank_correlation"]
    if correlations:
        shown = list(CORRELATED_SCORES)
        n = max((c["n"] for by in correlations.values() for c in by.values()), default=0)
        out.append(f"  System ranking against the physicians ({n} systems; Spearman rho / Kendall tau-b):")
        rows = [
            [judge, "", *(f"{_fmt(by[s]['spearman'])} / {_fmt(by[s]['kendall_tau_b'])}" for s in shown)]
            for judge, by in correlations.items()
        ]
        out += ["    " + line for line in _table(["Labeller", "", *(SCORE_LABELS[s] for s in shown)], rows)]
    out += [f"  Note: {note}" for note in [*agreement["notes"], *report["notes"]]]
    return "\n".join(out) + "\n"
