"""Hospital sign-in through OpenID Connect (portal.sso), against a real OpenID Connect server on a loopback port.

``oidc-provider-mock`` runs the identity provider in a thread. The flow is the browser's, driven by hand: the
sign-in button's POST (Django's test client), the IdP's authorization form (an HTTP request to the IdP choosing
the subject whose claims were set beforehand), then the callback with the code and state (the test client again);
allauth itself fetches discovery, the token and the keys from the IdP over HTTP. For the hostile-token cases a
small WSGI layer in front of the IdP re-signs the ID token it issues, with changed claims or with another key.
"""

from __future__ import annotations

import json
import socket
import time
from contextlib import contextmanager
from urllib.parse import urlparse

import jwt
import pytest
import requests
from allauth.mfa.models import Authenticator
from allauth.socialaccount.models import SocialAccount
from cryptography.hazmat.primitives.asymmetric import rsa
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from oidc_provider_mock import app as oidc_app  # type: ignore[import-untyped]
from oidc_provider_mock._server import _threaded_server  # type: ignore[import-untyped]

from portal.models import AuditEntry, Institution, User
from portal.services import person_admit
from portal.sso import SsoConfig, parse_role_map, socialaccount_providers, sso_config_from_env

LOGIN_URL = "/accounts/oidc/sso/login/"
CLIENT_ID = "portal-client"
HOSPITAL = "St Example Hospital"
ROLE_MAP = "med-students=reviewer,seniors=adjudicator,physicians=ranker,bench-admins=organizer"
GROUP_OF = {"reviewer": "med-students", "adjudicator": "seniors", "ranker": "physicians", "organizer": "bench-admins"}


class TokenRewriter:
    """WSGI layer in front of the IdP: while ``mutate`` is set, the ID token of each token answer is re-signed
    with ``key`` (published at /jwks instead of the IdP's own key unless ``forge``) after ``mutate`` changed its
    claims."""

    def __init__(self, app):
        self.app = app
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.mutate = None
        self.forge = False

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if self.mutate is not None and path == "/jwks":
            return self._json(start_response, {"keys": [self._public_jwk(self.key)]})
        if self.mutate is None or path != "/oauth2/token":
            return self.app(environ, start_response)
        captured = {}

        def keep(status, headers, exc_info=None):
            captured["status"], captured["headers"] = status, headers

        body = json.loads(b"".join(self.app(environ, keep)))
        claims = jwt.decode(body["id_token"], options={"verify_signature": False})
        self.mutate(claims)
        signing = rsa.generate_private_key(public_exponent=65537, key_size=2048) if self.forge else self.key
        body["id_token"] = jwt.encode(claims, signing, algorithm="RS256", headers={"kid": "test-key"})
        return self._json(start_response, body)

    @staticmethod
    def _public_jwk(key) -> dict:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
        return {**jwk, "kid": "test-key", "alg": "RS256", "use": "sig"}

    @staticmethod
    def _json(start_response, data):
        raw = json.dumps(data).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(raw)))])
        return [raw]


@contextmanager
def identity_provider():
    rewriter = TokenRewriter(oidc_app())
    with _threaded_server(app=rewriter, host="localhost", port=0) as server:
        server.rewriter = rewriter
        server.url = f"http://localhost:{server.server_port}"
        yield server


@pytest.fixture(scope="module")
def idp():
    with identity_provider() as server:
        yield server


@pytest.fixture(autouse=True)
def clean_cache():
    cache.clear()


def sso_settings(issuer: str, **overrides):
    config = SsoConfig(
        issuer=issuer,
        client_id=CLIENT_ID,
        client_secret="s3cret",
        name=overrides.pop("name", "Hospital sign-in"),
        role_map=parse_role_map(ROLE_MAP),
        institution=HOSPITAL,
        trusts_mfa=overrides.pop("trusts_mfa", False),
    )
    providers = socialaccount_providers(config)
    providers["openid_connect"]["APPS"][0]["settings"].update(overrides)
    return override_settings(PORTAL_SSO=config, SOCIALACCOUNT_PROVIDERS=providers)


@pytest.fixture
def hospital(db):
    return Institution.objects.create(name=HOSPITAL, admitted=True)


@pytest.fixture
def sso(idp, hospital):
    idp.rewriter.mutate, idp.rewriter.forge = None, False
    with sso_settings(idp.url):
        yield idp


