"""Fonts for the charts: Latin text in DejaVu Sans, Chinese (PromptCBLUE items, system names) in a CJK font.

matplotlib's default DejaVu Sans has no CJK glyphs: Chinese labels came out as empty boxes with a "Glyph ...
missing from font(s)" warning. matplotlib (3.6+) falls back glyph by glyph along ``font.family`` when that rc
is a list of families, so the chain is DejaVu Sans first and every CJK font found after it.

Where the CJK fonts come from, in order: the ``mplfonts`` wheel in requirements.txt (ships Noto Sans CJK SC,
SIL Open Font License; installable offline with pip, no root), then Debian's ``fonts-noto-cjk`` (the Docker
image installs it), then other common Debian CJK fonts. Files are read, never downloaded. Pure: no Django.
"""

from __future__ import annotations

import threading
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import matplotlib
from matplotlib import font_manager

LATIN_FAMILY = "DejaVu Sans"

#: (package, file inside it) for fonts shipped in Python wheels.
PACKAGED_FONTS = [("mplfonts", "mplfonts/fonts/NotoSansCJKsc-Regular.otf")]

#: Debian / Ubuntu locations: fonts-noto-cjk, fonts-wqy-zenhei, fonts-droid-fallback.
SYSTEM_FONTS = [
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
]

_lock = threading.Lock()
_chain: list[str] | None = None


def cjk_font_files() -> list[Path]:
    """The CJK font files present on this machine, preferred first."""
    found = []
    for package, inner in PACKAGED_FONTS:
        try:
            path = Path(distribution(package).locate_file(inner))
        except PackageNotFoundError:
            continue
        if path.is_file():
            found.append(path)
    found.extend(Path(p) for p in SYSTEM_FONTS if Path(p).is_file())
    return found


def use_fonts() -> list[str]:
    """Register the CJK fonts with matplotlib's font manager (once per process) and set the fallback chain;
    returns the chain. Safe to call before every figure: after the first call it only returns the chain.

    The rc is set once under a lock rather than with ``rc_context`` per figure, which swaps the global rc and
    races between threads (see ``plots.LITERAL_TEXT``)."""
    global _chain
    with _lock:
        if _chain is None:
            families = [LATIN_FAMILY]
            for path in cjk_font_files():
                try:
                    font_manager.fontManager.addfont(str(path))
                    family = font_manager.FontProperties(fname=str(path)).get_name()
                except (OSError, RuntimeError, ValueError):
                    continue  # an unreadable file: the next font in the list stands in
                if family not in families:
                    families.append(family)
            matplotlib.rcParams["font.family"] = families
            _chain = families
        return list(_chain)


def font_covering(char: str) -> Path | None:
    """The first font of the chain whose character map has ``char`` (None: it would be drawn as a box)."""
    from matplotlib.ft2font import FT2Font

    for family in use_fonts():
        path = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
        if ord(char) in FT2Font(path).get_charmap():
            return Path(path)
    return None
