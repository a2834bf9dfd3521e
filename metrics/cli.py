"""Command-line scoring of ClinIQLink harness folders (used by ``manage.py score_outputs``; no database).

    python -m metrics.cli SUBMISSION_DIR [...] [--profile cliniqlink-2025|paper] [--json]
                                    [--per-item FILE.jsonl] [--seed N] [--model-path DIR] [--device cpu|cuda]
                                    [--nltk-data DIR] [--cache-dir DIR] [--text-workers N]
                                    [--allow-length-mismatch] [--keep-going]

The model and the NLTK data load once for all folders. Every folder is read before anything is scored: by
default one bad folder stops the run (nothing is scored); with ``--keep-going`` the good folders are scored and
the bad ones are reported (on stderr, and under ``"errors"`` in the ``--json`` object). A folder whose scoring
fails is reported the same way, never as a traceback: the folders scored before it are printed, and with
``--keep-going`` the later ones are scored too. Progress goes to stderr. Exit status: 0 on success, 2 when a
folder cannot be read (each problem names the file and the field; also with ``--keep-going``, after the good
folders are scored), 1 on another error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # torch on 2 shared cores crawls with busy-waiting threads

from .profiles import DEFAULT_PROFILE, PROFILES  # noqa: E402
from .resources import DEFAULT_STOPWORD_VERSION, STOPWORD_VERSIONS, ResourceError  # noqa: E402
from .submission import Submission, SubmissionError, load_submission_dir  # noqa: E402

#: The most worker processes ``--text-workers`` takes: beyond a few, BLEU/ROUGE/METEOR are done before the
#: model and more workers only take cores from it (docs/benchmarks-metric.md, the GPU run).
MAX_TEXT_WORKERS = 32

HEADLINE_KEYS = (
    "overall_effectiveness", "true_false_accuracy", "multiple_choice_average", "list_overall_macro_avg_f1_score",
    "list_overall_micro_f1_score", "short_semantic_match_score", "short_inverse_semantic_match_score",
    "multi_hop_semantic_match_score", "multi_hop_inverse_semantic_match_score",
    "multi_hop_inverse_step_identification_rate", "total_invalid_close_ended",
)  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options shared by this module's ``main`` and the Django management command."""
    parser.add_argument("submission_dirs", nargs="+", metavar="SUBMISSION_DIR", help="harness output folder(s)")
    parser.add_argument("--profile", choices=sorted(PROFILES), default=DEFAULT_PROFILE)
    parser.add_argument("--json", action="store_true", help="print one JSON object keyed by folder name")
    parser.add_argument("--per-item", metavar="FILE.jsonl", help="write one JSON line per item to this file")
    parser.add_argument("--seed", type=int, default=0, help="seed of the paragraph baseline sample (default 0)")
    parser.add_argument("--stopwords", type=int, choices=STOPWORD_VERSIONS, default=None,
                        help="NLTK stop-word list version: 179 (before 2025-02-20) or 198 (default)")  # fmt: skip
    parser.add_argument("--model-path", default=None, help="sentence-transformers model directory")
    parser.add_argument("--device", default=None, help="torch device of the model: cpu (default), cuda, cuda:N")
    parser.add_argument("--nltk-data", default=None, help="NLTK data directory (scripts/build_nltk_data.py)")
    parser.add_argument("--cache-dir", default=None,
                        help="directory of the token-vector table (scripts/build_token_table.py; default "
                             "$METRIC_CACHE_DIR or var/metric-cache)")  # fmt: skip
    parser.add_argument("--text-workers", type=text_workers, default=1, metavar="N",
                        help="score BLEU/ROUGE/METEOR in N worker processes while the model runs (default 1: in "
                             "this process; 4-6 suits a GPU machine with cores to spare)")  # fmt: skip
    parser.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    parser.add_argument("--allow-length-mismatch", action="store_true",
                        help="as the public scorer: a file whose inputs and responses differ in length scores 0 "
                             "for its type (with a note) instead of stopping the run")  # fmt: skip
    parser.add_argument("--keep-going", action="store_true",
                        help="score the folders that can be read and report the others (exit status 2) instead "
                             "of scoring nothing when one folder is bad")  # fmt: skip


