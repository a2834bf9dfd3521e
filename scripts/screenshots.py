"""Screenshots of each demo role's main pages, at desktop (1300x900) and phone (390x844) width, for the README.

    make run                                   # the demo, in another terminal
    .venv/bin/python scripts/screenshots.py    # or: scripts/screenshots.py http://127.0.0.1:8017

Signs in as the demo users (``manage.py load_demo``) in Debian's Chromium (PORTAL_CHROMIUM to use another), opens
each page, and writes ``docs/screenshots/<role>-<page>-<desktop|phone>.png``, reduced to a 256-colour palette so the
whole set stays small. Opening the review and ranking pages leases an item or a question to the demo user, as a
person opening them would; the lease runs out by itself after 30 minutes.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("PORTAL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]  # fmt: skip
SIZES = {"desktop": {"width": 1300, "height": 900}, "phone": {"width": 390, "height": 844}}

# (role, sign-in e-mail, password, [(page name, path or a link to follow from the previous page)])
# "link:REGEX" opens the first link on the page opened before it whose address matches; "click:TEXT" presses the
# button or link with that text there (the review page's "Next item", the ranking page's "Continue ranking").
ROLES = [
    ("organizer", "organizer@demo.portal", "freeze-and-export-25", [
        ("home", "/"),
        ("vetting", "/organize/vetting/"),
        ("release", "/releases/"),
        (r"release-detail", r"link:^/releases/[^/]+/$"),
        ("leaderboard", "/analytics/task1/"),
        ("analytics", "/analytics/"),
        ("report", r"link:^/analytics/reports/\d+/$"),
        ("study", "/organize/studies/"),
        ("study-detail", r"link:^/organize/studies/\d+/$"),
        ("nuggets", "/organize/nuggets/"),
        ("nugget-leaderboard", "/analytics/studies/2/nuggets/"),  # the demo's second study asks for nuggets
        ("judge-scores", "/analytics/studies/1/judges/scores/"),
        ("span-detectors", "/analytics/studies/1/spans/"),  # the demo study asks for hallucination spans
        ("span-item", r"link:^/analytics/studies/1/spans/items/\d+/$"),
    ]),
    ("reviewer", "reviewer1@demo.portal", "check-every-answer-25", [
        ("home", "/"),
        ("queue", "/review/"),
        ("review", "click:Next item"),
        ("nuggets", "/nuggets/"),
    ]),
    ("adjudicator", "adjudicator@demo.portal", "settle-the-disputes-25", [
        ("queue", "/adjudicate/"),
        ("adjudicate", r"link:^/adjudicate/[^/]+/$"),
        ("disputes", "/disputes/"),
    ]),
    ("ranker", "ranker1@demo.portal", "order-the-answers-25", [
        ("home", "/rank/"),
        ("study", r"link:^/rank/studies/\d+/"),
        ("ranking", "click:Continue ranking"),
    ]),
]  # fmt: skip


def optimised_png(data: bytes) -> bytes:
    """The screenshot with a 256-colour palette: a third of the size, no visible difference for a UI."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    out = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, format="PNG", optimize=True
    )
    return out.getvalue()


def _open(page, base: str, target: str) -> bool:
    if target.startswith("click:"):
        control = page.get_by_role("button", name=target.removeprefix("click:")).or_(
            page.get_by_role("link", name=target.removeprefix("click:"))
        )
        if not control.count():
            return False
        acknowledgement = page.locator("#guidelines-read")  # a reviewer confirms the guidelines before the first item
        if acknowledgement.count() and acknowledgement.is_visible():
            acknowledgement.check()
        with page.expect_navigation(wait_until="load"):
            control.first.click()
        return True
    if target.startswith("link:"):
        pattern = re.compile(target.removeprefix("link:"))
        for href in page.eval_on_selector_all("main a[href]", "links => links.map(a => a.getAttribute('href'))"):
            if pattern.search(href or ""):
                page.goto(base + href, wait_until="load")
                return True
        return False
    page.goto(base + target, wait_until="load")
    return True


def take(base: str, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for role, email, password, pages in ROLES:
            context = browser.new_context(viewport=SIZES["desktop"])
            page = context.new_page()
            page.goto(f"{base}/accounts/login/")
            page.fill("input[name=login]", email)
            page.fill("input[name=password]", password)
            page.click("button[type=submit]")
            page.wait_for_url(lambda url: "/accounts/login" not in url)
            for name, target in pages:
                if not _open(page, base, target):
                    print(f"  {role}: no link for {name} ({target}), skipped", file=sys.stderr)
                    continue
                for size, viewport in SIZES.items():
                    page.set_viewport_size(viewport)
                    page.wait_for_timeout(150)  # let the layout settle at the new width
                    path = out_dir / f"{role}-{name}-{size}.png"
                    path.write_bytes(optimised_png(page.screenshot()))
                    written.append(path)
                page.set_viewport_size(SIZES["desktop"])
            context.close()
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", default="http://127.0.0.1:8000", help="the running demo portal")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="where the PNGs go")
    args = parser.parse_args()
    written = take(args.url.rstrip("/"), args.out)
    total = sum(p.stat().st_size for p in written)
    print(f"{len(written)} screenshots in {args.out} ({total / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
