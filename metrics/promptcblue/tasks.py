"""The 18 PromptCBLUE tasks: their names, how each is scored and the key of its headline figure in ``scoreJson``.

The order is the one of the official ``evaluate.py`` (its ``scores`` dict): the overall is summed in that order and
``scoreJson`` lists the keys in it, so a report compared key by key or printed reads as the official one.
"""

from __future__ import annotations

from dataclasses import dataclass

EXTRACTION = "extraction"
CLASSIFICATION = "classification"
GENERATION = "generation"
TREE = "text2dt"


@dataclass(frozen=True)
class Task:
    name: str
    kind: str
    headline_key: str
    # The label an empty answer becomes (the first of the official evaluator's label list); classification only.
    empty_label: str | None = None
    # The official label list, kept to tell an invented label (a parse miss) from a known one.
    labels: tuple[str, ...] = ()


_CTC_LABELS = (
    "非上述类型", "疾病", "症状(患者感受)", "体征(医生检测）", "怀孕相关", "肿瘤进展", "疾病分期", "过敏耐受",
    "器官组织状态", "预期寿命", "口腔相关", "药物", "治疗或手术", "设备", "护理", "诊断", "实验室检查", "风险评估",
    "受体状态", "年龄", "特殊病人特征", "读写能力", "性别", "教育情况", "居住情况", "种族", "知情同意",
    "参与其它试验", "研究者决定", "能力", "伦理审查", "依存性", "成瘾行为", "睡眠", "锻炼", "饮食", "酒精使用",
    "性取向", "吸烟状况", "献血", "病例来源", "残疾群体", "健康群体", "数据可及性", "含有多个类别",
)  # fmt: skip
_DAC_LABELS = (
    "非上述类型", "关于症状的询问", "关于症状的回答", "关于病因的询问", "关于病因的回答", "关于个人基本信息的询问",
    "关于个人基本信息的回答", "关于已有检查和治疗的提问", "关于已有检查和治疗的回答", "关于用药建议的提问",
    "关于用药建议的解答", "关于就医建议的提问", "关于就医建议的解答", "关于注意事项的提问", "关于注意事项的解答",
    "给出诊断",
)  # fmt: skip
_QIC_LABELS = (
    "非上述类型", "病情诊断", "病因分析", "治疗方案", "就医建议", "指标解读", "疾病描述", "后果表述", "注意事项",
    "功效作用", "医疗费用",
)  # fmt: skip


def _extraction(name: str) -> Task:
    return Task(name, EXTRACTION, f"{name}-Micro-F1")


def _classification(name: str, headline: str, labels: tuple[str, ...]) -> Task:
    return Task(name, CLASSIFICATION, f"{name}-{headline}", empty_label=labels[0], labels=labels)


TASKS: tuple[Task, ...] = (
    _extraction("CMeEE-V2"),
    _extraction("CMeIE-V2"),
    _extraction("CHIP-CDN"),
    _extraction("CHIP-CDEE"),
    _extraction("IMCS-V2-NER"),
    _extraction("CHIP-MDCFNPC"),
    _extraction("IMCS-V2-SR"),
    _classification("IMCS-V2-DAC", "Macro-F1", _DAC_LABELS),
    Task("IMCS-V2-MRG", GENERATION, "IMCS-V2-MRG-RougeL"),
    _classification("CHIP-CTC", "Macro-F1", _CTC_LABELS),
    # Deliberate: these four are headlined "Micro-F1" by the official code but computed as scikit-learn's
    # weighted-average F1 (evaluate.py passes return_macro=False, which reads "weighted avg").
    _classification("CHIP-STS", "Micro-F1", ("是的", "不是")),
    _classification("KUAKE-IR", "Micro-F1", ("相关", "不相关")),
    _classification("KUAKE-QIC", "Macro-F1", _QIC_LABELS),
    _classification(
        "KUAKE-QQR", "Micro-F1", ("完全一致", "后者是前者的语义子集", "后者是前者的语义父集", "语义无直接关联")
    ),
    _classification(
        "KUAKE-QTR", "Micro-F1", ("完全不匹配或者没有参考价值", "很少匹配有一些参考价值", "部分匹配", "完全匹配")
    ),
    Task("MedDG", GENERATION, "MedDG-RougeL"),
    Task("Text2DT", TREE, "Text2DT-TreeLenvRatio"),
    _extraction("CMedCausal"),
)

TASKS_BY_NAME: dict[str, Task] = {task.name: task for task in TASKS}

# The official toy examples (datasets/PromptCBLUE/toy_examples) still call CMeIE-V2 by its first name; the official
# parser raises on it. Same template, same task: the portal reads the old name as the new one.
TASK_ALIASES: dict[str, str] = {"CMeIE": "CMeIE-V2"}


def task_named(name: str) -> Task | None:
    """The task a gold record's ``task_dataset`` names, the old CMeIE name included; None if unknown."""
    return TASKS_BY_NAME.get(TASK_ALIASES.get(name, name))


#: Each task in words, in English and as the CBLUE benchmark names it in Chinese (for pages and plots).
TASK_TITLES: dict[str, tuple[str, str]] = {
    "CMeEE-V2": ("medical entity recognition", "医学实体识别"),
    "CMeIE-V2": ("medical relation extraction", "医学关系抽取"),
    "CHIP-CDN": ("diagnosis normalisation", "临床术语标准化"),
    "CHIP-CDEE": ("clinical event extraction", "临床发现事件抽取"),
    "IMCS-V2-NER": ("entities in a consultation", "医疗对话实体识别"),
    "CHIP-MDCFNPC": ("findings and their status in a consultation", "医疗对话临床发现阴阳性判别"),
    "IMCS-V2-SR": ("symptoms in a consultation", "医疗对话症状识别"),
    "IMCS-V2-DAC": ("dialogue act of a consultation turn", "医疗对话意图识别"),
    "IMCS-V2-MRG": ("medical report from a consultation", "医疗报告生成"),
    "CHIP-CTC": ("clinical trial criterion type", "临床试验筛选标准分类"),
    "CHIP-STS": ("same meaning of two questions", "医学句子语义相似度"),
    "KUAKE-IR": ("search result relevance", "医学搜索检索相关性"),
    "KUAKE-QIC": ("search query intent", "医学搜索意图分类"),
    "KUAKE-QQR": ("relation of two search queries", "医学搜索查询相关性"),
    "KUAKE-QTR": ("query and title match", "医学搜索查询与标题相关性"),
    "MedDG": ("doctor's reply in a dialogue", "医疗对话生成"),
    "Text2DT": ("clinical decision tree from text", "诊疗决策树抽取"),
    "CMedCausal": ("medical causal relations", "医学因果关系抽取"),
}
