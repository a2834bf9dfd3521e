"""``ppi_estimate``: the JSON is ppi-python 0.2.3's figures on the same values (physicians averaged here by hand), the
table, and every refusal (non-zero exit, nothing on stdout, the file and line named); no database."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import ppi_py
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from scipy.stats import norm

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-6

pytestmark = pytest.mark.filterwarnings("ignore:The desired effective sample size:UserWarning")

# System "alpha": q1 and q2 by two physicians, q3 and q4 by one; q5-q9 judge only. System "beta": every judged item
# labelled (no judge-only items), q1 by three physicians.
HUMAN = [
    ("q1", "alpha", "4"),
    ("q1", "alpha", "5"),
    ("q2", "alpha", "2"),
    ("q2", "alpha", "3.5"),
    ("q3", "alpha", "3"),
    ("q4", "alpha", "1"),
    ("q1", "beta", "2"),
    ("q1", "beta", "3"),
    ("q1", "beta", "3"),
    ("q2", "beta", "4"),
    ("q3", "beta", "1.5"),
]
JUDGE = [
    ("q1", "alpha", "4.2"),
    ("q2", "alpha", "3.1"),
    ("q3", "alpha", "2.9"),
    ("q4", "alpha", "1.8"),
    ("q5", "alpha", "3.3"),
    ("q6", "alpha", "4.4"),
    ("q7", "alpha", "2.0"),
    ("q8", "alpha", "3.9"),
    ("q9", "alpha", "2.6"),
    ("q1", "beta", "3.0"),
    ("q2", "beta", "3.5"),
    ("q3", "beta", "2.0"),
]


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def csv_of(rows, header: str = "item_uid,system,value") -> str:
    return header + "\n" + "".join(",".join(row) + "\n" for row in rows)


def run(*args) -> str:
    out = io.StringIO()
    call_command("ppi_estimate", *map(str, args), stdout=out)
    return out.getvalue()


def expected_report(human, judge, alpha, halfwidth=None) -> dict:
    """ppi-python on the physicians' means, worked out without the portal's code."""
    physicians = defaultdict(list)
    for uid, system, value in human:
        physicians[system, uid].append(float(value))
    judged = {(system, uid): float(value) for uid, system, value in judge}
    systems = {}
    for system in sorted({s for s, _ in judged}):
        labelled = sorted(uid for s, uid in physicians if s == system)
        y = np.array([sum(physicians[system, uid]) / len(physicians[system, uid]) for uid in labelled])
        yhat = np.array([judged[system, uid] for uid in labelled])
        unlabelled = np.array([v for (s, uid), v in judged.items() if s == system and uid not in labelled])
        low, high = ppi_py.classical_mean_ci(y, alpha=alpha)
        if unlabelled.size:
            ppi_low, ppi_high = (b[0] for b in ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=alpha))
            mean = ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled)[0]
            at_0, at_1 = (ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam=lam)[0] for lam in (0, 1))
            lam = (mean - at_0) / (at_1 - at_0)
        else:  # the rule: nothing to impute, the classical interval with λ = 0
            ppi_low, ppi_high, mean, lam = low, high, y.mean(), 0.0
        needed = None
        if halfwidth is not None:
            n0 = math.ceil((norm.ppf(1 - alpha / 2) * y.std() / halfwidth) ** 2)
            n_max = y.size + unlabelled.size
            needed = ppi_py.ppi_mean_power(y, yhat, cost_Y=1, cost_Yhat=1e-9, effective_n=n0, n_max=n_max)["n"]
        systems[system] = {
            "n_human": len(labelled),
            "n_judge_only": int(unlabelled.size),
            "classical": {"mean": y.mean(), "low": low, "high": high},
            "ppi": {"mean": mean, "low": ppi_low, "high": ppi_high, "lambda": lam},
            "human_needed": needed,
        }
    return {"alpha": alpha, "systems": systems}


def assert_report(got: dict, expected: dict) -> None:
    assert got["alpha"] == expected["alpha"]
    assert list(got["systems"]) == list(expected["systems"])
    for name, system in expected["systems"].items():
        figures = got["systems"][name]
        assert figures["n_human"] == system["n_human"]
        assert figures["n_judge_only"] == system["n_judge_only"]
        assert figures["human_needed"] == system["human_needed"]
        assert figures["classical"] == pytest.approx(system["classical"], abs=TOL)
        assert figures["ppi"] == pytest.approx(system["ppi"], abs=TOL)


@pytest.mark.parametrize(("alpha", "halfwidth"), [(None, None), ("0.1", None), (None, "0.5"), ("0.2", "0.8")])
def test_json_is_ppi_pythons_on_the_physicians_means(tmp_path, alpha, halfwidth):
    args = [
        "--human",
        write(tmp_path, "human.csv", csv_of(HUMAN)),
        "--judge",
        write(tmp_path, "judge.csv", csv_of(JUDGE)),
    ]
    args += (
        ["--json"] + (["--alpha", alpha] if alpha else []) + (["--target-halfwidth", halfwidth] if halfwidth else [])
    )
    report = json.loads(run(*args))
    expected = expected_report(HUMAN, JUDGE, float(alpha or 0.05), halfwidth and float(halfwidth))
    assert_report(report, expected)
    alpha_system, beta = report["systems"]["alpha"], report["systems"]["beta"]
    assert (alpha_system["n_human"], alpha_system["n_judge_only"]) == (4, 5)
    assert alpha_system["classical"]["mean"] == pytest.approx((4.5 + 2.75 + 3 + 1) / 4)  # physicians averaged first
    assert beta["ppi"]["lambda"] == 0.0 and beta["ppi"] == pytest.approx({**beta["classical"], "lambda": 0.0})


def test_columns_by_name_bom_crlf_quotes_and_extra_columns(tmp_path):
    human = "\ufeffvalue,note,system,item_uid\r\n" + "".join(
        f'{value},"a note, quoted",{system},{uid}\r\n' for uid, system, value in HUMAN
    )
    judge = "system,item_uid,value\r\n" + "".join(f'"{system}","{uid}",{value}\r\n' for uid, system, value in JUDGE)
    args = ["--human", write(tmp_path, "h.csv", human), "--judge", write(tmp_path, "j.csv", judge), "--json"]
    assert_report(json.loads(run(*args, "--target-halfwidth", "0.6")), expected_report(HUMAN, JUDGE, 0.05, 0.6))


def test_simulated_study_of_several_systems(tmp_path):
    """Three systems, 600 items, a fifth of them labelled by one to three physicians; judges of three kinds."""
    rng = np.random.default_rng(43)
    human, judge = [], []
    for system, (slope, shift, noise) in {
        "good": (0.9, 0.5, 0.3),
        "noisy": (1.0, 0.0, 1.5),
        "anti": (-1, 6, 0.3),
    }.items():
        truth = rng.normal(3.0, 1.0, 600)
        for i, t in enumerate(truth):
            judge.append((f"q{i}", system, repr(float(slope * t + shift + rng.normal(0, noise)))))
            if i % 5 == 0:
                human += [(f"q{i}", system, repr(float(t + rng.normal(0, 0.5)))) for _ in range(1 + i % 3)]
    args = ["--human", write(tmp_path, "h.csv", csv_of(human)), "--judge", write(tmp_path, "j.csv", csv_of(judge))]
    report = json.loads(run(*args, "--json", "--target-halfwidth", "0.1"))
    assert_report(report, expected_report(human, judge, 0.05, 0.1))
    assert report["systems"]["anti"]["ppi"]["lambda"] == 0.0
    good = report["systems"]["good"]
    assert good["ppi"]["high"] - good["ppi"]["low"] < 0.7 * (good["classical"]["high"] - good["classical"]["low"])


def test_table_has_a_line_per_system(tmp_path):
    args = ["--human", write(tmp_path, "h.csv", csv_of(HUMAN)), "--judge", write(tmp_path, "j.csv", csv_of(JUDGE))]
    out = run(*args, "--target-halfwidth", "0.5")
    report = json.loads(run(*args, "--json", "--target-halfwidth", "0.5"))
    rows = {line.split()[0]: line.split() for line in out.splitlines()[3:]}
    assert set(rows) == {"alpha", "beta"}
    alpha_system = report["systems"]["alpha"]
    assert rows["alpha"][1:3] == ["4", "5"]
    assert rows["alpha"][3] == f"{alpha_system['classical']['mean']:.4f}"
    assert rows["alpha"][-2:] == [f"{alpha_system['ppi']['lambda']:.3f}", str(alpha_system["human_needed"])]
    assert "95% intervals" in out.splitlines()[0]
    assert run(*args).splitlines()[3].split()[-1] == "-"  # no target, no number needed


GOOD_HUMAN = csv_of(HUMAN)
GOOD_JUDGE = csv_of(JUDGE)


@pytest.mark.parametrize(
    ("human_text", "judge_text", "culprit", "message"),
    [
        ("item_uid,value\nq1,3\n", GOOD_JUDGE, "human", r"line 1: missing column\(s\) 'system'"),
        (GOOD_HUMAN, "item_uid,system\nq1,alpha\n", "judge", r"line 1: missing column\(s\) 'value'"),
        ("", GOOD_JUDGE, "human", "line 1: the file is empty"),
        (GOOD_HUMAN, "", "judge", "line 1: the file is empty"),
        ("item_uid,system,value\n", GOOD_JUDGE, "human", "line 1: a header and no rows"),
        (GOOD_HUMAN + "q2,alpha,four\n", GOOD_JUDGE, "human", "line 13, field 'value': 'four' is not a finite number"),
        (GOOD_HUMAN + "q2,alpha,nan\n", GOOD_JUDGE, "human", "line 13, field 'value': 'nan' is not a finite number"),
        (GOOD_HUMAN, GOOD_JUDGE + "q10,alpha,inf\n", "judge", "line 14, field 'value': 'inf' is not a finite number"),
        (GOOD_HUMAN, GOOD_JUDGE + "q10,alpha,1e400\n", "judge", "line 14, field 'value': '1e400' is not a finite"),
        (GOOD_HUMAN, GOOD_JUDGE + "q11,alpha,\n", "judge", "line 14, field 'value': is empty"),
        (
            GOOD_HUMAN + "q9,beta,2\n",
            GOOD_JUDGE,
            "human",
            "line 13: item 'q9' of system 'beta' has no value in .*judge.csv",
        ),
        (
            GOOD_HUMAN,
            GOOD_JUDGE + "q2,alpha,1\n",
            "judge",
            "line 14, field 'item_uid': item 'q2' of system 'alpha' already has a judge value on line 3",
        ),
        (
            GOOD_HUMAN + "q1,gamma,2\n",
            GOOD_JUDGE + "q1,gamma,2\nq2,gamma,3\n",
            "human",
            "line 13: system 'gamma' has only 1 item with a physician's value; at least 2 are needed",
        ),
        (
            GOOD_HUMAN,
            GOOD_JUDGE + "q1,delta,2\nq2,delta,3\n",
            "judge",
            "line 14: system 'delta' has no item with a physician's value in .*human.csv; at least 2 are needed",
        ),
    ],
)
def test_refusals_name_file_and_line_and_print_nothing(tmp_path, human_text, judge_text, culprit, message):
    paths = {"human": write(tmp_path, "human.csv", human_text), "judge": write(tmp_path, "judge.csv", judge_text)}
    out = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command(
            "ppi_estimate", "--human", str(paths["human"]), "--judge", str(paths["judge"]), "--json", stdout=out
        )
    assert str(refused.value).startswith(f"{paths[culprit]}, ")
    assert refused.match(message)
    assert out.getvalue() == ""


@pytest.mark.parametrize(("option", "value"), [("--alpha", "0"), ("--alpha", "1.5"), ("--target-halfwidth", "-1")])
def test_bad_options_are_refused(tmp_path, option, value):
    args = ["--human", write(tmp_path, "h.csv", GOOD_HUMAN), "--judge", write(tmp_path, "j.csv", GOOD_JUDGE)]
    with pytest.raises(CommandError, match=option.lstrip("-").split("-")[0]):
        run(*args, option, value)


def test_a_refusal_exits_non_zero_with_no_traceback_and_nothing_on_stdout(tmp_path):
    human = write(tmp_path, "human.csv", GOOD_HUMAN + "q3,alpha,high\n")
    judge = write(tmp_path, "judge.csv", GOOD_JUDGE)
    done = subprocess.run(
        [sys.executable, "manage.py", "ppi_estimate", "--human", str(human), "--judge", str(judge), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert done.stdout == ""
    assert f"{human}, line 13, field 'value': 'high' is not a finite number" in done.stderr
    assert "Traceback" not in done.stderr
