"""Hospital sign-in through SAML (portal.sso, allauth's ``saml`` provider), against an identity provider in the test.

No network: the test is the IdP. It has an RSA key and a self-signed certificate of its own (the portal is given
the certificate, as ``SAML_IDP_X509CERT`` would); the flow is the browser's, driven by hand: the sign-in button's
POST redirects to the IdP's SSO URL with an AuthnRequest (HTTP-Redirect binding), whose ID the test reads; the IdP's
answer is a SAML Response ``InResponseTo`` it, its assertion signed with xmlsec (python3-saml's ``add_sign``), posted
to the portal's ACS URL as the IdP's auto-submitting form would. Hostile answers are the same Response unsigned,
signed with another key, expired, for another audience, or posted again.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import uuid
import zlib
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import pytest
from allauth.socialaccount.models import SocialAccount
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from lxml import etree
from onelogin.saml2.utils import OneLogin_Saml2_Utils

from portal.models import AuditEntry, User
from portal.services import person_admit
from portal.sso import SamlConfig, SsoConfig, parse_role_map, saml_config_from_env, socialaccount_providers
from tests.portal.test_sso import GROUP_OF, HOSPITAL, ROLE_MAP, organizer_with_totp, refusals, roles_of, signed_in_as

LOGIN_URL = "/accounts/saml/saml/login/"
ACS_URL = "/accounts/saml/saml/acs/"
METADATA_URL = "/accounts/saml/saml/metadata/"
IDP_ENTITY_ID = "https://idp.hospital.example/saml"
IDP_SSO_URL = "https://idp.hospital.example/saml/sso"
SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol"
SAML = "urn:oasis:names:tc:SAML:2.0:assertion"
ASSERTION_SIGNATURE = "/saml:Assertion/ds:Signature"


@dataclass(frozen=True)
class Signer:
    """A key and its self-signed certificate (PEM)."""

    key_pem: str
    cert_pem: str

    @classmethod
    def generate(cls, common_name: str) -> Signer:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=30))
            .sign(key, hashes.SHA256())
        )
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return cls(key_pem.decode(), cert.public_bytes(serialization.Encoding.PEM).decode())


IDP = Signer.generate("idp.hospital.example")
STRANGER = Signer.generate("evil.example")


def saml_settings(oidc: SsoConfig | None = None, **overrides):
    """The SAML set-up of the test's IdP (and the OpenID Connect one ``oidc`` beside it)."""
    config = SamlConfig(
        entity_id=IDP_ENTITY_ID,
        sso_url=IDP_SSO_URL,
        x509cert=IDP.cert_pem,
        name=overrides.pop("name", "Hospital sign-in (SAML)"),
        role_map=parse_role_map(ROLE_MAP),
        institution=HOSPITAL,
        **overrides,
    )
    return override_settings(
        PORTAL_SSO=oidc, PORTAL_SAML=config, SOCIALACCOUNT_PROVIDERS=socialaccount_providers(oidc, config)
    )


@pytest.fixture(autouse=True)
def clean_cache():
    cache.clear()


@pytest.fixture
def hospital(db):
    from portal.models import Institution

    return Institution.objects.create(name=HOSPITAL, admitted=True)


@pytest.fixture
def saml(hospital):
    with saml_settings():
        yield


def browser_client() -> Client:
    # A browser always sends Host, and allauth's SAML views read it (Django's test client sends none by default).
    return Client(HTTP_HOST="testserver")


@dataclass
class AuthnRequest:
    """What the portal asked the IdP, read from the redirect the sign-in button answers with."""

    id: str
    acs_url: str
    sp_entity_id: str
    relay_state: str


def start_sign_in(browser: Client) -> AuthnRequest:
    to_idp = browser.post(LOGIN_URL)
    assert to_idp.status_code == 302 and to_idp["Location"].startswith(IDP_SSO_URL + "?"), to_idp
    query = parse_qs(urlsplit(to_idp["Location"]).query)
    # HTTP-Redirect binding: raw DEFLATE, then base64.
    request = etree.fromstring(zlib.decompress(base64.b64decode(query["SAMLRequest"][0]), -15))
    assert request.tag == f"{{{SAMLP}}}AuthnRequest"
    return AuthnRequest(
        id=request.get("ID"),
        acs_url=request.get("AssertionConsumerServiceURL"),
        sp_entity_id=request.findtext(f"{{{SAML}}}Issuer"),
        relay_state=query.get("RelayState", [""])[0],
    )


