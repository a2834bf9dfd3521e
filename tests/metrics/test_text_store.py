"""The encoder's text store (vectors kept outside the process) and ``embedding_texts``, the list of texts a
scoring run embeds, which the portal encodes in chunks before the run: if the list missed a text, the final
task would encode it itself and the split would not save the work it claims to."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from metrics import score_submission
from metrics.scorer import embedding_texts
from metrics.submission import load_submission_dir

from .conftest import REFERENCE


class DictStore:
    def __init__(self):
        self.rows: dict[tuple[str, str], bytes] = {}
        self.gets = self.puts = 0

    def get_many(self, model_key, texts):
        self.gets += 1
        return {t: np.frombuffer(self.rows[(model_key, t)], dtype=np.float32) for t in texts
                if (model_key, t) in self.rows}  # fmt: skip

    def put_many(self, model_key, vectors):
        self.puts += 1
        for text, vector in vectors.items():
            self.rows.setdefault((model_key, text), np.asarray(vector, dtype=np.float32).tobytes())


@pytest.fixture
def store(encoder):
    store = DictStore()
    encoder.clear_caches()
    encoder.text_store = store
    yield store
    encoder.text_store = None
    encoder.clear_caches()


def test_texts_not_in_memory_come_from_the_store_and_new_ones_go_to_it(encoder, store):
    texts = ["Isoniazid causes peripheral neuropathy.", "pyridoxine", "", "Isoniazid causes peripheral neuropathy."]
    before = copy.copy(encoder.stats)
    first = encoder.embed_texts(texts)
    assert encoder.stats.texts_encoded - before.texts_encoded == 3  # distinct texts, each encoded once
    assert {t for _, t in store.rows} == set(texts)
    assert all(k == encoder.embedding_key for k, _ in store.rows)

    encoder.clear_caches()  # a fresh worker: nothing in memory, everything in the store
    before = copy.copy(encoder.stats)
    again = encoder.embed_texts(texts)
    assert encoder.stats.texts_encoded == before.texts_encoded
    assert encoder.stats.texts_from_store - before.texts_from_store == 3
    assert np.array_equal(first, again)  # stored byte for byte

    before = copy.copy(encoder.stats)
    encoder.embed_texts(texts)  # now in memory: the store is not asked
    assert encoder.stats.texts_from_store == before.texts_from_store


def test_a_caller_can_keep_the_encoder_from_writing_the_store(encoder, store):
    encoder.embed_texts(["bradycardia"], write_store=False)
    assert store.rows == {} and store.puts == 0


def test_a_store_of_another_model_key_is_not_used(encoder, store):
    store.rows[("another-model:256", "pyridoxine")] = np.ones(384, dtype=np.float32).tobytes()
    vector = encoder.embed_texts(["pyridoxine"])[0]
    assert not np.allclose(vector, 1.0) and (encoder.embedding_key, "pyridoxine") in store.rows


def test_embedding_key_names_the_weights_and_the_truncation(encoder):
    assert encoder.embedding_key == f"{encoder.weights_sha256}:256"


def _spied_texts(encoder, monkeypatch) -> list[str]:
    seen: list[str] = []
    original = encoder.embed_texts

    def spy(texts):
        seen.extend(texts)
        return original(texts)

    monkeypatch.setattr(encoder, "embed_texts", spy)
    return seen


def _bigger(sub, copies: int):
    """The submission's items repeated with varied answers: ≥ 100 IDF answers, so the baseline is sampled."""
    inputs, responses = {}, {}
    for qa_type, items in sub.inputs.items():
        inputs[qa_type], responses[qa_type] = [], []
        for k in range(copies):
            for item, response in zip(items, sub.responses[qa_type], strict=True):
                item = json.loads(json.dumps(item))
                if isinstance(item.get("answer"), str) and qa_type != "true_false":
                    item["answer"] = f"{item['answer']} (variant {k})"
                inputs[qa_type].append(item)
                responses[qa_type].append(f"{response} {k}" if isinstance(response, str) else response)
    return inputs, responses


@pytest.mark.parametrize("profile", ["cliniqlink-2025", "paper"])
@pytest.mark.parametrize("size", ["sample", "over 100 answers"])
def test_embedding_texts_are_exactly_what_scoring_embeds(encoder, text_metrics, monkeypatch, profile, size):
    sub = load_submission_dir(REFERENCE / "open_c_wrong")
    inputs, responses = (sub.inputs, sub.responses) if size == "sample" else _bigger(sub, 4)
    # Awkward cases: a question echo (not compared), a type whose lengths differ (scores 0, nothing embedded).
    responses = {**responses, "short": [inputs["short"][0]["question"], *responses["short"][1:]]}
    responses["multi_hop"] = responses["multi_hop"][:-1]
    seen = _spied_texts(encoder, monkeypatch)
    result = score_submission(inputs, responses, profile=profile, seed=7, encoder=encoder, text_metrics=text_metrics)
    planned = embedding_texts(inputs, responses, profile=profile, seed=7)
    assert seen and planned == list(dict.fromkeys(planned))
    assert set(planned) == set(seen)
    assert (result.run["baseline_source"].startswith("seeded")) == (size != "sample" and profile != "paper")


def test_embedding_texts_follow_the_seed_of_the_baseline_sample(encoder):
    sub = load_submission_dir(REFERENCE / "open_c_wrong")
    inputs, responses = _bigger(sub, 4)
    assert set(embedding_texts(inputs, responses, seed=1)) != set(embedding_texts(inputs, responses, seed=2))
