"""Where the cold semantic score's time goes, per open type (bench/bench_scoring.py, docs/benchmarks-metric.md).

One cold run per type under ``torch.profiler`` (its overhead makes the run a little slower than the timed ones);
each operator's time on the calling thread is put in one of four parts:

* linear layers: the model's matrix products (oneDNN's fused kernels, which include GELU and the residual adds,
  or ``linear``/``addmm`` and ``gelu`` when the plain modules run);
* attention: the fused attention kernel of each group of equal-length texts and the copy of its heads back into
  the chunk;
* layer norms;
* the rest: wall time outside those (embeddings, mean pooling, tokenisation, the word layer, Python).

The linear layers' own speed (GFLOP/s) next to the ceiling's says whether the matrix products or the rest limit
the share of the ceiling. The last column bounds the share from above with the model's own kernels as this CPU
runs them: the time the ceiling allows for the positions, over the time the linear layers, attention and layer
norms took, as if the rest cost nothing. The share the issue asks for (85 %) is out of reach where that bound is
below it, whatever is done outside the model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

PARTS = {
    "linear": ("mkldnn::_linear_pointwise", "aten::addmm", "aten::gelu"),
    "attention": ("aten::_scaled_dot_product_flash_attention_for_cpu", "aten::copy_"),
    "layer norm": ("aten::native_layer_norm",),
}


def profiled_parts(run: Callable[[], object]) -> tuple[float, dict[str, float]]:
    """Wall seconds of ``run()`` under the profiler, and the seconds of each part (the rest included)."""
    import torch

    started = time.perf_counter()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        run()
    wall = time.perf_counter() - started
    self_us = {event.key: event.self_cpu_time_total for event in profile.key_averages()}
    parts = {part: sum(self_us.get(name, 0.0) for name in names) / 1e6 for part, names in PARTS.items()}
    parts["rest"] = max(0.0, wall - sum(parts.values()))
    return wall, parts


def report_time_split(
    runs: Sequence[tuple[str, int, Callable[[], object], float]], flops_per_position: float, out: list[str]
) -> None:
    """``runs``: (type, positions, a cold scoring run, the ceiling's GFLOP/s measured for that type). Appends the
    table to ``out``."""
    out.append("")
    out.append(
        "Where the cold semantic score's time goes (one cold run per type under torch.profiler; linear layers = "
        "the model's matrix products with their fused GELU and residual adds; attention = the attention kernel "
        "and the copy of its output; rest = embeddings, pooling, tokenisation, the word layer, Python):"
    )
    out.append("")
    out.append(
        "| type | profiled s | linear layers s | attention s | layer norms s | rest s | linear layers GFLOP/s "
        "| linear layers / ceiling | share of ceiling if the rest cost nothing |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|")
    for qa_type, positions, run, gflops in runs:
        wall, parts = profiled_parts(run)
        linear_gflops = positions * flops_per_position / parts["linear"] / 1e9 if parts["linear"] else float("nan")
        shares = [f"{parts[p]:.2f} ({parts[p] / wall:.0%})" for p in ("linear", "attention", "layer norm", "rest")]
        kernels = parts["linear"] + parts["attention"] + parts["layer norm"]
        bound = positions * flops_per_position / (gflops * 1e9) / kernels if kernels else float("nan")
        out.append(
            f"| {qa_type} | {wall:.2f} | {' | '.join(shares)} | {linear_gflops:.0f} | {linear_gflops / gflops:.0%} "
            f"| {bound:.0%} |"
        )
