"""Time the full set of analytics statistics on synthetic data, each with 1,000 bootstrap resamples.

Data: 5,000 double-reviewed QA items (two reviewers; verdict correct / incorrect / cannot-tell and GP
relevance 1-5; ~2 % second reviews missing) across the 7 ClinIQLink QA types, and 1,000 ranked questions x 8
answers (7 systems + the reference) x 3 rankers, with 4 metric scores per answer.

Statistics: agreement for verdicts (nominal alpha, Fleiss, Cohen, raw) and relevance (ordinal and interval
alpha, Fleiss, Cohen plain and quadratic, raw), overall and per QA type; Kendall's W and mean pairwise tau-b;
per metric (reference excluded) segment tau-b, pairwise accuracy, system Pearson and Spearman; the
Bradley-Terry leaderboard.

Run: .venv/bin/python bench/bench_stats.py [--resamples 1000] [--markdown docs/benchmarks-stats.md]
Target: under 10 s wall time for the statistics on a 2-core machine.
"""

# ruff: noqa: E402  (the clock starts before the imports so the process wall time includes them)
from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stats.agreement import (
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
)
from stats.correlation import pairwise_accuracy, segment_tau_b, system_correlation
from stats.leaderboard import bradley_terry_leaderboard
from stats.rankings import kendall_w, mean_pairwise_tau_b
from stats.ratings import prepare_ratings

QA_TYPES = [
    "true_false",
    "multiple_choice",
    "list",
    "short_answer",
    "short_inverse",
    "multi_hop",
    "multi_hop_inverse",
]
VERDICTS = ["correct", "incorrect", "cannot_tell"]
SYSTEMS = [f"system_{i}" for i in range(7)] + ["reference"]
METRICS = ["semantic", "bleu", "rouge_l", "meteor"]
SEED = 20250607


