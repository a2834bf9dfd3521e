"""Benchmark the nugget matcher (metrics/nuggets.py): answers per second on 1,000 answers × 5 nuggets, CPU.

Synthetic but realistic: 200 items, each with 5 nuggets (2 vital, 2 okay, 1 avoid) built from seeded templates
of clinical facts (drug, condition, dose, monitoring, contraindication), and 5 systems' answers per item
(1,000 answers) of 3–7 sentences: some nuggets stated verbatim, some paraphrased, some left out, plus
distractor sentences on the same condition. This is how a release is assessed: every system answers the same
items, so an item's nuggets are shared by its answers (the matcher encodes each distinct text once).

The model is the packaged all-MiniLM-L6-v2, loaded offline (the project's :class:`metrics.encoder.Encoder`).
Timed: ``EmbeddingMatcher.match_many`` over all 1,000 answers with the encoder's caches cleared first (cold:
every text through the model), split into sentence splitting, encoding, and assignment; then the same call again
(warm: every text cached, i.e. the matcher's own overhead). Prints one JSON line.

Run:  OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/bench_nugget_matcher.py [--answers 1000]
"""

# ruff: noqa: E402
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics.encoder import Encoder
from metrics.nuggets import EmbeddingMatcher, Nugget, sentence_encoder, split_sentences

SEED = 20250607
CONDITIONS = ["hypertension", "type 2 diabetes", "asthma", "atrial fibrillation", "community-acquired pneumonia",
              "migraine", "heart failure", "hypothyroidism", "gout", "major depression", "osteoporosis",
              "peptic ulcer disease", "chronic kidney disease", "anaphylaxis", "urinary tract infection"]  # fmt: skip
DRUGS = ["metformin", "lisinopril", "amlodipine", "salbutamol", "apixaban", "amoxicillin", "sumatriptan",
         "furosemide", "levothyroxine", "allopurinol", "sertraline", "alendronate", "omeprazole", "epinephrine",
         "nitrofurantoin", "bisoprolol", "prednisolone", "atorvastatin"]  # fmt: skip
VITAL = ["{drug} is a first-line treatment for {cond} in adults over {age}.",
         "Patients with {cond} should start {drug} at {dose} mg a day.",
         "{drug} reduces mortality in {cond} by about {pct} percent.",
         "The diagnosis of {cond} is confirmed by {test} within {n} weeks."]  # fmt: skip
OKAY = ["Patients taking {drug} need {test} every {n} months.",
        "Lifestyle change helps patients with {cond} lose about {pct} percent of weight.",
        "{drug} may cause {effect} in {pct} percent of patients.", "Follow-up for {cond} is advised after {n} weeks."]  # fmt: skip
AVOID = ["{drug} is safe in every patient with {cond}.", "{cond} never needs follow-up.",
         "Stop {drug} as soon as symptoms improve."]  # fmt: skip
PARAPHRASE = {"is a first-line treatment for": "is usually the first drug tried for", "reduces": "lowers",
              "should start": "are generally started on", "need": "require", "may cause": "can lead to",
              "is advised": "is recommended", "helps": "benefits"}  # fmt: skip
TESTS = ["renal function tests", "an ECG", "HbA1c", "spirometry", "a chest X-ray", "TSH levels", "bone density"]
EFFECTS = ["dizziness", "a dry cough", "nausea", "ankle swelling", "low potassium", "headache"]
DISTRACTORS = ["{cond} affects about {pct} percent of adults over {age}.",
               "Ask your doctor before changing any medicine, especially {drug}.",
               "Many patients with {cond} also have {effect} or other conditions.",
               "Guidelines from {n} countries differ on {cond}.",
               "Symptoms of {cond} vary from person to person and over {n} months.",
               "Keep a list of the medicines you take, including the {dose} mg dose of {drug}."]  # fmt: skip


