"""Generated text to structure, rule for rule as the official ``post_generate_process.py`` does it, per task.

Every parser returns a :class:`Parsed`: the structure the official scorer compares (same dict keys, same key order,
same values), the generated lines that matched no template of the task ("parse misses"), and whether the official
script would have raised on this text. The official parser splits on full-width punctuation only (``：``, ``，``,
``；``, ``。``; its half-width normalisation is commented out), so an answer written with ``:`` or ``,`` is read
differently or not at all: deliberate, that is what the official score counts.

A parse miss is a non-blank line that added nothing to the structure. The first line of the tasks whose answers
open with a lead sentence ("上述句子中的实体包含：") is not a miss when it matches no template; where the official
parser drops the first line unread (CHIP-CDEE, CHIP-MDCFNPC, IMCS-V2-SR, IMCS-V2-MRG), it is a miss when it would have
been read, since that is an answer the score lost.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .text2dt import DEFAULT_TREE

MRG_SECTIONS = ("主诉", "现病史", "辅助检查", "既往史", "诊断", "建议")
CDEE_KEYS = ("主体词", "发生状态", "描述词", "解剖部位")
_CDEE_LIST_KEYS = ("描述词", "解剖部位")
MDCFNPC_DEFAULT = "不标注"
SR_DEFAULT = "无法根据上下文确定病人是否患有该症状"
CAUSAL_STOP = "给定的文本没有指定关系的三元组"
TEXT2DT_LEAD = "根据给定的指南文本抽取的诊疗决策树"


@dataclass(frozen=True)
class Parsed:
    answer: object
    misses: tuple[str, ...] = ()
    # True where the official post_generate_process.py raises on this text (it then scores nothing at all); the
    # portal reads such a line as a parse miss instead and says so.
    official_fails: bool = False


def _choices(answer_choices) -> list:
    return answer_choices if isinstance(answer_choices, list) else []


def parse_entities(text: str, answer_choices) -> Parsed:
    """CMeEE-V2 and IMCS-V2-NER: ``{type}实体：a，b`` lines, one per type of the choices."""
    lines = text.split("\n")
    choices = _choices(answer_choices)
    read = [False] * len(lines)
    entities = []
    # Choices outside, lines inside, as the official loops nest: the entity order follows the choices.
    for choice in choices:
        for index, piece in enumerate(lines):
            if piece.startswith(f"{choice}实体"):
                read[index] = True
                # Deliberate: replace() drops every "{type}实体：" of the line, and a half-width colon is not one.
                mentions = piece.replace(f"{choice}实体：", "").split("，")
                for mention in mentions:
                    if mention.strip():
                        entities.append({"entity": mention.strip(), "type": choice})
    misses = tuple(line for index, line in enumerate(lines) if line.strip() and not read[index] and index != 0)
    return Parsed(entities, misses)


def parse_relations(text: str) -> Parsed:
    """CMeIE-V2: ``具有{p}关系的头尾实体对如下：头实体为s，尾实体为o。…`` per line.

    The official comment announces ``头实体：s，尾实体：o``; the code reads ``头实体为``/``尾实体为``. The code wins.
    """
    spos = []
    misses = []
    for line in text.split("\n"):
        # Deliberate: the predicate is whatever stands between the first two characters and "关系的头尾实体对",
        # so a line without that phrase still yields triples, under a predicate made of its own text.
        predicate = line.split("关系的头尾实体对")[0][2:].strip()
        body = line.replace(f"具有{predicate}关系的头尾实体对如下：", "")
        found = 0
        for spo_str in body.split("。"):
            parts = spo_str.split("，尾实体为")
            if len(parts) < 2:
                continue
            head, tail = parts[:2]
            spos.append(
                {
                    "predicate": predicate,
                    "subject": head.replace("头实体为", "").strip(),
                    "object": tail.replace("尾实体为", "").strip(),
                }
            )
            found += 1
        if not found and line.strip() and not (line.strip().startswith("具有") and "关系的头尾实体对" in line):
            misses.append(line)
    return Parsed(spos, tuple(misses))


def parse_causal(text: str) -> Parsed:
    """CMedCausal: section headers name the relation; ``头实体：s；尾实体：o`` lines, or for 条件关系
    ``头实体：s；尾三元组：头实体：a；尾实体：b；关系：因果关系`` (the object is then a triple)."""
    spos = []
    misses = []
    fails = False
    relation = None  # no header read yet: the official code keeps None, which json.dumps writes as null
    lines = text.split("\n")
    for index, raw in enumerate(lines):
        line = raw.strip()
        if "因果关系三元组如下" in line:
            relation = "因果关系"
            continue
        if "条件关系三元组" in line:
            relation = "条件关系"
            continue
        if "上下位关系" in line:
            relation = "上下位关系"
            continue
        if CAUSAL_STOP in line:
            misses.extend(rest for rest in lines[index + 1 :] if rest.strip())
            break
        if not line:
            continue
        triple = _causal_triple(line, relation)
        if triple is None:
            misses.append(raw)
            fails = True
        else:
            spos.append(triple)
    return Parsed(spos, tuple(misses), fails)


def _causal_triple(line: str, relation):
    # Deliberate: the head is cut at "；尾实体：" only, so a conditional head keeps "；尾三元组：" and what follows
    # up to the nested "头实体：" - in gold and prediction alike, so they still match.
    after_head = line.split("头实体：")
    if len(after_head) < 2:
        return None
    head = after_head[1].split("；尾实体：")[0]
    if relation != "条件关系":
        tail = line.split("；尾实体：")
        if len(tail) < 2:
            return None
        return {"predicate": relation, "subject": head, "object": tail[1]}
    nested = line.split("；尾三元组：")
    if len(nested) < 2:
        return None
    nested_text = nested[1]
    nested_head = nested_text.split("头实体：")
    nested_tail = nested_text.split("；尾实体：")
    nested_relation = nested_text.split("；关系：")
    if len(nested_head) < 2 or len(nested_tail) < 2 or len(nested_relation) < 2:
        return None
    inner_relation = nested_relation[1]
    if inner_relation != "因果关系":  # the official code asserts it
        return None
    inner = {
        "predicate": inner_relation,
        "subject": nested_head[1].split("；尾实体：")[0],
        "object": nested_tail[1].split("；关系：")[0],
    }
    return {"predicate": relation, "subject": head, "object": inner}


def parse_tree(text: str) -> Parsed:
    """Text2DT: one node per line, ``…：role=C；logical_rel=and；triples=[(s, p, o), …]``, in preorder.

    Triples are read with :func:`ast.literal_eval`; the official code calls ``eval`` (which would run a model's
    text). Both refuse names and calls alike; only arithmetic on literals (``[…] * 2``) differs, and that never is a
    tree.
    """
    nodes = []
    misses = []
    fails = False
    for line in text.split("\n"):
        if TEXT2DT_LEAD in line or not line:
            continue
        role_parts = line.split("：role=")
        if len(role_parts) < 2:
            misses.append(line)
            fails = True
            continue
        role = role_parts[1].split("；logical_rel=")[0]
        rel_parts = line.split("；logical_rel=")
        # Deliberate: a node without logical_rel gets the string "null", as in the official except branch.
        logical_rel = rel_parts[1].split("；triples=")[0] if len(rel_parts) > 1 else "null"
        triples, node_fails = _read_triples(line)
        fails = fails or node_fails
        nodes.append({"role": role, "logical_rel": logical_rel, "triples": triples})
    if not nodes:
        nodes = [dict(node) for node in DEFAULT_TREE]
    return Parsed(nodes, tuple(misses), fails)


def _read_triples(line: str) -> tuple[list, bool]:
    """The node's triples, and whether the official scorer would raise on them (an element that is not text)."""
    parts = line.split("；triples=")
    if len(parts) < 2:
        return [], False
    try:
        value = ast.literal_eval(parts[1])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return [], False
    if not isinstance(value, list):
        return [], False
    kept = []
    fails = False
    for triple in value:
        try:
            size = len(triple)
        except TypeError:
            # The official loop runs inside one try: a triple without a length empties the whole node.
            return [], False
        if size != 3:
            continue
        try:
            elements = (triple[0], triple[1], triple[2])
        except (KeyError, IndexError, TypeError):
            elements = ()
        if not all(isinstance(part, str) for part in elements) or not elements:
            # The official scorer lower-cases each element and raises on anything but text: no official score.
            # The portal drops that one triple.
            fails = True
            continue
        kept.append(triple)
    return kept, fails


