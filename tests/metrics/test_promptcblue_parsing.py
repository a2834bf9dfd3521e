"""PromptCBLUE: the official parsing rules and metric details, on hand-made texts with hand-derived answers."""

from __future__ import annotations

import pytest

from metrics.promptcblue import TASKS_BY_NAME, GoldSample, ScoringError, parse, score
from metrics.promptcblue.scoring import classification_f1, instance_key, rouge_text
from metrics.promptcblue.text2dt import TreeCounts, tree_counts

T = TASKS_BY_NAME


def test_entities_read_full_width_punctuation_only():
    text = "上述句子中的实体包含：\n疾病实体: 肺炎\n症状实体：发热 ， 咳嗽,咳痰\n手术实体：切除"
    parsed = parse(T["CMeEE-V2"], text, ["疾病", "症状"])
    # "疾病实体:" starts with "疾病实体" but is not "疾病实体：": the whole rest is one mention.
    assert parsed.answer == [
        {"entity": "疾病实体: 肺炎", "type": "疾病"},
        {"entity": "发热", "type": "症状"},
        {"entity": "咳嗽,咳痰", "type": "症状"},
    ]
    assert parsed.misses == ("手术实体：切除",)  # a type outside the choices; the lead line is no miss


def test_relations_follow_the_code_not_its_comment():
    text = "具有临床表现关系的头尾实体对如下：头实体为肺炎，尾实体为发热。头实体：肺炎，尾实体：咳嗽。"
    parsed = parse(T["CMeIE-V2"], text)
    assert parsed.answer == [{"predicate": "临床表现", "subject": "肺炎", "object": "发热"}]


def test_events_skip_the_first_line_fill_defaults_and_keep_list_order():
    text = "主体词：咳嗽\n主体词：疼痛；描述词：阵发性，持续性\n\n不是事件"
    parsed = parse(T["CHIP-CDEE"], text)
    default = {"主体词": "", "发生状态": "", "描述词": [], "解剖部位": []}
    assert parsed.answer == [
        {"主体词": "疼痛", "描述词": ["阵发性", "持续性"], "发生状态": "", "解剖部位": []},
        default,  # the empty line is an event too
        default,
    ]
    # The dropped first line would have been an event: a miss; the unreadable last line too.
    assert parsed.misses == ("主体词：咳嗽", "不是事件")
    a = instance_key({"主体词": "疼痛", "描述词": ["阵发性", "持续性"]})
    b = instance_key({"主体词": "疼痛", "描述词": ["持续性", "阵发性"]})
    assert a != b


def test_normalisation_reads_the_last_line_within_the_choices():
    parsed = parse(T["CHIP-CDN"], "胃炎\n胃炎，胃炎，胃癌", ["胃炎", "慢性胃炎"])
    assert parsed.answer == [{"entity": "胃炎", "type": "normalization"}]
    assert parsed.misses == ("胃炎",)


def test_findings_default_conclusion_and_two_colon_lines():
    choices = ["患有该症状", "没有患有该症状"]
    parsed = parse(T["IMCS-V2-SR"], "头\n咳嗽：不清楚\n发热：患有该症状：是\n鼻塞：患有该症状", choices)
    assert parsed.answer == [
        {"entity": "咳嗽", "attr": "无法根据上下文确定病人是否患有该症状"},
        {"entity": "鼻塞", "attr": "患有该症状"},
    ]
    assert parsed.misses == ("发热：患有该症状：是",)
    assert parse(T["CHIP-MDCFNPC"], "头\n咳嗽：有", choices).answer == [{"entity": "咳嗽", "attr": "不标注"}]


def test_report_sections_last_one_wins():
    parsed = parse(T["IMCS-V2-MRG"], "  报告如下：\n诊断：感冒\n诊断：肺炎。诊断：支气管炎\n其他：无")
    assert parsed.answer == {"诊断": "支气管炎"}
    assert parsed.misses == ("其他：无",)


def test_causal_lines_the_official_parser_raises_on_are_parse_misses():
    text = "因果关系三元组如下：\n头实体：吸烟；尾实体：肺癌\n吸烟导致肺癌\n条件关系三元组如下：\n头实体：长期；尾三元组：头实体：熬夜；尾实体：失眠；关系：因果关系"
    parsed = parse(T["CMedCausal"], text)
    assert parsed.answer == [
        {"predicate": "因果关系", "subject": "吸烟", "object": "肺癌"},
        {
            "predicate": "条件关系",
            "subject": "长期；尾三元组：",
            "object": {"predicate": "因果关系", "subject": "熬夜", "object": "失眠"},
        },
    ]
    assert parsed.misses == ("吸烟导致肺癌",)
    assert parsed.official_fails