def set_claims(idp, sub: str, **claims) -> None:
    response = requests.put(f"{idp.url}/users/{sub}", json=claims, timeout=5)
    assert response.status_code == 204


def person_claims(email: str, *groups: str, **more) -> dict:
    return {"email": email, "email_verified": True, "name": "Ann Example", "groups": list(groups), **more}


def start_sign_in(browser: Client, idp_url: str, sub: str) -> str:
    """The button's POST and the IdP's form; the callback URL (path and query) the IdP sends the browser back to."""
    to_idp = browser.post(LOGIN_URL)
    assert to_idp.status_code == 302 and to_idp["Location"].startswith(idp_url), to_idp
    back = requests.post(to_idp["Location"], data={"sub": sub}, allow_redirects=False, timeout=5)
    assert back.status_code == 302, back.text
    callback = urlparse(back.headers["Location"])
    assert callback.path == "/accounts/oidc/sso/login/callback/"
    return f"{callback.path}?{callback.query}"


def sign_in(idp, sub: str, claims: dict, browser: Client | None = None):
    set_claims(idp, sub, **claims)
    browser = browser or Client()
    response = browser.get(start_sign_in(browser, idp.url, sub))
    return browser, response


def signed_in_as(browser: Client):
    user = browser.get("/accounts/login/").wsgi_request.user
    return user if user.is_authenticated else None


def roles_of(user) -> list[str]:
    return sorted(user.groups.values_list("name", flat=True))


def refusals() -> list[str]:
    return list(AuditEntry.objects.filter(action="login_refused").values_list("note", flat=True))


# --- Configuration -------------------------------------------------------------------------------------------


def test_role_map_reads_groups_and_roles():
    assert parse_role_map("a=reviewer, b=organizer,a=ranker") == {
        "a": frozenset({"reviewer", "ranker"}),
        "b": frozenset({"organizer"}),
    }
    # A group name may itself contain "=": the role is after the last one.
    assert parse_role_map("cn=staff=reviewer") == {"cn=staff": frozenset({"reviewer"})}


@pytest.mark.parametrize(
    ("text", "names"),
    [("a=surgeon", "'surgeon'"), ("just-a-group", "'just-a-group'"), ("=reviewer", "'=reviewer'"), ("", "at least")],
)
def test_a_bad_role_map_stops_the_start_naming_the_variable(text, names):
    with pytest.raises(ImproperlyConfigured) as refused:
        parse_role_map(text)
    assert "OIDC_ROLE_MAP" in str(refused.value) and names in str(refused.value)


def test_environment_builds_the_provider_without_a_database_row(monkeypatch):
    for name, value in {
        "OIDC_ISSUER": "https://idp.example.org/realms/h/",
        "OIDC_CLIENT_ID": "portal",
        "OIDC_CLIENT_SECRET": "x",
        "OIDC_ROLE_MAP": "docs=ranker",
        "OIDC_TRUSTS_MFA": "yes",
    }.items():
        monkeypatch.setenv(name, value)
    config = sso_config_from_env()
    assert config is not None
    assert config.issuer == "https://idp.example.org/realms/h"
    assert (config.name, config.roles_claim, config.trusts_mfa) == ("Single sign-on", "groups", True)
    app = socialaccount_providers(config)["openid_connect"]["APPS"][0]
    assert (app["provider_id"], app["client_id"], app["settings"]["server_url"]) == ("sso", "portal", config.issuer)
    monkeypatch.delenv("OIDC_CLIENT_ID")
    with pytest.raises(ImproperlyConfigured, match="OIDC_CLIENT_ID"):
        sso_config_from_env()
    monkeypatch.delenv("OIDC_ISSUER")
    assert sso_config_from_env() is None
    assert socialaccount_providers(None) == {"openid_connect": {"APPS": []}}


def test_without_an_issuer_there_is_no_button_and_no_provider(db):
    with override_settings(PORTAL_SSO=None, SOCIALACCOUNT_PROVIDERS=socialaccount_providers(None)):
        page = Client().get("/accounts/login/")
        assert page.status_code == 200 and LOGIN_URL not in page.content.decode()
        assert Client().post(LOGIN_URL).status_code == 404


