"""Nuggets in releases: the snapshot of the items' validated nuggets taken at freeze time, and the
``nuggets.jsonl`` file every export of such a release carries (its SHA-256 is in each format's manifest)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from annotation.selectors.nuggets import nugget_set_as_json, validated_nuggets

NUGGETS_FILE = "nuggets.jsonl"
#: ``export_release --format nuggets`` / the release page's link: the nuggets file alone.
NUGGETS_FORMAT = "nuggets"


def release_nugget_snapshot(item_ids: Iterable[int]) -> dict[int, dict]:
    """``{item_id: {"version": n, "nuggets": [{"id", "text", "importance"}]}}`` for the items with a validated
    nugget list now (what ``ReleaseItem.nuggets`` stores)."""
    return {
        item_id: {"version": nugget_set.version, "nuggets": nugget_set_as_json(nugget_set)}
        for item_id, nugget_set in validated_nuggets(item_ids).items()
    }


def nuggets_jsonl_lines(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per release item that has nuggets, in release order: ``{"item_uid", "nuggets", "version"}``, the
    nugget import format. Keys are written in a fixed order whatever order the database returns them in, so the
    bytes at export equal those hashed at freeze."""
    lines = []
    for entry in entries:
        frozen = entry.get("nuggets")
        if not frozen:
            continue
        nuggets = [{"id": n["id"], "text": n["text"], "importance": n["importance"]} for n in frozen["nuggets"]]
        record = {"item_uid": entry["uid"], "nuggets": nuggets, "version": frozen["version"]}
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return lines


def nuggets_jsonl_write(entries: Sequence[Mapping[str, Any]], out_dir: Path) -> Path:
    path = out_dir / NUGGETS_FILE
    path.write_text("".join(nuggets_jsonl_lines(entries)), encoding="utf-8", newline="\n")
    return path
