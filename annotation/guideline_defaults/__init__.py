"""The guidelines shipped with the portal, one markdown file per ``<benchmark>.<qa_type>.md``.

Each file's text is followed by ``_common.md`` (what applies to every type: missing excerpt, outdated medicine,
ambiguity, what to write in the comment). Loaded as version 1 by migration ``0009_guidelines`` and on demand by
``annotation.services.guidelines.guideline_defaults_ensure`` (a database that was emptied gets them back).
Pure: no Django.
"""

from __future__ import annotations

from pathlib import Path

DEFAULTS_DIR = Path(__file__).resolve().parent
DEFAULT_CHANGE_NOTE = "Default guideline shipped with the portal."


def default_guidelines() -> dict[tuple[str, str], str]:
    """``{(benchmark, qa_type): markdown}`` of every shipped guideline, the common part appended."""
    common = (DEFAULTS_DIR / "_common.md").read_text(encoding="utf-8")
    texts = {}
    for path in sorted(DEFAULTS_DIR.glob("*.md")):
        if path.name.startswith("_"):
            continue
        benchmark, qa_type = path.stem.split(".", 1)
        texts[(benchmark, qa_type)] = (path.read_text(encoding="utf-8").rstrip() + "\n\n" + common).strip()
    return texts