def instant(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Answer:
    """The IdP's Response to one AuthnRequest; the fields are what a hostile test changes."""

    request: AuthnRequest | None
    email: str
    groups: list[str]
    name_id: str = ""
    given_name: str = "Ann"
    attributes: dict[str, list[str]] = field(default_factory=dict)
    lifetime: dt.timedelta = dt.timedelta(minutes=5)
    audience: str = ""
    signer: Signer | None = IDP
    assertion_id: str = field(default_factory=lambda: f"_a{uuid.uuid4().hex}")

    def xml(self) -> bytes:
        now = dt.datetime.now(dt.UTC)
        until = instant(now + self.lifetime)
        acs = self.request.acs_url if self.request else f"http://testserver{ACS_URL}"
        audience = self.audience or (self.request.sp_entity_id if self.request else f"http://testserver{METADATA_URL}")
        in_response_to = {"InResponseTo": self.request.id} if self.request else {}
        response = etree.Element(
            f"{{{SAMLP}}}Response",
            nsmap={"samlp": SAMLP, "saml": SAML},
            ID=f"_r{uuid.uuid4().hex}",
            Version="2.0",
            IssueInstant=instant(now),
            Destination=acs,
            **in_response_to,
        )
        etree.SubElement(response, f"{{{SAML}}}Issuer").text = IDP_ENTITY_ID
        status = etree.SubElement(response, f"{{{SAMLP}}}Status")
        etree.SubElement(status, f"{{{SAMLP}}}StatusCode", Value="urn:oasis:names:tc:SAML:2.0:status:Success")
        response.append(self._assertion(now, until, acs, audience, in_response_to))
        return etree.tostring(response)

    def _assertion(self, now, until, acs, audience, in_response_to) -> etree._Element:
        assertion = etree.Element(
            f"{{{SAML}}}Assertion", nsmap={"saml": SAML}, ID=self.assertion_id, Version="2.0", IssueInstant=instant(now)
        )
        etree.SubElement(assertion, f"{{{SAML}}}Issuer").text = IDP_ENTITY_ID
        subject = etree.SubElement(assertion, f"{{{SAML}}}Subject")
        name_id = etree.SubElement(
            subject, f"{{{SAML}}}NameID", Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"
        )
        name_id.text = self.name_id or f"id-{self.email}"
        confirmation = etree.SubElement(
            subject, f"{{{SAML}}}SubjectConfirmation", Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"
        )
        etree.SubElement(
            confirmation, f"{{{SAML}}}SubjectConfirmationData", NotOnOrAfter=until, Recipient=acs, **in_response_to
        )
        conditions = etree.SubElement(
            assertion, f"{{{SAML}}}Conditions", NotBefore=instant(now - dt.timedelta(minutes=1)), NotOnOrAfter=until
        )
        restriction = etree.SubElement(conditions, f"{{{SAML}}}AudienceRestriction")
        etree.SubElement(restriction, f"{{{SAML}}}Audience").text = audience
        authn = etree.SubElement(
            assertion, f"{{{SAML}}}AuthnStatement", AuthnInstant=instant(now), SessionIndex=f"_s{uuid.uuid4().hex}"
        )
        context = etree.SubElement(authn, f"{{{SAML}}}AuthnContext")
        etree.SubElement(
            context, f"{{{SAML}}}AuthnContextClassRef"
        ).text = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
        statement = etree.SubElement(assertion, f"{{{SAML}}}AttributeStatement")
        values = {"email": [self.email], "givenName": [self.given_name], "groups": self.groups, **self.attributes}
        for name, items in values.items():
            attribute = etree.SubElement(statement, f"{{{SAML}}}Attribute", Name=name)
            for item in items:
                etree.SubElement(attribute, f"{{{SAML}}}AttributeValue").text = item
        if self.signer is None:
            return assertion
        signed = OneLogin_Saml2_Utils.add_sign(assertion, self.signer.key_pem, self.signer.cert_pem)
        return etree.fromstring(signed)

    def posted(self, xml: bytes | None = None) -> dict:
        """The form the IdP's page auto-submits to the ACS URL."""
        data = {"SAMLResponse": base64.b64encode(xml or self.xml()).decode()}
        if self.request and self.request.relay_state:
            data["RelayState"] = self.request.relay_state
        return data


def post_answer(browser: Client, data: dict):
    """The ACS POST, then the portal's own redirect to where it finishes the sign-in."""
    acs = browser.post(ACS_URL, data)
    assert acs.status_code == 302, acs
    return browser.get(acs["Location"])


def sign_in(email: str, *groups: str, browser: Client | None = None, **answer):
    browser = browser or browser_client()
    request = start_sign_in(browser)
    return browser, post_answer(browser, Answer(request, email, list(groups), **answer).posted())


def page_text(response) -> str:
    return html.unescape(response.content.decode())


def answer_refused(response) -> bool:
    return response.status_code < 500 and "Single sign-on failed" in response.content.decode()


# --- The test's IdP itself -----------------------------------------------------------------------------------------


def test_the_signature_the_test_idp_makes_verifies_with_its_certificate_only():
    # xmlsec and lxml work together (same libxml2), and the IdP's signature is a real one.
    signed = Answer(None, "a@hospital.example", ["seniors"])._assertion(
        dt.datetime.now(dt.UTC), "2999-01-01T00:00:00Z", "http://x/acs", "http://x/meta", {}
    )
    assert OneLogin_Saml2_Utils.validate_sign(signed, IDP.cert_pem, xpath=ASSERTION_SIGNATURE, raise_exceptions=False)
    assert not OneLogin_Saml2_Utils.validate_sign(
        signed, STRANGER.cert_pem, xpath=ASSERTION_SIGNATURE, raise_exceptions=False
    )


# --- Configuration -------------------------------------------------------------------------------------------------

SAML_VARIABLES = (
    "SAML_IDP_ENTITY_ID",
    "SAML_IDP_SSO_URL",
    "SAML_IDP_X509CERT",
    "SAML_IDP_METADATA_URL",
    "SAML_NAME",
    "SAML_ROLES_ATTRIBUTE",
    "SAML_EMAIL_VERIFIED",
    "SSO_ROLE_MAP",
    "SSO_INSTITUTION",
    "OIDC_ROLE_MAP",
    "OIDC_INSTITUTION",
)


@pytest.fixture
def saml_env(monkeypatch):
    for name in SAML_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SAML_IDP_ENTITY_ID", IDP_ENTITY_ID)
    monkeypatch.setenv("SAML_IDP_SSO_URL", IDP_SSO_URL)
    monkeypatch.setenv("SAML_IDP_X509CERT", IDP.cert_pem)
    monkeypatch.setenv("SSO_ROLE_MAP", "docs=ranker")
    return monkeypatch


def test_environment_builds_the_saml_app_without_a_database_row(saml_env):
    saml_env.setenv("SSO_INSTITUTION", HOSPITAL)
    config = saml_config_from_env()
    assert config is not None
    body = "".join(IDP.cert_pem.splitlines()[1:-1])
    assert (config.entity_id, config.sso_url, config.x509cert) == (IDP_ENTITY_ID, IDP_SSO_URL, body)
    assert (config.name, config.roles_attribute, config.email_verified) == ("Hospital sign-in (SAML)", "groups", False)
    assert config.role_map == {"docs": frozenset({"ranker"})} and config.institution == HOSPITAL
    [app] = socialaccount_providers(None, config)["saml"]["APPS"]
    assert app["client_id"] == "saml" and app["settings"]["verified_email"] is False
    assert app["settings"]["idp"] == {"entity_id": IDP_ENTITY_ID, "sso_url": IDP_SSO_URL, "x509cert": body}
    advanced = app["settings"]["advanced"]
    assert advanced["want_assertion_signed"] and advanced["strict"] and advanced["reject_idp_initiated_sso"]
    # The base64 body alone is the same certificate.
    saml_env.setenv("SAML_IDP_X509CERT", body)
    assert saml_config_from_env().x509cert == body
    saml_env.setenv("SAML_EMAIL_VERIFIED", "1")
    assert saml_config_from_env().email_verified is True
    for name in ("SAML_IDP_ENTITY_ID", "SAML_IDP_SSO_URL", "SAML_IDP_X509CERT"):
        saml_env.delenv(name)
    assert saml_config_from_env() is None


def test_the_older_oidc_names_of_the_shared_variables_still_work(saml_env):
    saml_env.delenv("SSO_ROLE_MAP")
    saml_env.setenv("OIDC_ROLE_MAP", "seniors=adjudicator")
    saml_env.setenv("OIDC_INSTITUTION", HOSPITAL)
    config = saml_config_from_env()
    assert config.role_map == {"seniors": frozenset({"adjudicator"})} and config.institution == HOSPITAL
    saml_env.setenv("SSO_ROLE_MAP", "docs=ranker")
    with pytest.raises(ImproperlyConfigured, match="SSO_ROLE_MAP and OIDC_ROLE_MAP differ"):
        saml_config_from_env()


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"SAML_IDP_X509CERT": "not a certificate"}, "SAML_IDP_X509CERT"),
        ({"SAML_IDP_X509CERT": "QUJD"}, "SAML_IDP_X509CERT"),  # base64, but not a certificate
        ({"SAML_IDP_X509CERT": None}, "SAML_IDP_X509CERT"),
        ({"SAML_IDP_SSO_URL": None}, "SAML_IDP_SSO_URL"),
        ({"SAML_IDP_SSO_URL": "idp.hospital.example/sso"}, "SAML_IDP_SSO_URL"),
        ({"SAML_IDP_ENTITY_ID": None}, "SAML_IDP_ENTITY_ID"),
        ({"SAML_IDP_METADATA_URL": "https://idp.hospital.example/metadata"}, "SAML_IDP_METADATA_URL"),
        ({"SSO_ROLE_MAP": "docs=surgeon"}, "SSO_ROLE_MAP"),
        ({"SSO_ROLE_MAP": None}, "OIDC_ROLE_MAP"),  # the older name, as neither is set
        ({"SAML_EMAIL_VERIFIED": "perhaps"}, "SAML_EMAIL_VERIFIED"),
    ],
)
def test_a_bad_saml_variable_stops_the_start_naming_it(saml_env, change, named):
    for name, value in change.items():
        if value is None:
            saml_env.delenv(name)
        else:
            saml_env.setenv(name, value)
    with pytest.raises(ImproperlyConfigured, match=named):
        saml_config_from_env()


