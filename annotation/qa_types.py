"""The QA item types the portal speaks, and the ClinIQLink file layout (pure, no Django)."""

from __future__ import annotations

from enum import StrEnum


class QAType(StrEnum):
    TRUE_FALSE = "true_false"
    MULTIPLE_CHOICE = "multiple_choice"
    LIST = "list"
    SHORT = "short_answer"
    SHORT_INVERSE = "short_inverse"
    MULTI_HOP = "multi_hop"
    MULTI_HOP_INVERSE = "multi_hop_inverse"
    GENERIC = "generic"  # other benchmarks (PromptCBLUE): input / target / answer choices


QA_TYPE_LABELS = {
    QAType.TRUE_FALSE: "True / false",
    QAType.MULTIPLE_CHOICE: "Multiple choice",
    QAType.LIST: "List",
    QAType.SHORT: "Short answer",
    QAType.SHORT_INVERSE: "Short inverse",
    QAType.MULTI_HOP: "Multi-hop",
    QAType.MULTI_HOP_INVERSE: "Multi-hop inverse",
    QAType.GENERIC: "Other benchmark",
}

# The seven dataset files of a ClinIQLink release, in the order the harness lists them.
CLINIQLINK_FILES: dict[str, QAType] = {
    "TF.json": QAType.TRUE_FALSE,
    "MC.json": QAType.MULTIPLE_CHOICE,
    "list.json": QAType.LIST,
    "short.json": QAType.SHORT,
    "short_inverse.json": QAType.SHORT_INVERSE,
    "multi_hop.json": QAType.MULTI_HOP,
    "multi_hop_inverse.json": QAType.MULTI_HOP_INVERSE,
}

# The per-type output files the ClinIQLink harness writes for a system.
HARNESS_OUTPUT_FILES: dict[str, QAType] = {
    "true_false.json": QAType.TRUE_FALSE,
    "multiple_choice.json": QAType.MULTIPLE_CHOICE,
    "list.json": QAType.LIST,
    "short.json": QAType.SHORT,
    "short_inverse.json": QAType.SHORT_INVERSE,
    "multi_hop.json": QAType.MULTI_HOP,
    "multi_hop_inverse.json": QAType.MULTI_HOP_INVERSE,
}

CLINIQLINK_TYPES = [t for t in QAType if t is not QAType.GENERIC]

# Benchmarks as people write them; an imported benchmark not listed here is shown by its stored name.
BENCHMARK_LABELS: dict[str, str] = {"cliniqlink": "ClinIQLink", "promptcblue": "PromptCBLUE"}
DEFAULT_BENCHMARK = "cliniqlink"

# Benchmarks whose items were written without a source passage: nothing is missing when such an item has no excerpt,
# so review pages show no "excerpt missing" warning for them and the organizer is not asked to import one.
BENCHMARKS_WITHOUT_SOURCES: frozenset[str] = frozenset({"promptcblue"})

# PromptCBLUE's ``task_type`` keys in words; a key not listed here is shown as stored.
PROMPTCBLUE_TASK_LABELS: dict[str, str] = {
    "cls": "Classification",
    "ner": "Named entity recognition",
    "normalization": "Term normalization",
    "event_extraction": "Event extraction",
    "spo_generation": "Relation extraction",
    "report_generation": "Report generation",
    "mrc": "Reading comprehension",
    "qa": "Question answering",
}


def qa_type_label(qa_type: str) -> str:
    """A stored QA type for people ("multi_hop" → "Multi-hop"); an unknown value is shown as stored."""
    try:
        return QA_TYPE_LABELS[QAType(qa_type)]
    except ValueError:
        return qa_type


def benchmark_label(name: str) -> str:
    return BENCHMARK_LABELS.get(name, name)


def expects_source_excerpt(benchmark: str) -> bool:
    """Whether an item of this benchmark should have a source excerpt (so that lacking one is a gap to fill)."""
    return benchmark not in BENCHMARKS_WITHOUT_SOURCES


def task_type_label(task_type: str) -> str:
    return PROMPTCBLUE_TASK_LABELS.get(task_type, task_type)
