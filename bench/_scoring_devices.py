"""``bench_scoring.py --submission N``: one whole ClinIQLink-size submission scored on each torch device, timed
per stage, and the scores of the devices set against each other (and against a file from another machine).

The submission is the default mode's synthetic one (seeded, so every machine builds the same items), N items
split evenly over the seven types. Each device gets its own :class:`~metrics.Encoder` and a fresh
:class:`~metrics.TextMetrics` per run, so every run starts cold: no cached token or text vector, no memoised
stem or synonym. The model and the NLTK data are loaded before the clock starts (a scoring worker holds them
loaded, and has set up CUDA); their load time is reported apart. Runs per device: tokens encoded in the run,
then (where the token table is installed) tokens read from it, then for each ``--text-workers`` count above 1
BLEU/ROUGE/METEOR in that many worker processes beside the model (each started for its run). Every later run
must give the first run's scores (asserted). The stages come from ``score_submission``'s progress calls: the
submission-wide pass (IDF, paragraph baseline), the semantic score, BLEU/ROUGE/METEOR, and the closed types with
the summary.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from metrics import Encoder, TextMetrics, score_submission
from metrics.open_ended import OPEN_TYPES

#: Per-item fields compared between devices (None on both sides counts as equal).
FIELDS = ("semantic", "word", "sentence", "paragraph", "bleu", "rouge", "meteor")
CLOSED_FIELDS = ("correct", "precision", "recall", "f1")


def split_evenly(n: int, types: list[str]) -> dict[str, int]:
    """``n`` items over ``types``, the remainder to the first ones (4,978 over 7: 712 × 1, 711 × 6)."""
    base, extra = divmod(n, len(types))
    return {t: base + (1 if i < extra else 0) for i, t in enumerate(types)}


def timed_job(inputs, responses, encoder: Encoder, text_metrics: TextMetrics, text_workers: int = 1):
    """``score_submission`` with each stage's wall time taken from its progress calls."""
    marks: dict[str, float] = {}

    def progress(stage: str, done: int, total: int) -> None:
        marks.setdefault(f"{stage} start", time.perf_counter())
        if done == total:
            marks[f"{stage} end"] = time.perf_counter()

    start = time.perf_counter()
    result = score_submission(inputs, responses, seed=0, encoder=encoder, text_metrics=text_metrics,
                              progress=progress, text_workers=text_workers)  # fmt: skip
    end = time.perf_counter()
    sem0, sem1 = marks.get("semantic start", end), marks.get("semantic end", end)
    txt0, txt1 = marks.get("bleu/rouge/meteor start", sem1), marks.get("bleu/rouge/meteor end", sem1)
    stages = {"total": end - start, "IDF + baseline": sem0 - start, "semantic": sem1 - sem0,
              "BLEU/ROUGE/METEOR": txt1 - txt0, "closed types + summary": end - txt1}  # fmt: skip
    return result, stages


def item_scores(result) -> dict[str, list[dict]]:
    """Per type, each item's compared fields (closed types: correctness, or the list type's precision, recall, F1)."""
    out: dict[str, list[dict]] = {}
    for qa_type, type_result in result.per_type.items():
        rows = []
        for record in type_result.items:
            if qa_type in OPEN_TYPES:
                rows.append({f: record.get(f) for f in FIELDS})
            else:
                rows.append({f: record.get(f) for f in CLOSED_FIELDS if f in record})
        out[qa_type] = rows
    return out


def largest_difference(a: dict[str, list[dict]], b: dict[str, list[dict]]) -> dict[str, float]:
    """Per field, the largest absolute difference over every item of both runs; a field that is a number on one
    side and None on the other, or an item count that differs, is infinite (never within any tolerance)."""
    worst: dict[str, float] = {}
    for qa_type in a.keys() | b.keys():
        rows_a, rows_b = a.get(qa_type, []), b.get(qa_type, [])
        if len(rows_a) != len(rows_b):
            worst["items"] = float("inf")
            continue
        for ra, rb in zip(rows_a, rows_b, strict=True):
            for field in ra.keys() | rb.keys():
                va, vb = ra.get(field), rb.get(field)
                if va is None and vb is None:
                    diff = 0.0
                elif va is None or vb is None:
                    diff = float("inf")
                else:
                    diff = abs(float(va) - float(vb))
                worst[field] = max(worst.get(field, 0.0), diff)
    return worst


def summary_difference(a: dict, b: dict) -> float:
    return max((abs(a[k] - b[k]) for k in a if isinstance(a[k], int | float) and isinstance(b.get(k), int | float)),
               default=0.0)  # fmt: skip


def batch_size_sweep(encoder: Encoder, texts: list[str], sizes: list[int], out: list[str]) -> None:
    """Sentence-embedding throughput of this device per ``batch_size``, on the submission's distinct texts."""
    out.append("")
    out.append(f"Sentence embeddings on {encoder.device} per batch size ({len(texts)} distinct texts, best of 2):")
    out.append("")
    out.append("| batch size | s | texts/s |")
    out.append("|---|---|---|")
    for size in sizes:
        best = float("inf")
        for _ in range(2):
            encoder.clear_caches()
            encoder.batch_size = size
            t = time.perf_counter()
            encoder.embed_texts(texts)
            _synchronise(encoder.device)
            best = min(best, time.perf_counter() - t)
        out.append(f"| {size} | {best:.2f} | {len(texts) / best:.0f} |")


