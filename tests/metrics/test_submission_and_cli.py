"""Reading harness folders, and the score_outputs command (no database)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from metrics import SubmissionError, load_submission_dir
from metrics.cli import score_folders

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "fixtures" / "metric-reference"
GOOD_TF = {"inputs": [{"question": "q", "answer": "True"}], "responses": ["True"], "prompts": ["p"]}


def _folder(tmp_path, **files):
    for name, content in files.items():
        path = tmp_path / f"{name}.json"
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return tmp_path


def _problems(path):
    with pytest.raises(SubmissionError) as caught:
        load_submission_dir(path)
    return [str(p) for p in caught.value.problems]


def test_reads_a_harness_folder_and_notes_missing_files(tmp_path):
    sub = load_submission_dir(_folder(tmp_path, true_false=GOOD_TF))
    assert sub.inputs["true_false"][0]["answer"] == "True" and sub.responses["true_false"] == ["True"]
    assert any("short.json not found" in n for n in sub.notes)
    assert sub.name == tmp_path.name


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"true_false": "{not json"}, "true_false.json: (file): not valid JSON"),
        ({"true_false": [1, 2]}, "true_false.json: (top level): must be a JSON object"),
        ({"true_false": {**GOOD_TF, "responses": []}}, "true_false.json: responses: 0 responses for 1 inputs"),
        ({"true_false": {**GOOD_TF, "extra": 1}}, "true_false.json: extra: unknown field"),
        ({"true_false": {"responses": []}}, "true_false.json: inputs: missing"),
        ({"true_false": {"inputs": {}, "responses": []}}, "true_false.json: inputs: must be a list"),
        ({"short": {"inputs": [{"question": "q"}], "responses": ["a"]}}, "short.json: inputs[0].answer: missing"),
        (
            {"list": {"inputs": [{"question": "q", "options": "A, B", "answer": ["A"]}], "responses": ["A"]}},
            "list.json: inputs[0].options: must be a list of strings",
        ),
        (
            {"multiple_choice": {"inputs": [{"question": "q", "options": [], "correct_answer": "A"}],
                                 "responses": ["A"]}},
            "multiple_choice.json: inputs[0].options: must not be empty",
        ),
        (
            {"true_false": {"inputs": [{"question": "q", "answer": "True", "source": {"paragraph_id": 3}}],
                            "responses": ["True"]}},
            "true_false.json: inputs[0].source.paragraph_id: must be a string",
        ),
        # read by the one JSON parser of people's files: infinite numbers and repeated keys are refused
        ({"true_false": json.dumps(GOOD_TF).replace('["True"]', "[1e400]", 1)},
         "true_false.json: responses (entry 1): the number 1e400 is out of range"),
        ({"true_false": json.dumps(GOOD_TF).replace('"answer": "True"', '"answer": "True", "answer": "False"')},
         "true_false.json: inputs (entry 1).answer: is given twice in one object"),
    ],
)  # fmt: skip
def test_bad_input_names_file_and_field(tmp_path, files, message):
    problems = _problems(_folder(tmp_path, **files))
    assert any(message in p for p in problems), problems
    assert all(str(tmp_path) in p for p in problems)


def test_empty_or_missing_folder_is_an_error(tmp_path):
    assert "none of the result files" in _problems(tmp_path)[0]
    assert "is not a directory" in _problems(tmp_path / "absent")[0]


def test_score_folders_json_and_per_item(tmp_path, encoder, text_metrics, monkeypatch, expected_rows, nltk_dir):
    monkeypatch.setattr("metrics.encoder.Encoder", lambda *a, **k: encoder)  # reuse the session model
    out, err = io.StringIO(), io.StringIO()
    per_item = tmp_path / "items.jsonl"
    folders = [str(REFERENCE / "open_step_d1_exact"), str(REFERENCE / "closed_list_letters_only")]
    code = score_folders(folders, as_json=True, per_item=str(per_item), nltk_data=str(nltk_dir), stdout=out,
                         stderr=err, progress=False)  # fmt: skip
    assert code == 0, err.getvalue()
    result = json.loads(out.getvalue())
    assert list(result) == ["open_step_d1_exact", "closed_list_letters_only"]
    assert result["open_step_d1_exact"]["multi_hop_inverse_semantic_match_score"] == pytest.approx(0.7)
    assert result["closed_list_letters_only"]["list_invalid_count"] == 1
    assert result["closed_list_letters_only"]["run"]["profile"] == "cliniqlink-2025"
    rows = [json.loads(line) for line in per_item.read_text().splitlines()]
    assert len(rows) == 2 * 35
    for row in rows:
        want = expected_rows.get((row["submission"], row["qa_type"], row["index"]))
        if want:
            assert set(want) <= set(row) <= set(want) | {"paragraph_id"}


def test_score_folders_reports_bad_input_and_exits_2(tmp_path):
    shutil.copytree(REFERENCE / "closed_true_false_all_flipped", tmp_path / "sub")
    (tmp_path / "sub" / "list.json").write_text('{"inputs": [], "responses": [], "answers": []}')
    err = io.StringIO()
    assert score_folders([str(tmp_path / "sub")], stdout=io.StringIO(), stderr=err, progress=False) == 2
    assert "list.json: answers: unknown field" in err.getvalue()


def test_keep_going_scores_the_good_folders_and_reports_the_bad_ones(tmp_path):
    good = _closed_only(tmp_path)
    (tmp_path / "bad").mkdir()
    bad = _folder(tmp_path / "bad", true_false={**GOOD_TF, "extra": 1})
    folders = [str(good), str(bad)]

    out, err = io.StringIO(), io.StringIO()
    assert score_folders(folders, as_json=True, stdout=out, stderr=err, progress=False) == 2
    assert out.getvalue() == "" and "cannot score" in err.getvalue()  # the default: one bad folder, nothing scored

    out, err = io.StringIO(), io.StringIO()
    assert score_folders(folders, as_json=True, keep_going=True, stdout=out, stderr=err, progress=False) == 2
    result = json.loads(out.getvalue())
    assert result["closed"]["true_false_accuracy"] == 1.0 and result["closed"]["run"]["profile"]
    assert result["bad"] == {
        "errors": [f"{bad / 'true_false.json'}: extra: unknown field (allowed: inputs, responses, prompts)"]
    }
    assert "skipping 1 of 2 folders" in err.getvalue() and "true_false.json: extra: unknown field" in err.getvalue()

    out = io.StringIO()
    assert score_folders(folders, keep_going=True, stdout=out, stderr=io.StringIO(), progress=False) == 2
    assert "true_false_accuracy" in out.getvalue() and "bad: not scored (bad input, see above)" in out.getvalue()

    out = io.StringIO()
    assert score_folders([str(bad)], keep_going=True, stdout=out, stderr=io.StringIO(), progress=False) == 2
    assert out.getvalue() == "bad: not scored (bad input, see above)\n"


def _closed_only(tmp_path):
    folder = tmp_path / "closed"
    folder.mkdir()
    for name in ("true_false.json", "multiple_choice.json", "list.json"):
        shutil.copy(REFERENCE / "closed_multiple_choice_letter_only" / name, folder / name)
    return folder


def test_management_command_needs_no_database(tmp_path):
    """Runs ``manage.py score_outputs`` with an unreachable database URL: it must not try to connect."""
    env = {**os.environ, "DATABASE_URL": "postgres://nobody:x@127.0.0.1:9/none", "PORTAL_VAR_DIR": str(tmp_path)}
    cmd = [sys.executable, "manage.py", "score_outputs", str(_closed_only(tmp_path)), "--json", "--no-progress"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["closed"]
    assert summary["multiple_choice_average"] == 0.0 and summary["multiple_choice_letter_match"] == 1.0
    assert summary["true_false_accuracy"] == 1.0


def test_management_command_bad_input_exits_non_zero(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "short.json").write_text("[]")
    env = {**os.environ, "DATABASE_URL": "postgres://nobody:x@127.0.0.1:9/none", "PORTAL_VAR_DIR": str(tmp_path)}
    cmd = [sys.executable, "manage.py", "score_outputs", str(tmp_path / "bad")]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "short.json: (top level): must be a JSON object" in done.stderr


def test_management_command_refuses_an_unusable_device(tmp_path):
    env = {**os.environ, "DATABASE_URL": "postgres://nobody:x@127.0.0.1:9/none", "PORTAL_VAR_DIR": str(tmp_path)}
    folder = tmp_path / "open"
    shutil.copytree(REFERENCE / "open_c_wrong", folder)
    cmd = [sys.executable, "manage.py", "score_outputs", str(folder), "--device", "tpu", "--no-progress"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "unknown device 'tpu'" in done.stderr and "Traceback" not in done.stderr


def _score(folders, encoder, nltk_dir, monkeypatch, **kwargs):
    monkeypatch.setattr("metrics.encoder.Encoder", lambda *a, **k: encoder)  # reuse the session model
    out, err = io.StringIO(), io.StringIO()
    code = score_folders([str(f) for f in folders], as_json=True, nltk_data=str(nltk_dir), stdout=out, stderr=err,
                         progress=False, **kwargs)  # fmt: skip
    return code, (json.loads(out.getvalue()) if code == 0 else None), err.getvalue()


def test_length_mismatch_stops_the_run_unless_asked_to_score_it_as_the_public_scorer(
    tmp_path, encoder, nltk_dir, monkeypatch
):
    """docs/metric.md §2.3: with --allow-length-mismatch the type scores 0, its inputs still feed the IDF (§5.3)."""
    same = shutil.copytree(REFERENCE / "open_c_wrong", tmp_path / "same")
    mismatched = shutil.copytree(REFERENCE / "open_c_wrong", tmp_path / "mismatched")
    blob = json.loads((mismatched / "multi_hop.json").read_text())
    blob["responses"] = blob["responses"][:-1]
    (mismatched / "multi_hop.json").write_text(json.dumps(blob))
    without = shutil.copytree(REFERENCE / "open_c_wrong", tmp_path / "without")
    (without / "multi_hop.json").unlink()

    code, _, err = _score([mismatched], encoder, nltk_dir, monkeypatch)
    assert code == 2 and "multi_hop.json: responses: 4 responses for 5 inputs" in err

    code, result, err = _score([same, mismatched, without], encoder, nltk_dir, monkeypatch,
                               allow_length_mismatch=True)  # fmt: skip
    assert code == 0, err
    assert "multi_hop scores 0 as in the public scorer" in err
    assert result["same"]["multi_hop_semantic_match_score"] > 0
    assert result["mismatched"]["multi_hop_semantic_match_score"] == 0.0
    # The mismatched file's gold answers are still in the IDF: the short answers score as with a complete file,
    # and not as when multi_hop.json is absent.
    for key in ("short_semantic_match_score", "short_inverse_semantic_match_score"):
        assert result["mismatched"][key] == result["same"][key]
    assert result["mismatched"]["short_semantic_match_score"] != result["without"]["short_semantic_match_score"]
    assert result["mismatched"]["run"]["idf_answers"] == result["same"]["run"]["idf_answers"]
    assert result["mismatched"]["run"]["idf_answers"] == result["without"]["run"]["idf_answers"] + 5


def test_missing_responses_key_is_an_empty_list_only_when_mismatches_are_allowed(tmp_path):
    folder = _folder(tmp_path, true_false={"inputs": GOOD_TF["inputs"]})
    assert _problems(folder) == [f"{folder / 'true_false.json'}: responses: missing"]
    loaded = load_submission_dir(folder, allow_length_mismatch=True)
    assert loaded.responses["true_false"] == [] and "1 inputs" in loaded.notes[0]


def test_a_folder_whose_scoring_fails_is_reported_and_keep_going_scores_the_others(tmp_path, monkeypatch):
    """Whatever fails inside one folder's scoring is a line naming the folder, never a traceback that loses the
    other folders; with --keep-going the later folders are still scored."""
    from metrics import scorer

    first = shutil.copytree(_closed_only(tmp_path), tmp_path / "first")
    second = shutil.copytree(first, tmp_path / "second")
    real = scorer.score_submission
    calls = []

    def failing_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OverflowError("int too large to convert to float")
        return real(*args, **kwargs)

    monkeypatch.setattr(scorer, "score_submission", failing_once)
    out, err = io.StringIO(), io.StringIO()
    folders = [str(first), str(second)]
    assert score_folders(folders, as_json=True, keep_going=True, stdout=out, stderr=err, progress=False) == 1
    result = json.loads(out.getvalue())
    assert result["first"] == {"errors": ["OverflowError: int too large to convert to float"]}
    assert result["second"]["true_false_accuracy"] == 1.0
    assert "error: first: not scored: OverflowError" in err.getvalue() and "Traceback" not in err.getvalue()

    calls.clear()
    out = io.StringIO()
    assert score_folders(folders, keep_going=False, stdout=out, stderr=io.StringIO(), progress=False) == 1
    assert out.getvalue() == "first: not scored (OverflowError: int too large to convert to float)\n"