def test_metadata_by_url_is_an_alternative_to_the_three_variables(saml_env):
    saml_env.delenv("SAML_IDP_SSO_URL")
    saml_env.delenv("SAML_IDP_X509CERT")
    saml_env.setenv("SAML_IDP_METADATA_URL", "https://idp.hospital.example/metadata")
    config = saml_config_from_env()
    [app] = socialaccount_providers(None, config)["saml"]["APPS"]
    assert app["settings"]["idp"] == {"entity_id": IDP_ENTITY_ID, "metadata_url": config.metadata_url}
    assert config.idp_origin == "https://idp.hospital.example"


def test_without_saml_there_is_no_button_and_the_saml_urls_lead_nowhere(db):
    with override_settings(PORTAL_SSO=None, PORTAL_SAML=None, SOCIALACCOUNT_PROVIDERS=socialaccount_providers(None)):
        page = browser_client().get("/accounts/login/")
        assert page.status_code == 200 and "/accounts/saml/" not in page.content.decode()
        assert browser_client().post(LOGIN_URL).status_code == 404
        assert browser_client().get(METADATA_URL).status_code == 404
        browser = browser_client()
        acs = browser.post(ACS_URL, {"SAMLResponse": "eA=="})
        assert browser.get(acs["Location"]).status_code == 404