def _synchronise(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def device_description(device: str) -> str:
    import torch

    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(device)
        return (f"{device}: {props.name}, {props.total_memory / 2**30:.0f} GiB, torch {torch.__version__}, "
                f"TF32 matmul {'on' if torch.backends.cuda.matmul.allow_tf32 else 'off'}")  # fmt: skip
    return f"cpu: torch {torch.__version__}, {torch.get_num_threads()} threads"


def run_submission(args, build_submission, pairs_of, types: list[str], out: list[str]) -> None:
    """``build_submission(per_type)`` and ``pairs_of(qa_type, inputs, responses)`` (the compared pairs of a type, as
    the scorer cleans them) are the default mode's, so every mode scores the same kind of submission."""
    import torch

    per_type = split_evenly(args.submission, types)
    inputs, responses = build_submission(per_type)
    n_open = sum(per_type[t] for t in OPEN_TYPES)
    devices = args.devices.split(",") if args.devices else ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    out.append(f"Submission: {args.submission} items ({', '.join(f'{t} {n}' for t, n in per_type.items())}), "
               f"{n_open} open-ended; devices {', '.join(devices)}")  # fmt: skip
    out.append("")
    out.append("| device | run | engine, batch | load s | total s | IDF + baseline s | semantic s | "
               "BLEU/ROUGE/METEOR s | closed types + summary s | overall effectiveness |")  # fmt: skip
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    scores: dict[str, dict] = {}
    summaries: dict[str, dict] = {}
    descriptions, sweeps = [], []
    for device in devices:
        t = time.perf_counter()
        encoder = Encoder(device=device)
        encoder.embed_texts(["warm-up"])  # CUDA's context and kernels are set up once per worker, not per job
        encoder.clear_caches()
        TextMetrics()  # the NLTK data read once, as a worker holds it; each run below starts its memo caches cold
        load_s = time.perf_counter() - t
        descriptions.append(device_description(device))
        runs = [("cold, tokens encoded in the run", False, 1)]
        if encoder.token_table() is not None:
            runs.append(("cold, token table", True, 1))
        for workers in (int(w) for w in (args.text_workers or "").split(",") if w and int(w) > 1):
            label = f"cold, {'token table, ' if runs[-1][1] else ''}BLEU/ROUGE/METEOR in {workers} processes"
            runs.append((label, runs[-1][1], workers))
        for label, use_table, workers in runs:
            encoder.use_token_table = use_table
            encoder.clear_caches()
            result, stages = timed_job(inputs, responses, encoder, TextMetrics(), workers)
            if label == runs[0][0]:
                scores[device], summaries[device] = item_scores(result), result.summary
            else:  # the table and the worker processes must not move a score
                worst = max(largest_difference(scores[device], item_scores(result)).values())
                assert worst < 1e-5, f"{device}, {label}: scores move by {worst} against {runs[0][0]}"
            out.append(f"| {device} | {label} | {encoder.engine}, {encoder.batch_size} | {load_s:.1f} | "
                       + " | ".join(f"{stages[k]:.2f}" for k in ("total", "IDF + baseline", "semantic",
                                                                  "BLEU/ROUGE/METEOR", "closed types + summary"))
                       + f" | {result.summary['overall_effectiveness']:.4f} |")  # fmt: skip
        if args.batch_sizes and device != "cpu":
            texts = sorted({t for q in OPEN_TYPES for pair in pairs_of(q, inputs, responses) for t in pair})
            sweeps.append((encoder, texts))
    out.append("")
    out.extend(f"Device {d}" for d in descriptions)
    for encoder, texts in sweeps:
        batch_size_sweep(encoder, texts, [int(x) for x in args.batch_sizes.split(",")], out)
    reference = devices[0]
    for device in devices[1:]:
        worst = largest_difference(scores[reference], scores[device])
        out.append("")
        out.append(f"Largest per-item difference, {device} against {reference} (cold runs): "
                   + ", ".join(f"{k} {v:.1e}" for k, v in sorted(worst.items()))
                   + f"; summary {summary_difference(summaries[reference], summaries[device]):.1e}")  # fmt: skip
    if args.scores_out:
        payload = {"machine": descriptions, "submission": args.submission, "scores": scores, "summaries": summaries}
        Path(args.scores_out).write_text(json.dumps(payload), encoding="utf-8")
        out.append(f"Per-item scores written to {args.scores_out}")
    if args.compare:
        other = json.loads(Path(args.compare).read_text(encoding="utf-8"))
        if other["submission"] != args.submission:
            raise SystemExit(f"{args.compare} holds a {other['submission']}-item submission, not {args.submission}")
        out.append("")
        out.append(f"Against {args.compare} ({'; '.join(other['machine'])}):")
        for theirs, their_scores in other["scores"].items():
            for ours in devices:
                worst = largest_difference(their_scores, scores[ours])
                out.append(f"  their {theirs} against our {ours}: "
                           + ", ".join(f"{k} {v:.1e}" for k, v in sorted(worst.items()))
                           + f"; summary {summary_difference(other['summaries'][theirs], summaries[ours]):.1e}")  # fmt: skip
