"""The PromptCBLUE leaderboard as people read it, and as the downloads carry it.

Each system's latest PromptCBLUE run on the release (:func:`analytics.leaderboards.latest_runs`): tasks as rows
(the overall first), systems as columns, best overall first; each figure ×100 as the official report writes it,
rounded to what its 95 % bootstrap interval supports, with the interval and the samples it rests on. A second
table counts the parse misses: the generated lines that matched no template of their task, which score as if
the model had said nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from analytics.models import ScoringRun
from analytics.presentation.tables import number
from analytics.presentation.task1 import decimals_for
from metrics.promptcblue import TASKS, TASKS_BY_NAME
from metrics.promptcblue.scoring import instance_key
from metrics.promptcblue.tasks import CLASSIFICATION, EXTRACTION, GENERATION, TASK_TITLES
from stats.plots import Bar, BarChart
from stats.results import same_value

#: The official report writes every figure ×100.
SCALE = 100


def _digits(ci: tuple[float, float] | None) -> int:
    """Decimals a figure out of 100 is shown with: what its interval supports (two fewer than as a fraction); an
    interval of no width supports nothing finer than the whole number."""
    if ci is None:
        return 2
    if same_value(ci[0], ci[1]):
        return 0
    return max(0, decimals_for((ci[0] / SCALE, ci[1] / SCALE)) - 2)


@dataclass(frozen=True)
class BoardCell:
    value: float | None  # ×100
    ci: tuple[float, float] | None  # ×100
    n: int
    note: str = ""

    @property
    def text(self) -> str:
        return number(self.value, _digits(self.ci))

    @property
    def interval(self) -> str:
        if self.ci is None:
            return self.note or ("one sample: no interval" if self.n == 1 else "no interval")
        if same_value(self.ci[0], self.ci[1]):  # every resample alike: no certainty, too few samples to tell
            return f"not estimable from {self.n:,} samples"
        digits = _digits(self.ci)
        return f"{number(self.ci[0], digits)} – {number(self.ci[1], digits)}"


def _scaled(ci) -> tuple[float, float] | None:
    return (ci[0] * SCALE, ci[1] * SCALE) if ci else None


def task_label(name: str) -> str:
    english, chinese = TASK_TITLES.get(name, ("", ""))
    return f"{name} {chinese}".strip()


def metric_name(task) -> str:
    return task.headline_key.removeprefix(task.name + "-").replace("TreeLenvRatio", "tree edit ratio")


def is_official(run: ScoringRun) -> bool:
    return bool(run.run_record.get("official_overall"))


def overall_cell(run: ScoringRun) -> BoardCell:
    n = sum(task["n"] for task in run.run_record.get("tasks", {}).values())
    return BoardCell(run.summary.get("score"), _scaled(run.run_record.get("overall_ci")), n)


def task_cell(run: ScoringRun, task) -> BoardCell:
    stored = run.run_record.get("tasks", {}).get(task.name)
    if stored is None:
        if is_official(run):  # the official overall counts a task without gold as 0
            return BoardCell(0.0, None, 0, note="no gold sample: counts 0 in the official overall")
        return BoardCell(None, None, 0, note="not in this release")
    return BoardCell(stored["figure"] * SCALE, _scaled(stored.get("ci")), stored["n"])


def ordered_runs(runs: list[ScoringRun]) -> list[ScoringRun]:
    """Best overall first; ties by name."""
    return sorted(runs, key=lambda run: (-(run.summary.get("score") or 0.0), run.system.name))


def coverage(run: ScoringRun) -> str:
    unanswered = run.run_record.get("unanswered", 0)
    if not unanswered:
        return f"all {run.n_items:,} samples answered"
    return (
        f"{run.n_items - unanswered:,} of {run.n_items:,} samples answered; the {unanswered:,} without an answer "
        "are scored as empty answers"
    )


def board_rows(runs: list[ScoringRun]) -> list[dict]:
    """The table: the overall, then every task some run scored (every task for an official overall)."""
    official = any(is_official(run) for run in runs)
    present = {name for run in runs for name in run.run_record.get("tasks", {})}
    first = runs[0] if runs else None
    overall_metric = (
        "official overall: the mean of the 18 tasks"
        if official
        else f"mean of the {len(present)} tasks present (not the official overall)"
    )
    rows = [{"key": "overall", "label": "Overall", "metric": overall_metric, "n": None,
             "cells": [overall_cell(run) for run in runs]}]  # fmt: skip
    for task in TASKS:
        if task.name not in present and not official:
            continue
        stored = first.run_record.get("tasks", {}).get(task.name) if first else None
        rows.append(
            {
                "key": task.name,
                "label": task_label(task.name),
                "english": TASK_TITLES.get(task.name, ("", ""))[0],
                "metric": metric_name(task),
                "n": stored["n"] if stored else 0,
                "cells": [task_cell(run, task) for run in runs],
            }
        )
    return rows


def miss_rows(runs: list[ScoringRun]) -> list[dict]:
    """Per task, per system: parse misses, the samples they are in, and how many answers the official parser
    would have stopped on."""
    rows = []
    for task in TASKS:
        cells = []
        for run in runs:
            stored = run.run_record.get("tasks", {}).get(task.name)
            cells.append(stored and {
                "misses": stored["parse_misses"],
                "samples": stored["samples_with_misses"],
                "n": stored["n"],
                "fails": stored["official_parser_fails"],
                "run_id": run.pk,
            })  # fmt: skip
        if any(cells):
            rows.append({"key": task.name, "label": task_label(task.name), "cells": cells})
    return rows


def board_csv_rows(runs: list[ScoringRun]) -> list[dict]:
    """One line per system and figure, at full precision (the page rounds, a download does not)."""
    lines = []
    for run in runs:
        base = {"system": run.system.name, "release": str(run.release) if run.release_id else "", "run": run.pk}
        overall = overall_cell(run)
        lines.append({**base, "task": "overall", "metric": "official overall" if is_official(run) else "mean of the tasks present",
                      "score": overall.value, "ci_low": overall.ci[0] if overall.ci else None,
                      "ci_high": overall.ci[1] if overall.ci else None, "n": overall.n,
                      "unanswered": run.run_record.get("unanswered", 0)})  # fmt: skip
        for name, stored in run.run_record.get("tasks", {}).items():
            ci = _scaled(stored.get("ci"))
            lines.append(
                {
                    **base,
                    "task": name,
                    "metric": metric_name(TASKS_BY_NAME[name]),
                    "score": stored["figure"] * SCALE,
                    "ci_low": ci[0] if ci else None,
                    "ci_high": ci[1] if ci else None,
                    "n": stored["n"],
                    "parse_misses": stored["parse_misses"],
                    "samples_with_misses": stored["samples_with_misses"],
                    "official_parser_fails": stored["official_parser_fails"],
                    "unanswered": stored.get("unanswered", 0),
                }
            )
    return lines


BOARD_CSV_FIELDS = [
    "system", "release", "run", "task", "metric", "score", "ci_low", "ci_high", "n", "parse_misses",
    "samples_with_misses", "official_parser_fails", "unanswered",
]  # fmt: skip


def board_json(runs: list[ScoringRun], release) -> dict:
    """Each system's official report (``score`` and ``scoreJson``, as the official evaluate.py writes them) with
    the portal's additions: intervals, n and parse misses per task."""
    return {
        "release": str(release) if release is not None else None,
        "systems": [
            {
                "system": run.system.name,
                "run": run.pk,
                "official_overall": is_official(run),
                "report": run.summary,
                "tasks": run.run_record.get("tasks", {}),
                "overall_ci": run.run_record.get("overall_ci"),
                "unanswered": run.run_record.get("unanswered", 0),
                "bootstrap": run.run_record.get("bootstrap"),
            }
            for run in runs
        ],
    }


