"""Known answers for the closed-ended scoring (docs/metric.md §4) and the shared normalisation (§3)."""

from __future__ import annotations

import pytest

from metrics.closed import (
    label_macro_micro,
    overlap_prf,
    score_list,
    score_multiple_choice,
    score_true_false,
)
from metrics.normalise import clean_list_gold, clean_response, normalise, option_label

# -- §3 pre-processing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "text"),
    [
        ("<think>maybe false</think> True", "True"),
        ("<THINK>\nline\n</Think>\n\nFalse  ", "False"),
        ("<think>a</think>x<think>b</think>y", "xy"),
        ("<think>unclosed True", "<think>unclosed True"),
        ([{"generated_text": "True"}], "True"),
        ({"text": " False "}, "False"),
        (["a", ["b", {"generated_text": "c"}]], "a b c"),
        (None, "None"),
    ],
)
def test_clean_response_flattens_and_drops_think_blocks(response, text):
    assert clean_response(response) == text


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("Café–Au/Lait (x)", "cafe au lait x"),
        ("5.5 mg/dL; 10%", "55 mg dl 10%"),
        ("A: Foo, Bar", "a: foo, bar"),
        ("Straße  [ok]_{y}", "strasse ok y"),
        ("Type-2 diabetes.", "type 2 diabetes"),
        ("  ", ""),
    ],
)
def test_normalise(raw, normalised):
    assert normalise(raw) == normalised


def test_option_labels_run_past_z():
    assert [option_label(i) for i in (0, 25, 26, 27, 28, 29, 30, 31, 32, 35)] == list("AZ[\\]^_`ad")


# -- §4.1 true / false ------------------------------------------------------------------------------------


def test_true_false_prefix_rule():
    inputs = [{"answer": a, "source": {"paragraph_id": f"p{i}"}} for i, a in enumerate(["True"] * 4 + ["False"] * 4)]
    responses = ["True", "true.", "Truely", "Answer: True", "FALSE because it is not", "Yes", "", "false"]
    result = score_true_false(inputs, [clean_response(r) for r in responses])
    items = result.items
    assert [i["correct"] for i in items] == [True, True, True, False, True, False, False, True]
    assert [i["malformed"] for i in items] == [False, True, True, True, True, True, True, False]
    assert [i["invalid"] for i in items] == [False, False, False, True, False, True, True, False]
    assert result.summary == {"accuracy": 5 / 8, "true_false_invalid_count": 3}


# -- §4.2 multiple choice ------------------------------------------------------------------------------------

OPTIONS = ["Hypertension", "Type-2 diabetes", "Asthma", "Gout"]


@pytest.mark.parametrize(
    ("gold", "response", "correct", "match_type"),
    [
        ("Type-2 diabetes", "Type-2 diabetes", True, "full"),
        ("Type-2 diabetes", "type-2 diabetes.", True, "full"),
        ("Type-2 diabetes", "type 2 diabetes", True, "full"),
        ("Type-2 diabetes", "B", False, "letter"),
        ("Type-2 diabetes", "B: Type-2 diabetes", False, "none"),  # mixed fails on options with "-"
        ("Asthma", "C: Asthma", False, "mixed"),
        ("Asthma", "C. Asthma", False, "none"),
        ("Asthma", "The answer is Asthma", False, "none"),
        ("Asthma", "Asthma, Gout", False, "none"),
        ("C", "Asthma", True, "full"),  # a letter as correct_answer names that option
        ("Asthma", "Gout", False, "none"),
    ],
)
def test_multiple_choice_normalised_equality(gold, response, correct, match_type):
    result = score_multiple_choice([{"options": OPTIONS, "correct_answer": gold}], [response])
    assert result.items[0]["correct"] is correct
    assert result.items[0]["match_type"] == match_type
    assert result.summary["multiple_choice_average"] == float(correct)
    assert result.summary["multiple_choice_invalid_count"] == 0


def test_multiple_choice_summary_shares():
    inputs = [{"options": OPTIONS, "correct_answer": "Asthma"}] * 4
    result = score_multiple_choice(inputs, ["Asthma", "C", "C: Asthma", "Gout"])
    s = result.summary
    assert s["multiple_choice_average"] == 0.25
    assert s["multiple_choice_full_match_average"] == 0.25
    assert s["multiple_choice_combined_match_average"] == 0.5
    assert (s["multiple_choice_full_match"], s["multiple_choice_letter_match"], s["multiple_choice_mixed_match"]) == (
        0.25,
        0.25,
        0.25,
    )


# -- §4.3 list -------------------------------------------------------------------------------------------------

DRUGS = ["Aspirin", "Ibuprofen", "Paracetamol", "Codeine"]


def _one_list(response, options=DRUGS, answer=("Aspirin", "Codeine")):
    result = score_list([{"options": list(options), "answer": list(answer)}], [clean_response(response)])
    return result.items[0], result.summary


