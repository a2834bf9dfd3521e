"""The Mu-SHROOM JSONL reader refuses bad references and predictions by file, line and field."""

import json

import pytest

from metrics.span_io import read_spans_jsonl
from records.jsonl import InputFileError

REF = {"id": "a1", "lang": "EN", "model_input": "Q?", "model_output_text": "Aspirin cures cancer.",
       "soft_labels": [{"start": 8, "end": 20, "prob": 1.0}], "hard_labels": [[8, 20]]}  # fmt: skip


def lines(*records):
    return [json.dumps(r, ensure_ascii=False) for r in records]


def test_reads_a_reference_and_derives_missing_hard_labels():
    no_hard = {**REF, "id": "a2"}
    del no_hard["hard_labels"]
    found = read_spans_jsonl(lines(REF, no_hard), name="ref.jsonl")
    assert found["a1"].hard_labels == [[8, 20]]
    assert found["a2"].hard_labels == [[8, 20]]
    assert found["a1"].text == "Aspirin cures cancer."


def test_text_is_kept_exactly_with_its_spaces():
    rec = {**REF, "model_output_text": "  padded  "}
    rec["soft_labels"], rec["hard_labels"] = [], []
    assert read_spans_jsonl(lines(rec))["a1"].text == "  padded  "


def test_numeric_ids_are_accepted_as_text():
    assert "7" in read_spans_jsonl(lines({**REF, "id": 7}))


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"soft_labels": [{"start": 8, "end": 99, "prob": 1.0}]}, "line 1, field 'soft_labels (entry 1)': the span"),
        ({"soft_labels": [{"start": 5, "end": 5, "prob": 1.0}]}, "empty or negative"),
        ({"soft_labels": [{"start": -1, "end": 5, "prob": 1.0}]}, "empty or negative"),
        ({"soft_labels": [{"start": 0.5, "end": 5, "prob": 1.0}]}, "whole numbers"),
        ({"soft_labels": [{"start": 0, "end": 5, "prob": 1.5}]}, "field 'soft_labels (entry 1).prob'"),
        ({"soft_labels": [{"start": 0, "end": 5, "prob": True}]}, "prob must be a number"),
        ({"soft_labels": [{"start": 0, "end": 5}]}, "start, end and prob"),
        ({"soft_labels": "0-5"}, "field 'soft_labels': must be a list"),
        ({"hard_labels": [[0, 50]]}, "field 'hard_labels (entry 1)'"),
        ({"hard_labels": [[0]]}, "must be a [start, end] pair"),
        ({"model_output_text": None}, "field 'model_output_text'"),
        ({"id": ""}, "field 'id': is empty"),
    ],
)
def test_reference_refusals(change, fragment):
    with pytest.raises(InputFileError) as err:
        read_spans_jsonl(lines({**REF, **change}), name="ref.jsonl")
    assert "ref.jsonl" in str(err.value) and fragment in str(err.value)


def test_duplicate_id_and_empty_file():
    with pytest.raises(InputFileError, match="line 2, field 'id': id 'a1' is already given on line 1"):
        read_spans_jsonl(lines(REF, REF), name="ref.jsonl")
    with pytest.raises(InputFileError, match="has no answers"):
        read_spans_jsonl(["", "  "], name="ref.jsonl")


def test_predictions_are_checked_against_the_reference_texts():
    lengths = {"a1": 21, "a2": 10}
    pred = {"id": "a1", "soft_labels": [{"start": 0, "end": 21, "prob": 0.3}]}
    with pytest.raises(InputFileError, match="no prediction for 1 reference answer"):
        read_spans_jsonl(lines(pred), name="pred.jsonl", require_text=False, text_lengths=lengths)
    with pytest.raises(InputFileError, match="line 2, field 'id': no reference answer has id 'zz'"):
        read_spans_jsonl(lines(pred, {**pred, "id": "zz"}), name="pred.jsonl", require_text=False, text_lengths=lengths)
    with pytest.raises(InputFileError, match="line 2, field 'soft_labels \\(entry 1\\)': the span 0-21 ends after"):
        read_spans_jsonl(lines(pred, {**pred, "id": "a2"}), name="pred.jsonl", require_text=False, text_lengths=lengths)
    with pytest.raises(InputFileError, match="field 'model_output_text': is not the reference's text"):
        read_spans_jsonl(
            lines({**pred, "model_output_text": "short"}), name="pred.jsonl", require_text=False, text_lengths=lengths
        )


# The official Mu-SHROOM scorer (SemEval 2025 Task 3; Helsinki-NLP/mu-shroom, participant_kit/scorer.py and the
# evaluation site's submission/scorer.py, function load_jsonl_file_to_records with is_ref=False) reads a
# prediction file thus:
#     assert ('hard_labels' in df.columns) or ('soft_labels' in df.columns), 'File … contains no predicted label!'
#     if 'hard_labels' not in df.columns: df['hard_labels'] = df.soft_labels.apply(recompute_hard_labels)
#     elif 'soft_labels' not in df.columns: df['soft_labels'] = df.hard_labels.apply(infer_soft_labels)
# where infer_soft_labels turns each hard span [start, end] into {'start', 'end', 'prob': 1.0}. A reference
# (is_ref=True) has nothing inferred: its soft labels are the annotators' shares.


def test_a_prediction_with_hard_labels_only_gets_each_span_at_probability_one():
    pred = {"id": "a1", "hard_labels": [[8, 14], [0, 3]]}
    found = read_spans_jsonl(lines(pred), name="pred.jsonl", require_text=False, prediction=True)
    assert found["a1"].hard_labels == [[8, 14], [0, 3]]  # as given, in its order (the scorer keeps them so)
    assert found["a1"].soft_labels == [{"start": 8, "end": 14, "prob": 1.0}, {"start": 0, "end": 3, "prob": 1.0}]
    # a prediction with soft labels only still gets its hard labels from them (recompute_hard_labels)
    soft_only = {
        "id": "a1",
        "soft_labels": [{"start": 8, "end": 14, "prob": 0.7}, {"start": 14, "end": 20, "prob": 0.6}],
    }
    assert read_spans_jsonl(lines(soft_only), require_text=False, prediction=True)["a1"].hard_labels == [[8, 20]]


def test_a_prediction_with_neither_label_and_a_reference_without_soft_labels_are_refused():
    with pytest.raises(
        InputFileError, match="pred.jsonl, line 1, field 'soft_labels': is missing, and so is hard_labels"
    ):
        read_spans_jsonl(lines({"id": "a1"}), name="pred.jsonl", require_text=False, prediction=True)
    reference = {**REF}
    del reference["soft_labels"]
    with pytest.raises(InputFileError, match="ref.jsonl, line 1, field 'soft_labels': is missing"):
        read_spans_jsonl(lines(reference), name="ref.jsonl")
    with pytest.raises(InputFileError, match="field 'hard_labels \\(entry 1\\)'"):
        read_spans_jsonl(lines({"id": "a1", "hard_labels": [[5, 2]]}), require_text=False, prediction=True)