def test_the_button_is_a_post_with_the_escaped_name_and_the_idp_in_form_action(hospital):
    with saml_settings(name="<b>St Example</b> & co"):
        page = browser_client().get("/accounts/login/")
    html = page.content.decode()
    assert f'action="{LOGIN_URL}"' in html and 'method="post"' in html
    assert "&lt;b&gt;St Example&lt;/b&gt; &amp; co" in html and "<b>St Example" not in html
    assert "form-action 'self' https://idp.hospital.example" in page["Content-Security-Policy"]


def test_openid_connect_and_saml_together_give_two_buttons(hospital):
    oidc = SsoConfig(issuer="http://localhost:9", client_id="c", client_secret="s", role_map=parse_role_map(ROLE_MAP))
    with saml_settings(oidc=oidc):
        page = browser_client().get("/accounts/login/")
    html = page.content.decode()
    assert 'action="/accounts/oidc/sso/login/"' in html and f'action="{LOGIN_URL}"' in html
    assert "form-action 'self' http://localhost:9 https://idp.hospital.example" in page["Content-Security-Policy"]


def test_the_portal_publishes_its_sp_metadata(saml):
    metadata = etree.fromstring(browser_client().get(METADATA_URL).content)
    assert metadata.get("entityID") == f"http://testserver{METADATA_URL}"
    acs = metadata.find(".//{urn:oasis:names:tc:SAML:2.0:metadata}AssertionConsumerService")
    assert acs.get("Location") == f"http://testserver{ACS_URL}"
    assert acs.get("Binding") == "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"


