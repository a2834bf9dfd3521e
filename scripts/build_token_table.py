#!/usr/bin/env python
"""Encode every token the ClinIQLink word layer can meet, once, into the metric's on-disk token table.

Usage: python scripts/build_token_table.py [CACHE_DIR] [--model-path DIR] [--force]
       (default CACHE_DIR: $METRIC_CACHE_DIR, else $PORTAL_VAR_DIR/metric-cache, else <project>/var/metric-cache)

The table holds the vector of each alphanumeric vocabulary entry encoded alone as ``[CLS] piece [SEP]``
(metrics/token_table.py), keyed by the model's weights and vocabulary. Scoring reads it instead of
encoding tokens; without it scoring still works and encodes tokens on first use. Safe to run again: a table that
is already valid for the model is left alone (``--force`` rebuilds it). Progress is shown with tqdm.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics.encoder import Encoder  # noqa: E402
from metrics.resources import library_versions  # noqa: E402
from metrics.token_table import build_table, vocabulary_sha256  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache_dir", nargs="?", default=None, help="where the table goes")
    parser.add_argument("--model-path", default=None, help="sentence-transformers model directory")
    parser.add_argument("--force", action="store_true", help="rebuild even if a valid table exists")
    args = parser.parse_args(argv)
    encoder = Encoder(args.model_path, cache_dir=args.cache_dir)
    path = encoder.token_table_path
    if not args.force and encoder.token_table() is not None:
        print(f"token table up to date: {path} ({len(encoder.token_table().vectors)} tokens)")
        return 0
    tokens = encoder.vocabulary_tokens()
    from tqdm import tqdm

    started = time.perf_counter()
    with tqdm(total=len(tokens), desc="token table", unit="token", file=sys.stderr) as bar:
        build_table(
            tokens,
            encoder.encode_token_strings,
            path,
            weights_sha256=encoder.weights_sha256,
            vocab_sha256=vocabulary_sha256(tokens),
            meta={"engine": encoder.engine, "torch": library_versions()["torch"]},
            progress=lambda done, total: bar.update(done - bar.n),
        )
    print(f"token table written: {path} ({len(tokens)} tokens, {time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
