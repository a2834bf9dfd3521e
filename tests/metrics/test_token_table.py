"""The on-disk token table (metrics/token_table.py): covers every token, same vectors, safe to be stale."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest

from metrics import score_submission
from metrics.cli import score_folders
from metrics.resources import default_metric_cache_dir, stopwords
from metrics.semantic import SemanticScorer, alnum_pieces, build_idf, content_only
from metrics.token_table import (
    TokenTableProblem,
    build_table,
    load_table,
    table_path,
    vocabulary_sha256,
    vocabulary_tokens,
)

from .conftest import REFERENCE

STOP = stopwords(198)
TEXTS = [
    "Über café naïve 5α-reductase excretion androstane",
    "中文 测试 糖尿病 ² ½ Ⅻ",
    "Isoniazid (INH) can cause peripheral neuropathy; pyridoxine prevents it.",
    "Hyperkalaemia: give calcium gluconate first, then insulin with dextrose.",
    "B12 deficiency → megaloblastic anaemia, 5-FU, IL-6, CD4+ T-cells, 3rd-degree block",
]
PAIRS = [(TEXTS[2], TEXTS[3]), (TEXTS[4], TEXTS[0]), (TEXTS[1], "糖尿病 insulin")]


@pytest.fixture
def table_dir(encoder, tmp_path):
    """The session encoder pointed at an empty cache directory; its own table and caches restored afterwards."""
    encoder.reset_token_table(tmp_path)
    yield tmp_path
    encoder.reset_token_table(default_metric_cache_dir())


def _subset(encoder, n=300, must=("ex", "and", "5", "calcium", "insulin")):
    tokens = encoder.vocabulary_tokens()
    chosen = set(random.Random(3).sample(tokens, n)) | set(must)
    return sorted(chosen)


def _build(encoder, tokens, directory, **overrides):
    keys = {"weights_sha256": encoder.weights_sha256, "vocab_sha256": vocabulary_sha256(encoder.vocabulary_tokens())}
    keys.update(overrides)
    path = table_path(directory, encoder.weights_sha256)
    return build_table(tokens, encoder.encode_token_strings, path, **keys)


def test_vocabulary_tokens_are_exactly_what_the_word_layer_can_produce(encoder, sample):
    assert vocabulary_tokens(["##ab", "ab", "a-b", "[UNK]", "5", "ß", ""]) == ["5", "ab", "ß"]
    tokens = encoder.vocabulary_tokens()
    vocab = encoder.tokenizer.get_vocab()
    assert tokens == sorted(tokens) and len(tokens) == sum(1 for p in vocab if p.isalnum())
    assert not any(t.startswith("##") for t in tokens) and "ex" in tokens and "[UNK]" not in tokens
    covered = set(tokens)
    texts = TEXTS + [str(item.get("answer", "")) + " " + item["question"] for item in sample("short.json")]
    for text in texts:
        pieces = alnum_pieces(encoder.tokenize(content_only(text, STOP)))
        assert pieces and set(pieces) <= covered, text


def test_table_vectors_are_the_public_paths_vectors(encoder, tmp_path):
    tokens = _subset(encoder)
    path = _build(encoder, tokens, tmp_path)
    table = load_table(
        path, weights_sha256=encoder.weights_sha256, vocab_sha256=vocabulary_sha256(encoder.vocabulary_tokens())
    )
    assert sorted(table.vectors) == tokens
    # The public scorer encodes each token string with SentenceTransformer.encode (docs/metric.md §5.3).
    expected = encoder.model.encode(tokens, batch_size=32, convert_to_numpy=True, show_progress_bar=False)
    got = np.stack([table.vectors[t] for t in tokens])
    assert np.abs(got - expected).max() < 1e-6
    assert path.stat().st_mode & 0o044 == 0o044  # readable by the worker's user, not only the builder


def test_encoder_reads_the_table_and_encodes_only_what_it_lacks(encoder, table_dir):
    idf = build_idf([t for pair in PAIRS for t in pair], encoder.tokenize)
    encoder.reset_token_table(table_dir, enabled=False)
    without = SemanticScorer(encoder, idf, STOP, 0.3).score_pairs(PAIRS)
    needed = {p for pair in PAIRS for t in pair for p in alnum_pieces(encoder.tokenize(content_only(t, STOP)))}
    in_table = sorted(set(_subset(encoder)) | set(sorted(needed)[::2]))  # half the needed tokens, plus others
    _build(encoder, in_table, table_dir)
    encoder.reset_token_table(table_dir)
    before_table, before_encoded = encoder.stats.token_vectors_from_table, encoder.stats.token_strings_encoded
    with_table = SemanticScorer(encoder, idf, STOP, 0.3).score_pairs(PAIRS)
    assert encoder.stats.token_vectors_from_table - before_table == len(needed & set(in_table))
    assert encoder.stats.token_strings_encoded - before_encoded == len(needed - set(in_table))
    for a, b in zip(without, with_table, strict=True):
        for layer in ("semantic", "word", "sentence", "paragraph"):
            assert getattr(a, layer) == pytest.approx(getattr(b, layer), abs=1e-6)
    assert encoder.describe_token_vectors()["source"] == "table"


@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        ("weights", "other model weights"),
        ("vocab", "another vocabulary"),
        ("garbage", "unreadable"),
        ("truncated", "unreadable"),
        ("missing", "no token table"),
    ],
)
def test_a_stale_or_broken_table_is_not_used_and_says_why(encoder, table_dir, spoil, reason):
    path = table_path(table_dir, encoder.weights_sha256)
    if spoil == "weights":
        _build(encoder, ["ex"], table_dir, weights_sha256="0" * 64)
    elif spoil == "vocab":
        _build(encoder, ["ex"], table_dir, vocab_sha256="0" * 64)
    elif spoil == "garbage":
        path.write_bytes(b"not a table")
    elif spoil == "truncated":
        _build(encoder, _subset(encoder), table_dir)
        path.write_bytes(path.read_bytes()[:5000])
    assert encoder.token_table() is None
    assert reason in encoder.token_table_problem
    described = encoder.describe_token_vectors()
    assert described["source"] == "encoded in this run" and reason in described["table_not_used"]
    before = encoder.stats.token_strings_encoded
    encoder.token_matrix(["ex", "calcium"])  # scoring still works: the tokens are encoded instead
    assert encoder.stats.token_strings_encoded - before == 2


def test_an_interrupted_build_leaves_the_old_table_and_no_temporary_file(encoder, table_dir):
    path = _build(encoder, ["ex"], table_dir)
    old = path.read_bytes()

    def failing(batch):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_table(["ex", "and"], failing, path, weights_sha256="a", vocab_sha256="b")
    assert path.read_bytes() == old
    assert list(table_dir.iterdir()) == [path]


def test_load_refuses_another_format(encoder, tmp_path, monkeypatch):
    monkeypatch.setattr("metrics.token_table.FORMAT_VERSION", 0)  # a table written by another layout
    path = _build(encoder, ["ex"], tmp_path, meta={"format": 5, "weights_sha256": "spoofed"})
    monkeypatch.undo()
    with pytest.raises(TokenTableProblem, match="format 0"):
        load_table(path, weights_sha256=encoder.weights_sha256, vocab_sha256="x")


def test_run_record_names_the_token_vectors(encoder, table_dir, sample):
    inputs = {"short": sample("short.json")}
    responses = {"short": [item["answer"] + " indeed" for item in inputs["short"]]}
    no_table = score_submission(inputs, responses, encoder=encoder).run["token_vectors"]
    assert no_table["source"] == "encoded in this run" and "no token table" in no_table["table_not_used"]
    _build(encoder, _subset(encoder), table_dir)
    encoder.reset_token_table(table_dir)
    record = score_submission(inputs, responses, encoder=encoder).run["token_vectors"]
    assert record["source"] == "table" and record["file"].startswith("token-vectors-53aa5117")
    assert record["built_with"]["weights_sha256"] == encoder.weights_sha256
    assert score_submission(inputs, responses, encoder=encoder, profile="paper").run["token_vectors"] is None


def test_cli_says_when_tokens_are_encoded_in_the_run(encoder, table_dir, monkeypatch):
    monkeypatch.setattr("metrics.encoder.Encoder", lambda *a, **k: encoder)  # reuse the session model
    err = io.StringIO()
    folder = str(REFERENCE / "open_a_self")
    assert score_folders([folder], stdout=io.StringIO(), stderr=err, progress=False) == 0
    assert "token vectors are encoded in this run (no token table at" in err.getvalue()
    _build(encoder, _subset(encoder), table_dir)
    encoder.reset_token_table(table_dir)
    err = io.StringIO()
    assert score_folders([folder], stdout=io.StringIO(), stderr=err, progress=False) == 0
    assert "token vectors are encoded" not in err.getvalue()


def test_installed_table_matches_the_model(encoder):
    """The table `make` builds (scripts/build_token_table.py): every possible token, the model's own vectors."""
    path = table_path(default_metric_cache_dir(), encoder.weights_sha256)
    if not path.exists():
        pytest.skip(f"no installed token table at {path} (make token-table builds it)")
    tokens = encoder.vocabulary_tokens()
    table = load_table(path, weights_sha256=encoder.weights_sha256, vocab_sha256=vocabulary_sha256(tokens))
    assert sorted(table.vectors) == tokens
    some = random.Random(11).sample(tokens, 200)
    expected = encoder.model.encode(some, batch_size=32, convert_to_numpy=True, show_progress_bar=False)
    assert np.abs(np.stack([table.vectors[t] for t in some]) - expected).max() < 1e-6
