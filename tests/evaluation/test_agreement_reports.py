"""The pure CLI functions on small CSV files, with expected figures derived by hand beside each test."""

from __future__ import annotations

import json
from math import sqrt

import pytest
from scipy.stats import pearsonr
from sklearn.metrics import cohen_kappa_score

from evaluation.agreement import (
    StatsInputError,
    agreement_report,
    format_text,
    metric_correlation_report,
    parse_scale,
    ranking_agreement_report,
)
from evaluation.output import to_json

TAGS = """item,annotator,value
1,A,good
1,B,good
2,A,good
2,B,okay
3,A,okay
3,B,okay
4,A,bad
4,B,bad
5,A,okay
5,B,bad
6,A,good
6,B,
"""


@pytest.fixture
def write(tmp_path):
    def _write(name: str, text: str | bytes):
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return path

    return _write


def test_agreement_ordinal_json_by_hand(write):
    path = write("tags.csv", TAGS)
    out = json.loads(to_json(agreement_report(path, level="ordinal", values=parse_scale("good,okay,bad"))))
    # pairable items 1-5 (item 6 has one rating). Coincidences: n_good 3, n_okay 4, n_bad 3, n = 10;
    # mismatching pairs (good,okay) x2 and (okay,bad) x2 (both orders).
    # ordinal delta(good,okay) = (3+4) - (3+4)/2 = 3.5, delta(okay,bad) = 3.5, delta(good,bad) = 10 - 3 = 7
    # D_o*n = 2*3.5^2 + 2*3.5^2 = 49 ; D_e*n(n-1) = 2*(12*12.25 + 12*12.25 + 9*49) = 1470
    # alpha = 1 - 9*49/1470 = 0.7
    assert out["krippendorff_alpha"] == pytest.approx(0.7, abs=1e-14)
    # Fleiss: P_i = 1,0,1,1,0 -> P_bar .6 ; p = (.3,.4,.3) -> P_e .34 ; (0.6-0.34)/(1-0.34)
    assert out["fleiss_kappa"] == pytest.approx(0.26 / 0.66, abs=1e-14)
    # Cohen: p_o 3/5; A marginals g2 o2 b1, B g1 o2 b2 -> p_e 8/25 ; kappa = (15-8)/(25-8) = 7/17
    assert out["cohen_kappa"] == pytest.approx(7 / 17, abs=1e-14)
    # quadratic (positions 0,1,2): observed 2 ; expected sum w a_i b_j / n = 32/5 -> 1 - 10/32
    assert out["cohen_kappa_quadratic"] == pytest.approx(1 - 10 / 32, abs=1e-14)
    assert out["percent_agreement"] == pytest.approx(0.6, abs=1e-15)
    assert out["n_items"] == 5 and out["n_annotators"] == 2 and out["n_missing"] == 1
    for key in (
        "krippendorff_alpha",
        "fleiss_kappa",
        "cohen_kappa",
        "cohen_kappa_quadratic",
        "percent_agreement",
    ):
        assert out[f"{key}_ci"] is None or len(out[f"{key}_ci"]) == 2
    assert isinstance(out["notes"], list)


def test_agreement_nominal_without_scale_and_its_notes(write):
    out = agreement_report(write("tags.csv", TAGS), level="nominal")
    # nominal: off-diagonal coincidences 4; n^2 - sum n_c^2 = 100 - 34 = 66 -> 1 - 9*4/66
    assert out["krippendorff_alpha"] == pytest.approx(1 - 36 / 66, abs=1e-14)
    assert out["cohen_kappa_quadratic"] is None
    assert any("cohen_kappa_quadratic: undefined" in n for n in out["notes"])
    ordinal = agreement_report(write("tags.csv", TAGS), level="ordinal")
    assert any("lexicographically" in n for n in ordinal["notes"])  # bad < good < okay: say so