def overall_chart(runs: list[ScoringRun]) -> BarChart:
    official = any(is_official(run) for run in runs)
    return BarChart(
        title="PromptCBLUE score per system" + ("" if official else " (tasks present only)"),
        xlabel="score (0–100), with its 95 % bootstrap interval over samples",
        bars=tuple(Bar(run.system.name, cell.value, cell.ci, cell.n) for run in runs for cell in [overall_cell(run)]),
        n_unit="samples",
        style="dot",
        value_format="{:.1f}",
        caption="The official overall is the mean of the 18 tasks' figures ×100; a task without gold counts 0."
        if official
        else "The mean of the tasks in this release: not comparable to the official overall over 18 tasks.",
    )


def system_chart(run: ScoringRun) -> BarChart:
    """One system's figure per task, the tasks named in Chinese as the benchmark names them."""
    bars = []
    for task in TASKS:
        cell = task_cell(run, task)
        if cell.value is None and not is_official(run):
            continue
        bars.append(Bar(task_label(task.name), cell.value, cell.ci, cell.n, note=cell.note or None))
    return BarChart(
        title=f"{run.system.name}: PromptCBLUE per task",
        xlabel="task figure ×100, with its 95 % bootstrap interval over the task's samples",
        bars=tuple(bars),
        n_unit="samples",
        style="dot",
        value_format="{:.1f}",
        width=8.0,
    )


