"""Nothing reaches the network; the paper profile follows docs/metric.md §7; the run record is complete."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from metrics import Encoder, get_profile, load_submission_dir, score_submission
from metrics.resources import ResourceError, resolve_model_path

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "metric-reference"


def test_model_loads_and_scores_without_network(monkeypatch, text_metrics):
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    fresh = Encoder()  # a new model load, not the session one
    sub = load_submission_dir(REFERENCE / "open_c_wrong")
    result = score_submission(sub.inputs, sub.responses, encoder=fresh, text_metrics=text_metrics)
    assert 0 < result.summary["short_inverse_semantic_match_score"] < 0.75


def test_model_path_override(tmp_path, monkeypatch):
    monkeypatch.delenv("METRIC_MODEL_PATH", raising=False)
    packaged = resolve_model_path()
    assert (packaged / "modules.json").is_file()
    monkeypatch.setenv("METRIC_MODEL_PATH", str(tmp_path))
    with pytest.raises(ResourceError, match="not a sentence-transformers model"):
        resolve_model_path()
    assert resolve_model_path(packaged) == packaged  # an explicit argument wins over the environment


def test_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="unknown metric profile"):
        get_profile("bertscore")


def test_run_record(encoder, text_metrics):
    sub = load_submission_dir(REFERENCE / "open_step_d1_exact")
    run = score_submission(sub.inputs, sub.responses, encoder=encoder, text_metrics=text_metrics, seed=5).run
    assert run["profile"] == "cliniqlink-2025" and run["seed"] == 5
    assert run["baseline"] == 0.3 and "fallback" in run["baseline_source"]
    assert run["stopwords_version"] == 198
    assert len(run["weights_sha256"]) == 64 and run["encoder_engine"] == "packed"
    assert run["libraries"]["sentence-transformers"] and run["libraries"]["nltk"]
    assert set(run["text_metrics"]) == {"nltk_data_dir", "bleu", "rouge", "meteor"}


def test_paper_profile(encoder, text_metrics, expected_rows):
    sub = load_submission_dir(REFERENCE / "closed_list_one_extra_option")
    code = score_submission(sub.inputs, sub.responses, encoder=encoder, text_metrics=text_metrics)
    paper = score_submission(sub.inputs, sub.responses, encoder=encoder, text_metrics=text_metrics, profile="paper")
    # Lists: per-question macro F1 (mean of the public per-question F1s) instead of the label macro 0.839.
    per_question = [r["f1"] for k, r in expected_rows.items() if k[:2] == ("closed_list_one_extra_option", "list")]
    assert paper.summary["list_overall_macro_avg_f1_score"] == pytest.approx(sum(per_question) / 5)
    assert code.summary["list_overall_macro_avg_f1_score"] == pytest.approx(0.8387096774193549)
    assert paper.summary["list_overall_micro_f1_score"] == code.summary["list_overall_micro_f1_score"]
    # The summary keys the public code leaves at 0.0 carry the real values.
    assert code.summary["multiple_choice_accuracy"] == 0.0 and code.summary["list_macro_f1_score"] == 0.0
    assert paper.summary["multiple_choice_accuracy"] == paper.summary["multiple_choice_average"] == 1.0
    assert paper.run["baseline"] == 0.25 and "fixed" in paper.run["baseline_source"]
    # Verbatim answers still short-circuit to 1.0.
    assert paper.summary["short_semantic_match_score"] == 1.0


def test_paper_profile_word_layer_is_contextual(encoder, text_metrics):
    sub = load_submission_dir(REFERENCE / "open_c_wrong")
    code = score_submission(sub.inputs, sub.responses, encoder=encoder, text_metrics=text_metrics)
    paper = score_submission(sub.inputs, sub.responses, encoder=encoder, text_metrics=text_metrics, profile="paper")
    code_rows, paper_rows = code.item_rows(), paper.item_rows()
    for c, p in zip(code_rows, paper_rows, strict=True):
        if c["qa_type"] in ("short", "multi_hop"):
            assert p["sentence"] == pytest.approx(c["sentence"], abs=1e-6)  # same filtered text, same pooling
            assert p["word"] != pytest.approx(c["word"], abs=1e-3)
            assert p["bleu"] == c["bleu"]


def test_device_is_cpu_by_default_and_the_environment_can_choose_it(monkeypatch):
    from metrics.resources import resolve_device

    monkeypatch.delenv("METRIC_DEVICE", raising=False)
    assert resolve_device() == "cpu"
    monkeypatch.setenv("METRIC_DEVICE", " CPU ")
    assert resolve_device() == "cpu"
    with pytest.raises(ResourceError, match="unknown device 'tpu'.*cpu, cuda or cuda:N"):
        resolve_device("tpu")


def test_cuda_without_a_cuda_device_is_refused_with_the_reason(monkeypatch):
    import torch

    from metrics.resources import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("METRIC_DEVICE", "cuda")
    with pytest.raises(ResourceError, match="'cuda' asked for .* sees no CUDA device; use cpu"):
        resolve_device()
    with pytest.raises(ResourceError, match="no CUDA device"):
        Encoder()  # refused before the model is loaded, not halfway through a run
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0") == "cuda:0"
    with pytest.raises(ResourceError, match="only 1 CUDA device"):
        resolve_device("cuda:1")
