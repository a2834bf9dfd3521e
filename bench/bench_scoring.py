"""Benchmark the ClinIQLink metric: batched scoring against the public scorer's per-pair encoding.

Default mode: a synthetic submission of N items per QA type (default 200), built with a seeded RNG from the
texts of fixtures/cliniqlink-sample (answers, reasoning steps, explanations, questions), with responses of
realistic length per type (short ≈ 1–2 sentences, short inverse and multi-hop inverse ≈ 2–4 sentences, multi-hop
≈ a final answer plus 3–6 reasoning steps). Gold texts beyond the five sample items of a type are replaced by
pool text of similar length, so every item has its own reference (as in a real submission). It reports

* the whole-job time of ``score_submission`` (all 7 types, one encoder pass, BLEU/ROUGE/METEOR included) for a
  first system with cold caches, and for a second system's answers to the same questions (references and
  tokens cached, as when several systems of one release are scored by one worker);
* per open type: the batched semantic score cold and warm, the BLEU/ROUGE/METEOR time, and the public
  scorer's per-pair path (``bench/naive_scorer.py``: six model calls per pair, no cache) timed on
  ``--naive-pairs`` evenly spaced pairs and extrapolated per pair to all N; the speed-ups and the largest difference
  between the two paths on those pairs;
* the model work of each path (token positions through the network), their throughput in positions/s, and the
  ceiling this CPU's matrix-multiply speed puts on any encoding path (hence on the cold speed-up), measured right
  before each type's cold runs so that the VM's drift between minutes does not enter the share;
* where the cold semantic score's time goes per type (``bench/_scoring_split.py``: the linear layers, attention,
  layer norms and the rest, under ``torch.profiler``), and the linear layers' own GFLOP/s against the ceiling's;
* the two encoder engines (:mod:`metrics.packed` and ``SentenceTransformer.encode``) on the same texts,
  in the same process, alternating;
* per closed type: items/s; and the process's peak resident memory.

``--submission 4978`` instead scores one whole submission of that many items (ClinIQLink's size) on each torch
device (``--devices cpu,cuda``; default cpu, and cuda where torch sees one), timed per stage, with and without
the token table, optionally with BLEU/ROUGE/METEOR in worker processes (``--text-workers 4,8``), the GPU's
throughput per batch size (``--batch-sizes 8,32,128,512``), and the per-item scores of the devices set against
each other, or against a file written by ``--scores-out`` on another machine (``--compare FILE``)
(``bench/_scoring_devices.py``).

``--chunk-sizes 1024,2048,4096`` instead times the packed engine per chunk size (how its default was chosen).

``--answers 40000`` instead scores a submission of 40,000 open-ended answers (10,000 per open type, full
pipeline) and reports the wall time and the peak resident memory (target < 2 GB); no naive run.

The token table (``scripts/build_token_table.py``, built by ``make``) is used where installed: the default mode
times the cold path both without and with it.

Run:  OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/bench_scoring.py [--items 200]
      [--naive-pairs 20] [--answers 40000] [--chunk-sizes 1024,2048,4096] [--markdown FILE]
      [--submission 4978 [--devices cpu,cuda] [--text-workers 8] [--batch-sizes 8,32,128,512]
       [--scores-out FILE] [--compare FILE]]
"""

# ruff: noqa: E402  (the clock starts before the imports so the process wall time includes them)
from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse
import copy
import json
import os
import platform
import random
import resource
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _scoring_devices import run_submission  # bench/ is on the path when the script runs
from _scoring_split import report_time_split

from bench.naive_scorer import naive_semantic
from metrics import Encoder, TextMetrics, score_submission
from metrics.closed import score_list, score_multiple_choice, score_true_false
from metrics.normalise import clean_response
from metrics.open_ended import OPEN_TYPES
from metrics.packed import CHUNK_POSITIONS
from metrics.resources import stopwords
from metrics.scorer import compared_items, idf_corpus
from metrics.semantic import SemanticScorer, alnum_pieces, build_idf, content_only, paragraph_baseline

SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"
FILES = {"true_false": "TF.json", "multiple_choice": "MC.json", "list": "list.json", "short": "short.json",
         "short_inverse": "short_inverse.json", "multi_hop": "multi_hop.json",
         "multi_hop_inverse": "multi_hop_inverse.json"}  # fmt: skip
SEED = 20250607


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


# -- synthetic submission -------------------------------------------------------------------------------------------
def _sentences(sample: dict[str, list[dict]]) -> list[str]:
    texts = []
    for items in sample.values():
        for it in items:
            texts += [it.get("question", ""), str(it.get("answer", "")), it.get("incorrect_explanation", "")]
            texts += list(it.get("reasoning", [])) + [str(x) for x in it.get("incorrect_reasoning_step", [])]
    return [t for t in texts if isinstance(t, str) and len(t.split()) > 3]


def _sentence(rng: random.Random, pool: list[str], words: tuple[int, int]) -> str:
    source = rng.choice(pool).split()
    n = min(len(source), rng.randint(*words))
    start = rng.randrange(len(source) - n + 1)
    return " ".join(source[start : start + n]).rstrip(".") + "."


def _response(qa_type: str, gold: dict, rng: random.Random, pool: list[str]) -> str:
    def some(k: tuple[int, int], words=(8, 25)) -> str:
        return " ".join(_sentence(rng, pool, words) for _ in range(rng.randint(*k)))

    if qa_type == "true_false":
        return rng.choice(["True", "False", "True", "False. The statement confuses cause and effect."])
    if qa_type == "multiple_choice":
        return rng.choice(gold["options"] + ["B"])
    if qa_type == "list":
        return ", ".join(rng.sample(gold["options"], rng.randint(1, min(4, len(gold["options"])))))
    if qa_type == "short":
        answer = str(gold["answer"])
        return rng.choice([answer, "Final Answer: " + answer, some((1, 2)), answer + " " + some((1, 1))])
    if qa_type == "short_inverse":
        return "Incorrect Explanation: " + some((2, 4))
    if qa_type == "multi_hop":
        steps = " ".join(f"Step {k}: {_sentence(rng, pool, (15, 40))}" for k in range(1, rng.randint(4, 7)))
        return f"Final Answer: {some((1, 1))}\n\nReasoning: {steps}"
    return f"Incorrect Reasoning Step: Step {rng.randint(1, 5)}\nIncorrect Reasoning Explanation: {some((2, 4))}"


def _like(text: str, rng: random.Random, pool: list[str]) -> str:
    """Pool text of about the length of ``text``, so every item has its own gold (no free de-duplication)."""
    target, out = len(text.split()), []
    while sum(len(x.split()) for x in out) < target:
        out.append(_sentence(rng, pool, (8, max(9, min(40, target)))))
    return " ".join(out)


def _vary_gold(qa_type: str, item: dict, rng: random.Random, pool: list[str]) -> None:
    if qa_type in ("short", "multi_hop", "short_inverse", "multi_hop_inverse"):
        item["answer"] = _like(str(item["answer"]), rng, pool)
    if qa_type == "short_inverse":
        item["incorrect_explanation"] = _like(item["incorrect_explanation"], rng, pool)
    if qa_type == "multi_hop_inverse":
        step, expl = item["incorrect_reasoning_step"][:2]
        item["incorrect_reasoning_step"] = [step, "- Explanation: " + _like(expl, rng, pool)]