def make_vetting(n_items: int, rng: np.random.Generator) -> pd.DataFrame:
    qa_type = rng.choice(QA_TYPES, size=n_items)
    truth_v = rng.choice(3, size=n_items, p=[0.7, 0.2, 0.1])
    truth_r = rng.choice(5, size=n_items, p=[0.05, 0.1, 0.25, 0.35, 0.25]) + 1
    rows = []
    for reviewer in ("A", "B"):
        keep = rng.random(n_items) < (1.0 if reviewer == "A" else 0.98)
        flip = rng.random(n_items) > 0.85
        verdict = np.where(flip, (truth_v + rng.integers(1, 3, n_items)) % 3, truth_v)
        relevance = np.clip(np.rint(truth_r + rng.normal(0, 0.7, n_items)), 1, 5).astype(int)
        rows.append(
            pd.DataFrame(
                {
                    "item": np.arange(n_items)[keep],
                    "annotator": reviewer,
                    "qa_type": qa_type[keep],
                    "verdict": np.array(VERDICTS, dtype=object)[verdict[keep]],
                    "relevance": relevance[keep],
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def make_rankings(n_questions: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    quality = np.r_[np.linspace(-1.0, 1.0, 7), 1.5]  # the reference is usually, not always, best
    q_eff = quality[None, :] + rng.normal(0, 0.8, (n_questions, 8))
    items = np.repeat([f"q{i:04d}" for i in range(n_questions)], 8)
    systems = np.tile(SYSTEMS, n_questions)
    frames = []
    for ranker in ("R1", "R2", "R3"):
        noisy = q_eff + rng.normal(0, 0.6, q_eff.shape)
        rank = (-noisy).argsort(axis=1).argsort(axis=1) + 1
        tie = rng.random(n_questions) < 0.1  # some rankers tie their two worst answers
        worst2 = rank >= 7
        rank = np.where(tie[:, None] & worst2, 7, rank)
        frames.append(
            pd.DataFrame(
                {
                    "item": items,
                    "annotator": ranker,
                    "answer": [f"{i}-{s}" for i, s in zip(items, systems, strict=True)],
                    "rank": rank.ravel(),
                    "system": systems,
                }
            )
        )
    rankings = pd.concat(frames, ignore_index=True)
    scores = pd.DataFrame({"item": items, "system": systems})
    for k, metric in enumerate(METRICS):
        noise = 0.5 + 0.4 * k
        s = q_eff + rng.normal(0, noise, q_eff.shape)
        s[:, 7] = 10.0  # the reference scores itself perfectly
        scores[metric] = s.ravel()
    return rankings, scores


def fmt(res) -> str:
    if res.value is None:
        return f"undefined ({res.undefined_reason})"
    ci = f" [{res.ci[0]:.3f}, {res.ci[1]:.3f}]" if res.ci else ""
    return f"{res.value:.3f}{ci} (n={res.n_items})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--markdown", type=Path, help="also write the printed report to this Markdown file")
    args = parser.parse_args()
    b = args.resamples
    load = os.getloadavg()
    rng = np.random.default_rng(SEED)
    t0 = time.perf_counter()
    vetting = make_vetting(args.items, rng)
    rankings, scores = make_rankings(args.questions, rng)
    t_data = time.perf_counter() - t0

    lines: list[str] = []
    timings: dict[str, float] = {}

    def timed(part: str):
        class _T:
            def __enter__(self):
                self.t = time.perf_counter()

            def __exit__(self, *exc):
                timings[part] = timings.get(part, 0.0) + time.perf_counter() - self.t

        return _T()

    start = time.perf_counter()
    groups = [("overall", vetting)] + [(t, vetting[vetting["qa_type"] == t]) for t in QA_TYPES]
    with timed("agreement: verdicts (4 statistics x 8 groups)"):
        for name, df in groups:
            tab = prepare_ratings(df.rename(columns={"verdict": "value"}), values=VERDICTS)
            a = krippendorff_alpha(tab, level="nominal", n_resamples=b, seed=SEED)
            f = fleiss_kappa(tab, n_resamples=b, seed=SEED)
            c = cohen_kappa(tab, n_resamples=b, seed=SEED)
            p = percent_agreement(tab, n_resamples=b, seed=SEED)
            lines.append(
                f"verdict   {name:<18} alpha_nominal {fmt(a)} | fleiss {fmt(f)} | cohen {fmt(c)} | raw {fmt(p)}"
            )
    with timed("agreement: relevance (6 statistics x 8 groups)"):
        for name, df in groups:
            tab = prepare_ratings(df.rename(columns={"relevance": "value"}), values=[1, 2, 3, 4, 5])
            ao = krippendorff_alpha(tab, level="ordinal", n_resamples=b, seed=SEED)
            ai = krippendorff_alpha(tab, level="interval", n_resamples=b, seed=SEED)
            f = fleiss_kappa(tab, n_resamples=b, seed=SEED)
            c = cohen_kappa(tab, n_resamples=b, seed=SEED)
            cq = cohen_kappa(tab, weights="quadratic", n_resamples=b, seed=SEED)
            p = percent_agreement(tab, n_resamples=b, seed=SEED)
            lines.append(
                f"relevance {name:<18} alpha_ordinal {fmt(ao)} | alpha_interval {fmt(ai)} | "
                f"fleiss {fmt(f)} | cohen {fmt(c)} | cohen_quadratic {fmt(cq)} | raw {fmt(p)}"
            )
    rank_cols = rankings[["item", "annotator", "answer", "rank"]]
    with timed("rankings: Kendall's W"):
        w = kendall_w(rank_cols, n_resamples=b, seed=SEED)
    with timed("rankings: mean pairwise tau-b"):
        tau = mean_pairwise_tau_b(rank_cols, n_resamples=b, seed=SEED)
    lines.append(f"ranking   kendall_w {fmt(w.pooled)} | mean_pairwise_tau_b {fmt(tau.pooled)}")
    for metric in METRICS:
        sc = scores[["item", "system", metric]].rename(columns={metric: "score"})
        kw = {"exclude": {"reference"}, "n_resamples": b, "seed": SEED}
        with timed("metrics: segment tau-b (4 metrics)"):
            seg, _ = segment_tau_b(rankings, sc, **kw)
        with timed("metrics: pairwise accuracy (4 metrics)"):
            acc = pairwise_accuracy(rankings, sc, **kw)
        with timed("metrics: system Pearson + Spearman (4 metrics)"):
            pear = system_correlation(rankings, sc, method="pearson", **kw)
            spear = system_correlation(rankings, sc, method="spearman", **kw)
        lines.append(
            f"metric    {metric:<10} segment_tau_b {fmt(seg)} | pairwise_acc {fmt(acc)} | "
            f"system_pearson {fmt(pear)} | system_spearman {fmt(spear)}"
        )
    with timed("leaderboard: Bradley-Terry + win rate + mean rank"):
        board = bradley_terry_leaderboard(rankings, n_resamples=b, seed=SEED)
    for s in board.standings:
        lines.append(
            f"bt        {s.system:<10} strength {s.strength:+.3f} "
            f"[{s.strength_ci[0]:+.3f}, {s.strength_ci[1]:+.3f}]"
            f" | win_rate {s.win_rate:.3f} | mean_rank {s.mean_rank:.3f}"
        )
    total = time.perf_counter() - start

    header = [
        f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"numpy {np.__version__}, pandas {pd.__version__}; load average at start "
        + ", ".join(f"{x:.2f}" for x in load),
        f"data: {args.items} double-reviewed items ({len(vetting)} ratings), "
        f"{args.questions} questions x 8 answers x 3 rankers ({len(rankings)} rank rows), {len(METRICS)} metrics; generated in {t_data:.2f} s",
        f"bootstrap resamples per statistic: {b}",
    ]
    timing = [f"{part:<52} {sec:7.2f} s" for part, sec in timings.items()]
    timing.append(f"{'TOTAL (statistics, excluding data generation)':<52} {total:7.2f} s")
    process = time.perf_counter() - _T0
    timing.append(f"{'process wall time (imports + data + statistics)':<52} {process:7.2f} s")
    report = "\n".join(header + ["", "figures:"] + lines + ["", "timings:"] + timing)
    print(report)
    if args.markdown:
        cmd = "python bench/bench_stats.py" + (f" --resamples {b}" if b != 1000 else "")
        args.markdown.write_text(
            "# Statistics benchmark\n\n"
            "Written by `bench/bench_stats.py` itself (do not edit by hand).\n"
            f"Reproduce: `.venv/bin/{cmd} --markdown docs/benchmarks-stats.md`\n\n"
            "Synthetic data (seeded); the figures show the statistics run end to end, not real results.\n"
            "Target: all statistics, 1,000 bootstrap resamples each, under 10 s on a 2-core machine.\n\n"
            "```\n" + report + "\n```\n"
        )


if __name__ == "__main__":
    main()