# --- Sign-in and roles ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["reviewer", "adjudicator", "ranker", "organizer"])
def test_each_role_signs_in_and_joins_the_institution(saml, role):
    browser, response = sign_in(f"{role}@hospital.example", GROUP_OF[role], name_id=f"nid-{role}")
    assert response.status_code == 302 and response["Location"] == "/"
    person = signed_in_as(browser)
    assert person is not None and person.email == f"{role}@hospital.example"
    assert roles_of(person) == [role] and person.institution.name == HOSPITAL
    assert not person.has_usable_password()
    account = SocialAccount.objects.get(user=person)
    assert (account.provider, account.uid) == ("saml", f"nid-{role}")
    admitted = AuditEntry.objects.get(action="person_admitted", object_id=str(person.pk))
    assert admitted.after == {"roles": [role], "institution": HOSPITAL} and admitted.actor is None
    login = AuditEntry.objects.get(action="login", object_id=str(person.pk))
    assert login.note == "sso" and login.after["provider"] == "saml" and login.actor_id == person.pk


def test_a_group_removed_at_the_idp_removes_the_role_at_the_next_sign_in(saml):
    browser, _ = sign_in("doc@hospital.example", "med-students", "seniors", "unrelated-group")
    person = signed_in_as(browser)
    assert roles_of(person) == ["adjudicator", "reviewer"]
    browser, _ = sign_in("doc@hospital.example", "med-students")
    assert signed_in_as(browser).pk == person.pk and roles_of(person) == ["reviewer"]
    change = AuditEntry.objects.get(action="person_updated", object_id=str(person.pk))
    assert change.before == {"roles": ["adjudicator", "reviewer"]} and change.after == {"roles": ["reviewer"]}
    assert AuditEntry.objects.filter(action="login", object_id=str(person.pk)).count() == 2


def test_the_roles_attribute_is_the_configured_one(hospital):
    with saml_settings(roles_attribute="http://schemas.microsoft.com/ws/2008/06/identity/claims/groups"):
        _, response = sign_in("plain@hospital.example", "seniors")
        assert response.status_code == 403 and "the attribute 'http://schemas.microsoft.com" in page_text(response)
        ms_groups = {"http://schemas.microsoft.com/ws/2008/06/identity/claims/groups": ["seniors"]}
        browser, _ = sign_in("ms@hospital.example", attributes=ms_groups)
    assert roles_of(signed_in_as(browser)) == ["adjudicator"]


