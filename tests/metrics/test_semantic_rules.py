"""Known answers for the pieces of the semantic score that need no model (docs/metric.md §5)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from metrics.open_ended import (
    gold_step_and_explanation,
    predicted_explanation,
    predicted_step,
    prepare_items,
)
from metrics.resources import CONTRACTIONS_2025, stopword_list, stopwords
from metrics.scorer import idf_corpus
from metrics.semantic import (
    alnum_pieces,
    build_idf,
    combine,
    content_only,
    paragraph_baseline,
    paragraph_layer,
    step_penalty,
)

# -- §5.2.2 content filter --------------------------------------------------------------------------------


def test_stopword_lists_179_and_198():
    assert len(stopword_list(179)) == 179 and len(stopword_list(198)) == 198
    assert set(stopword_list(198)) - set(stopword_list(179)) == set(CONTRACTIONS_2025)
    assert {"not", "no", "nor", "don't", "isn't", "won't"} <= stopwords(179)


def test_content_filter_loses_negation():
    stop = stopwords(198)
    assert content_only("Aspirin does not cause ulcers.", stop) == "Aspirin cause ulcers."
    assert content_only("Aspirin does cause ulcers.", stop) == "Aspirin cause ulcers."
    assert content_only("It is - as said - (INH) , ok !!", stop) == "said (INH) ok"


def test_content_filter_version_matters_for_contractions():
    assert content_only("they're resistant", stopwords(198)) == "resistant"
    assert content_only("they're resistant", stopwords(179)) == "they're resistant"


def test_alnum_filter_drops_continuation_pieces():
    assert alnum_pieces(["ex", "##cre", "##tion", "5", "##α", "(", "in", "##h", ")"]) == ["ex", "5", "in"]


# -- §5.3 IDF ---------------------------------------------------------------------------------------------------


def test_idf_formula_and_unseen_weight():
    idf = build_idf(["a b", "a c", "a"], str.split)
    assert idf.n_docs == 3
    assert idf.weight("a") == pytest.approx(1.0)  # in every answer: ln(4/4) + 1
    assert idf.weight("b") == pytest.approx(math.log(4 / 2) + 1)
    assert idf.weight("never-seen") == 1.0  # the public code's minimum weight
    paper = build_idf(["a b", "a c", "a"], str.split, unseen="formula")
    assert paper.weight("never-seen") == pytest.approx(math.log(4) + 1)


def test_idf_counts_documents_not_occurrences():
    assert build_idf(["a a a", "b"], str.split).df == {"a": 1, "b": 1}


def test_idf_corpus_is_the_answer_fields_of_all_inputs():
    inputs = {
        "multi_hop_inverse": [{"answer": "wrong final answer", "incorrect_reasoning_step": ["- Step 2"]}],
        "true_false": [{"answer": "True"}, {"answer": ""}],
        "multiple_choice": [{"options": ["x", "y"], "correct_answer": "x"}],  # no answer key: nothing
        "list": [{"options": ["A x", "B y"], "answer": ["A x", "B y"]}],
        "short_inverse": [{"answer": "false answer", "incorrect_explanation": "not in the corpus"}],
    }
    assert idf_corpus(inputs) == ["True", "A x B y", "false answer", "wrong final answer"]


# -- §5.2.5 / §5.5 arithmetic -----------------------------------------------------------------------------------


def test_combination_ceiling_and_unreachable_snap():
    assert combine(1.0, 1.0, 1.0) == pytest.approx(0.75)
    assert combine(0.5, 0.5, 0.5) == pytest.approx(0.25)
    assert combine(0.2, 0.3, 0.0) == 0.0
    assert combine(1.0, 1.0, 1.0, offset=0.0) == 1.0  # the snap exists, but 0.25 keeps it out of reach


def test_paragraph_layer_rescaling():
    assert paragraph_layer(0.65, 0.3) == pytest.approx(0.5)
    assert paragraph_layer(0.1, 0.3) == 0.0
    assert paragraph_layer(1.0, 0.3) == pytest.approx(1.0)


class _FakeEncoder:
    """Deterministic unit vectors per text, for the baseline rule."""

    def embed_texts(self, texts):
        return np.array([[1.0, float(int(t.split()[-1]))] for t in texts], dtype=np.float32)


def test_baseline_fallback_below_100_answers():
    baseline = paragraph_baseline([f"answer {i}" for i in range(99)], None, seed=0)
    assert baseline.value == 0.3 and "fallback" in baseline.source


def test_baseline_seeded_sample_of_100():
    answers = [f"answer {i}" for i in range(150)]
    sample = random.Random(7).sample(answers, 100)

    def cos(a, b):
        va, vb = np.array([1.0, float(a.split()[-1])]), np.array([1.0, float(b.split()[-1])])
        return va @ vb / np.linalg.norm(va) / np.linalg.norm(vb)

    expected = np.mean([cos(a, b) for a, b in zip(sample[:50], sample[50:], strict=True)])
    first = paragraph_baseline(answers, _FakeEncoder(), seed=7)
    assert first.value == pytest.approx(expected, abs=1e-6)
    assert paragraph_baseline(answers, _FakeEncoder(), seed=7).value == first.value
    assert paragraph_baseline(answers, _FakeEncoder(), seed=8).value != first.value
    assert "seed 7" in first.source


# -- §5.6 multi-hop inverse ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("distance", "factor"), [(None, 1.0), (0, 1.0), (1, 0.7), (2, 0.3), (3, 0.15), (4, 0.075)])
def test_step_penalty(distance, factor):
    assert step_penalty(distance) == pytest.approx(factor)


def test_gold_step_and_explanation():
    lines = ["- Step 3 contains the incorrect inference.", "- Explanation: The link is baseless: no source."]
    assert gold_step_and_explanation(lines) == (3, "The link is baseless: no source.")
    text = "- **Step 4** is wrong\n\n- Explanation - it reverses cause and effect"
    assert gold_step_and_explanation(text) == (4, "- Explanation - it reverses cause and effect")
    assert gold_step_and_explanation(["no step here"]) == (None, "")  # no "Explanation" line: empty


@pytest.mark.parametrize(
    ("response", "step"),
    [
        ("Incorrect Reasoning Step: Step 3\nIncorrect Reasoning Explanation: x", 3),
        ("Incorrect Reasoning Step: 2", 2),
        ("The error is in step-5.", 5),
        ("Incorrect Reasoning Step: three\nExplanation: unlike Step 4, it ...", 4),  # read from the body
        ("I cannot tell.", None),
    ],
)
def test_predicted_step(response, step):
    assert predicted_step(response) == step


def test_predicted_explanation_splits_on_first_explanation_word():
    assert predicted_explanation("Incorrect Reasoning Step: 3\nIncorrect Reasoning Explanation: Because X.") == (
        "Because X."
    )
    assert predicted_explanation("The explanation lies in X.") == "lies in X."
    assert predicted_explanation("Just text.") == "Just text."


def test_mhi_item_without_parseable_step_has_no_distance():
    gold = {"incorrect_reasoning_step": ["- Step 3 is wrong.", "- Explanation: because."], "question": "q"}
    (item,) = prepare_items("multi_hop_inverse", [gold], ["Explanation: because."])
    assert (item.expected_step, item.predicted_step, item.step_distance) == (3, None, None)
    assert not item.step_correct


# -- §5.1 compared strings ------------------------------------------------------------------------------------------


def test_prepare_short_types():
    gold = {"question": "What is X?", "answer": "  X is Y.  ", "incorrect_explanation": " Because Z. "}
    (echo,) = prepare_items("short", [gold], ["what is x?"])
    assert echo.question_echo
    (short,) = prepare_items("short", [gold], ["Final Answer: X is Y."])
    assert (short.expected, short.prediction) == ("X is Y.", "final answer: x is y.")
    (inverse,) = prepare_items("short_inverse", [gold], ["Incorrect Explanation: Because Z."])
    assert (inverse.expected, inverse.prediction) == ("Because Z.", "because z.")
    (hop,) = prepare_items("multi_hop", [gold], ["Final Answer: Y\n\nReasoning: Step 1 ..."])
    assert hop.prediction == "final answer: y\n\nreasoning: step 1 ..."
