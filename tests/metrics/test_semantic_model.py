"""The semantic layers with the real all-MiniLM-L6-v2 (docs/metric.md §5), and the batched path's equivalence."""

from __future__ import annotations

import json

import pytest

from bench.naive_scorer import naive_semantic
from metrics.resources import stopwords
from metrics.scorer import idf_corpus, score_submission
from metrics.semantic import IdfTable, SemanticConfig, SemanticScorer, build_idf, paragraph_baseline

STOP = stopwords(198)
FLAT_IDF = IdfTable(0, {})


def _score(encoder, expected, prediction, idf=FLAT_IDF, config=SemanticConfig()):
    return SemanticScorer(encoder, idf, STOP, 0.3, config).score_pairs([(expected, prediction)])[0]


def test_exact_match_shortcut_is_case_insensitive_and_trimmed(encoder):
    score = _score(encoder, "Aspirin inhibits COX-1.", "  aspirin inhibits cox-1.  ")
    assert score.exact_match and score.semantic == 1.0


def test_non_verbatim_answers_never_exceed_075(encoder):
    # Identical after the stop-word filter: every layer is 1, the score is 0.4 + 0.4 + 0.2 − 0.25.
    score = _score(encoder, "Aspirin does not cause ulcers.", "Aspirin does cause ulcers.")
    assert not score.exact_match
    assert score.word == pytest.approx(1.0, abs=1e-6) and score.sentence == pytest.approx(1.0, abs=1e-6)
    assert score.semantic == pytest.approx(0.75, abs=1e-6)


def test_template_prefix_is_scored_as_part_of_the_answer(encoder):
    reference = "Greater than 1 g/day of protein excretion is indicative of glomerular pathology."
    score = _score(encoder, reference, "final answer: " + reference.lower())
    assert 0.6 < score.semantic < 0.75


def test_word_layer_keeps_only_the_first_piece_of_a_word(encoder):
    assert encoder.tokenize("excretion")[0] == encoder.tokenize("exfoliation")[0] == "ex"
    assert _score(encoder, "excretion", "exfoliation").word == pytest.approx(1.0, abs=1e-6)


def test_empty_prediction_scores_zero_but_sentence_cosine_is_reported(encoder):
    score = _score(encoder, "Renal failure.", "")
    assert score.word == 0.0 and score.paragraph == 0.0 and score.semantic == 0.0
    assert -0.5 < score.sentence < 0.5


def test_idf_weights_change_the_word_layer(encoder):
    flat = _score(encoder, "renal failure", "renal disease").word
    idf = build_idf(["renal x", "renal y", "renal z", "failure"], encoder.tokenize)
    weighted = _score(encoder, "renal failure", "renal disease", idf=idf).word
    assert weighted != pytest.approx(flat, abs=1e-4)


def test_batched_path_equals_per_pair_encoding(encoder, reference_dir, sample):
    """The fast path (cached tokens, batched texts) gives the public per-pair path's numbers."""
    wrong = json.loads((reference_dir / "open_c_wrong" / "short.json").read_text())
    pairs = [(i["answer"], r) for i, r in zip(wrong["inputs"], wrong["responses"], strict=True)]
    pairs += [(i["answer"], i["reasoning"][0]) for i in sample("multi_hop.json")]
    pairs += [
        ("Greater than 1 g/day.", ""),
        ("...", "!!!"),
        ("The it is", "was were"),
        ("5α-androstane excretion (INH).", "androstane excreted"),
        (" ".join(i["answer"] for i in sample("multi_hop.json")), "a long one " * 120),
    ]
    corpus = [i["answer"] for i in sample("short.json")] + [i["answer"] for i in sample("multi_hop.json")]
    idf = build_idf(corpus, encoder.tokenize)
    fast = SemanticScorer(encoder, idf, STOP, 0.3, chunk_size=7).score_pairs(pairs)
    for (expected, prediction), got in zip(pairs, fast, strict=True):
        want = naive_semantic(encoder, expected, prediction, idf, STOP, 0.3)
        for layer in ("semantic", "word", "sentence", "paragraph"):
            assert getattr(got, layer) == pytest.approx(getattr(want, layer), abs=1e-5), (expected, layer)