def build_submission(per_type: dict[str, int], seed: int = SEED, response_seed: int | None = None):
    """Inputs and responses; ``response_seed`` draws other responses to the same inputs (a second system)."""
    sample = {t: json.loads((SAMPLE / f).read_text()) for t, f in FILES.items()}
    pool = _sentences(sample)
    rng = random.Random(seed)
    answer_rng = random.Random(response_seed) if response_seed is not None else rng
    inputs, responses = {}, {}
    for qa_type, n in per_type.items():
        items, resp = [], []
        for i in range(n):
            item = copy.deepcopy(sample[qa_type][i % len(sample[qa_type])])
            item["source"] = {**item.get("source", {}), "paragraph_id": f"bench-{qa_type}-{i}"}
            if i >= len(sample[qa_type]):
                _vary_gold(qa_type, item, rng, pool)
            items.append(item)
            resp.append(_response(qa_type, item, answer_rng, pool))
        inputs[qa_type], responses[qa_type] = items, resp
    return inputs, responses


# -- modes ------------------------------------------------------------------------------------------------------------
def run_default(args, encoder: Encoder, text_metrics: TextMetrics, out: list[str]) -> None:
    inputs, responses = build_submission({t: args.items for t in FILES})
    _, second = build_submission({t: args.items for t in FILES}, response_seed=SEED + 1)
    n_open = sum(len(responses[t]) for t in OPEN_TYPES)
    n_items = sum(map(len, inputs.values()))
    table = encoder.token_table()  # read once, outside the timings
    out.append(f"Token table: {encoder.describe_token_vectors()}")
    jobs = []
    runs = [("first system, cold caches, no token table", responses, False)]
    if table is not None:
        runs.append(("first system, cold caches, token table", responses, True))
    runs.append(("second system, same questions", second, None))
    for label, resp, use_table in runs:
        if use_table is not None:
            encoder.use_token_table = use_table
            encoder.clear_caches()
        t = time.perf_counter()
        result = score_submission(inputs, resp, seed=0, encoder=encoder, text_metrics=text_metrics)
        jobs.append(time.perf_counter() - t)
        out.append(f"Whole job ({label}): {n_items} items ({n_open} open-ended), score_submission "
                   f"{jobs[-1]:.1f} s incl. BLEU/ROUGE/METEOR and the 100-answer baseline; "
                   f"overall_effectiveness {result.summary['overall_effectiveness']:.4f}")  # fmt: skip

    corpus = idf_corpus(inputs)
    idf = build_idf(corpus, encoder.tokenize)
    baseline = paragraph_baseline(corpus, encoder, seed=0).value
    stop = stopwords(198)
    out.append("")
    out.append(
        "Semantic score per open type (BLEU/ROUGE/METEOR timed separately): batched cold = token and text "
        "caches cleared first, every token encoded in the run (best of 2); cold + table = the same with the token vectors "
        "read from the on-disk token table (built once per model at install time); batched warm = a second "
        "system's answers to the same questions (references and tokens cached); per-pair = the public path, "
        "timed on evenly spaced pairs and extrapolated per pair."
    )
    out.append("")
    out.append("| type | pairs | batched cold s | cold + table s | warm s | text metrics s | per-pair s/pair (n) | "
               "per-pair s (extrapolated) | speed-up cold | speed-up cold + table | speed-up warm | "
               "max abs diff |")  # fmt: skip
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    totals = {"cold": 0.0, "table": 0.0, "warm": 0.0, "naive": 0.0}
    timings: dict[str, tuple[float, float, float]] = {}
    fp32_scores: dict[str, list] = {}
    ceilings: dict[str, tuple[float, float, float, str]] = {}
    for qa_type in OPEN_TYPES:
        pairs = _pairs(qa_type, inputs, responses)
        # The ceiling right before the type's cold runs: this shared VM's speed drifts from minute to minute, and a
        # ceiling measured minutes away would carry that drift into the share.
        ceilings[qa_type] = matmul_ceiling(encoder)
        # Cold runs, best of two each, alternating (this shared VM's speed drifts from minute to minute).
        cold_s = table_s = float("inf")
        for _ in range(2):
            encoder.use_token_table = False
            encoder.clear_caches()
            t = time.perf_counter()
            fast = SemanticScorer(encoder, idf, stop, baseline).score_pairs(pairs)
            cold_s = min(cold_s, time.perf_counter() - t)
            if table is not None:
                encoder.use_token_table = True
                encoder.clear_caches()
                t = time.perf_counter()
                with_table = SemanticScorer(encoder, idf, stop, baseline).score_pairs(pairs)
                table_s = min(table_s, time.perf_counter() - t)
        fp32_scores[qa_type] = fast
        if table is None:
            table_s = float("nan")  # no token table installed: the column reads nan
        else:
            fast_vs_table = max(abs(getattr(a, f) - getattr(b, f)) for a, b in zip(fast, with_table, strict=True)
                                for f in ("semantic", "word", "sentence", "paragraph"))  # fmt: skip
            assert fast_vs_table < 1e-5, f"{qa_type}: token table changes scores by {fast_vs_table}"
        t = time.perf_counter()
        SemanticScorer(encoder, idf, stop, baseline).score_pairs(_pairs(qa_type, inputs, second))
        warm_s = time.perf_counter() - t
        t = time.perf_counter()
        for expected, prediction in pairs:
            text_metrics.score(expected, prediction)
        text_s = time.perf_counter() - t
        chosen = list(range(0, len(pairs), max(1, len(pairs) // args.naive_pairs)))[: args.naive_pairs]
        k = len(chosen)
        t = time.perf_counter()
        naive = [naive_semantic(encoder, *pairs[i], idf, stop, baseline) for i in chosen]
        per_pair = (time.perf_counter() - t) / k
        diff = max(abs(getattr(a, f) - getattr(fast[i], f)) for a, i in zip(naive, chosen, strict=True)
                   for f in ("semantic", "word", "sentence", "paragraph"))  # fmt: skip
        naive_s = per_pair * len(pairs)
        timings[qa_type] = (naive_s, cold_s, table_s)
        for key, value in (("cold", cold_s), ("table", table_s), ("warm", warm_s), ("naive", naive_s)):
            totals[key] += value
        out.append(f"| {qa_type} | {len(pairs)} | {cold_s:.2f} | {table_s:.2f} | {warm_s:.2f} | {text_s:.2f} | "
                   f"{per_pair:.3f} ({k}) | {naive_s:.1f} | {naive_s / cold_s:.1f}x | {naive_s / table_s:.1f}x | "
                   f"{naive_s / warm_s:.1f}x | {diff:.1e} |")  # fmt: skip
    out.append(f"| all open types | {n_open} | {totals['cold']:.1f} | {totals['table']:.1f} | "
               f"{totals['warm']:.1f} | | | {totals['naive']:.1f} | {totals['naive'] / totals['cold']:.1f}x | "
               f"{totals['naive'] / totals['table']:.1f}x | {totals['naive'] / totals['warm']:.1f}x | |")  # fmt: skip
    out.append("")
    out.append("Model work (token positions through the network, no padding) and throughput (positions / s):")
    out.append("")
    out.append(
        "| type | per-pair path positions | batched cold positions | of which tokens | work ratio cold | work ratio "
        "with table | per-pair pos/s | batched cold pos/s | batched share of ceiling |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|")
    bounds, table_bounds, split_runs = [], [], []
    for qa_type, (naive_s, cold_s, _table_s) in timings.items():
        gflops, flops, ceiling, _kernel = ceilings[qa_type]
        naive_pos, batched_pos, token_pos = model_positions(encoder, _pairs(qa_type, inputs, responses), stop)
        run = _cold_run(encoder, idf, stop, baseline, _pairs(qa_type, inputs, responses))
        split_runs.append((qa_type, batched_pos, run, gflops))
        text_pos = batched_pos - token_pos
        bounds.append(naive_pos / batched_pos * ceiling / (naive_pos / naive_s))
        table_bounds.append(naive_pos / text_pos * ceiling / (naive_pos / naive_s))
        out.append(f"| {qa_type} | {naive_pos} | {batched_pos} | {token_pos} | {naive_pos / batched_pos:.1f}x | "
                   f"{naive_pos / text_pos:.1f}x | {naive_pos / naive_s:.0f} | {batched_pos / cold_s:.0f} | "
                   f"{batched_pos / cold_s / ceiling:.0%} |")  # fmt: skip
    out.append("")
    low, high = min(c[0] for c in ceilings.values()), max(c[0] for c in ceilings.values())
    positions_low, positions_high = low * 1e9 / flops, high * 1e9 / flops
    kernels = ", ".join(sorted({c[3] for c in ceilings.values()}))
    out.append(f"Ceiling (measured right before each type's cold runs, which are set against their own type's): this "
               f"CPU multiplies the model's largest matrices at {low:.0f}-{high:.0f} GFLOP/s (fastest kernel: "
               f"{kernels}); the model's linear "
               f"layers cost {flops / 1e6:.1f} MFLOP per position, so no path can encode more than "
               f"{positions_low:.0f}-{positions_high:.0f} positions/s here. With cold caches the batched path's "
               f"speed-up is therefore at most "
               f"{min(bounds):.1f}x-{max(bounds):.1f}x over the per-pair path (work ratio x ceiling / per-pair "
               f"throughput), whatever the batching; with the token table (texts only) at most "
               f"{min(table_bounds):.1f}x-{max(table_bounds):.1f}x.")  # fmt: skip
    report_time_split(split_runs, flops, out)
    engine_comparison(encoder, inputs, responses, stop, out)
    bf16_check(encoder, inputs, responses, idf, stop, baseline, fp32_scores, timings, out)
    out.append("")
    out.append("| closed type | items | items/s |")
    out.append("|---|---|---|")
    for qa_type, fn in (("true_false", score_true_false), ("multiple_choice", score_multiple_choice),
                        ("list", score_list)):  # fmt: skip
        cleaned = [clean_response(r) for r in responses[qa_type]]
        t = time.perf_counter()
        fn(inputs[qa_type], cleaned)
        out.append(f"| {qa_type} | {len(cleaned)} | {len(cleaned) / (time.perf_counter() - t):.0f} |")


def _cold_run(encoder: Encoder, idf, stop, baseline, pairs):
    """The batched cold semantic score of ``pairs`` as the timed runs do it (caches cleared, no token table)."""

    def run():
        encoder.use_token_table = False
        encoder.clear_caches()
        SemanticScorer(encoder, idf, stop, baseline).score_pairs(pairs)

    return run


def engine_comparison(encoder: Encoder, inputs: dict, responses: dict, stop: frozenset[str], out: list[str]) -> None:
    """The cold texts of each open type through both encoder engines, alternating, best of two runs each; and the
    packed engine with its linear layers through oneDNN's fused kernels against the model's own modules."""
    plain = Encoder(encoder.model_path, packed=False)
    packed = encoder._packed
    out.append("")
    out.append(f"Encoder engines on the same texts (each type's distinct filtered references and responses, "
               f"best of 2 runs): '{encoder.engine}' against '{plain.engine}' (SentenceTransformer.encode, "
               f"batches of {plain.batch_size}); packed = oneDNN's fused linear kernels "
               f"({'used' if packed is not None and packed.fused else 'not available'} here), packed plain = the "
               f"same engine running the model's own modules")  # fmt: skip
    out.append("")
    out.append("| type | texts | positions | sentence-transformers pos/s | packed plain pos/s | packed pos/s | "
               "packed / sentence-transformers | packed / packed plain |")  # fmt: skip
    out.append("|---|---|---|---|---|---|---|---|")
    fused = packed is not None and packed.fused
    for qa_type in OPEN_TYPES:
        texts = list(dict.fromkeys(content_only(t.strip(), stop) for pair in _pairs(qa_type, inputs, responses)
                                   for t in pair))  # fmt: skip
        positions = sum(len(ids) for ids in encoder.token_ids(texts))
        best = {"st": float("inf"), "plain": float("inf"), "packed": float("inf")}
        for _ in range(2):
            for name, engine in (("st", plain), ("plain", encoder), ("packed", encoder)):
                if packed is not None:
                    packed.fused = fused and name == "packed"
                t = time.perf_counter()
                engine._encode(texts, engine.batch_size)
                best[name] = min(best[name], time.perf_counter() - t)
        out.append(f"| {qa_type} | {len(texts)} | {positions} | {positions / best['st']:.0f} | "
                   f"{positions / best['plain']:.0f} | {positions / best['packed']:.0f} | "
                   f"{best['st'] / best['packed']:.2f}x | {best['plain'] / best['packed']:.2f}x |")  # fmt: skip
    if packed is not None:
        packed.fused = fused


def bf16_check(encoder, inputs, responses, idf, stop, baseline, fp32_scores, timings, out: list[str]) -> None:
    """The cold semantic score with the model's arithmetic in bfloat16 (torch CPU autocast; this CPU has AVX-512
    BF16): how much faster, and how far from the float32 scores that the parity target pins (1e-4)."""
    import torch

    out.append("")
    out.append("bfloat16 arithmetic (torch.autocast on the CPU), cold caches, against the float32 scores above:")
    out.append("")
    out.append("| type | float32 cold s | bfloat16 cold s | bfloat16 speed-up | max abs diff semantic | max abs diff "
               "sentence | max abs diff word |")  # fmt: skip
    out.append("|---|---|---|---|---|---|---|")
    for qa_type in OPEN_TYPES:
        encoder.use_token_table = False
        encoder.clear_caches()
        t = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low = SemanticScorer(encoder, idf, stop, baseline).score_pairs(_pairs(qa_type, inputs, responses))
        low_s = time.perf_counter() - t
        cold_s = timings[qa_type][1]
        diffs = [max(abs(getattr(a, f) - getattr(b, f)) for a, b in zip(fp32_scores[qa_type], low, strict=True))
                 for f in ("semantic", "sentence", "word")]  # fmt: skip
        out.append(f"| {qa_type} | {cold_s:.2f} | {low_s:.2f} | {cold_s / low_s:.2f}x | {diffs[0]:.1e} | "
                   f"{diffs[1]:.1e} | {diffs[2]:.1e} |")  # fmt: skip
    encoder.use_token_table = True
    encoder.clear_caches()


def run_chunk_sizes(args, encoder: Encoder, out: list[str]) -> None:
    """Positions/s of the packed engine per chunk size, on the cold texts of all open types (best of 2 runs)."""
    from metrics.packed import PackedBert

    inputs, responses = build_submission({t: args.items for t in OPEN_TYPES})
    stop = stopwords(198)
    texts = list(dict.fromkeys(content_only(t.strip(), stop) for q in OPEN_TYPES
                               for pair in _pairs(q, inputs, responses) for t in pair))  # fmt: skip
    ids = encoder.token_ids(texts)
    positions = sum(map(len, ids))
    out.append(f"Packed engine, {len(texts)} texts ({positions} positions) of {args.items} items per open type:")
    out.append("")
    out.append("| chunk positions | pos/s |")
    out.append("|---|---|")
    for size in (int(x) for x in args.chunk_sizes.split(",")):
        packed, best = PackedBert(encoder.model, chunk_positions=size), float("inf")
        for _ in range(2):
            t = time.perf_counter()
            packed.sentence_embeddings(ids)
            best = min(best, time.perf_counter() - t)
        out.append(f"| {size} | {positions / best:.0f} |")


def model_positions(encoder: Encoder, pairs: list[tuple[str, str]], stop: frozenset[str]) -> tuple[int, int, int]:
    """Token positions each path sends through the network for ``pairs`` (without batch padding): the per-pair path
    (each side's alnum pieces as ``[CLS] piece [SEP]``, then each filtered text twice), the batched path with cold
    caches (each distinct piece once, each distinct filtered text once), and the part of the latter that is
    pieces (what the token table saves). Their ratio bounds the speed-up at equal cost per position: the rest can
    only come from running those positions faster."""
    cap = encoder.max_seq_length

    def text_len(text: str) -> int:
        return min(len(encoder.tokenize(text)) + 2, cap)

    naive, pieces, texts = 0, set(), set()
    for expected, prediction in pairs:
        for text in (content_only(expected.strip(), stop), content_only(prediction.strip(), stop)):
            own = alnum_pieces(encoder.tokenize(text))
            naive += sum(text_len(p) for p in own) + 2 * text_len(text)
            pieces.update(own)
            texts.add(text)
    token_positions = sum(text_len(p) for p in pieces)
    return naive, token_positions + sum(text_len(t) for t in texts), token_positions


def matmul_ceiling(encoder: Encoder) -> tuple[float, float, float, str]:
    """(GFLOP/s of this CPU on the model's largest matrix product, model FLOPs per token position from its linear
    layers, the positions/s those two allow, the kernel that set the ceiling). Attention, layer norms, GELU and
    tokenisation come on top, so no encoding path can run faster than this ceiling.

    The product is timed with every kernel the encoder may use, and the fastest sets the ceiling: ``nn.Linear``, and
    oneDNN's pre-packed linear kernel where the packed engine runs it (:mod:`metrics.packed`). With ``nn.Linear``
    alone the path's own kernel outran the ceiling in a slow spell of this VM (its linear layers at 103-108 % of
    it, docs/benchmarks-metric.md), which made the share of the ceiling read too high."""
    import torch

    linears = [m for m in encoder.model.modules() if isinstance(m, torch.nn.Linear)]
    flops_per_position = float(sum(2 * m.in_features * m.out_features for m in linears))
    biggest = max(linears, key=lambda m: m.in_features * m.out_features)
    rows = CHUNK_POSITIONS  # the packed engine's chunk of positions (the size its weights are packed for)
    x = torch.randn(rows, biggest.in_features)
    kernels = {"nn.Linear": biggest}
    packed = getattr(encoder, "_packed", None)
    if packed is not None and packed.fused:
        kernels["oneDNN pre-packed"] = packed.linear_kernel(biggest)
    per_call = {}
    with torch.inference_mode():
        for name, kernel in kernels.items():
            for _ in range(3):
                kernel(x)
            rounds = []
            for _ in range(5):  # best of five rounds: a neighbour's burst on a shared VM only ever slows a round down
                t = time.perf_counter()
                for _ in range(10):
                    kernel(x)
                rounds.append((time.perf_counter() - t) / 10)
            per_call[name] = min(rounds)
    fastest = min(per_call, key=per_call.__getitem__)
    gflops = 2 * rows * biggest.in_features * biggest.out_features / per_call[fastest] / 1e9
    return gflops, flops_per_position, gflops * 1e9 / flops_per_position, fastest


def _pairs(qa_type: str, inputs: dict, responses: dict) -> list[tuple[str, str]]:
    cleaned = {qa_type: [clean_response(r) for r in responses[qa_type]]}
    _, compared = compared_items({qa_type: inputs[qa_type]}, cleaned)
    return [(it.expected, it.prediction) for it in compared]


def run_answers(args, encoder: Encoder, text_metrics: TextMetrics | None, out: list[str]) -> None:
    per = args.answers // len(OPEN_TYPES)
    inputs, responses = build_submission({t: per for t in OPEN_TYPES})
    rss_before = peak_rss_mb()
    encoder.clear_caches()
    done = {"n": 0}

    def progress(stage: str, n: int, total: int) -> None:
        if stage == "semantic" and n - done["n"] >= 4096 or n == total:
            done["n"] = n
            print(f"  {stage}: {n}/{total} pairs, {time.perf_counter() - t:.0f} s, peak RSS {peak_rss_mb():.0f} "
                  f"MiB", file=sys.stderr, flush=True)  # fmt: skip

    t = time.perf_counter()
    result = score_submission(inputs, responses, seed=0, encoder=encoder, text_metrics=text_metrics,
                              progress=progress)  # fmt: skip
    el = time.perf_counter() - t
    n = sum(len(v) for v in responses.values())
    out.append(f"{n} open-ended answers ({per} per open type), full pipeline"
               f"{'' if text_metrics else ' without BLEU/ROUGE/METEOR'}: {el:.0f} s ({n / el:.1f} answers/s); "
               f"peak RSS before scoring {rss_before:.0f} MiB, after {peak_rss_mb():.0f} MiB (target < 2048 MiB); "
               f"distinct tokens {encoder.cached_tokens} ({encoder.stats.token_vectors_from_table} from the token "
               f"table, {encoder.stats.token_strings_encoded} encoded); baseline {result.run['baseline']:.4f} ({result.run['baseline_source']})")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200, help="items per QA type (default 200)")
    parser.add_argument("--naive-pairs", type=int, default=20, help="pairs per open type for the naive path")
    parser.add_argument("--answers", type=int, default=0, help="score this many open answers instead (memory)")
    parser.add_argument("--no-text-metrics", action="store_true", help="--answers mode: semantic score only")
    parser.add_argument("--chunk-sizes", help="instead: packed engine speed per chunk size, e.g. 1024,2048,4096")
    parser.add_argument(
        "--submission",
        type=int,
        default=0,
        help="instead: one whole submission of this many items (4978: ClinIQLink's size) on each device",
    )
    parser.add_argument("--devices", help="--submission: torch devices, first is the reference (default cpu[,cuda])")
    parser.add_argument("--batch-sizes", help="--submission: sentence-embedding throughput per batch size on a GPU")
    parser.add_argument("--text-workers", help="--submission: also run BLEU/ROUGE/METEOR in these many processes")
    parser.add_argument("--scores-out", help="--submission: write the per-item scores to this JSON file")
    parser.add_argument("--compare", help="--submission: set the scores against such a file from another machine")
    parser.add_argument("--markdown", help="append the report to this file")
    args = parser.parse_args()

    if args.submission:  # each device loads its own model
        out = [f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
               f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; imports {time.perf_counter() - _T0:.1f} s"]  # fmt: skip
        run_submission(args, build_submission, _pairs, list(FILES), out)
        return finish(args, out)
    t = time.perf_counter()
    encoder = Encoder()
    text_metrics = None if (args.answers and args.no_text_metrics) else TextMetrics()
    load_s = time.perf_counter() - t
    out = [f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
           f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; imports {t - _T0:.1f} s, model + "
           f"NLTK data load {load_s:.1f} s; encoder engine '{encoder.engine}'"]  # fmt: skip
    if text_metrics and text_metrics.reasons:
        out.append(f"Text metrics unavailable: {text_metrics.reasons}")
    if args.chunk_sizes:
        run_chunk_sizes(args, encoder, out)
    elif args.answers:
        run_answers(args, encoder, text_metrics, out)
    else:
        run_default(args, encoder, text_metrics, out)
    return finish(args, out)


def finish(args, out: list[str]) -> int:
    out.append(f"Peak RSS of the process: {peak_rss_mb():.0f} MiB; total wall time {time.perf_counter() - _T0:.0f} s")
    report = "\n".join(out)
    print(report)
    if args.markdown:
        with open(args.markdown, "a", encoding="utf-8") as fh:
            fh.write(f"\n```\n$ {' '.join(sys.argv)}\n```\n\n{report}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