def test_the_button_is_a_post_with_the_escaped_name(hospital):
    with sso_settings("http://localhost:9", name="<b>St Example</b> & co"):
        page = Client().get("/accounts/login/").content.decode()
    assert f'action="{LOGIN_URL}"' in page and 'method="post"' in page
    assert "&lt;b&gt;St Example&lt;/b&gt; &amp; co" in page and "<b>St Example" not in page


# --- Sign-in and roles ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["reviewer", "adjudicator", "ranker", "organizer"])
def test_each_role_signs_in_and_joins_the_institution(sso, role):
    browser, response = sign_in(sso, f"sub-{role}", person_claims(f"{role}@hospital.example", GROUP_OF[role]))
    assert response.status_code == 302 and response["Location"] == "/"
    person = signed_in_as(browser)
    assert person is not None and person.email == f"{role}@hospital.example"
    assert roles_of(person) == [role] and person.institution.name == HOSPITAL
    assert not person.has_usable_password()
    assert SocialAccount.objects.get(user=person).uid == f"sub-{role}"
    entry = AuditEntry.objects.get(action="person_admitted", object_id=str(person.pk))
    assert entry.actor is None and entry.note == "from the identity provider"
    assert entry.after == {"roles": [role], "institution": HOSPITAL}
    # The sign-in itself (portal.signals_audit), with the provider.
    login = AuditEntry.objects.get(action="login", object_id=str(person.pk))
    assert login.note == "sso" and (login.after or {}).get("provider") == "sso" and login.actor_id == person.pk


def test_a_group_removed_at_the_idp_removes_the_role_at_the_next_sign_in(sso):
    claims = person_claims("doc@hospital.example", "med-students", "seniors", "unrelated-group")
    browser, _ = sign_in(sso, "sub-doc", claims)
    person = signed_in_as(browser)
    assert roles_of(person) == ["adjudicator", "reviewer"]
    browser, _ = sign_in(sso, "sub-doc", {**claims, "groups": ["med-students"]})
    assert signed_in_as(browser).pk == person.pk and roles_of(person) == ["reviewer"]
    change = AuditEntry.objects.get(action="person_updated", object_id=str(person.pk))
    assert change.before == {"roles": ["adjudicator", "reviewer"]} and change.after == {"roles": ["reviewer"]}
    assert change.note == "from the identity provider" and change.actor is None
    # The same groups again change nothing and record nothing.
    sign_in(sso, "sub-doc", {**claims, "groups": ["med-students"]})
    assert AuditEntry.objects.filter(action="person_updated", object_id=str(person.pk)).count() == 1


def test_a_person_in_no_mapped_group_is_refused_and_no_account_is_made(sso):
    browser, response = sign_in(sso, "sub-none", person_claims("nobody@hospital.example", "cleaners"))
    page = response.content.decode()
    assert response.status_code == 403 and "none of the identity provider" in page
    assert "med-students" in page and "bench-admins" in page
    assert signed_in_as(browser) is None
    assert not User.objects.filter(email="nobody@hospital.example").exists()
    assert not SocialAccount.objects.exists() and not AuditEntry.objects.filter(action="login").exists()
    [note] = refusals()
    assert note.startswith("sso: you are in none") and AuditEntry.objects.get(note=note).object_id == (
        "nobody@hospital.example"
    )


def test_a_missing_groups_claim_is_refused_like_no_group(sso):
    claims = person_claims("nogroups@hospital.example")
    del claims["groups"]
    _, response = sign_in(sso, "sub-nogroups", claims)
    assert response.status_code == 403 and not User.objects.filter(email="nogroups@hospital.example").exists()


def test_a_new_person_is_refused_when_the_institution_is_not_admitted(sso, hospital):
    hospital.admitted = False
    hospital.save()
    _, response = sign_in(sso, "sub-new", person_claims("new@hospital.example", "med-students"))
    assert response.status_code == 403 and HOSPITAL in response.content.decode()
    assert not User.objects.filter(email="new@hospital.example").exists()


def test_ranker_and_organizer_groups_together_are_refused(sso):
    _, response = sign_in(sso, "sub-both", person_claims("both@hospital.example", "physicians", "bench-admins"))
    assert response.status_code == 403 and "ranker cannot also be an organizer" in response.content.decode()
    assert not User.objects.filter(email="both@hospital.example").exists()


