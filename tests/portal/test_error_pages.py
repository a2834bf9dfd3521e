"""Error pages people meet: styled like the rest of the portal, saying what happened and, for a refusal, which role
the page is for, with a way home. The sign-in page invites to sign up only while sign-up is open."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def _styled(response) -> str:
    html = response.content.decode()
    assert 'class="topbar"' in html and 'href="/"' in html, "not the portal's layout with a link home"
    assert html.count("<h1>") == 1
    return html


def test_a_refusal_names_the_role_the_page_is_for_and_who_you_are(client, make_user):
    reviewer = make_user("reviewer")
    client.force_login(reviewer)
    response = client.get("/organize/people/")
    assert response.status_code == 403
    html = _styled(response)
    assert "This page is for organizers." in html
    assert reviewer.email in html and "(reviewer)" in html


def test_a_missing_page_is_styled_and_says_nothing_of_the_internals(organizer_client):
    response = organizer_client.get("/no-such-page-anywhere/")
    assert response.status_code == 404
    html = _styled(response)
    assert "There is nothing at this address." in html and "matches the given query" not in html


def test_a_server_error_is_styled_and_says_what_to_do(make_user, monkeypatch):
    from portal import views

    def broken(self, request, *args, **kwargs):
        raise RuntimeError("internal detail that must not be shown")

    monkeypatch.setattr(views.JobListView, "get", broken)
    client = Client(raise_request_exception=False)
    client.force_login(make_user("organizer"))
    response = client.get("/jobs/")
    assert response.status_code == 500
    html = _styled(response)
    assert "Something went wrong on our side" in html and "internal detail" not in html


def test_a_refused_character_is_a_styled_400_naming_the_field(organizer_client):
    response = organizer_client.get("/jobs/?kind=%00")
    assert response.status_code == 400
    html = _styled(response)
    assert "kind: contains a NUL character" in html


def test_sign_in_invites_to_sign_up_only_while_sign_up_is_open(client, settings):
    settings.PORTAL_OPEN_SIGNUP = False
    closed = client.get("/accounts/login/").content.decode()
    assert "/accounts/signup/" not in closed and "ask yours for an invitation" in closed
    settings.PORTAL_OPEN_SIGNUP = True
    assert "/accounts/signup/" in client.get("/accounts/login/").content.decode()


@pytest.mark.parametrize("role, shown", [("organizer", True), ("reviewer", False), ("ranker", False)])
def test_the_api_links_are_for_the_role_that_uses_the_api(client, make_user, role, shown):
    client.force_login(make_user(role))
    html = client.get("/").content.decode()
    assert ('href="/api/docs/"' in html) is shown
    # Every role works over the API too (a reviewer takes and reviews items with a token): "API tokens" is in
    # everyone's top bar (issue 45, F38), as the README says.
    assert 'href="/tokens/"' in html


def test_the_demo_server_runs_without_debug_and_still_serves_the_styles(tmp_path, settings):
    """`make run` serves with DEBUG off (a visitor never sees Django's technical pages, which list every URL) and
    without collectstatic: WhiteNoise serves the apps' static folders as they are."""
    from pathlib import Path

    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    recipe = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "DEBUG=$${DEBUG:-0}" in recipe and "runserver" in recipe
    settings.DEBUG = False
    settings.STATIC_ROOT = tmp_path  # nothing collected
    client = Client()  # a new handler: its middleware reads the settings above
    for path in ("/static/portal/portal.css", "/static/analytics/spans.css"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert b"{" in b"".join(response.streaming_content)
    assert "Page not found" not in client.get("/static/no-such-file.css").content.decode()
