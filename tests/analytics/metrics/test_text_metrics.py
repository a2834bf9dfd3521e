"""BLEU / ROUGE / METEOR (METRIC.md §6) and the offline NLTK data builder (§9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics.metrics import TextMetrics
from analytics.metrics.nltk_data import DEBIAN_WORDNET, build_nltk_data, lexnames_text

HAS_WORDNET = (DEBIAN_WORDNET / "data.noun").is_file()


def test_builder_is_idempotent(tmp_path):
    first = build_nltk_data(tmp_path)
    assert "tokenizers/punkt_tab/english/ortho_context.tab" in first.written
    assert "corpora/stopwords/english" in first.written
    second = build_nltk_data(tmp_path)
    assert second.written == [] and len(second.unchanged) == len(first.written)


def test_builder_without_debian_wordnet_says_why(tmp_path):
    report = build_nltk_data(tmp_path / "data", wordnet_source=tmp_path / "absent")
    assert not (tmp_path / "data" / "corpora" / "wordnet").exists()
    assert any("wordnet-base" in why for why in report.skipped)


def test_lexnames_table():
    lines = lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1"
    assert lines[29] == "29\tverb.body\t2" and lines[44] == "44\tadj.ppl\t3"


def test_stopword_corpus_file(nltk_dir):
    words = (Path(nltk_dir) / "corpora" / "stopwords" / "english").read_text().split()
    assert len(words) == 198 and "they've" in words


def test_known_values(text_metrics):
    scores = text_metrics.score("The cat sat on the mat.", "the cat sat on the mat.")
    assert scores["bleu"] == pytest.approx(1.0) and scores["rouge"] == pytest.approx(1.0)
    scores = text_metrics.score("renal failure", "kidney stones")
    assert scores["rouge"] == 0.0
    assert scores["bleu"] == 0.0  # NLTK returns 0 when no unigram matches, smoothing or not
    assert text_metrics.score("abc def", "")["bleu"] == 0.0


def test_word_tokenize_matches_nltk_treebank_rules(text_metrics):
    assert text_metrics.word_tokenize("it doesn't work. dr. smith said so.") == [
        "it", "does", "n't", "work", ".", "dr.", "smith", "said", "so", ".",
    ]  # fmt: skip


@pytest.mark.skipif(not HAS_WORDNET, reason="Debian wordnet-base / wordnet-sense-index not installed")
def test_meteor_uses_wordnet_synonyms(text_metrics):
    assert text_metrics.status["meteor"].available
    # NLTK looks synonyms up after Porter stemming, so only stem-stable words match ("auto" ~ "car").
    exact = text_metrics.score("the car is fast", "the car is fast")["meteor"]
    synonym = text_metrics.score("the car is fast", "the auto is fast")["meteor"]
    unrelated = text_metrics.score("the car is fast", "the dog is fast")["meteor"]
    assert exact == synonym > unrelated


def test_missing_nltk_data_gives_none_with_a_reason_never_zero(tmp_path):
    metrics = TextMetrics(tmp_path, search_default_paths=False)
    scores = metrics.score("renal failure", "renal failure")
    assert scores["bleu"] is None and scores["meteor"] is None
    assert scores["rouge"] == pytest.approx(1.0)  # ROUGE needs no NLTK data
    assert "punkt_tab" in metrics.reasons["bleu"] and "build_nltk_data" in metrics.reasons["meteor"]
    assert metrics.describe()["meteor"]["available"] is False


def test_missing_wordnet_only_disables_meteor(tmp_path):
    build_nltk_data(tmp_path, wordnet_source=tmp_path / "absent")
    metrics = TextMetrics(tmp_path, search_default_paths=False)
    scores = metrics.score("renal failure", "renal failure")
    assert scores["bleu"] == pytest.approx(0.1**0.5)  # 2 tokens: 3- and 4-gram precisions smoothed to 0.1
    assert scores["meteor"] is None
    assert "WordNet" in metrics.reasons["meteor"]