def test_a_person_in_no_mapped_group_is_refused_and_no_account_is_made(saml):
    browser, response = sign_in("nobody@hospital.example", "cleaners")
    page = page_text(response)
    assert response.status_code == 403 and "none of the identity provider" in page
    assert "med-students" in page and "bench-admins" in page and "the attribute 'groups'" in page
    assert signed_in_as(browser) is None
    assert not User.objects.filter(email="nobody@hospital.example").exists() and not SocialAccount.objects.exists()
    assert not AuditEntry.objects.filter(action="login").exists()
    [note] = refusals()
    assert note.startswith("sso: you are in none")
    assert AuditEntry.objects.get(note=note).object_id == "nobody@hospital.example"


def test_an_unverified_email_is_not_linked_to_the_local_account(saml, hospital):
    local = person_admit(
        email="local@hospital.example", institution=hospital, roles=["reviewer"], password="pw-long-4-tests"
    )
    # An IdP's own "verified" attribute does not count: the deployment decides (SAML_EMAIL_VERIFIED).
    verified_attribute = {"http://schemas.auth0.com/email_verified": ["true"]}
    browser, response = sign_in("local@hospital.example", "seniors", attributes=verified_attribute)
    assert response.status_code == 403 and "not linked" in response.content.decode()
    assert "SAML_EMAIL_VERIFIED" in response.content.decode()
    assert signed_in_as(browser) is None and not SocialAccount.objects.exists() and roles_of(local) == ["reviewer"]
    assert any("SAML_EMAIL_VERIFIED" in note for note in refusals())
    assert Client().login(email="local@hospital.example", password="pw-long-4-tests")


def test_with_saml_email_verified_the_local_account_is_linked(hospital):
    local = person_admit(
        email="linked@hospital.example", institution=hospital, roles=["reviewer"], password="pw-long-4-tests"
    )
    with saml_settings(email_verified=True):
        browser, _ = sign_in("Linked@hospital.example", "seniors", name_id="nid-linked")
    assert signed_in_as(browser).pk == local.pk
    assert SocialAccount.objects.get(user=local).uid == "nid-linked" and roles_of(local) == ["adjudicator"]


@override_settings(PORTAL_REQUIRE_ORGANIZER_MFA=True)
def test_a_saml_organizer_with_totp_is_asked_for_a_code(hospital):
    # The organizer exists already: linked through an address the deployment takes as verified.
    organizer_with_totp(hospital)
    with saml_settings(email_verified=True):
        browser, response = sign_in("boss@hospital.example", "bench-admins")
        assert response.status_code == 302 and "/2fa/authenticate" in response["Location"]
        assert signed_in_as(browser) is None and not AuditEntry.objects.filter(action="login").exists()


@override_settings(PORTAL_REQUIRE_ORGANIZER_MFA=True)
def test_a_new_saml_organizer_must_enrol_totp(saml):
    browser, _ = sign_in("newboss@hospital.example", "bench-admins")
    home = browser.get("/")
    assert home.status_code == 302 and "totp" in home["Location"]


# --- Hostile answers -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hostile",
    [
        {"signer": None},
        {"signer": STRANGER},
        {"lifetime": dt.timedelta(minutes=-10)},
        {"audience": "https://another-sp.example/metadata"},
    ],
    ids=["unsigned", "another-key", "expired", "wrong-audience"],
)
def test_a_bad_answer_is_refused_with_a_page_and_on_record(saml, hostile):
    browser, response = sign_in("bad@hospital.example", "med-students", **hostile)
    assert answer_refused(response)
    assert signed_in_as(browser) is None and not User.objects.filter(email="bad@hospital.example").exists()
    assert any(note.startswith("sso: the identity provider's answer was refused") for note in refusals())


def test_a_response_signed_but_not_its_assertion_is_refused(saml):
    # The portal asks for signed assertions (want_assertion_signed), not only a signed envelope.
    browser = browser_client()
    answer = Answer(start_sign_in(browser), "envelope@hospital.example", ["med-students"], signer=None)
    signed_response = OneLogin_Saml2_Utils.add_sign(answer.xml(), IDP.key_pem, IDP.cert_pem)
    assert answer_refused(post_answer(browser, answer.posted(signed_response)))
    assert signed_in_as(browser) is None and not User.objects.filter(email="envelope@hospital.example").exists()


