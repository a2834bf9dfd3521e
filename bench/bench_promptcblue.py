"""PromptCBLUE scoring speed: a synthetic 10,000-sample submission over all 18 tasks, read from JSONL and scored.

Run: ``.venv/bin/python bench/bench_promptcblue.py [--samples N]``. Prints the seconds of reading and scoring (imports and
the first tokenizer load included) and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MRG = "上述问诊对话的诊疗报告如下：\n主诉：咳嗽{a}天。\n现病史：患儿咳嗽{a}天，无发热，精神可，纳眠可。\n辅助检查：血常规未见异常。\n既往史：体健。\n诊断：急性支气管炎。\n建议：多饮水，雾化治疗，复诊。"
TREE = "决策树如下：\n节点1：role=C；logical_rel=and；triples=[('患者', '临床表现', '发热{a}'), ('患者', '临床表现', '咳嗽')]\n节点2：role=D；logical_rel=null；triples=[('患者', '用药', '布洛芬')]\n节点3：role=C；logical_rel=null；triples=[('患者', '年龄', '儿童')]\n节点4：role=D；logical_rel=null；triples=[('患者', '用药', '对乙酰氨基酚')]\n节点5：role=D；logical_rel=null；triples=[]"


def sample(task: str, i: int, rng: random.Random) -> tuple[str, list | None]:
    a = rng.randint(1, 9)
    texts = {
        "CMeEE-V2": (
            "上述句子中的实体包含：\n疾病实体：肺炎，支气管炎{a}\n临床表现实体：发热，咳嗽\n药物实体：阿莫西林",
            ["疾病", "临床表现", "药物"],
        ),
        "IMCS-V2-NER": ("上述句子中的实体包含：\n症状实体：发热，咳嗽{a}\n药物实体：布洛芬", ["症状", "药物"]),
        "CMeIE-V2": (
            "具有临床表现关系的头尾实体对如下：头实体为肺炎，尾实体为发热{a}。头实体为肺炎，尾实体为咳嗽。\n具有药物治疗关系的头尾实体对如下：头实体为肺炎，尾实体为阿莫西林。",
            None,
        ),
        "CMedCausal": (
            "因果关系三元组如下：\n头实体：吸烟；尾实体：肺癌{a}\n条件关系三元组如下：\n头实体：长期；尾三元组：头实体：熬夜；尾实体：失眠；关系：因果关系",
            None,
        ),
        "CHIP-CDN": ("胃炎，慢性胃炎{a}", ["胃炎", "慢性胃炎1", "慢性胃炎2", "胃癌"]),
        "CHIP-CDEE": (
            "上述句子中的临床发现事件如下：\n主体词：疼痛；发生状态：；描述词：持续性，阵发性{a}；解剖部位：腹\n主体词：发热；发生状态：否定；描述词：；解剖部位：",
            None,
        ),
        "CHIP-MDCFNPC": (
            "上述对话中临床发现实体以及其阴阳性判别如下：\n腹泻：已有症状疾病或者假设未来可能发生的疾病等\n发热{a}：未患有症状疾病",
            ["已有症状疾病或者假设未来可能发生的疾病等", "未患有症状疾病"],
        ),
        "IMCS-V2-SR": (
            "当前对话中的症状及其阴阳性判断为：\n咳嗽：患有该症状\n发热{a}：没有患有该症状",
            ["患有该症状", "没有患有该症状"],
        ),
        "IMCS-V2-MRG": (MRG, None),
        "MedDG": ("建议做个胃镜检查，看看有没有幽门螺杆菌感染，平时饮食清淡，少吃辛辣刺激的食物{a}。", None),
        "Text2DT": (TREE, None),
    }
    labels = {
        "IMCS-V2-DAC": ["关于症状的询问", "关于症状的回答", "给出诊断", "非上述类型"],
        "CHIP-CTC": ["疾病", "年龄", "性别", "非上述类型"],
        "CHIP-STS": ["是的", "不是"],
        "KUAKE-IR": ["相关", "不相关"],
        "KUAKE-QIC": ["病情诊断", "治疗方案", "就医建议", "非上述类型"],
        "KUAKE-QQR": ["完全一致", "后者是前者的语义子集", "后者是前者的语义父集", "语义无直接关联"],
        "KUAKE-QTR": ["完全不匹配或者没有参考价值", "很少匹配有一些参考价值", "部分匹配", "完全匹配"],
    }
    if task in labels:
        return rng.choice(labels[task]), labels[task]
    text, choices = texts[task]
    return text.format(a=a), choices


def perturb(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    roll = rng.random()
    if roll < 0.2:
        return ""
    if roll < 0.5 and len(lines) > 2:
        del lines[rng.randrange(1, len(lines))]
    if roll > 0.8:
        lines.append("模型多写的一行")
    return "\n".join(lines).replace("1", "2")


def main(n: int = 10_000) -> None:
    from metrics.promptcblue import TASKS

    rng = random.Random(41)
    with tempfile.TemporaryDirectory() as tmp:
        gold_path, pred_path = Path(tmp) / "gold.jsonl", Path(tmp) / "pred.jsonl"
        with gold_path.open("w", encoding="utf-8") as gold, pred_path.open("w", encoding="utf-8") as pred:
            for i in range(n):
                task = TASKS[i % len(TASKS)].name
                target, choices = sample(task, i, rng)
                record = {"input": "…", "target": target, "answer_choices": choices, "task_type": "x",
                          "task_dataset": task, "sample_id": f"s{i}"}  # fmt: skip
                gold.write(json.dumps(record, ensure_ascii=False) + "\n")
                pred.write(
                    json.dumps({"sample_id": f"s{i}", "target": perturb(target, rng)}, ensure_ascii=False) + "\n"
                )
        start = time.perf_counter()
        from evaluation.promptcblue import score_files

        result = score_files(gold_path, pred_path, keep_samples=True)
        seconds = time.perf_counter() - start
    scoring_peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    from evaluation.promptcblue import score_intervals

    start = time.perf_counter()
    intervals = score_intervals(result.scores)  # what a portal run adds: the leaderboard's intervals
    interval_seconds = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{n} samples over {len(result.scores.tasks)} tasks: score {result.report['score']:.4f}")
    print(f"read and scored in {seconds:.2f} s; peak resident memory {scoring_peak_mib:.0f} MiB")
    low, high = intervals["overall"]
    print(
        f"bootstrap intervals ({intervals['n_resamples']} resamples, 18 tasks and the overall) in "
        f"{interval_seconds:.2f} s; overall interval {low * 100:.2f} – {high * 100:.2f}; peak resident memory "
        f"{peak_mib:.0f} MiB with them"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000, help="samples in the submission (default 10,000)")
    main(parser.parse_args().samples)
