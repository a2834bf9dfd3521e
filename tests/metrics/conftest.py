"""Shared fixtures for the metric tests: one model and one set of NLTK data per session, no database."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

# Two shared cores: torch busy-waits badly with the default OpenMP policy. Set before torch is imported.
os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "fixtures" / "metric-reference"
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"


@pytest.fixture(scope="session")
def encoder():
    from metrics import Encoder

    return Encoder()


@pytest.fixture
def encoder_without_table(encoder):
    """The session encoder encoding every token itself (no on-disk token table), restored afterwards."""
    encoder.reset_token_table(enabled=False)
    yield encoder
    encoder.reset_token_table()


@pytest.fixture(scope="session")
def nltk_dir(tmp_path_factory):
    """NLTK data built offline into a temporary directory (WordNet only where Debian's packages are installed)."""
    from metrics.nltk_data import build_nltk_data

    target = tmp_path_factory.mktemp("nltk_data")
    build_nltk_data(target)
    return target


@pytest.fixture(scope="session")
def text_metrics(nltk_dir):
    from metrics import TextMetrics

    return TextMetrics(nltk_dir, search_default_paths=False)


@pytest.fixture(scope="session")
def expected_rows():
    rows = [json.loads(line) for line in (REFERENCE / "expected.jsonl").read_text().splitlines() if line.strip()]
    return {(r["submission"], r["qa_type"], r["index"]): r for r in rows}


@pytest.fixture(scope="session")
def expected_summary():
    return json.loads((REFERENCE / "expected_summary.json").read_text())


@pytest.fixture(scope="session")
def reference_dir():
    return REFERENCE


@pytest.fixture(scope="session")
def sample():
    """``sample("short.json")`` → the public sample items of that file."""
    return lambda name: json.loads((SAMPLE / name).read_text())
