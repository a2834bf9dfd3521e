"""Import 20,000 QA items (all seven types) and compare with a raw PostgreSQL COPY of the same rows.

Run: .venv/bin/python bench/bench_import.py [--items 20000]
Target (docs/design.md §7): under 10 s, and within 3× of COPY.
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
from pathlib import Path

from _django import ROOT, setup_django


def make_dataset(folder: Path, n_items: int) -> int:
    """Replicate the public sample to ``n_items`` distinct items spread over the seven files."""
    from annotation.qa_types import CLINIQLINK_FILES

    sample = ROOT / "fixtures" / "cliniqlink-sample"
    total = 0
    for index, name in enumerate(CLINIQLINK_FILES):
        per_file = n_items // len(CLINIQLINK_FILES) + (1 if index < n_items % len(CLINIQLINK_FILES) else 0)
        base = json.loads((sample / name).read_text())
        records = []
        for i in range(per_file):
            record = json.loads(json.dumps(base[i % len(base)]))
            record["question"] = f"{record['question']} (variant {i})"
            record["source"]["paragraph_id"] = f"{record['source']['paragraph_id']}-v{i}"
            records.append(record)
        (folder / name).write_text(json.dumps(records))
        total += len(records)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=20_000)
    args = parser.parse_args()
    setup_django("portal_bench_import")
    from django.db import connection

    from annotation.services.imports import items_import
    from portal.cli import cli_progress

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        total = make_dataset(folder, args.items)
        started = time.perf_counter()
        with cli_progress("import") as progress:
            result = items_import(paths=[folder], progress=progress)
        import_s = time.perf_counter() - started
        assert result.created == total, result

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

    print(f"items imported:          {total}")
    print(f"portal import:           {import_s:.2f} s  ({total / import_s:,.0f} items/s)")
    print(f"raw COPY of same rows:   {copy_s:.2f} s")
    print(f"ratio import / COPY:     {import_s / copy_s:.2f}x   (target <= 3x)")
    print(f"idempotent re-import:    {reimport_s:.2f} s (0 new)")


if __name__ == "__main__":
    main()
