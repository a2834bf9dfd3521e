"""How the PromptCBLUE pages put figures and parsed structures into words (no database)."""

from __future__ import annotations

from analytics.presentation.promptcblue import BoardCell, stats_text, structure_blocks, task_label


def test_a_figure_is_rounded_to_what_its_interval_supports():
    assert BoardCell(71.587, (61.2, 78.4), 89).text == "72"  # an interval 17 points wide: whole numbers
    assert BoardCell(71.587, (71.1, 71.9), 89).text == "71.6"
    assert BoardCell(71.587, (61.2, 78.4), 89).interval == "61 – 78"
    assert (
        BoardCell(71.587, None, 1).text == "71.59" and BoardCell(71.587, None, 1).interval == "one sample: no interval"
    )


def test_an_interval_of_no_width_is_not_shown_as_certainty():
    cell = BoardCell(100.0, (100.0, 100.0), 5)
    assert cell.interval == "not estimable from 5 samples" and cell.text == "100"


def test_a_task_without_gold_says_why_it_counts_zero():
    cell = BoardCell(0.0, None, 0, note="no gold sample: counts 0 in the official overall")
    assert cell.interval == "no gold sample: counts 0 in the official overall"


def test_extraction_instances_are_marked_matched_missed_or_not_in_the_gold():
    gold = [{"entity": "发热", "type": "临床表现"}, {"entity": "咳嗽", "type": "临床表现"}]
    prediction = [{"entity": "发热", "type": "临床表现"}, {"entity": "头痛", "type": "临床表现"}]
    blocks = structure_blocks("extraction", gold, prediction)
    assert blocks["columns"] == ["entity", "type"]
    assert [row["status"] for row in blocks["gold"]] == ["matched", "missed"]
    assert [row["status"] for row in blocks["prediction"]] == ["matched", "not in the gold"]
    assert blocks["gold"][1]["values"] == ["咳嗽", "临床表现"]


def test_order_sensitive_lists_do_not_match_in_another_order():
    # CHIP-CDEE's 描述词 is a list compared as written by the official evaluator
    gold = [{"主体词": "疼痛", "描述词": ["胀痛", "持续性"]}]
    prediction = [{"主体词": "疼痛", "描述词": ["持续性", "胀痛"]}]
    blocks = structure_blocks("extraction", gold, prediction)
    assert blocks["gold"][0]["status"] == "missed" and blocks["gold"][0]["values"][1] == "胀痛、持续性"


def test_labels_sections_texts_and_trees():
    assert structure_blocks("classification", "相同", "不同") == {
        "kind": "label", "gold": "相同", "prediction": "不同", "matched": False,
    }  # fmt: skip
    sections = structure_blocks("generation", {"主诉": "发热", "诊断": "感冒"}, {"主诉": "发热", "建议": "休息"})
    assert [row["section"] for row in sections["rows"]] == ["主诉", "诊断", "建议"]
    assert sections["rows"][1]["prediction"] == ""
    assert structure_blocks("generation", "多喝水", "")["kind"] == "text"
    tree = [{"role": "C", "triples": [["患者", "临床表现", "发热"]], "logical_rel": "null"}]
    blocks = structure_blocks("text2dt", tree, [])
    assert blocks["gold"] == [{"role": "C", "triples": ["（患者，临床表现，发热）"], "logical_rel": "null"}]
    assert blocks["prediction"] == []


def test_what_a_sample_contributes_is_said_in_words():
    assert stats_text("extraction", [1, 2, 3]).startswith("1 matched, 2 not in the gold, 3 missed")
    assert stats_text("generation", [0.5, 0.25]) == "ROUGE-L F by characters: 0.500, 0.250"
    assert stats_text("text2dt", {"edit": 2, "max_edit": 10}) == "tree edit distance 2 of at most 10"
    assert task_label("CMeEE-V2") == "CMeEE-V2 医学实体识别"