def test_an_unverified_email_is_not_linked_to_the_local_account(sso, hospital):
    local = person_admit(
        email="local@hospital.example", institution=hospital, roles=["reviewer"], password="pw-long-4-tests"
    )
    claims = person_claims("local@hospital.example", "seniors", email_verified=False)
    browser, response = sign_in(sso, "sub-local", claims)
    assert response.status_code == 403 and "not linked" in response.content.decode()
    assert signed_in_as(browser) is None and not SocialAccount.objects.exists()
    assert roles_of(local) == ["reviewer"]
    assert any("did not say that the address" in note for note in refusals())
    # The password still works.
    assert Client().login(email="local@hospital.example", password="pw-long-4-tests")


def test_a_verified_email_links_the_local_account_and_keeps_its_password(sso, hospital):
    local = person_admit(
        email="linked@hospital.example", institution=hospital, roles=["reviewer"], password="pw-long-4-tests"
    )
    browser, _ = sign_in(sso, "sub-linked", person_claims("linked@hospital.example", "seniors"))
    assert signed_in_as(browser).pk == local.pk
    assert SocialAccount.objects.get(user=local).uid == "sub-linked" and roles_of(local) == ["adjudicator"]
    local.refresh_from_db()
    assert local.has_usable_password()


# --- MFA ------------------------------------------------------------------------------------------------------


def organizer_with_totp(hospital):
    person = person_admit(email="boss@hospital.example", institution=hospital, roles=["organizer"])
    Authenticator.objects.create(user=person, type=Authenticator.Type.TOTP, data={"secret": "x"})
    return person


@override_settings(PORTAL_REQUIRE_ORGANIZER_MFA=True)
def test_an_sso_organizer_with_totp_is_asked_for_a_code(sso, hospital):
    organizer_with_totp(hospital)
    browser, response = sign_in(sso, "sub-boss", person_claims("boss@hospital.example", "bench-admins", amr=["pwd"]))
    assert response.status_code == 302 and "/2fa/authenticate" in response["Location"]
    assert signed_in_as(browser) is None


@override_settings(PORTAL_REQUIRE_ORGANIZER_MFA=True)
def test_an_sso_organizer_without_totp_must_enrol_it(sso):
    browser, _ = sign_in(sso, "sub-newboss", person_claims("newboss@hospital.example", "bench-admins"))
    assert signed_in_as(browser) is not None
    home = browser.get("/")
    assert home.status_code == 302 and "totp" in home["Location"]


@pytest.mark.parametrize(("trusted", "amr", "enrol"), [(True, ["pwd", "mfa"], False), (False, ["pwd", "mfa"], True)])
@override_settings(PORTAL_REQUIRE_ORGANIZER_MFA=True)
def test_an_organizer_the_trusted_idp_vouched_for_need_not_enrol_totp(idp, hospital, trusted, amr, enrol):
    idp.rewriter.mutate = None
    with sso_settings(idp.url, trusts_mfa=trusted):
        browser, _ = sign_in(idp, "sub-newboss", person_claims("newboss@hospital.example", "bench-admins", amr=amr))
        home = browser.get("/")
        assert (home.status_code == 302 and "totp" in home["Location"]) is enrol
        assert (home.status_code == 200) is not enrol


@pytest.mark.parametrize(
    ("trusted", "amr", "asked"),
    [(True, ["pwd", "mfa"], False), (True, ["pwd"], True), (False, ["pwd", "mfa"], True), (True, "mfa", True)],
)
@override_settings(PORTAL_REQUIRE_ORGANIZER_MFA=True)
def test_the_idps_mfa_counts_only_when_trusted_and_in_amr(idp, hospital, trusted, amr, asked):
    idp.rewriter.mutate = None
    organizer_with_totp(hospital)
    with sso_settings(idp.url, trusts_mfa=trusted):
        browser, response = sign_in(idp, "sub-boss", person_claims("boss@hospital.example", "bench-admins", amr=amr))
        assert ("/2fa/authenticate" in response.get("Location", "")) is asked
        assert (signed_in_as(browser) is None) is asked
        assert AuditEntry.objects.filter(action="login").exists() is not asked
        if not asked:
            assert browser.get("/").status_code == 200


# --- Hostile input ---------------------------------------------------------------------------------------------


def expire(claims):
    claims["exp"] = int(time.time()) - 3600
    claims["iat"] = claims["exp"] - 60


