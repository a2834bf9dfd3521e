"""The management commands are thin: they parse options, call the pure report and map errors."""

from __future__ import annotations

import io
import json

import pytest
from django.apps import apps

if not apps.ready:
    pytest.skip("needs a configured Django (run with pytest-django)", allow_module_level=True)

from django.core.management import call_command  # noqa: E402
from django.core.management.base import CommandError  # noqa: E402


def run(*args: str) -> str:
    buf = io.StringIO()
    call_command(*args, stdout=buf)
    return buf.getvalue()


def test_agreement_command_json(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("item,annotator,value\n1,A,yes\n1,B,yes\n2,A,no\n2,B,yes\n3,A,no\n3,B,no\n")
    out = json.loads(run("agreement", str(path), "--level", "nominal", "--json", "--resamples", "50"))
    # p_o = 2/3; A yes1 no2, B yes2 no1 -> p_e = (2 + 2)/9 = 4/9 ; kappa = (6/9 - 4/9) / (5/9) = 0.4
    assert out["cohen_kappa"] == pytest.approx(0.4, abs=1e-14)
    assert out["n_items"] == 3 and out["n_annotators"] == 2
    text = run("agreement", str(path), "--level", "ordinal", "--values", "no,yes", "--resamples", "0")
    assert "krippendorff_alpha" in text and "cohen_kappa_quadratic" in text


def test_commands_turn_bad_input_into_command_error(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("item,annotator,answer,rank\nq,A,a,1\nq,A,b,two\n")
    with pytest.raises(CommandError, match=r"bad\.csv: line 3, column 'rank'"):
        run("ranking_agreement", str(bad))
    with pytest.raises(CommandError, match="no such file"):
        run("metric_correlation", "--rankings", str(tmp_path / "x.csv"), "--scores", str(bad), "--json")
    with pytest.raises(CommandError, match="missing column"):
        run("agreement", str(bad), "--level", "nominal")


def test_metric_correlation_command_excludes_reference(tmp_path):
    r = tmp_path / "r.csv"
    s = tmp_path / "s.csv"
    rows = ["item,annotator,answer,rank,system"]
    scores = ["item,system,score"]
    for q in range(4):
        for i, system in enumerate(["reference", "a", "b", "c"]):
            rows += [f"q{q},A,q{q}{system},{i + 1},{system}", f"q{q},B,q{q}{system},{i + 1},{system}"]
            scores.append(f"q{q},{system},{1.0 if system == 'reference' else 0.9 - 0.2 * i}")
    r.write_text("\n".join(rows) + "\n")
    s.write_text("\n".join(scores) + "\n")
    out = json.loads(
        run(
            "metric_correlation",
            "--rankings",
            str(r),
            "--scores",
            str(s),
            "--exclude-system",
            "reference",
            "--json",
        )
    )
    assert out["segment_tau_b"] == 1.0 and out["n_systems"] == 3 and "reference" not in out["bradley_terry"]
    assert out["excluded_systems"] == ["reference"]
