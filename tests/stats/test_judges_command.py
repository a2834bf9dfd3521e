"""``metric_correlation --judges/--tie-calibration/--permutations/--answers``: figures and refusals."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.apps import apps

if not apps.ready:
    pytest.skip("needs a configured Django (run with pytest-django)", allow_module_level=True)

from django.core.management import call_command  # noqa: E402
from django.core.management.base import CommandError  # noqa: E402

SYSTEMS = ("s1", "s2", "s3", "s4")


def run(*args: str) -> str:
    buf = io.StringIO()
    call_command(*args, stdout=buf)
    return buf.getvalue()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    rank_lines = ["item,annotator,answer,rank,system"]
    score_lines = ["item,system,score"]
    judge_lines, answer_lines = [], []
    for q in range(20):
        for person in ("p1", "p2", "p3"):
            key = {s: -i + rng.normal(scale=0.7) for i, s in enumerate(SYSTEMS)}
            for rank, s in enumerate(sorted(SYSTEMS, key=lambda s: -key[s]), start=1):
                rank_lines.append(f"q{q},{person},{s},{rank},{s}")
        for i, s in enumerate(SYSTEMS):
            score_lines.append(f"q{q},{s},{-i + rng.normal(scale=1.5):.4f}")
            good = -i + rng.normal(scale=0.3)
            length = 40 * (4 - i)  # better systems also write longer answers
            judge_lines.append(json.dumps({"item_uid": f"q{q}", "system": s, "score": good, "judge": "good-llm"}))
            judge_lines.append(
                json.dumps({"item_uid": f"q{q}", "system": s, "score": float(rng.normal()), "judge": "coin"})
            )
            answer_lines.append(json.dumps({"item_uid": f"q{q}", "system": s, "response": "word " * length}))
    paths = {}
    for name, lines, suffix in (
        ("rankings", rank_lines, ".csv"),
        ("scores", score_lines, ".csv"),
        ("judges", judge_lines, ".jsonl"),
        ("answers", answer_lines, ".jsonl"),
    ):
        path = tmp_path / f"{name}{suffix}"
        path.write_text("\n".join(lines) + "\n")
        paths[name] = str(path)
    return paths


def test_judges_json_has_every_figure(files):
    out = json.loads(
        run(
            "metric_correlation",
            "--rankings",
            files["rankings"],
            "--scores",
            files["scores"],
            "--judges",
            files["judges"],
            "--answers",
            files["answers"],
            "--tie-calibration",
            "--permutations",
            "300",
            "--resamples",
            "50",
            "--json",
        )  # fmt: skip
    )
    assert set(out["judges"]) == {"metric", "good-llm", "coin"}
    good, coin = out["judges"]["good-llm"], out["judges"]["coin"]
    for key in ("acc_eq", "acc_eq_calibrated", "epsilon", "acc_eq_held_out", "cluster", "percentile_among_physicians"):
        assert key in good
    assert good["acc_eq"] > coin["acc_eq"]
    assert good["cluster"] < coin["cluster"]
    assert out["clusters"][0][0] == "good-llm"
    assert good["acc_eq_calibrated"] >= good["acc_eq"]
    assert set(out["human_ceiling"]["physicians"]) == {"p1", "p2", "p3"}
    assert out["human_ceiling"]["low"] <= out["human_ceiling"]["mean"] <= out["human_ceiling"]["high"]
    style = out["style_control"]
    assert set(style["style_coefficients"]) == {"length", "headers", "list_items", "bold"}
    assert style["plain_strengths"]["s1"] > style["plain_strengths"]["s4"]
    assert "segment_tau_b" in out  # the metric's own figures are still there
    assert any("optimistic" in n for n in out["notes"])


def test_text_output_has_no_raw_dicts(files):
    text = run("metric_correlation", "--rankings", files["rankings"], "--judges", files["judges"],
               "--permutations", "100", "--resamples", "0")  # fmt: skip
    assert "{" not in text and "good-llm" in text and "percentile_among_physicians" in text


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (
            '{"item_uid": "q0", "system": "s1", "score": "high", "judge": "j"}',
            "line 2, field 'score': must be a number",
        ),
        (
            '{"item_uid": "q0", "system": "s1", "score": NaN, "judge": "j"}',
            "line 2, field 'score': NaN is not a number",
        ),
        ('{"item_uid": "q0", "system": "s1", "score": true, "judge": "j"}', "line 2, field 'score': must be a number"),
        (
            '{"item_uid": "q0", "system": "s\\u0000", "score": 1, "judge": "j"}',
            "line 2, field 'system': contains a NUL",
        ),
        ('{"item_uid": "q0", "system": "s1", "score": 1}', "line 2, field 'judge'"),
        ('{"item_uid": "q0", "system": "s1", "score": 2, "judge": "a"}', "line 2, field 'judge': a second score"),
        ("[" * 5000, "line 2: nesting deeper than 20 levels"),
        ('{"item_uid": "q0", "system": "s1", "score": 1, "judge": "metric"}', "taken by the --scores metric"),
    ],
)
def test_bad_judge_files_are_refused_by_file_line_and_field(files, tmp_path, line, fragment):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_uid": "q0", "system": "s1", "score": 1, "judge": "a"}\n' + line + "\n")
    with pytest.raises(CommandError, match="bad.jsonl") as err:
        run("metric_correlation", "--rankings", files["rankings"], "--scores", files["scores"], "--judges", str(bad))
    assert fragment in str(err.value)


def test_needs_scores_or_judges(files):
    with pytest.raises(CommandError, match="--scores, --judges or both"):
        run("metric_correlation", "--rankings", files["rankings"])
    with pytest.raises(CommandError, match="--permutations must be a positive"):
        run("metric_correlation", "--rankings", files["rankings"], "--judges", files["judges"], "--permutations", "0")


def test_label_judges_score_by_their_place_on_the_scale(tmp_path):
    """Physicians order s1 > s2 > s3 on every question. A judge labelling good / okay / bad in that order agrees on
    every pair (acc_eq 1); one calling every answer good predicts ties the physicians never made (acc_eq 0)."""
    ranks = ["item,annotator,answer,rank,system"]
    judges = []
    for q in range(6):
        for person in ("p1", "p2"):
            ranks += [f"q{q},{person},{s},{r},{s}" for r, s in enumerate(("s1", "s2", "s3"), start=1)]
        for s, label in (("s1", "GOOD"), ("s2", "okay"), ("s3", "bad")):
            judges.append(json.dumps({"item_uid": f"q{q}", "system": s, "label": label, "judge": "ordered"}))
            judges.append(json.dumps({"item_uid": f"q{q}", "system": s, "label": "good", "judge": "flat"}))
    (tmp_path / "r.csv").write_text("\n".join(ranks) + "\n")
    (tmp_path / "j.jsonl").write_text("\n".join(judges) + "\n")
    args = ["metric_correlation", "--rankings", str(tmp_path / "r.csv"), "--judges", str(tmp_path / "j.jsonl")]
    out = json.loads(run(*args, "--judge-scale", "good,okay,bad", "--permutations", "50", "--json"))
    assert out["judges"]["ordered"]["acc_eq"] == pytest.approx(1.0)
    assert out["judges"]["flat"]["acc_eq"] == pytest.approx(0.0)
    with pytest.raises(CommandError, match=r"j\.jsonl: line 1, field 'label': 'GOOD' is a label, but no label scale"):
        run(*args)
    with pytest.raises(CommandError, match=r"field 'label': 'okay' is not on the scale good, bad \(best first\)"):
        run(*args, "--judge-scale", "good,bad")