def test_text2dt_triples_are_literals_never_code(tmp_path):
    marker = tmp_path / "ran"
    payload = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"
    text = f"决策树：\n节点1：role=D；logical_rel=null；triples={payload}"
    parsed = parse(T["Text2DT"], text)
    assert parsed.answer == [{"role": "D", "logical_rel": "null", "triples": []}]
    assert not marker.exists()
    assert parse(T["Text2DT"], "").answer == [{"role": "D", "logical_rel": "null", "triples": []}]
    odd = parse(T["Text2DT"], "节点1：role=D；triples=[('a', 'b'), ('A', 'B', 'C'), (1, 2, 3)]")
    # Without "；logical_rel=" the role runs to the end of the line (official split), logical_rel is "null".
    role = "D；triples=[('a', 'b'), ('A', 'B', 'C'), (1, 2, 3)]"
    assert odd.answer == [{"role": role, "logical_rel": "null", "triples": [("A", "B", "C")]}]
    assert odd.official_fails  # the official scorer would call (1).lower()


def test_tree_edit_distance_by_hand():
    gold = [
        {"role": "C", "logical_rel": "null", "triples": [("p", "r", "a")]},
        {"role": "D", "logical_rel": "null", "triples": [("p", "r", "b")]},
        {"role": "D", "logical_rel": "null", "triples": [("p", "r", "c")]},
    ]
    # A single leaf against a condition with two leaves: the root differs by role and triples (1 + 2), then both
    # gold leaves are deleted, each at role 1 + logical_rel 0 + one triple = 2. Max: 1 + 2*1 + 3 + 2*3 = 12.
    assert tree_counts([{"role": "D", "logical_rel": "null", "triples": [("P", "R", "X")]}], gold) == TreeCounts(7, 12)
    assert tree_counts(gold, gold) == TreeCounts(0, 18)


def test_classification_against_scikit_learn():
    from sklearn.metrics import classification_report

    gold = ["a", "b", "b", "c", "a"]
    pred = ["a", "b", "x", "c", "b"]
    report = classification_report(gold, pred, output_dict=True, zero_division=0)
    assert classification_f1(gold, pred, macro=True) == pytest.approx(report["macro avg"]["f1-score"], abs=1e-12)
    assert classification_f1(gold, pred, macro=False) == pytest.approx(report["weighted avg"]["f1-score"], abs=1e-12)


def test_empty_classification_answer_is_the_first_label():
    gold = [GoldSample("1", T["KUAKE-IR"], "相关"), GoldSample("2", T["KUAKE-IR"], "不相关")]
    result = score(gold, {"1": "", "2": " "}, present_tasks=True)
    # Both read as 相关: 相关 F1 = 2*1/(1+2) = 2/3 (support 1), 不相关 F1 = 0 (support 1): weighted 1/3.
    assert result.report["scoreJson"]["KUAKE-IR-Micro-F1"] == pytest.approx(100 / 3)
    assert result.report["comparable_to_official"] is False


def test_rouge_text_is_split_lowered_and_accent_stripped():
    assert rouge_text("Café咖啡，OK") == "cafe 咖 啡 ， ok"
    assert rouge_text("   ") == "无 。"


def test_refusals():
    gold = [GoldSample("1", T["CHIP-STS"], "是的")]
    with pytest.raises(ScoringError, match="'1'.*no prediction"):
        score(gold, {})
    with pytest.raises(ScoringError, match="no sample of IMCS-V2-DAC"):
        score(gold, {"1": "是的"})
    with pytest.raises(ScoringError, match="gold answer is empty"):
        score([GoldSample("1", T["CHIP-STS"], " ")], {"1": "是的"}, present_tasks=True)


def test_extraction_tasks_missing_from_gold_count_as_zero_in_the_overall():
    from metrics.promptcblue import TASKS

    gold = [GoldSample(t.name, t, t.labels[0] if t.labels else "无") for t in TASKS if t.kind != "extraction"]
    tree = "节点1：role=D；logical_rel=null；triples=[('a', 'b', 'c')]"
    texts = {"Text2DT": tree, "IMCS-V2-MRG": "报告：\n诊断：感冒"}
    gold = [GoldSample(g.sample_id, g.task, texts.get(g.task.name, g.target)) for g in gold]
    report = score(gold, {g.sample_id: g.target for g in gold}).report
    # 10 non-extraction tasks answered perfectly (ROUGE-L of identical texts: 1 - 1e-9 rounding in rouge-chinese),
    # 8 extraction tasks absent: 0.
    assert report["scoreJson"]["CMeEE-V2-Micro-F1"] == 0
    assert report["score"] == pytest.approx(10 / 18 * 100, abs=1e-5)
