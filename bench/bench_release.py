"""Freeze a release and export it in the ClinIQLink layout (targets: 5,000 items under 3 s together; 50,000 items,
ten times the benchmark, under 10 s).

Run: .venv/bin/python bench/bench_release.py [--items 5000]   (or --items 50000)
The items are imported and marked verified (relevance 5) first; that set-up is not timed. The export copies the files
the freeze kept (after hashing them against the manifest); the script also times it written afresh without them,
and a freeze in a process that runs other threads (a web worker's case: no forked processes).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from pathlib import Path

from _django import setup_django
from bench_import import make_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=5000)
    args = parser.parse_args()
    setup_django("portal_bench_release")
    from django.conf import settings

    from annotation.models import QAItem
    from annotation.services.imports import items_import
    from annotation.services.releases import release_export, release_freeze, release_verify

    with tempfile.TemporaryDirectory() as tmp:
        settings.RELEASE_FILES_DIR = Path(tmp) / "release-files"  # the kept files go with the throwaway database
        folder = Path(tmp) / "in"
        folder.mkdir()
        make_dataset(folder, args.items)
        items_import(paths=[folder])
        QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary")

        started = time.perf_counter()
        release = release_freeze(name="bench")
        frozen = time.perf_counter()
        paths = release_export(release=release, fmt="cliniqlink", out_dir=Path(tmp) / "out")
        done = time.perf_counter()
        assert release.item_count == args.items and len(paths) == 7
        assert release_verify(release=release, folder=Path(tmp) / "out") == []
        # The export above copies the files the freeze kept; timed again without them, as a node that cannot see
        # them (or a release frozen before they were kept) writes the export afresh.
        shutil.rmtree(Path(settings.RELEASE_FILES_DIR) / str(release.pk))
        again = time.perf_counter()
        release_export(release=release, fmt="cliniqlink", out_dir=Path(tmp) / "afresh")
        afresh = time.perf_counter() - again
        assert release_verify(release=release, folder=Path(tmp) / "afresh") == []
        # A freeze from the releases page runs in a threaded web worker, which never forks (portal/parallel.py):
        # the same freeze with another thread alive writes the formats one after another.
        other_thread = threading.Thread(target=threading.Event().wait, args=(3600,), daemon=True)
        other_thread.start()
        again = time.perf_counter()
        release_freeze(name="bench beside a thread")
        threaded = time.perf_counter() - again

    print(f"items in release:        {release.item_count}")
    print(f"freeze (snapshot + all four formats' manifests): {frozen - started:.2f} s")
    print(f"cliniqlink export:       {done - frozen:.2f} s   (copies the files the freeze kept, checked first)")
    print(f"cliniqlink export afresh: {afresh:.2f} s   (without kept files: written from the frozen records)")
    target = 3 if args.items <= 5000 else 10
    print(f"freeze + export:         {done - started:.2f} s   (target < {target} s at {args.items:,} items)")
    print(f"freeze beside other threads (as from the releases page, no fork): {threaded:.2f} s")


if __name__ == "__main__":
    main()