def parse_normalisation(text: str, answer_choices) -> Parsed:
    """CHIP-CDN: the last line only, split on ``，``; only names among the choices are kept, once each."""
    lines = text.split("\n")
    choices = _choices(answer_choices)
    names = [w.strip() for w in lines[-1].split("，") if w.strip()]
    kept = [w for w in names if w in choices]
    # Deliberate: the official code goes through set(); the order does not matter to a set comparison.
    answers = [{"entity": w, "type": "normalization"} for w in dict.fromkeys(kept)]
    misses = [line for line in lines[:-1] if line.strip()]
    if lines[-1].strip() and not kept and lines[-1].strip() != "没有对应的标准化实体":
        misses.append(lines[-1])
    return Parsed(answers, tuple(misses))


def _cdee_event(line: str) -> tuple[dict, bool]:
    event: dict = {}
    for attr in line.split("；"):
        # Deliberate: the attribute text is rewritten key after key, so "主体词：描述词：x" sets both.
        for key in CDEE_KEYS:
            if attr.startswith(f"{key}："):
                attr = attr.replace(f"{key}：", "").strip()
                if key in _CDEE_LIST_KEYS:
                    event[key] = [w.strip() for w in attr.split("，") if w.strip()]
                else:
                    event[key] = attr
    matched = bool(event)
    for key in CDEE_KEYS:
        if key not in event:
            event[key] = [] if key in _CDEE_LIST_KEYS else ""
    return event, matched