def test_each_distinct_token_is_encoded_once(encoder_without_table):
    encoder = encoder_without_table
    pairs = [("hyperkalaemia treatment calcium gluconate", "calcium gluconate first")] * 3
    scorer = SemanticScorer(encoder, FLAT_IDF, STOP, 0.3)
    before = encoder.stats.token_strings_encoded
    scorer.score_pairs(pairs)
    assert encoder.stats.token_strings_encoded - before == len({"hyper", "treatment", "calcium", "g", "first"})
    before = encoder.stats.token_strings_encoded
    scorer.score_pairs(pairs + [("gluconate", "calcium")])
    assert encoder.stats.token_strings_encoded == before


def test_baseline_from_100_answers_is_seeded(encoder, sample):
    texts = [step for item in sample("multi_hop.json") + sample("multi_hop_inverse.json") for step in item["reasoning"]]
    answers = (texts * 6)[:120]
    a, b = paragraph_baseline(answers, encoder, seed=1), paragraph_baseline(answers, encoder, seed=1)
    assert a == b and 0.0 < a.value < 1.0
    assert paragraph_baseline(answers, encoder, seed=2).value != a.value


def test_scoring_run_records_the_baseline_and_its_seed(encoder, text_metrics, sample):
    items = sample("short.json")
    tf = [{"question": "q", "answer": "True"}] * 100
    inputs = {"short": items, "true_false": tf}
    responses = {"short": [i["answer"][::-1] for i in items], "true_false": ["True"] * 100}
    first = score_submission(inputs, responses, seed=3, encoder=encoder, text_metrics=text_metrics)
    again = score_submission(inputs, responses, seed=3, encoder=encoder, text_metrics=text_metrics)
    assert first.run["idf_answers"] == len(idf_corpus(inputs)) == 105
    assert first.run["seed"] == 3 and "seed 3" in first.run["baseline_source"]
    assert first.run["baseline"] == again.run["baseline"]
    assert first.summary == again.summary
    assert first.run["weights_sha256"].startswith("53aa5117") and first.run["weights_sha256"].endswith("d9db")


def test_text_cache_reuses_references_and_stays_bounded(encoder):
    saved = encoder.text_cache_size
    try:
        encoder.text_cache_size = 3
        first = encoder.embed_texts(["ref one", "ref two", "ref one"])
        before = encoder.stats.texts_encoded
        again = encoder.embed_texts(["ref two", "ref one"])
        assert encoder.stats.texts_encoded == before  # both came from the cache
        assert (again[0] == first[1]).all() and (again[1] == first[0]).all()
        encoder.embed_texts(["a", "b", "c", "d"])
        assert len(encoder._text_cache) == 3
    finally:
        encoder.text_cache_size = saved


def test_mhi_without_a_parseable_step_is_not_penalised(encoder, text_metrics, sample):
    items = sample("multi_hop_inverse.json")[:2]
    explanations = [i["incorrect_reasoning_step"][1].split(":", 1)[1].strip() for i in items]
    responses = [f"Incorrect Reasoning Explanation: {explanations[0]}",  # no step number anywhere: no penalty
                 f"Incorrect Reasoning Step: 9\nIncorrect Reasoning Explanation: {explanations[1]}"]  # fmt: skip
    result = score_submission({"multi_hop_inverse": items}, {"multi_hop_inverse": responses},
                              encoder=encoder, text_metrics=text_metrics)  # fmt: skip
    unparsed, far = result.per_type["multi_hop_inverse"].items
    assert (unparsed["predicted_step"], unparsed["step_distance"], unparsed["semantic"]) == (None, None, 1.0)
    assert not unparsed["step_correct"]
    gold_step = int(items[1]["incorrect_reasoning_step"][0].split("Step")[1].split()[0])
    assert far["step_distance"] == abs(9 - gold_step)
    assert far["semantic"] == pytest.approx(0.3 / 2 ** (far["step_distance"] - 2))
    assert result.summary["multi_hop_inverse_step_identification_rate"] == 0.0
