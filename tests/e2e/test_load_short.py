"""The load scenario in its short form (the full one is bench/load_test.py): real gunicorn, real locust users,
then every acknowledged review and ranking must be in the database exactly once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_short_load_run_loses_and_duplicates_nothing(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "bench/load_test.py",
            "--serve",
            "--reviewers",
            "10",
            "--rankers",
            "6",
            "--duration",
            "15s",
            "--items",
            "700",
            "--think",
            "0.5",
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "every acknowledged judgement stored exactly once: yes" in output
    assert "| review submit |" in output and "| ranking submit |" in output
