"""``vetting_reliability``: the JSON is crowd-kit 1.4.2's Dawid–Skene fit of the same labels (run here as the
reference), the table, and every refusal (non-zero exit, nothing on stdout, the file and line named); no database."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from crowdkit.aggregation import DawidSkene
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-4

# crowd-kit 1.4.2 uses pandas' inplace= and copy= keywords, which pandas 3.1 deprecates
pytestmark = pytest.mark.filterwarnings("ignore::Warning:crowdkit")

# Three reviewers and an adjudicator; q5 and q7 have one label; "cannot_tell" comes from one reviewer only.
LABELS = [
    ("q1", "alice", "correct"),
    ("q1", "bob", "correct"),
    ("q2", "alice", "incorrect"),
    ("q2", "bob", "correct"),
    ("q2", "adjudicator", "incorrect"),
    ("q3", "alice", "incorrect"),
    ("q3", "bob", "incorrect"),
    ("q4", "alice", "correct"),
    ("q4", "carol", "cannot_tell"),
    ("q5", "carol", "correct"),
    ("q6", "bob", "correct"),
    ("q6", "carol", "incorrect"),
    ("q6", "adjudicator", "correct"),
    ("q7", "alice", "correct"),
    ("q8", "bob", "incorrect"),
    ("q8", "carol", "incorrect"),
]
GOLD = [("q3", "incorrect"), ("q6", "correct"), ("q99", "correct")]  # q99: gold no reviewer labelled


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def csv_of(header: str, rows) -> str:
    return header + "\n" + "".join(",".join(row) + "\n" for row in rows)


def run(*args) -> str:
    out = io.StringIO()
    call_command("vetting_reliability", *map(str, args), stdout=out)
    return out.getvalue()


def crowd_kit_report(gold: list[tuple[str, str]] | None) -> dict:
    """crowd-kit's fit in the report's shape (errors_ rows are (worker, given), columns the true label)."""
    data = pd.DataFrame(LABELS, columns=["task", "worker", "label"])
    true_labels = pd.Series(dict(gold)) if gold else None
    model = DawidSkene(n_iter=100, tol=1e-5).fit(data, true_labels)
    labels = sorted(data["label"].unique())
    errors = model.errors_

    def cell(worker, true, given):
        return float(errors.loc[(worker, given), true]) if (worker, given) in errors.index else 0.0

    return {
        "iterations": len(model.loss_history_),
        "labels": labels,
        "prior": {label: float(model.priors_[label]) for label in labels},
        "items": {
            task: {"label": model.labels_[task], "posterior": {k: float(model.probas_.loc[task, k]) for k in labels}}
            for task in model.probas_.index
        },
        "confusion": {
            worker: {true: {given: cell(worker, true, given) for given in labels} for true in labels}
            for worker in data["worker"].unique()
        },
    }


@pytest.mark.parametrize("with_gold", [False, True])
def test_json_is_crowd_kits_fit(tmp_path, with_gold):
    labels = write(tmp_path, "labels.csv", csv_of("item_uid,reviewer,label", LABELS))
    args = [labels, "--json"]
    if with_gold:
        args += ["--gold", write(tmp_path, "gold.csv", csv_of("item_uid,label", GOLD))]
    report = json.loads(run(*args))
    expected = crowd_kit_report(GOLD if with_gold else None)

    assert report["method"] == "dawid-skene"
    assert report["iterations"] == expected["iterations"]
    assert report["labels"] == ["cannot_tell", "correct", "incorrect"] == expected["labels"]
    assert report["prior"] == pytest.approx(expected["prior"], abs=TOL)
    assert set(report["items"]) == {f"q{i}" for i in range(1, 9)}  # q99 (gold only) is not listed
    for uid, item in expected["items"].items():
        assert report["items"][uid]["label"] == item["label"]
        assert report["items"][uid]["posterior"] == pytest.approx(item["posterior"], abs=TOL)
    assert set(report["reviewers"]) == {"alice", "bob", "carol", "adjudicator"}
    for reviewer, confusion in expected["confusion"].items():
        got = report["reviewers"][reviewer]
        for true, row in confusion.items():
            assert got["confusion"][true] == pytest.approx(row, abs=TOL)
        prior = expected["prior"]
        assert got["accuracy"] == pytest.approx(sum(prior[k] * confusion[k][k] for k in prior), abs=TOL)
        assert got["n_labels"] == sum(1 for _, r, _ in LABELS if r == reviewer)
        low, high = got["accuracy_interval"]
        assert 0 <= low <= got["share_correct"] <= high <= 1
    if with_gold:
        assert report["items"]["q6"]["posterior"]["correct"] == 1.0  # the gold is the item's truth


def test_table_lists_each_reviewer_with_accuracy_and_labels(tmp_path):
    labels = write(tmp_path, "labels.csv", csv_of("item_uid,reviewer,label", LABELS))
    out = run(labels)
    report = json.loads(run(labels, "--json"))
    rows = {line.split()[0]: line.split() for line in out.splitlines()[4:]}
    assert set(rows) == {"alice", "bob", "carol", "adjudicator"}
    assert rows["alice"][1] == f"{report['reviewers']['alice']['accuracy']:.3f}"
    assert rows["alice"][-1] == "5"
    assert f"{report['iterations']} iterations" in out.splitlines()[0]


GOOD_LABELS = csv_of("item_uid,reviewer,label", LABELS[:4])


@pytest.mark.parametrize(
    ("labels_text", "gold_text", "culprit", "message"),
    [
        ("item_uid,reviewer\nq1,alice\n", None, "labels", r"line 1: missing column\(s\) 'label'"),
        ("", None, "labels", "line 1: the file is empty"),
        ("item_uid,reviewer,label\n", None, "labels", "line 1: a header and no rows"),
        (
            "item_uid,reviewer,label\nq1,alice,correct\n,bob,correct\n",
            None,
            "labels",
            "line 3, field 'item_uid': is empty",
        ),
        (
            "item_uid,reviewer,label\nq1,alice,correct\nq1, ,correct\n",
            None,
            "labels",
            "line 3, field 'reviewer': is empty",
        ),
        ("item_uid,reviewer,label\nq1,alice,\n", None, "labels", "line 2, field 'label': is empty"),
        (
            "item_uid,reviewer,label\nq1,alice,correct\nq2,bob,correct\nq1,alice,incorrect\n",
            None,
            "labels",
            "line 4, field 'reviewer': 'alice' already labelled item 'q1' on line 2",
        ),
        ("item_uid,reviewer,label\nq1,alice,correct,extra\n", None, "labels", "line 2: 4 fields"),
        (GOOD_LABELS, "item_uid\nq1\n", "gold", r"line 1: missing column\(s\) 'label'"),
        (GOOD_LABELS, "", "gold", "line 1: the file is empty"),
        (GOOD_LABELS, "item_uid,label\nq1,correct\n,incorrect\n", "gold", "line 3, field 'item_uid': is empty"),
        (GOOD_LABELS, "item_uid,label\nq1,correct\nq2,\n", "gold", "line 3, field 'label': is empty"),
        (
            GOOD_LABELS,
            "item_uid,label\nq1,correct\nq2,wrong\n",
            "gold",
            "line 3, field 'label': 'wrong' is not a label any reviewer used",
        ),
        (
            GOOD_LABELS,
            "item_uid,label\nq1,correct\nq1,incorrect\n",
            "gold",
            "line 3, field 'item_uid': item 'q1' already has a gold label on line 2",
        ),
    ],
)
def test_refusals_name_file_and_line_and_print_nothing(tmp_path, labels_text, gold_text, culprit, message):
    paths = {"labels": write(tmp_path, "labels.csv", labels_text)}
    args = [paths["labels"], "--json"]
    if gold_text is not None:
        paths["gold"] = write(tmp_path, "gold.csv", gold_text)
        args += ["--gold", paths["gold"]]
    out = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("vetting_reliability", *map(str, args), stdout=out)
    assert str(refused.value).startswith(f"{paths[culprit]}, ")
    assert refused.match(message)
    assert out.getvalue() == ""


def test_a_refusal_exits_non_zero_with_nothing_on_stdout(tmp_path):
    labels = write(tmp_path, "labels.csv", "item_uid,reviewer,label\nq1,alice,\n")
    done = subprocess.run(
        [sys.executable, "manage.py", "vetting_reliability", str(labels), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert done.stdout == ""
    assert f"{labels}, line 2, field 'label': is empty" in done.stderr
