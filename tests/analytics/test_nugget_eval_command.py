"""``manage.py nugget_eval``: the JSON shape, hand-computed figures, bad input named by file / line / field, and
no database. The tests run the command in-process without the ``db`` fixture, so pytest-django fails any test
whose command touches the database; one more runs it as a process with the database address closed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from evaluation.nuggets import nugget_eval_report

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "nuggets"
NUGGETS, ANSWERS = FIX / "nuggets.jsonl", FIX / "answers.jsonl"
PHYSICIANS, JUDGE = FIX / "physician_labels.jsonl", FIX / "judge_labels.jsonl"
SCORES = ("all", "vital", "all_strict", "vital_strict", "completeness", "avoid_hits")


def run_json(*args) -> dict:
    from io import StringIO

    out = StringIO()
    call_command("nugget_eval", *map(str, args), "--json", "--resamples", "200", stdout=out)
    return json.loads(out.getvalue())


def test_json_shape_and_hand_computed_scores():
    report = run_json("--nuggets", NUGGETS, "--answers", ANSWERS, "--labels", PHYSICIANS, "--labels", JUDGE,
                      "--judge", "llm_judge")  # fmt: skip
    assert set(report["systems"]) == {"reference", "system_a", "system_b", "system_c"}
    assert set(report["systems"]["system_a"]) == {"dr_ames", "dr_bose", "dr_chen", "consensus", "llm_judge"}
    entry = report["systems"]["system_a"]["dr_ames"]
    assert set(entry) == {*SCORES, "n_answers", "ci"}  # no sentence marks in label files: no precision
    # dr_ames on system_a. Hypertension (vital n1 S, vital n2 P, okay n3 N, avoid n4 N): all 1.5/3, vital 0.75,
    # strict 1/3 and 0.5, completeness 2/3. Anaphylaxis (vital S, okay S, avoid N): all 1. Chinese item (two okay
    # nuggets: P, N): all 0.25, no vital, strict 0, completeness 0.5, no avoid nugget.
    # Full precision (machine-readable output; pages round): the means as numpy takes them, not 4 decimals.
    assert entry["all"] == np.mean([0.5, 1, 0.25]) == 0.5833333333333334
    assert entry["vital"] == 0.875
    assert entry["all_strict"] == np.mean([1 / 3, 1, 0]) == 0.4444444444444444
    assert entry["vital_strict"] == 0.75
    assert entry["completeness"] == np.mean([2 / 3, 1, 0.5]) == 0.7222222222222222
    assert entry["avoid_hits"] == 0.0
    assert entry["n_answers"] == 3 and isinstance(entry["n_answers"], int)
    low, high = entry["ci"]["all"]
    assert 0.25 <= low <= entry["all"] <= high <= 1.0
    # system_b states the avoid nugget of both English items and answers the Chinese one (no avoid nugget: 0 hits):
    # its mean is over all three answers, 2 / 3, not 1.0 over the two that had avoid nuggets
    assert report["systems"]["system_b"]["consensus"]["avoid_hits"] == 2 / 3
    assert report["systems"]["system_b"]["consensus"]["n_answers"] == 3
    agreement = report["agreement"]
    assert agreement["human_alpha"]["n_labellers"] == 3 and -1 <= agreement["human_alpha"]["value"] <= 1
    assert set(agreement["judges"]) == {"llm_judge"}
    assert set(agreement["judges"]["llm_judge"]) >= {"kappa", "macro_f1", "f1", "n"}
    assert set(agreement["human_ceiling"]["per_human"]) == {"dr_ames", "dr_bose", "dr_chen"}
    assert agreement["system_rank_correlation"]["llm_judge"]["all"]["n"] == 4
    assert report["labellers"] == {"humans": ["dr_ames", "dr_bose", "dr_chen"], "automatic": ["llm_judge"]}
    assert "NaN" not in json.dumps(report)


def test_judge_not_named_counts_as_a_human():
    report = run_json("--nuggets", NUGGETS, "--answers", ANSWERS, "--labels", JUDGE)
    assert report["labellers"] == {"humans": ["llm_judge"], "automatic": []}
    assert report["agreement"]["human_alpha"] is None
    assert "consensus" not in report["systems"]["system_a"]


def fake_encode(texts):
    """A bag-of-words stand-in for the model: equal sentences get cosine 1, unrelated ones 0."""
    vocab: dict[str, int] = {}
    rows = []
    for text in texts:
        vec = np.zeros(4096)
        for word in text.lower().replace(".", " ").split():
            vec[vocab.setdefault(word, len(vocab)) % 4096] += 1
        rows.append(vec / (np.linalg.norm(vec) or 1))
    return np.array(rows)


def test_auto_adds_the_matcher_and_compares_it(tmp_path):
    report = nugget_eval_report(str(NUGGETS), str(ANSWERS), [str(PHYSICIANS)], auto=True, encode=fake_encode,
                                n_resamples=100)  # fmt: skip
    # the reference answer repeats every English vital nugget verbatim: all support
    assert report["systems"]["reference"]["matcher"]["vital"] == 1.0
    assert report["systems"]["system_c"]["matcher"]["vital"] == 0.0
    assert "matcher" in report["agreement"]["judges"]
    assert report["matcher"] == {"support_threshold": 0.75, "partial_threshold": 0.6}


def test_text_output_is_a_readable_table():
    from io import StringIO

    out = StringIO()
    call_command("nugget_eval", "--nuggets", str(NUGGETS), "--answers", str(ANSWERS), "--labels", str(PHYSICIANS),
                 "--resamples", "50", stdout=out)  # fmt: skip
    text = out.getvalue()
    assert "Strict vital recall" in text and "Krippendorff's alpha (ordinal)" in text
    assert "None" not in text and "nan" not in text and "vital_strict" not in text


def test_runs_with_no_database_reachable():
    env = {**os.environ, "DATABASE_URL": "postgres://nobody:nothing@127.0.0.1:9/none", "PORTAL_PROFILE": "local"}
    cmd = [sys.executable, "manage.py", "nugget_eval", "--nuggets", str(NUGGETS), "--answers", str(ANSWERS),
           "--labels", str(PHYSICIANS), "--json", "--resamples", "50"]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["systems"]["reference"]["consensus"]["all"] == 1.0
    bad = subprocess.run([*cmd[:4], str(ANSWERS), *cmd[5:]], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert bad.returncode == 1
    assert "answers.jsonl, line 1, field 'nuggets': is missing" in bad.stderr
    assert "Traceback" not in bad.stderr


# ------------------------------------------------------------------------------------------ bad input

GOOD_ITEM = {"item_uid": "q1", "nuggets": [{"id": "n1", "text": "Aspirin lowers fever.", "importance": "vital"}]}
GOOD_ANSWER = {"item_uid": "q1", "system": "s", "response": "Aspirin lowers fever."}
GOOD_LABEL = {"item_uid": "q1", "system": "s", "nugget_id": "n1", "label": "support", "labeller": "dr"}


def with_(base, **changes):
    out = {**base, **changes}
    return {k: v for k, v in out.items() if v is not ...}


def nugget(**changes):
    return {**GOOD_ITEM, "nuggets": [with_(GOOD_ITEM["nuggets"][0], **changes)]}


def dumps(record) -> str:
    return record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)


# (which file, its lines, the expected message after "<file>, ")
HAZARDS = [
    ("nuggets", ["{not json"], "line 1: not valid JSON"),
    ("nuggets", ["", "[1, 2]"], "line 2: must be a JSON object, not a list"),
    ("nuggets", [with_(GOOD_ITEM, item_uid=...)], "line 1, field 'item_uid': is missing"),
    ("nuggets", [with_(GOOD_ITEM, item_uid="  ")], "line 1, field 'item_uid': is empty"),
    ("nuggets", [with_(GOOD_ITEM, item_uid=12)], "line 1, field 'item_uid': must be a string, not a number"),
    ("nuggets", [with_(GOOD_ITEM, nuggets={})], "line 1, field 'nuggets': must be a list, not an object"),
    ("nuggets", [with_(GOOD_ITEM, nuggets=[])], "line 1, field 'nuggets': must list at least one nugget"),
    ("nuggets", [nugget(importance="critical")], "field 'nuggets (entry 1).importance': 'critical' is not one of"),
    ("nuggets", [nugget(text=None)], "field 'nuggets (entry 1).text': must be a string, not null"),
    ("nuggets", [{**GOOD_ITEM, "nuggets": GOOD_ITEM["nuggets"] * 2}], "field 'nuggets (entry 2).id': nugget id 'n1'"),
    ("nuggets", [GOOD_ITEM, "", GOOD_ITEM], "line 3, field 'item_uid': item 'q1' is already given on line 1"),
    ("nuggets", [nugget(text="fever\x00")], "line 1, field 'nuggets (entry 1).text': contains a NUL character"),
    ("nuggets", [with_(GOOD_ITEM, item_uid="u" * 101)], "field 'item_uid': is 101 characters long; the limit is 100"),
    ("nuggets", [nugget(text="t" * 2001)], "field 'nuggets (entry 1).text': is 2,001 characters long"),
    ("nuggets", [nugget(id="i" * 51)], "field 'nuggets (entry 1).id': is 51 characters long; the limit is 50"),
    ("nuggets", [with_(GOOD_ITEM, pad="x" * 1_000_001)], "line 1: the line is over 1,000,000 bytes"),
    ("nuggets", ['{"item_uid": "q1", "x": ' + "[" * 50_000 + "]" * 50_000 + "}"], "line 1: nesting deeper than"),
    ("answers", [with_(GOOD_ANSWER, response=...)], "line 1, field 'response': is missing"),
    ("answers", [with_(GOOD_ANSWER, item_uid="q9")], "line 1, field 'item_uid': item 'q9' has no nuggets"),
    ("answers", [GOOD_ANSWER, GOOD_ANSWER], "line 2, field 'system': system 's' already answered item 'q1' on line 1"),
    ("labels", [with_(GOOD_LABEL, label="yes")], "line 1, field 'label': 'yes' is not one of support, partial"),
    ("labels", [with_(GOOD_LABEL, labeller=...)], "line 1, field 'labeller': is missing"),
    ("labels", [with_(GOOD_LABEL, item_uid="q9")], "line 1, field 'item_uid': item 'q9' has no nuggets"),
    ("labels", [with_(GOOD_LABEL, nugget_id="n9")], "line 1, field 'nugget_id': item 'q1' has no nugget 'n9'"),
    ("labels", [with_(GOOD_LABEL, system="t")], "line 1, field 'system': there is no answer from system 't'"),
    ("labels", [GOOD_LABEL, GOOD_LABEL], "line 2, field 'labeller': 'dr' already labelled nugget 'n1'"),
    ("labels", [with_(GOOD_LABEL, labeller="consensus")], "line 1, field 'labeller': the labeller name 'consensus'"),
]


@pytest.mark.parametrize(("which", "lines", "message"), HAZARDS, ids=[f"{h[0]}-{i}" for i, h in enumerate(HAZARDS)])
def test_bad_input_is_refused_naming_file_line_and_field(tmp_path, which, lines, message):
    files = {"nuggets": [GOOD_ITEM], "answers": [GOOD_ANSWER], "labels": [GOOD_LABEL], which: lines}
    paths = {}
    for name, records in files.items():
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("\n".join(dumps(r) for r in records) + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("nugget_eval", "--nuggets", str(paths["nuggets"]), "--answers", str(paths["answers"]),
                     "--labels", str(paths["labels"]), "--json")  # fmt: skip
    assert str(caught.value).startswith(f"{paths[which]}, ")
    assert message in str(caught.value)


def test_not_utf8_missing_file_and_a_label_repeated_in_two_files(tmp_path):
    nuggets = tmp_path / "n.jsonl"
    nuggets.write_bytes(json.dumps(GOOD_ITEM).encode() + b"\n\xff\xfe\n")
    with pytest.raises(CommandError, match=r"n\.jsonl, line 2: not UTF-8 text"):
        call_command("nugget_eval", "--nuggets", str(nuggets), "--answers", str(ANSWERS))
    with pytest.raises(CommandError, match=r"absent\.jsonl: cannot be read"):
        call_command("nugget_eval", "--nuggets", str(tmp_path / "absent.jsonl"), "--answers", str(ANSWERS))
    nuggets.write_text(json.dumps(GOOD_ITEM) + "\n")
    answers, first, second = tmp_path / "a.jsonl", tmp_path / "l1.jsonl", tmp_path / "l2.jsonl"
    answers.write_text(json.dumps(GOOD_ANSWER) + "\n")
    first.write_text(json.dumps(GOOD_LABEL) + "\n")
    second.write_text("\n" + json.dumps(GOOD_LABEL) + "\n")
    with pytest.raises(CommandError) as caught:
        call_command("nugget_eval", "--nuggets", str(nuggets), "--answers", str(answers), "--labels", str(first),
                     "--labels", str(second))  # fmt: skip
    assert str(caught.value).startswith(f"{second}, line 2, field 'labeller': 'dr' already labelled")
    assert f"in {first}, line 1" in str(caught.value)


def test_bad_thresholds_are_refused_before_the_model_loads(tmp_path):
    with pytest.raises(CommandError, match="partial_threshold"):
        call_command("nugget_eval", "--nuggets", str(NUGGETS), "--answers", str(ANSWERS), "--auto",
                     "--support-threshold", "0.5", "--partial-threshold", "0.7")  # fmt: skip
