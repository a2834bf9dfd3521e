"""The hospital sign-in and the audit trail as people meet them, in real Chromium against the real OpenID Connect
server of ``tests/portal/test_sso.py``: a physician clicks the sign-in page's button, picks their account at the
identity provider's page and lands signed in; an organizer, whose identity provider vouched for a second factor the
deployment trusts, signs in the same way and finds both sign-ins on the audit trail, filters it to sign-ins and has
the CSV of what the filter chose. The audit page is checked at desktop and phone width."""

from __future__ import annotations

import pytest
from django.test import override_settings

from portal.models import AuditEntry, Institution
from tests.browser.layout import assert_page_fits
from tests.portal import test_sso as idp_kit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BUTTON = "Hospital sign-in"  # idp_kit.sso_settings' name for the button
PHYSICIAN = ("sub-physician", "physician@hospital.example", "Petra Physician", "physicians")
ORGANIZER = ("sub-organizer", "organizer@hospital.example", "Olga Organizer", "bench-admins")
WIDTHS = ((1280, 900), (390, 844))


@pytest.fixture(scope="module")
def idp():
    with idp_kit.identity_provider() as server:
        yield server


@pytest.fixture
def sso(idp, transactional_db):
    Institution.objects.create(name=idp_kit.HOSPITAL, admitted=True)
    idp.rewriter.mutate, idp.rewriter.forge = None, False
    with idp_kit.sso_settings(idp.url, trusts_mfa=True):
        yield idp


@pytest.fixture
def new_page(chromium_browser, live_server):
    """``new_page()``: a page of its own browser context (its own cookies); fails the test on a CSP violation."""
    contexts, violations = [], []

    def opened():
        context = chromium_browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
        return page

    yield opened
    for context in contexts:
        context.close()
    assert not violations, violations


def sign_in_at_the_idp(page, idp, live_server, person) -> None:
    """The sign-in page's button, the identity provider's page choosing the person, back to the portal."""
    sub, email, name, group = person
    idp_kit.set_claims(idp, sub, **idp_kit.person_claims(email, group, name=name, amr=["pwd", "mfa"]))
    page.goto("/accounts/login/")
    button = page.get_by_role("button", name=BUTTON)
    assert button.is_visible()
    button.click()
    page.wait_for_url(lambda url: url.startswith(idp.url))
    page.fill("input[name=sub]", sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(lambda url: url.startswith(live_server.url) and "/accounts/" not in url)
    assert page.locator(f'span[title="{email}"]').inner_text() == name


def audit_rows(page) -> list[list[str]]:
    return [
        [cell.strip() for cell in row.locator("td").all_inner_texts()]
        for row in page.locator("main table tbody tr").all()
    ]


# Each cell of the audit table: its font size and how many lines its text takes (its height over the line height).
_CELL_TEXT_JS = """() => [...document.querySelectorAll('main table td, main table th')].map(cell => {
    const style = getComputedStyle(cell);
    const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.5;
    const height = cell.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    return {text: cell.innerText, size: parseFloat(style.fontSize), lines: height / line};
})"""


def assert_table_readable(page, width: int) -> None:
    """The audit table's text keeps a readable size and its cells are not squeezed into a word a line: on a phone the
    table scrolls inside its card rather than shrinking."""
    cells = page.evaluate(_CELL_TEXT_JS)
    assert cells
    for cell in cells:
        assert cell["size"] >= 12, (width, cell)
        assert cell["lines"] < 3.5, (width, cell)


@override_settings(PORTAL_REQUIRE_ORGANIZER_MFA=True)
def test_sso_sign_ins_on_the_audit_trail_at_desktop_and_phone_width(sso, new_page, live_server):
    physician_page = new_page()
    sign_in_at_the_idp(physician_page, sso, live_server, PHYSICIAN)
    assert physician_page.url == live_server.url + "/"
    physician = AuditEntry.objects.get(action="login", note="sso").actor
    assert (
        physician is not None
        and physician.email == PHYSICIAN[1]
        and list(physician.groups.values_list("name", flat=True)) == ["ranker"]
    )

    page = new_page()
    sign_in_at_the_idp(page, sso, live_server, ORGANIZER)
    # No TOTP asked: the trusted identity provider's amr says mfa (OIDC_TRUSTS_MFA).
    assert page.url == live_server.url + "/"
    page.goto("/organize/audit/")
    rows = audit_rows(page)
    for email in (PHYSICIAN[1], ORGANIZER[1]):
        assert [row[1:3] + row[4:5] for row in rows if row[1] == email and row[2] == "Signed in"] == [
            [email, "Signed in", "sso"]
        ], rows

    for width, height in WIDTHS:
        page.set_viewport_size({"width": width, "height": height})
        page.goto("/organize/audit/")
        page.select_option("select[name=action]", "login")
        page.get_by_role("button", name="Filter").click()
        page.wait_for_url(lambda url: "action=login" in url)
        rows = audit_rows(page)
        assert sorted(row[1] for row in rows) == sorted([ORGANIZER[1], PHYSICIAN[1]])
        assert {(row[2], row[4]) for row in rows} == {("Signed in", "sso")}
        csv_link = page.get_by_role("link", name="Download CSV")
        assert csv_link.is_visible()
        href = csv_link.get_attribute("href")
        assert "action=login" in href and "format=csv" in href
        assert_page_fits(page, width, "audit-sso")
        assert_table_readable(page, width)

    csv = page.request.get(live_server.url + "/organize/audit/" + href)
    assert csv.status == 200
    text = csv.text()
    assert PHYSICIAN[1] in text and ORGANIZER[1] in text and "sso" in text
    assert "person_admitted" not in text and "Admitted a person" not in text  # the filter applies to the CSV