def text_workers(value: str) -> int:
    """``--text-workers``: a whole number from 1 to :data:`MAX_TEXT_WORKERS`, else a clear argparse error."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= number <= MAX_TEXT_WORKERS:
        raise argparse.ArgumentTypeError(f"{number} is outside 1-{MAX_TEXT_WORKERS}")
    return number


def _names(paths: Sequence[str]) -> list[str]:
    base = [Path(p).resolve().name for p in paths]
    return [n if base.count(n) == 1 else str(Path(p)) for n, p in zip(base, paths, strict=True)]


def load_all(
    paths: Sequence[str], *, allow_length_mismatch: bool = False
) -> tuple[list[Submission], dict[str, list[str]]]:
    """Read every folder before scoring anything; return the submissions and the problems per bad folder name."""
    submissions, problems = [], {}
    for path, name in zip(paths, _names(paths), strict=True):
        try:
            submissions.append(load_submission_dir(path, name=name, allow_length_mismatch=allow_length_mismatch))
        except SubmissionError as exc:
            problems[name] = [str(p) for p in exc.problems]
    return submissions, problems


class _Bars:
    """tqdm bars on stderr, one per (folder, stage)."""

    def __init__(self, stream: IO[str], enabled: bool) -> None:
        self.stream, self.enabled, self.bars = stream, enabled, {}

    def callback(self, label: str):
        def progress(stage: str, done: int, total: int) -> None:
            if not self.enabled:
                return
            from tqdm import tqdm

            key = (label, stage)
            bar = self.bars.get(key)
            if bar is None:
                bar = self.bars[key] = tqdm(total=total, desc=f"{label} {stage}", file=self.stream, unit="pair")
            bar.update(done - bar.n)
            if done >= total:
                bar.close()

        return progress


def score_folders(
    paths: Sequence[str],
    *,
    profile: str = DEFAULT_PROFILE,
    seed: int = 0,
    stopwords_version: int = DEFAULT_STOPWORD_VERSION,
    per_item: str | None = None,
    as_json: bool = False,
    model_path: str | None = None,
    device: str | None = None,
    nltk_data: str | None = None,
    cache_dir: str | None = None,
    text_workers: int = 1,
    allow_length_mismatch: bool = False,
    keep_going: bool = False,
    progress: bool = True,
    stdout: IO[str] = sys.stdout,
    stderr: IO[str] = sys.stderr,
) -> int:
    """Score every folder with one model and one set of NLTK resources; print results; return an exit code."""
    submissions, problems = load_all(paths, allow_length_mismatch=allow_length_mismatch)
    if problems:
        lines = [p for folder_problems in problems.values() for p in folder_problems]
        verdict = f"skipping {len(problems)} of {len(paths)} folders" if keep_going else "cannot score"
        stderr.write(f"error: {verdict}, bad input:\n" + "".join(f"  {p}\n" for p in lines))
        if not keep_going:
            return 2
    from .scorer import score_submission

    encoder = text_metrics = None
    bars = _Bars(stderr, progress)
    out: dict[str, Any] = {}
    failed: dict[str, str] = {}
    rows_file = open(per_item, "w", encoding="utf-8") if per_item else None
    try:
        for sub in submissions:
            for note in sub.notes:
                stderr.write(f"note: {sub.name}: {note}\n")
            if encoder is None and _needs_encoder(sub):
                from .encoder import Encoder

                encoder = Encoder(model_path, device=device, cache_dir=cache_dir)
                if not PROFILES[profile].contextual_tokens and encoder.token_table() is None:
                    stderr.write(f"note: token vectors are encoded in this run ({encoder.token_table_problem}); "
                                 "scripts/build_token_table.py builds the table once\n")  # fmt: skip
            if text_metrics is None and _has_open_items(sub):
                from .text_metrics import TextMetrics

                text_metrics = TextMetrics(nltk_data)
                for metric, reason in text_metrics.reasons.items():
                    stderr.write(f"note: {metric} unavailable, reported as null: {reason}\n")
            try:
                result = score_submission(
                    sub.inputs, sub.responses, profile=profile, seed=seed, encoder=encoder,
                    text_metrics=text_metrics, stopwords_version=stopwords_version, model_path=model_path,
                    progress=bars.callback(sub.name), text_workers=text_workers,
                )  # fmt: skip
            except Exception as exc:  # noqa: BLE001 - one folder's failure is reported; the others are not lost
                failed[sub.name] = f"{type(exc).__name__}: {exc}"
                stderr.write(f"error: {sub.name}: not scored: {failed[sub.name]}\n")
                if not keep_going:
                    break
                continue
            for note in result.notes:
                stderr.write(f"note: {sub.name}: {note}\n")
            out[sub.name] = {**result.summary, "run": result.run, "notes": sub.notes + result.notes}
            if rows_file:
                for row in result.item_rows(sub.name):
                    rows_file.write(json.dumps(row, ensure_ascii=False) + "\n")
    finally:
        if rows_file:
            rows_file.close()
    if as_json:
        out.update({name: {"errors": folder_problems} for name, folder_problems in problems.items()})
        out.update({name: {"errors": [error]} for name, error in failed.items()})
        stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    else:
        table = format_table(out) if out else ""
        stdout.write(table + "".join(f"{name}: not scored (bad input, see above)\n" for name in problems))
        stdout.write("".join(f"{name}: not scored ({error})\n" for name, error in failed.items()))
    return 2 if problems else 1 if failed else 0


def _has_open_items(sub: Submission) -> bool:
    from .open_ended import OPEN_TYPES

    return any(sub.inputs.get(t) for t in OPEN_TYPES)


def _needs_encoder(sub: Submission) -> bool:
    from .scorer import idf_corpus

    return _has_open_items(sub) or len(idf_corpus(sub.inputs)) >= 100


def _fmt(value: Any) -> str:
    if value is None:
        return "null"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def format_table(results: dict[str, dict[str, Any]]) -> str:
    """Headline keys per folder, one column per folder."""
    names = list(results)
    width = max(len(k) for k in HEADLINE_KEYS) + 2
    lines = ["".ljust(width) + "  ".join(n[:24].rjust(24) for n in names)]
    for key in HEADLINE_KEYS:
        lines.append(key.ljust(width) + "  ".join(_fmt(results[n].get(key)).rjust(24) for n in names))
    for name in names:
        run = results[name]["run"]
        lines.append(f"{name}: profile {run['profile']}, seed {run['seed']}, baseline {run['baseline']:.4f} "
                     f"({run['baseline_source']}), stop words {run['stopwords_version']}")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m metrics.cli", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_from_namespace(vars(args))


def run_from_namespace(options: dict[str, Any], stdout: IO[str] = sys.stdout, stderr: IO[str] = sys.stderr) -> int:
    try:
        return score_folders(
            options["submission_dirs"], profile=options["profile"], seed=options["seed"],
            stopwords_version=options["stopwords"] or DEFAULT_STOPWORD_VERSION, per_item=options["per_item"],
            as_json=options["json"],
            model_path=options["model_path"], device=options.get("device"), nltk_data=options["nltk_data"],
            cache_dir=options.get("cache_dir"), text_workers=options.get("text_workers") or 1,
            allow_length_mismatch=options.get("allow_length_mismatch", False),
            keep_going=options.get("keep_going", False),
            progress=not options["no_progress"], stdout=stdout, stderr=stderr,
        )  # fmt: skip
    except (ResourceError, OSError, ValueError) as exc:  # a resource problem: say what, not a traceback
        stderr.write(f"error: {type(exc).__name__}: {exc}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
