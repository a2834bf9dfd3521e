"""PromptCBLUE scored as its official evaluation scores it (michael-wzhu/PromptCBLUE, src/evaluation): the generated
text parsed into structure with the official templates, each of the 18 tasks scored its own way, the overall as
the mean of the 18 headline figures ×100. Pure: no Django, no database.

Entry points: :func:`score` (gold samples and predictions in, :class:`Scores` out), :func:`parse` (one text to its
structure and parse misses), :data:`TASKS` and :func:`task_named`; :func:`sample_score` (one sample's own score) and
:func:`contributions` (a task's figure as a function of column sums, for the bootstrap).
"""

from .parsing import Parsed, parse
from .scoring import GoldSample, SampleResult, Scores, ScoringError, TaskResult, official_report, score
from .sums import contributions, sample_score
from .tasks import TASKS, TASKS_BY_NAME, Task, task_named

__all__ = [
    "TASKS",
    "TASKS_BY_NAME",
    "GoldSample",
    "Parsed",
    "SampleResult",
    "Scores",
    "ScoringError",
    "Task",
    "TaskResult",
    "contributions",
    "official_report",
    "parse",
    "sample_score",
    "score",
    "task_named",
]