# --- one sample: the parsed gold beside the parsed answer -------------------------------------------------------


def _cell_text(value) -> str:
    """A parsed value as text: a list joined with the Chinese enumeration comma, a triple in brackets."""
    if isinstance(value, list | tuple):
        return "、".join(_cell_text(entry) for entry in value)
    if isinstance(value, dict):
        return "；".join(f"{key}：{_cell_text(entry)}" for key, entry in value.items())
    return "" if value is None else str(value)


def structure_blocks(kind: str, gold, prediction) -> dict:
    """What the sample page shows for the two parsed structures of one sample, by the task's kind:

    - extraction: one table per side, every instance with its fields, marked "matched" when the other side has
      the very same instance (the official evaluator's strict comparison), else "missed" (gold) or "not in the
      gold" (prediction);
    - classification: the two labels;
    - generation: the texts (MedDG) or each report section side by side (IMCS-V2-MRG);
    - Text2DT: each tree's nodes in order, with their role, triples and logical relation.
    """
    if kind == EXTRACTION:
        # instance_key on the stored (JSON-loaded) structures: JSON once more changes nothing in how they serialise
        gold_keys = {instance_key(instance) for instance in gold or []}
        predicted_keys = {instance_key(instance) for instance in prediction or []}
        columns = sorted({key for instance in [*(gold or []), *(prediction or [])] for key in instance})

        def rows(instances, other, miss_word):
            return [
                {
                    "values": [_cell_text(instance.get(column)) for column in columns],
                    "matched": instance_key(instance) in other,
                    "status": "matched" if instance_key(instance) in other else miss_word,
                }
                for instance in instances or []
            ]

        return {
            "kind": "table",
            "columns": columns,
            "gold": rows(gold, predicted_keys, "missed"),
            "prediction": rows(prediction, gold_keys, "not in the gold"),
        }
    if kind == CLASSIFICATION:
        return {"kind": "label", "gold": gold, "prediction": prediction, "matched": gold == prediction}
    if kind == GENERATION and isinstance(gold, dict):
        sections = list(gold) + [name for name in (prediction or {}) if name not in gold]
        return {
            "kind": "sections",
            "rows": [{"section": name, "gold": gold.get(name, ""), "prediction": (prediction or {}).get(name, "")}
                     for name in sections],
        }  # fmt: skip
    if kind == GENERATION:
        return {"kind": "text", "gold": gold or "", "prediction": prediction or ""}
    return {"kind": "tree", "gold": _tree_rows(gold), "prediction": _tree_rows(prediction)}


def _tree_rows(tree) -> list[dict]:
    return [
        {
            "role": node.get("role", ""),
            "triples": [f"（{'，'.join(str(part) for part in triple)}）" for triple in node.get("triples", [])],
            "logical_rel": node.get("logical_rel", ""),
        }
        for node in tree or []
        if isinstance(node, dict)
    ]


def stats_text(kind: str, stats) -> str:
    """What the sample contributes to its task's figure, in words."""
    if kind == EXTRACTION and isinstance(stats, list) and len(stats) == 3:
        tp, fp, fn = stats
        return f"{tp} matched, {fp} not in the gold, {fn} missed (the task pools these over its samples: micro-F1)"
    if kind == CLASSIFICATION and isinstance(stats, list) and len(stats) == 2:
        return f"gold label {stats[0]}, read as {stats[1]} (the task's F1 is over all its samples' labels)"
    if kind == GENERATION:
        values = ", ".join(f"{value:.3f}" for value in stats or [])
        return f"ROUGE-L F by characters: {values or 'no section to compare'}"
    if isinstance(stats, dict):
        return f"tree edit distance {stats.get('edit')} of at most {stats.get('max_edit')}"
    return ""