def test_the_control_answer_of_the_hostile_cases_is_accepted(saml):
    browser, _ = sign_in("good@hospital.example", "med-students")
    assert signed_in_as(browser) is not None


def test_an_answer_changed_after_signing_is_refused(saml):
    browser = browser_client()
    answer = Answer(start_sign_in(browser), "tamper@hospital.example", ["med-students"])
    xml = answer.xml().replace(b">med-students<", b">bench-admins<")
    assert answer_refused(post_answer(browser, answer.posted(xml)))
    assert not User.objects.filter(email="tamper@hospital.example").exists()


def test_a_replayed_answer_is_refused(saml):
    browser = browser_client()
    posted = Answer(start_sign_in(browser), "replay@hospital.example", ["med-students"]).posted()
    assert post_answer(browser, posted).status_code == 302 and signed_in_as(browser) is not None
    browser.post("/accounts/logout/")
    again = post_answer(browser, posted)
    assert again.status_code == 403 and signed_in_as(browser) is None
    # Nor in another browser, even one that has started a sign-in of its own.
    stranger = browser_client()
    start_sign_in(stranger)
    assert post_answer(stranger, posted).status_code == 403 and signed_in_as(stranger) is None
    assert AuditEntry.objects.filter(action="login").count() == 1


def test_an_unsolicited_answer_is_refused(saml):
    # IdP-initiated sign-in (no InResponseTo): nothing ties it to a sign-in this browser started.
    browser = browser_client()
    response = post_answer(browser, Answer(None, "unasked@hospital.example", ["med-students"]).posted())
    assert response.status_code < 500 and signed_in_as(browser) is None
    assert not User.objects.filter(email="unasked@hospital.example").exists()


def test_markup_in_attributes_is_kept_as_text(saml):
    name = '<script>alert("x")</script>'
    browser, _ = sign_in("markup@hospital.example", "med-students", given_name=name)
    person = signed_in_as(browser)
    assert person.first_name == name
    assert "<script>alert" not in browser.get("/").content.decode()


@pytest.mark.parametrize("nul", [b"\x00", b"&#0;"])
def test_a_nul_byte_in_an_attribute_is_refused_and_nothing_stored(saml, nul):
    # XML cannot carry NUL at all, raw or as a character reference: such an answer does not parse.
    browser = browser_client()
    answer = Answer(start_sign_in(browser), "nul@hospital.example", ["med-students"], given_name="Ann-NUL-")
    xml = answer.xml().replace(b"Ann-NUL-", b"Ann" + nul)
    response = post_answer(browser, answer.posted(xml))
    assert response.status_code == 403 and "not well-formed XML" in response.content.decode()
    assert signed_in_as(browser) is None
    assert not SocialAccount.objects.exists() and not User.objects.filter(email="nul@hospital.example").exists()
    assert "sso: the identity provider's answer is not well-formed XML without a DTD" in refusals()


def test_an_answer_with_a_dtd_is_refused(saml):
    browser = browser_client()
    answer = Answer(start_sign_in(browser), "dtd@hospital.example", ["med-students"])
    bomb = b'<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    response = post_answer(browser, answer.posted(bomb + answer.xml()))
    assert response.status_code == 403 and signed_in_as(browser) is None
    assert not User.objects.filter(email="dtd@hospital.example").exists()


def test_passwords_can_go_off_in_a_deployment_with_saml_only(saml, hospital, make_user):
    from portal.errors import DomainError
    from portal.services import institution_set_password_login

    organizer = make_user("organizer")
    institution_set_password_login(institution=hospital, password_login=False, by=organizer)
    hospital.refresh_from_db()
    assert not hospital.password_login
    with override_settings(PORTAL_SAML=None), pytest.raises(DomainError, match="OIDC_ISSUER or SAML_IDP_"):
        institution_set_password_login(institution=hospital, password_login=False, by=organizer)