def test_numeric_scale_with_unused_middle_point(write):
    rows = ["item,annotator,value"]
    pairs = [(1, 1), (2, 2), (1, 2), (4, 5), (5, 5), (2, 4), (4, 4), (5, 4)]  # 3 never used
    for i, (a, b) in enumerate(pairs):
        rows += [f"{i},A,{a}", f"{i},B,{b}"]
    path = write("rel.csv", "\n".join(rows) + "\n")
    full = agreement_report(path, level="interval", values=parse_scale("1,2,3,4,5"), n_resamples=0)
    y1, y2 = zip(*pairs, strict=True)
    assert full["cohen_kappa_quadratic"] == pytest.approx(
        cohen_kappa_score(y1, y2, labels=[1, 2, 3, 4, 5], weights="quadratic"), abs=1e-14
    )
    observed_only = agreement_report(path, level="interval", n_resamples=0)
    assert abs(observed_only["cohen_kappa_quadratic"] - full["cohen_kappa_quadratic"]) > 0.01
    # interval alpha uses the numbers themselves, so the unused point changes nothing there
    assert observed_only["krippendorff_alpha"] == pytest.approx(full["krippendorff_alpha"], abs=1e-14)


def test_agreement_three_annotators_has_no_cohen(write):
    text = "item,annotator,value\n" + "".join(f"{i},{r},{(i + (r == 'C')) % 2}\n" for i in range(6) for r in "ABC")
    out = agreement_report(write("three.csv", text), level="nominal", n_resamples=0)
    assert out["cohen_kappa"] is None and out["n_annotators"] == 3
    assert any("exactly two raters, found 3" in n for n in out["notes"])
    # each item: two agree, one differs -> 2 of 6 ordered pairs agree
    assert out["percent_agreement"] == pytest.approx(1 / 3, abs=1e-15)


RANKS = """item,annotator,answer,rank
q1,A,a,1
q1,A,b,2
q1,A,c,3
q1,A,d,4
q1,B,a,1
q1,B,b,3
q1,B,c,2
q1,B,d,4
q1,C,a,2
q1,C,b,1
q1,C,c,3
q1,C,d,4
q2,A,a,1
q2,A,b,2
q2,A,c,3
q2,B,a,1
q2,B,b,1
q2,B,c,3
q3,A,a,1
q3,A,b,2
"""


def test_ranking_agreement_by_hand(write):
    out = json.loads(to_json(ranking_agreement_report(write("ranks.csv", RANKS))))
    # q1: W = 7/9 (rank sums 4, 6, 8, 12). q2: B ties a,b -> ranks (1.5, 1.5, 3); rank sums (2.5, 3.5, 6),
    # mean 4, S = 2.25 + .25 + 4 = 6.5 ; T_B = 6 ; W = 12*6.5 / (4*24 - 2*6) = 78/84. q3: one ranker.
    assert out["kendall_w_per_item"]["q1"] == pytest.approx(7 / 9, abs=1e-15)
    assert out["kendall_w_per_item"]["q2"] == pytest.approx(78 / 84, abs=1e-15)
    assert out["kendall_w_per_item"]["q3"] is None
    assert out["kendall_w"] == pytest.approx((7 / 9 + 78 / 84) / 2, abs=1e-15)
    # tau-b q1: AB 2/3, AC 2/3, BC 1/3 (BC: pairs ab d, ac c, ad c, bc d, bd c, cd c -> 4-2=2 of 6) -> 5/9
    # q2: A (1,2,3) vs B (1.5,1.5,3): 2 / sqrt(3*2)
    assert out["mean_pairwise_tau_b"] == pytest.approx((5 / 9 + 2 / sqrt(6)) / 2, abs=1e-15)
    assert out["n_items"] == 2 and out["n_annotators"] == 3
    assert any("q3" in n and "only one ranker" in n for n in out["notes"])


RANKINGS = """item,annotator,answer,rank,system
q1,A,q1a,1,x
q1,A,q1b,2,y
q1,A,q1c,3,z
q1,A,q1d,4,ref
q1,B,q1a,2,x
q1,B,q1b,1,y
q1,B,q1c,3,z
q1,B,q1d,4,ref
q2,A,q2a,1,x
q2,A,q2b,3,y
q2,A,q2c,2,z
q2,A,q2d,4,ref
q2,B,q2a,1,x
q2,B,q2b,2,y
q2,B,q2c,3,z
q2,B,q2d,4,ref
"""
SCORES = """item,system,score
q1,x,0.9
q1,y,0.8
q1,z,0.1
q1,ref,1.0
q2,x,0.7
q2,y,0.6
q2,z,0.5
q2,ref,1.0
"""