def fill(template: str, rng: random.Random, cond: str, drug: str) -> str:
    text = template.format(cond=cond, drug=drug, test=rng.choice(TESTS), effect=rng.choice(EFFECTS),
                           n=rng.randint(2, 24), dose=rng.choice([5, 10, 20, 25, 40, 50, 100, 250, 500]),
                           age=rng.randint(18, 80), pct=rng.randint(2, 60))  # fmt: skip
    return text[0].upper() + text[1:]


def paraphrase(sentence: str) -> str:
    for old, new in PARAPHRASE.items():
        if old in sentence:
            return sentence.replace(old, new)
    return "In short, " + sentence[0].lower() + sentence[1:]


def workload(n_answers: int, systems: int = 5) -> list[tuple[list[Nugget], str]]:
    rng = random.Random(SEED)
    pairs = []
    for _ in range(n_answers // systems):
        cond, drug = rng.choice(CONDITIONS), rng.choice(DRUGS)
        texts = [fill(t, rng, cond, drug) for t in (*rng.sample(VITAL, 2), *rng.sample(OKAY, 2), rng.choice(AVOID))]
        nuggets = [Nugget(f"n{i + 1}", t, imp) for i, (t, imp) in
                   enumerate(zip(texts, ["vital", "vital", "okay", "okay", "avoid"], strict=True))]  # fmt: skip
        for _ in range(systems):
            sentences = []
            for nugget in nuggets:
                roll = rng.random()
                if nugget.importance == "avoid":
                    roll = roll * 3  # an avoid claim appears in about one answer in six
                if roll < 0.35:
                    sentences.append(nugget.text)
                elif roll < 0.65:
                    sentences.append(paraphrase(nugget.text))
            sentences += [fill(t, rng, cond, drug) for t in rng.sample(DISTRACTORS, rng.randint(1, 3))]
            rng.shuffle(sentences)
            pairs.append((nuggets, " ".join(sentences) if rng.random() < 0.8 else "\n- ".join(sentences)))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1000)
    args = parser.parse_args()
    import torch

    pairs = workload(args.answers)
    t0 = time.perf_counter()
    encoder = Encoder()
    load_s = time.perf_counter() - t0
    encode = sentence_encoder(encoder)
    timings = {"encode_s": 0.0}

    def timed_encode(texts):
        start = time.perf_counter()
        out = encode(texts)
        timings["encode_s"] += time.perf_counter() - start
        return out

    matcher = EmbeddingMatcher(timed_encode)
    t0 = time.perf_counter()
    sentences = sum(len(split_sentences(answer)) for _, answer in pairs)
    split_s = time.perf_counter() - t0
    distinct = len(
        {n.text for nuggets, _ in pairs for n in nuggets} | {s for _, a in pairs for s in split_sentences(a)}
    )
    encoder.clear_caches()
    t0 = time.perf_counter()
    matches = matcher.match_many(pairs)
    cold_s = time.perf_counter() - t0
    cold_encode_s = timings["encode_s"]
    t0 = time.perf_counter()
    matcher.match_many(pairs)
    warm_s = time.perf_counter() - t0
    labels = [m.label for found in matches for m in found]
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())  # fmt: skip
    print(json.dumps({
        "bench": "nugget_matcher",
        "answers": len(pairs),
        "nuggets_per_answer": 5,
        "sentences": sentences,
        "distinct_texts_encoded": distinct,
        "answers_per_s_cold": round(len(pairs) / cold_s, 1),
        "answers_per_s_warm": round(len(pairs) / warm_s, 1),
        "cold_s": round(cold_s, 2),
        "cold_encode_s": round(cold_encode_s, 2),
        "sentence_split_s": round(split_s, 3),
        "warm_s": round(warm_s, 3),
        "model_load_s": round(load_s, 2),
        "labels": {label: labels.count(label) for label in ("support", "partial", "not_support")},
        "engine": encoder.engine,
        "machine": {"cpu": cpu, "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                    "python": platform.python_version(), "torch": torch.__version__},  # fmt: skip
    }))  # fmt: skip


if __name__ == "__main__":
    main()