@pytest.mark.parametrize(
    ("response", "f1", "malformed"),
    [
        ("Aspirin, Codeine", 1.0, False),
        ("codeine, aspirin, aspirin", 1.0, False),  # a set: duplicates collapse
        ("A, D", 1.0, False),  # letters map to options; an exact set counts as "full"
        ("A: Aspirin, D: Codeine", 1.0, False),
        ("Aspirin, Codeine, Morphine", 0.0, True),  # one unmatched piece zeroes the question
        ("Aspirin\nCodeine", 0.0, True),  # newline-separated list
        ("Aspirin and Codeine", 0.0, True),
        ("Aspirin, Codeine\n\nBoth are analgesics; morphine is not listed.", 1.0, False),  # after blank line: ignored
        ("Aspirin", 2 / 3, False),
        ("Aspirin, Ibuprofen", 0.5, False),
    ],
)
def test_list_parsing(response, f1, malformed):
    item, _ = _one_list(response)
    assert item["f1"] == pytest.approx(f1)
    assert item["malformed"] is malformed


def test_list_a_b_and_c_zeroes_the_question():
    item, summary = _one_list("Aspirin, Ibuprofen and Codeine", answer=("Aspirin", "Ibuprofen", "Codeine"))
    assert item["malformed"] and item["f1"] == 0.0
    assert item["pred_set"] == ["ibuprofen and codeine"]  # only the unmatched piece is predicted
    assert summary["list_invalid_count"] == 1
    assert summary["list_overall_macro_avg_f1_score"] == 0.0


def test_list_b_cells_gold_rewrite():
    options = ["T cells", "B cells", "Macrophages"]
    assert clean_list_gold(["B cells", "Macrophages", "T cells"], {"A": "", "B": "", "C": ""}) == [
        "cells",  # "B" is an option label: the word is cut off
        "macrophages",
        "t cells",  # "T" is not (3 options): kept
    ]
    item, _ = _one_list("B cells, Macrophages", options=options, answer=("B cells", "Macrophages"))
    assert item["expected"] == ["cells", "macrophages"]
    assert (item["precision"], item["recall"]) == (0.5, 0.5)


def test_list_gold_letters_and_prefixed_options():
    item, _ = _one_list("Aspirin, Codeine", options=["A. Aspirin", "B: Ibuprofen", "C. Codeine"], answer=("A", "c"))
    assert item["expected"] == ["aspirin", "codeine"]
    assert item["f1"] == 1.0


def test_list_27_plus_option_labels():
    options = [f"drug{i}" for i in range(36)]
    item, _ = _one_list("a", options=options, answer=["drug0"])  # lower-case "a" is label A, not option 32
    assert item["f1"] == 1.0
    item, _ = _one_list("a", options=options, answer=["drug32"])
    assert item["f1"] == 0.0
    item, _ = _one_list("A, `", options=options, answer=["drug0", "drug32"])  # "`" is not read as a label
    assert item["malformed"] and item["f1"] == 0.0
    item, _ = _one_list("drug0, drug32", options=options, answer=["drug0", "drug32"])
    assert item["f1"] == 1.0


def test_list_option_with_commas_is_rebuilt():
    options = ["Iron, folate and B12", "Zinc", "Vitamin C"]
    item, _ = _one_list("Iron, folate and B12, Zinc", options=options, answer=["Iron, folate and B12", "Zinc"])
    assert item["f1"] == 1.0 and not item["malformed"]


def test_label_macro_is_not_question_macro():
    # Q1 gold {x, y} predicted {x, y, z}; Q2 gold {w} predicted {w}. Labels x, y, w have F1 1, z has F1 0.
    scores = label_macro_micro([{"x", "y"}, {"w"}], [{"x", "y", "z"}, {"w"}])
    assert scores["macro_f1_score"] == pytest.approx(0.75)
    assert scores["micro_precision"] == pytest.approx(0.75)
    assert scores["micro_recall"] == pytest.approx(1.0)
    assert scores["micro_f1_score"] == pytest.approx(6 / 7)
    inputs = [
        {"options": ["Xa", "Ya", "Za"], "answer": ["Xa", "Ya"], "source": {"paragraph_id": "1"}},
        {"options": ["Wa", "Va"], "answer": ["Wa"], "source": {"paragraph_id": "2"}},
    ]
    responses = ["Xa, Ya, Za", "Wa"]
    label = score_list(inputs, responses).summary
    question = score_list(inputs, responses, macro="question").summary
    assert label["list_overall_macro_avg_f1_score"] == pytest.approx(0.75)
    assert question["list_overall_macro_avg_f1_score"] == pytest.approx((0.8 + 1.0) / 2)
    assert label["list_overall_micro_f1_score"] == question["list_overall_micro_f1_score"] == pytest.approx(6 / 7)


def test_list_duplicate_paragraph_ids_collapse_in_aggregates():
    item = {"options": DRUGS, "answer": ["Aspirin"], "source": {"paragraph_id": "same"}}
    summary = score_list([item, item], ["Aspirin", "Ibuprofen"]).summary
    assert summary["list_overall_micro_f1_score"] == 0.0  # only the later item is kept
    assert summary["list_question_macro_f1_score"] == 0.5  # but per-question values cover both


def test_list_with_nothing_to_score_falls_back_to_zeros():
    result = score_list([{"options": [], "answer": ["x"]}], ["x"])
    assert result.items[0]["skipped"]
    assert result.summary["list_overall_macro_avg_f1_score"] == 0.0
    assert result.summary["list_invalid_count"] == 0
    assert any("zeros" in n for n in result.notes)


def test_overlap_prf_multiset():
    assert overlap_prf(["a", "b"], ["a", "a", "c"]) == pytest.approx((1 / 3, 1 / 2, 0.4))
    assert overlap_prf([], []) == (0.0, 0.0, 0.0)
