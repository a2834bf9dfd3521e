"""Import QA items (all seven types) and compare with a raw PostgreSQL COPY of the same rows.

Run: .venv/bin/python bench/bench_import.py [--items 200000] [--stream-only]
Targets (issue #22): 200,000 items within 2x of COPY; 1,000,000 items streamed without running out of memory
(``--items 1000000 --stream-only``: the import alone, its wall time and the importing process's peak memory).
The dataset is written record by record, so the generator never holds the items either.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from _django import ROOT, setup_django


def make_dataset(folder: Path, n_items: int) -> int:
    """Replicate the public sample to ``n_items`` distinct items spread over the seven files (written streamed)."""
    from annotation.qa_types import CLINIQLINK_FILES

    sample = ROOT / "fixtures" / "cliniqlink-sample"
    total = 0
    for index, name in enumerate(CLINIQLINK_FILES):
        per_file = n_items // len(CLINIQLINK_FILES) + (1 if index < n_items % len(CLINIQLINK_FILES) else 0)
        base = json.loads((sample / name).read_text())
        with (folder / name).open("w") as out:  # the same text as json.dumps(records), one record at a time
            out.write("[")
            for i in range(per_file):
                record = json.loads(json.dumps(base[i % len(base)]))
                record["question"] = f"{record['question']} (variant {i})"
                record["source"]["paragraph_id"] = f"{record['source']['paragraph_id']}-v{i}"
                out.write((", " if i else "") + json.dumps(record))
            out.write("]")
        total += per_file
    return total


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--stream-only", action="store_true", help="the import alone: no COPY, no re-import")
    args = parser.parse_args()
    if args.items > 200_000:
        # The upload limits (200,000 records, 100 MiB a file) bound what people may send; the bench raises them
        # to measure the import itself at this size.
        os.environ.setdefault("PORTAL_UPLOAD_MAX_RECORDS", str(args.items))
        os.environ.setdefault("PORTAL_UPLOAD_MAX_BYTES", str(1 << 31))
    setup_django("portal_bench_import")
    from django.db import connection

    from annotation.services.imports import items_import
    from portal.cli import cli_progress

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        total = make_dataset(folder, args.items)
        size_mib = sum(path.stat().st_size for path in folder.iterdir()) / 2**20
        rss_before = peak_rss_mib()
        started = time.perf_counter()
        with cli_progress("import") as progress:
            result = items_import(paths=[folder], progress=progress)
        import_s = time.perf_counter() - started
        rss_after = peak_rss_mib()
        assert result.created == total, result

        if not args.stream_only:
            # The same rows through COPY into an identical empty table (same indexes and constraints).
            with connection.cursor() as cursor:
                cursor.execute("CREATE TABLE bench_copy (LIKE annotation_qaitem INCLUDING ALL)")
            buffer = io.BytesIO()
            raw = connection.connection
            with raw.cursor() as cur, cur.copy("COPY annotation_qaitem TO STDOUT") as copy:
                for chunk in copy:
                    buffer.write(chunk)
            data = buffer.getvalue()
            started = time.perf_counter()
            with raw.transaction(), raw.cursor() as cur, cur.copy("COPY bench_copy FROM STDIN") as copy:
                copy.write(data)
            copy_s = time.perf_counter() - started
            again = time.perf_counter()
            second = items_import(paths=[folder])
            reimport_s = time.perf_counter() - again
            assert second.created == 0 and second.existing == total

    print(f"items imported:          {total}  ({size_mib:,.0f} MiB of JSON in 7 files)")
    print(f"portal import:           {import_s:.2f} s  ({total / import_s:,.0f} items/s)")
    print(f"peak memory (ru_maxrss): {rss_after:,.0f} MiB  (before the import: {rss_before:,.0f} MiB)")
    if not args.stream_only:
        print(f"raw COPY of same rows:   {copy_s:.2f} s")
        print(f"ratio import / COPY:     {import_s / copy_s:.2f}x   (target <= 2x)")
        print(f"idempotent re-import:    {reimport_s:.2f} s (0 new)")


if __name__ == "__main__":
    main()