def test_metric_correlation_by_hand(write):
    r, s = write("r.csv", RANKINGS), write("s.csv", SCORES)
    out = json.loads(to_json(metric_correlation_report(r, s, exclude=["ref"])))
    # see test_correlation.py for the derivations: per-item tau-b 2/sqrt(6) both; accuracy 4/6;
    # system means: ranks x 1.25, y 2, z 2.75 ; scores x .8, y .7, z .3
    assert out["segment_tau_b"] == pytest.approx(2 / sqrt(6), abs=1e-15)
    assert out["pairwise_accuracy"] == pytest.approx(4 / 6, abs=1e-15)
    assert out["system_pearson"] == pytest.approx(pearsonr([-1.25, -2, -2.75], [0.8, 0.7, 0.3]).statistic)
    assert out["system_spearman"] == 1.0
    assert out["n_items"] == 2 and out["n_systems"] == 3
    assert set(out["bradley_terry"]) == {"x", "y", "z"}
    assert out["bradley_terry"]["x"] > out["bradley_terry"]["y"] > out["bradley_terry"]["z"]
    assert sum(out["bradley_terry"].values()) == pytest.approx(0.0, abs=1e-9)
    assert len(out["segment_tau_b_ci"]) == 2
    text = format_text(out)
    assert "segment_tau_b" in text and "bradley_terry:" in text


@pytest.mark.parametrize(
    ("name", "text", "fragments"),
    [
        ("cols.csv", "item,annotator,val\n1,A,1\n", ["cols.csv", "line 1", "'value'"]),
        (
            "scale.csv",
            "item,annotator,value\n1,A,good\n1,B,great\n",
            ["scale.csv", "line 3", "'value'", "great"],
        ),
        ("empty_item.csv", "item,annotator,value\n1,A,good\n,B,good\n", ["line 3", "'item'", "empty"]),
        ("dup.csv", "item,annotator,value\n1,A,good\n1,A,okay\n", ["line 3", "duplicate"]),
        ("binary.csv", b"\xff\xfe\x00\x81\x00garbage\x00\xff", ["binary.csv"]),
        # what a person can act on, not the codec's or the parser's own words
        (
            "latin1.csv",
            "item,annotator,value\n1,A,good\n1,Bé,good\n".encode("latin-1"),
            ["line 3: not UTF-8 text (byte 4)"],
        ),
        ("blank.csv", b"", ["blank.csv: the file is empty"]),
        ("wide.csv", "item,annotator,value\n1,A,good\n1,B,good,extra\n", ["line 3: 4 fields where the header has 3"]),
        ("quote.csv", 'item,annotator,value\n1,A,good\n"1,B,good\n', ["line 3: a quoted field is never closed"]),
    ],
)
def test_agreement_input_errors_name_file_line_and_column(write, name, text, fragments):
    path = write(name, text)
    with pytest.raises(StatsInputError) as err:
        agreement_report(path, level="nominal", values=["good", "okay", "bad"] if "scale" in name else None)
    for frag in fragments:
        assert frag in str(err.value)


def test_missing_file_and_bad_rank_and_bad_score(write, tmp_path):
    with pytest.raises(StatsInputError, match="no such file"):
        ranking_agreement_report(tmp_path / "nope.csv")
    bad_rank = write("r.csv", "item,annotator,answer,rank\nq,A,a,1\nq,A,b,first\n")
    with pytest.raises(StatsInputError, match=r"r\.csv: line 3, column 'rank': 'first' is not a number"):
        ranking_agreement_report(bad_rank)
    r = write("rs.csv", RANKINGS)
    s = write("ss.csv", SCORES.replace("0.6", "n/a"))
    with pytest.raises(StatsInputError, match=r"ss\.csv: line 7, column 'score'"):
        metric_correlation_report(r, s)
    no_system = write("nosys.csv", RANKS)
    with pytest.raises(StatsInputError, match="'system'"):
        metric_correlation_report(no_system, s)


def test_json_has_no_nan_for_undefined_figures(write):
    path = write("one.csv", "item,annotator,value\n1,A,2\n2,A,3\n")
    text = to_json(agreement_report(path, level="interval"))
    out = json.loads(text)
    assert "NaN" not in text
    assert out["krippendorff_alpha"] is None and out["percent_agreement"] is None
    assert any("only 1 rater" in n for n in out["notes"])
