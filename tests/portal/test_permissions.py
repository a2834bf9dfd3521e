"""Every URL × every role and anonymous, generated from the URL conf: a new page without a role check fails.

A view declares ``required_roles`` (portal.permissions); this test reads that declaration, then checks the
real responses: anonymous → login redirect (pages) or 401/403 (API); a role outside the declaration → 403;
a role inside it → anything but 401/403.
"""

from __future__ import annotations

import re
import uuid

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from portal.permissions import AUTHENTICATED
from portal.roles import Role

# Deliberately public: sign-in pages (allauth), the admin (its own staff check; it signs in through allauth, see
# test_admin_login.py), the health probe.
PUBLIC_PREFIXES = ("accounts/", "admin/")
PUBLIC_NAMES = {"health"}
CONVERTER_VALUES = {"int": "1", "str": "x", "slug": "x", "uuid": str(uuid.UUID(int=1)), "path": "x"}


def _walk(patterns, prefix=""):
    for entry in patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            if route.startswith(PUBLIC_PREFIXES):
                continue
            yield from _walk(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield route, entry


def _concrete(route: str) -> str:
    route = route.lstrip("^").rstrip("$")
    route = re.sub(r"<(?:(\w+):)?\w+>", lambda m: CONVERTER_VALUES.get(m.group(1) or "str", "x"), route)
    route = re.sub(r"\(\?P<\w+>[^)]*\)", "1", route).replace("\\", "")
    return "/" + route


def _declared_roles(callback):
    for holder in (getattr(callback, "view_class", None), getattr(callback, "cls", None), callback):
        if holder is not None and getattr(holder, "required_roles", None) is not None:
            return tuple(holder.required_roles)
    return None


def _url_cases():
    cases = []
    for route, pattern in _walk(get_resolver().url_patterns):
        if pattern.name in PUBLIC_NAMES or "format_suffix" in route or route.endswith(".(?P<format>[a-z0-9]+)/?$"):
            continue
        cases.append(pytest.param(_concrete(route), pattern, id=pattern.name or route))
    return cases


URL_CASES = _url_cases()


def test_the_walk_finds_the_pages_and_endpoints():
    names = {case.values[1].name for case in URL_CASES}
    assert {"home", "item_list", "item_detail", "import", "people", "api_item_list", "schema"} <= names


@pytest.mark.parametrize("url,pattern", URL_CASES)
def test_every_view_declares_its_roles(url, pattern):
    assert _declared_roles(pattern.callback) is not None, f"{url} ({pattern.name}) declares no required_roles"


@pytest.mark.django_db
@pytest.mark.parametrize("url,pattern", URL_CASES)
def test_anonymous_is_sent_to_login_or_refused(client, url, pattern):
    response = client.get(url)
    if url.startswith("/api/"):
        assert response.status_code in (401, 403), url
    else:
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url


@pytest.mark.django_db
@pytest.mark.parametrize("role", [r.value for r in Role] + ["no-role"])
@pytest.mark.parametrize("url,pattern", URL_CASES)
def test_each_role_gets_exactly_what_the_view_declares(client, make_user, role, url, pattern):
    user = make_user(*([] if role == "no-role" else [role]))
    client.force_login(user)
    declared = _declared_roles(pattern.callback)
    allowed = declared == AUTHENTICATED or role in declared
    response = client.get(url)
    if allowed:
        assert response.status_code not in (401, 403), f"{role} refused at {url}"
    else:
        assert response.status_code == 403, f"{role} got {response.status_code} at {url}"


@pytest.mark.django_db
def test_health_is_public_and_checks_the_database(client):
    response = client.get("/health/")
    assert response.status_code == 200
    assert response.json()["checks"]["database"] == "ok"
