"""BLEU/ROUGE/METEOR in worker processes beside the model (``text_workers``): the same numbers as in one
process, in pair order, the workers stopped when the run fails, and a clear refusal of a bad ``--text-workers``."""

from __future__ import annotations

import copy
import os
import time
from pathlib import Path

import pytest

from metrics import load_submission_dir, score_submission
from metrics.cli import MAX_TEXT_WORKERS, add_arguments
from metrics.encoder import GPU_BATCH_SIZE, default_batch_size
from metrics.open_ended import OPEN_TYPES
from metrics.text_metrics import CHUNK_PAIRS, PendingTextScores

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "metric-reference"


def _pairs(n: int) -> list[tuple[str, str]]:
    """``n`` distinct (expected, prediction) pairs from the reference submissions' open-ended texts."""
    sub = load_submission_dir(REFERENCE / "open_c_wrong")
    texts = [str(item.get("answer", "")) for t in OPEN_TYPES for item in sub.inputs.get(t, [])]
    texts += [str(r) for t in OPEN_TYPES for r in sub.responses.get(t, [])]
    texts = [t for t in dict.fromkeys(texts) if t.strip()]
    return [(texts[i % len(texts)], f"{texts[(i * 7 + 3) % len(texts)]} (variant {i})") for i in range(n)]


def test_workers_give_the_same_scores_in_pair_order(text_metrics):
    pairs = _pairs(2 * CHUNK_PAIRS + 11)  # three chunks, the last one short
    alone = PendingTextScores(text_metrics, pairs).collect()
    ticks: list[int] = []
    pending = PendingTextScores(text_metrics, pairs, workers=2)
    assert pending._pool is not None  # really in worker processes
    assert pending.collect(ticks.append) == alone
    assert ticks == [CHUNK_PAIRS, CHUNK_PAIRS, 11]
    assert pending._pool is None  # collecting stops the workers
    assert alone == [text_metrics.score(e, p) for e, p in pairs]


def test_a_single_chunk_is_scored_in_this_process(text_metrics):
    with PendingTextScores(text_metrics, _pairs(CHUNK_PAIRS), workers=4) as pending:
        assert pending._pool is None  # starting processes for one chunk would only cost time


def _tiled(folder: str, copies: int):
    """The reference folder's items ``copies`` times over, each copy its own paragraph ids."""
    sub = load_submission_dir(REFERENCE / folder)
    inputs, responses = {}, {}
    for qa_type, items in sub.inputs.items():
        inputs[qa_type], responses[qa_type] = [], []
        for k in range(copies):
            for item, response in zip(items, sub.responses[qa_type], strict=True):
                item = copy.deepcopy(item)
                source = item.get("source") or {}
                item["source"] = {**source, "paragraph_id": f"copy{k}-{source.get('paragraph_id')}"}
                inputs[qa_type].append(item)
                responses[qa_type].append(response)
    return inputs, responses


def test_a_submission_scored_with_workers_is_the_same(encoder, text_metrics):
    inputs, responses = _tiled("open_c_wrong", 4)
    assert sum(len(inputs[t]) for t in OPEN_TYPES) > CHUNK_PAIRS
    alone = score_submission(inputs, responses, encoder=encoder, text_metrics=text_metrics)
    stages: list[str] = []
    beside = score_submission(inputs, responses, encoder=encoder, text_metrics=text_metrics, text_workers=2,
                              progress=lambda stage, done, total: stages.append(stage))  # fmt: skip
    assert beside.item_rows("x") == alone.item_rows("x")
    assert beside.summary == alone.summary
    assert stages[-1] == "bleu/rouge/meteor"


def test_the_workers_stop_when_the_model_fails(encoder, text_metrics, monkeypatch):
    started: list[PendingTextScores] = []

    class Recorded(PendingTextScores):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)
            self.pids = list(self._pool._processes) if self._pool else []

    def broken(self, pairs, progress=None):
        raise RuntimeError("the model failed")

    monkeypatch.setattr("metrics.scorer.PendingTextScores", Recorded)
    monkeypatch.setattr("metrics.scorer.SemanticScorer.score_pairs", broken)
    inputs, responses = _tiled("open_c_wrong", 4)
    with pytest.raises(RuntimeError, match="the model failed"):
        score_submission(inputs, responses, encoder=encoder, text_metrics=text_metrics, text_workers=2)
    [pending] = started
    assert pending._pool is None and pending.pids
    deadline = time.monotonic() + 10
    alive = set(pending.pids)
    while alive and time.monotonic() < deadline:
        alive = {pid for pid in alive if _running(pid)}
        time.sleep(0.1)
    assert not alive, f"worker processes {alive} outlived the failed run"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by the fork server) is not running
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("value", ["0", "-1", str(MAX_TEXT_WORKERS + 1), "four", "2.5", ""])
def test_cli_refuses_a_bad_worker_count(value, capsys):
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["folder", "--text-workers", value])
    assert exit_.value.code == 2
    assert "--text-workers" in capsys.readouterr().err


def test_cli_reads_a_worker_count():
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args(["folder", "--text-workers", "6"]).text_workers == 6
    assert parser.parse_args(["folder"]).text_workers == 1


def test_gpu_batches_are_larger_than_cpu_batches(encoder):
    assert encoder.device == "cpu" and encoder.batch_size == default_batch_size("cpu") == 8
    assert default_batch_size("cuda") == default_batch_size("cuda:1") == GPU_BATCH_SIZE > 8