def parse_events(text: str) -> Parsed:
    """CHIP-CDEE: the first line is dropped; every other line is an event, ``主体词：…；发生状态：…；描述词：a，b；
    解剖部位：…``. Deliberate: every line makes an event, an empty or unreadable one too (all fields at their
    defaults: "" and []), and the list fields stay in the written order, which the comparison keeps."""
    lines = text.split("\n")
    events = []
    misses = []
    if lines and _cdee_event(lines[0])[1]:
        misses.append(lines[0])
    for line in lines[1:]:
        event, matched = _cdee_event(line)
        events.append(event)
        if not matched and line.strip():
            misses.append(line)
    return Parsed(events, tuple(misses))


def parse_findings(text: str, answer_choices, default: str) -> Parsed:
    """CHIP-MDCFNPC and IMCS-V2-SR: the first line dropped, then ``finding：conclusion`` lines; a conclusion that is
    not one of the choices becomes the task's default (deliberate: the line is still counted)."""
    lines = text.split("\n")
    choices = _choices(answer_choices)
    findings = []
    misses = []
    first = lines[0].split("：")
    if len(first) == 2 and first[1].strip():
        misses.append(lines[0])
    for line in lines[1:]:
        parts = line.split("：")
        if len(parts) != 2:
            if line.strip():
                misses.append(line)
            continue
        finding, conclusion = parts
        if conclusion not in choices:
            conclusion = default
        findings.append({"entity": finding.strip(), "attr": conclusion})
    return Parsed(findings, tuple(misses))


def parse_report(text: str) -> Parsed:
    """IMCS-V2-MRG: after the first line of the stripped text, ``section：text`` lines; a later line of the same
    section replaces an earlier one, and the text after the section's last ``section：`` is kept."""
    lines = text.strip().split("\n")
    report: dict[str, str] = {}
    read = [False] * len(lines)
    for section in MRG_SECTIONS:
        key = f"{section}："
        for index in range(1, len(lines)):
            line = lines[index]
            if line.startswith(key):
                read[index] = True
                report[section] = line.strip().split(key)[-1].strip()
    misses = [line for index, line in enumerate(lines) if index and line.strip() and not read[index]]
    if any(lines[0].startswith(f"{section}：") for section in MRG_SECTIONS):
        misses.insert(0, lines[0])
    return Parsed(report, tuple(misses))


def parse_label(text: str, task) -> Parsed:
    """A classification answer: the stripped text (CHIP-STS maps 相同/不同 to 是的/不是). An empty answer stays
    empty here; the scorer turns it into the task's first label, as the official evaluator does."""
    answer = text.strip()
    if task.name == "CHIP-STS":
        answer = {"相同": "是的", "不同": "不是"}.get(answer, answer)
    misses = (text,) if answer and answer not in task.labels else ()
    return Parsed(answer, misses)


def parse(task, text: str, answer_choices=None) -> Parsed:
    """The official structure of ``text`` (a gold target or a generated answer) for ``task`` (a :class:`Task`)."""
    name = task.name
    if name in ("CMeEE-V2", "IMCS-V2-NER"):
        return parse_entities(text, answer_choices)
    if name == "CMeIE-V2":
        return parse_relations(text)
    if name == "CMedCausal":
        return parse_causal(text)
    if name == "Text2DT":
        return parse_tree(text)
    if name == "CHIP-CDN":
        return parse_normalisation(text, answer_choices)
    if name == "CHIP-CDEE":
        return parse_events(text)
    if name == "CHIP-MDCFNPC":
        return parse_findings(text, answer_choices, MDCFNPC_DEFAULT)
    if name == "IMCS-V2-SR":
        return parse_findings(text, answer_choices, SR_DEFAULT)
    if name == "IMCS-V2-MRG":
        return parse_report(text)
    if name == "MedDG":
        return Parsed(text.strip())
    return parse_label(text, task)
