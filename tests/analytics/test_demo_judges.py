"""The demo imports two judges' scores into the demo study, so the study report shows a cluster split (the careful
judge above the length-biased one) and a style effect."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from analytics.models import JudgeScore, Report
from analytics.presentation.judges import judge_context

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_demo_has_both_judges_a_cluster_split_and_a_style_effect(capsys, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")
    out = capsys.readouterr().out
    assert "Judges' scores imported into “Demo study”: demo-judge-careful" in out
    judges = set(JudgeScore.objects.values_list("judge", flat=True))
    assert judges == {"demo-judge-careful", "demo-judge-verbose"}
    result = Report.objects.get(kind="study").result
    figures = result["judges"]["judges"]
    assert figures["demo-judge-careful"]["cluster"] == 1
    assert figures["demo-judge-verbose"]["cluster"] > 1
    assert figures["demo-judge-careful"]["acc_eq"] > figures["demo-judge-verbose"]["acc_eq"]
    assert {"semantic", "bleu", "rouge"} <= set(figures)  # the built-in metrics join as judges
    context = judge_context(result)
    assert "demo-judge-verbose does significantly worse than the best cluster" in context["judge_sentence"]
    length = result["style_control"]["style_coefficients"]["length"]
    assert length["value"] is not None and length["ci"][0] > 0  # longer answers win at equal quality
    assert context["style_sentence"].startswith("At equal quality, longer answers win")
    # every section of the careful judge's card has figures; the verbose judge, reading its first answer when its
    # scores tie, leans to the first position
    card = result["judge_cards"]["judges"]["demo-judge-careful"]
    assert card["calibration"]["ece"] is not None and card["self_preference"]["effect"] is not None
    assert card["abstention"]["overall"]["judge"]["count"] > 0
    assert card["position"]["flips"]["n"] > 0
    verbose = result["judge_cards"]["judges"]["demo-judge-verbose"]["position"]["first_position"]
    assert verbose["rate"] > 0.5
    assert result["judge_cards"]["judges"]["semantic"]["builtin"]