@pytest.mark.parametrize(
    ("mutate", "forge"),
    [
        (lambda claims: None, True),  # signed with a key that is not the IdP's
        (expire, False),
        (lambda claims: claims.update(iss="https://evil.example"), False),
        (lambda claims: claims.update(aud="another-client"), False),
    ],
    ids=["forged", "expired", "wrong-iss", "wrong-aud"],
)
def test_a_bad_id_token_is_refused_with_a_page(sso, mutate, forge):
    sso.rewriter.mutate, sso.rewriter.forge = mutate, forge
    try:
        browser, response = sign_in(sso, "sub-bad", person_claims("bad@hospital.example", "med-students"))
    finally:
        sso.rewriter.mutate, sso.rewriter.forge = None, False
    assert response.status_code < 500 and "Single sign-on failed" in response.content.decode()
    assert signed_in_as(browser) is None and not User.objects.filter(email="bad@hospital.example").exists()
    assert any(note.startswith("sso: the identity provider's answer was refused") for note in refusals())


def test_a_control_token_re_signed_with_the_published_key_is_accepted(sso):
    # The rewriter itself is sound: a token it re-signs unchanged with the key it publishes goes through.
    sso.rewriter.mutate = lambda claims: None
    try:
        browser, _ = sign_in(sso, "sub-ok", person_claims("ok@hospital.example", "med-students"))
    finally:
        sso.rewriter.mutate = None
    assert signed_in_as(browser) is not None


def test_a_replayed_state_is_refused(sso):
    set_claims(sso, "sub-replay", **person_claims("replay@hospital.example", "med-students"))
    browser = Client()
    callback = start_sign_in(browser, sso.url, "sub-replay")
    assert browser.get(callback).status_code == 302
    browser.post("/accounts/logout/")
    again = browser.get(callback)
    assert again.status_code < 500 and "Single sign-on failed" in again.content.decode()
    assert signed_in_as(browser) is None
    stranger = Client().get(callback)
    assert stranger.status_code < 500 and signed_in_as(Client()) is None


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def test_an_idp_that_is_down_gives_a_clear_page(hospital):
    with sso_settings(f"http://localhost:{closed_port()}"):
        response = Client().post(LOGIN_URL)
    assert response.status_code == 503 and "did not answer" in response.content.decode()
    assert "sso: the identity provider did not answer" in refusals()


def test_an_idp_that_goes_down_before_the_callback_gives_a_clear_page(hospital):
    with identity_provider() as server, sso_settings(server.url):
        set_claims(server, "sub-late", **person_claims("late@hospital.example", "med-students"))
        browser = Client()
        callback = start_sign_in(browser, server.url, "sub-late")
    with sso_settings(server.url):
        response = browser.get(callback)
    assert response.status_code == 503 and "did not answer" in response.content.decode()
    assert signed_in_as(browser) is None


def test_markup_in_claims_is_kept_as_text(sso):
    name = '<script>alert("x")</script> O\'Neil'
    browser, _ = sign_in(sso, "sub-markup", person_claims("markup@hospital.example", "med-students", name=name))
    person = signed_in_as(browser)
    assert person.first_name == '<script>alert("x")</script>' and person.last_name == "O'Neil"
    assert "<script>alert" not in browser.get("/").content.decode()


@pytest.mark.parametrize("where", ["name", "groups", "email"])
def test_a_nul_byte_in_a_claim_is_refused_with_a_page(sso, where):
    claims = person_claims("nul@hospital.example", "med-students")
    claims[where] = {"name": "Ann\x00Example", "groups": ["med-\x00students"], "email": "nul\x00@hospital.example"}[
        where
    ]
    browser, response = sign_in(sso, "sub-nul", claims)
    assert response.status_code == 403 and "cannot store" in response.content.decode()
    assert signed_in_as(browser) is None and not SocialAccount.objects.exists()
    assert any(f"claims.id_token.{where}" in note for note in refusals())


def test_a_nul_byte_for_a_known_person_changes_nothing(sso):
    browser, _ = sign_in(sso, "sub-known", person_claims("known@hospital.example", "med-students"))
    account = SocialAccount.objects.get(uid="sub-known")
    _, response = sign_in(sso, "sub-known", person_claims("known@hospital.example", "med-students", name="A\x00B"))
    assert response.status_code == 403
    account.refresh_from_db()
    assert account.extra_data["id_token"]["name"] == "Ann Example"
