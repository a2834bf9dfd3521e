"""SHA-256 manifests of exported files, and verification of a folder against one."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build(paths: list[Path], root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): sha256_file(p) for p in sorted(paths)}


def combined_checksum(manifest: dict[str, str]) -> str:
    """One checksum for the whole export: SHA-256 over the sorted ``name  sha256`` lines (sha256sum style)."""
    lines = "".join(f"{digest}  {name}\n" for name, digest in sorted(manifest.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


def verify(manifest: dict[str, str], folder: Path) -> list[str]:
    """Problems found (empty when the folder matches): missing files and files whose bytes differ."""
    problems = []
    for name, expected in sorted(manifest.items()):
        path = folder / name
        if not path.exists():
            problems.append(f"{name}: missing")
        elif (actual := sha256_file(path)) != expected:
            problems.append(f"{name}: sha256 {actual} differs from the recorded {expected}")
    return problems
