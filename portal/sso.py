"""Hospital sign-in through OpenID Connect (allauth's ``openid_connect`` provider under the provider id ``sso``)
and through SAML 2.0 (allauth's ``saml`` provider, app ``saml``), either or both.

Configured from the environment alone (no SocialApp row). OpenID Connect: ``OIDC_ISSUER`` (discovery at
``/.well-known/openid-configuration``), ``OIDC_CLIENT_ID``, ``OIDC_CLIENT_SECRET``, ``OIDC_NAME`` (the button's
label), ``OIDC_ROLES_CLAIM`` (the claim listing the person's groups) and ``OIDC_TRUSTS_MFA``. SAML:
``SAML_IDP_ENTITY_ID`` with either ``SAML_IDP_SSO_URL`` and ``SAML_IDP_X509CERT`` or ``SAML_IDP_METADATA_URL``,
``SAML_NAME``, ``SAML_ROLES_ATTRIBUTE`` and ``SAML_EMAIL_VERIFIED``. Both read ``SSO_ROLE_MAP`` (``group=role,…``)
and ``SSO_INSTITUTION`` (the institution new accounts join), whose older names ``OIDC_ROLE_MAP`` and
``OIDC_INSTITUTION`` still work. With ``OIDC_ISSUER`` unset there is no OpenID Connect provider at all (no button,
``/accounts/oidc/sso/login/`` answers 404); with ``SAML_IDP_ENTITY_ID`` unset no SAML one (``/accounts/saml/saml/…``
answers 404).

What the identity provider says is read here (the person's roles, whether it vouched for a second factor, whether a
value can be stored); what the portal does with it is in ``portal.adapters`` (who may sign in),
``portal.services.person_roles_from_idp`` (roles) and ``portal.mfa`` (the organizers' MFA rule).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from cryptography import x509
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from portal.env import env_bool, env_str, env_url
from portal.roles import Role

PROVIDER_ID = "sso"
DEFAULT_NAME = "Single sign-on"
DEFAULT_ROLES_CLAIM = "groups"
# allauth's SAML provider, and the client id of its one app: the "organization slug" in /accounts/saml/saml/….
SAML_PROVIDER_ID = "saml"
DEFAULT_SAML_NAME = "Hospital sign-in (SAML)"


@dataclass(frozen=True)
class SsoConfig:
    """The single sign-on set-up read from the environment (``settings.PORTAL_SSO``; None: not configured)."""

    issuer: str
    client_id: str
    client_secret: str
    name: str = DEFAULT_NAME
    roles_claim: str = DEFAULT_ROLES_CLAIM
    role_map: Mapping[str, frozenset[str]] = field(default_factory=dict)
    institution: str = ""
    trusts_mfa: bool = False

    @property
    def roles_key(self) -> str:
        return self.roles_claim

    @property
    def roles_source(self) -> str:
        return f"the claim {self.roles_claim!r}"

    @property
    def idp_origin(self) -> str:
        return _origin(self.issuer)

    @property
    def unverified_email(self) -> str:
        return "the identity provider did not say that the address is verified"


@dataclass(frozen=True)
class SamlConfig:
    """The SAML set-up read from the environment (``settings.PORTAL_SAML``; None: not configured). The identity
    provider is given either by ``sso_url`` and ``x509cert`` (its signing certificate, base64 DER) or by
    ``metadata_url``; ``entity_id`` always."""

    entity_id: str
    sso_url: str = ""
    x509cert: str = ""
    metadata_url: str = ""
    name: str = DEFAULT_SAML_NAME
    roles_attribute: str = DEFAULT_ROLES_CLAIM
    role_map: Mapping[str, frozenset[str]] = field(default_factory=dict)
    institution: str = ""
    email_verified: bool = False

    @property
    def roles_key(self) -> str:
        return self.roles_attribute

    @property
    def roles_source(self) -> str:
        return f"the attribute {self.roles_attribute!r}"

    @property
    def idp_origin(self) -> str:
        return _origin(self.sso_url or self.metadata_url)

    @property
    def unverified_email(self) -> str:
        return "this portal does not take the SAML identity provider's addresses as verified (SAML_EMAIL_VERIFIED)"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def sso_config_from_env() -> SsoConfig | None:
    """The set-up from ``OIDC_*`` variables; None when ``OIDC_ISSUER`` is unset. A variable that is missing or
    malformed stops the start, naming it."""
    issuer = env_url("OIDC_ISSUER", schemes=("https", "http")).rstrip("/")
    if not issuer:
        return None
    client_id = env_str("OIDC_CLIENT_ID").strip()
    if not client_id:
        raise ImproperlyConfigured("OIDC_CLIENT_ID must be set when OIDC_ISSUER is (the portal's client id at the IdP)")
    return SsoConfig(
        issuer=issuer,
        client_id=client_id,
        client_secret=env_str("OIDC_CLIENT_SECRET"),
        name=env_str("OIDC_NAME").strip() or DEFAULT_NAME,
        roles_claim=env_str("OIDC_ROLES_CLAIM").strip() or DEFAULT_ROLES_CLAIM,
        role_map=parse_role_map(*shared_setting("ROLE_MAP")),
        institution=shared_setting("INSTITUTION")[0].strip(),
        trusts_mfa=env_bool("OIDC_TRUSTS_MFA", False),
    )


def saml_config_from_env() -> SamlConfig | None:
    """The SAML set-up from ``SAML_*`` variables; None when none of the identity provider's is set. A variable that
    is missing or malformed stops the start, naming it."""
    entity_id = env_str("SAML_IDP_ENTITY_ID").strip()
    metadata_url = env_url("SAML_IDP_METADATA_URL", schemes=("https", "http"))
    sso_url = env_url("SAML_IDP_SSO_URL", schemes=("https", "http"))
    certificate = env_str("SAML_IDP_X509CERT").strip()
    if not (entity_id or metadata_url or sso_url or certificate):
        return None
    if not entity_id:
        raise ImproperlyConfigured("SAML_IDP_ENTITY_ID must be set with the other SAML_IDP_ variables")
    if metadata_url and (sso_url or certificate):
        raise ImproperlyConfigured(
            "SAML_IDP_METADATA_URL or SAML_IDP_SSO_URL with SAML_IDP_X509CERT: set one way, not both"
        )
    if not metadata_url:
        missing = [
            name for name, value in (("SAML_IDP_SSO_URL", sso_url), ("SAML_IDP_X509CERT", certificate)) if not value
        ]
        if missing:
            raise ImproperlyConfigured(
                f"{' and '.join(missing)} must be set with SAML_IDP_ENTITY_ID (or SAML_IDP_METADATA_URL instead)"
            )
    role_map = parse_role_map(*shared_setting("ROLE_MAP"))
    return SamlConfig(
        entity_id=entity_id,
        sso_url=sso_url,
        x509cert=certificate_body(certificate, "SAML_IDP_X509CERT") if certificate else "",
        metadata_url=metadata_url,
        name=env_str("SAML_NAME").strip() or DEFAULT_SAML_NAME,
        roles_attribute=env_str("SAML_ROLES_ATTRIBUTE").strip() or DEFAULT_ROLES_CLAIM,
        role_map=role_map,
        institution=shared_setting("INSTITUTION")[0].strip(),
        email_verified=env_bool("SAML_EMAIL_VERIFIED", False),
    )


def shared_setting(name: str) -> tuple[str, str]:
    """The value of ``SSO_<name>``, read by both protocols, else of its older name ``OIDC_<name>``, with the
    variable it came from. Both set to different values stop the start: which one counts would be a guess."""
    value, older = env_str(f"SSO_{name}"), env_str(f"OIDC_{name}")
    if value and older and value.strip() != older.strip():
        raise ImproperlyConfigured(f"SSO_{name} and OIDC_{name} differ: set SSO_{name} only")
    return (value, f"SSO_{name}") if value else (older, f"OIDC_{name}")


def certificate_body(text: str, variable: str) -> str:
    """An X.509 certificate given as PEM or as its base64 body, as the base64 body python3-saml takes; anything
    that does not parse as a certificate is refused naming ``variable``."""
    body = re.sub(r"-----(BEGIN|END) CERTIFICATE-----|\s", "", text)
    try:
        x509.load_der_x509_certificate(base64.b64decode(body, validate=True))
    except (ValueError, binascii.Error):
        raise ImproperlyConfigured(f"{variable} is not an X.509 certificate (PEM, or its base64 body)") from None
    return body


def parse_role_map(text: str, variable: str = "OIDC_ROLE_MAP") -> dict[str, frozenset[str]]:
    """``group=role,group=role`` as {group: roles}; a group named twice grants both roles. An entry without ``=``,
    with an empty side or an unknown role is refused naming ``variable``, as is an empty map: a set-up that maps
    no group would refuse everyone."""
    known = {role.value for role in Role}
    mapping: dict[str, set[str]] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        group, separator, role = (side.strip() for side in entry.rpartition("="))
        if not separator or not group or not role:
            raise ImproperlyConfigured(f"{variable}: {entry!r} is not group=role")
        if role not in known:
            raise ImproperlyConfigured(f"{variable}: {role!r} in {entry!r} is not one of {', '.join(sorted(known))}")
        mapping.setdefault(group, set()).add(role)
    if not mapping:
        raise ImproperlyConfigured(f"{variable} must map at least one group to a role (group=role,group=role)")
    return {group: frozenset(roles) for group, roles in mapping.items()}


def socialaccount_providers(config: SsoConfig | None, saml: SamlConfig | None = None) -> dict:
    """``SOCIALACCOUNT_PROVIDERS``: the OpenID Connect app and the SAML app, each where it is configured, built from
    settings (no database row)."""
    providers: dict = {"openid_connect": {"APPS": [] if config is None else [_openid_connect_app(config)]}}
    if saml is not None:
        providers["saml"] = {"APPS": [_saml_app(saml)]}
    return providers


def _openid_connect_app(config: SsoConfig) -> dict:
    return {
        "provider_id": PROVIDER_ID,
        "name": config.name,
        "client_id": config.client_id,
        "secret": config.client_secret,
        # The ID token carries ``amr`` and the groups; userinfo is not needed and is one request fewer.
        "settings": {"server_url": config.issuer, "fetch_userinfo": False, "oauth_pkce_enabled": True},
    }


# Where allauth reads the person's details in the assertion: the standard names (OIDs, the claim URIs of ADFS and
# Entra ID) and the plain names Keycloak and others send. ``email_verified`` is left out on purpose: whether an
# address is taken as verified is the deployment's decision (SAML_EMAIL_VERIFIED), not an attribute's.
SAML_ATTRIBUTE_MAPPING = {
    "uid": ["urn:oasis:names:tc:SAML:attribute:subject-id"],
    "email": [
        "urn:oid:0.9.2342.19200300.100.1.3",
        "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
        "email",
        "mail",
    ],
    "first_name": ["urn:oid:2.5.4.42", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname", "givenName"],
    "last_name": ["urn:oid:2.5.4.4", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname", "sn"],
}


def _saml_app(config: SamlConfig) -> dict:
    if config.metadata_url:
        idp = {"entity_id": config.entity_id, "metadata_url": config.metadata_url}
    else:
        idp = {"entity_id": config.entity_id, "sso_url": config.sso_url, "x509cert": config.x509cert}
    return {
        "name": config.name,
        "client_id": SAML_PROVIDER_ID,
        "settings": {
            "idp": idp,
            "attribute_mapping": SAML_ATTRIBUTE_MAPPING,
            "verified_email": config.email_verified,
            "advanced": {
                "strict": True,
                # Every assertion must carry the IdP's signature; a Response signature alone is not enough, as the
                # assertion is what names the person. python3-saml checks a Response signature too when there is one.
                "want_assertion_signed": True,
                "want_name_id": True,
                "reject_deprecated_algorithm": True,
                # Only answers to a sign-in this browser started (InResponseTo matched against allauth's one-use
                # state): an IdP-initiated response, or one replayed, finds no state and is refused.
                "reject_idp_initiated_sso": True,
                # python3-saml refuses the portal's own URLs on a one-label host name (http://portal/…), common on
                # hospital intranets; this only loosens its syntax check of those URLs.
                "allow_single_label_domains": True,
            },
        },
    }


def sso_config() -> SsoConfig | None:
    return getattr(settings, "PORTAL_SSO", None)


def saml_config() -> SamlConfig | None:
    return getattr(settings, "PORTAL_SAML", None)


def sso_configs() -> list[SsoConfig | SamlConfig]:
    """Every configured way to sign in through an identity provider, OpenID Connect first."""
    return [config for config in (sso_config(), saml_config()) if config is not None]


def through_saml(sociallogin) -> bool:
    return getattr(getattr(sociallogin, "account", None), "provider", None) == SAML_PROVIDER_ID


def config_for(sociallogin) -> SsoConfig | SamlConfig | None:
    """The set-up of the protocol this sign-in came through."""
    return saml_config() if through_saml(sociallogin) else sso_config()


def identity_claims(sociallogin) -> dict:
    """What the identity provider said about the person: the verified ID token's claims, or the SAML assertion's
    attributes (allauth keeps either in the account's extra data; a SAML attribute is a list of values)."""
    if through_saml(sociallogin):
        attributes = sociallogin.account.extra_data
        return attributes if isinstance(attributes, dict) else {}
    return id_token_claims(sociallogin)


def id_token_claims(sociallogin) -> dict:
    """The verified ID token's claims (allauth keeps them in the account's extra data)."""
    claims = (sociallogin.account.extra_data or {}).get("id_token")
    return claims if isinstance(claims, dict) else {}


def roles_from_claims(claims: Mapping, config: SsoConfig | SamlConfig) -> frozenset[str] | None:
    """The roles the person's groups grant (possibly none); None when the groups claim (attribute) is missing or not
    a list of names, which is refused like no mapped group."""
    groups = claims.get(config.roles_key)
    if not isinstance(groups, list) or not all(isinstance(group, str) for group in groups):
        return None
    return frozenset(role for group in groups for role in config.role_map.get(group, ()))


def idp_vouched_for_mfa(sociallogin) -> bool:
    """The identity provider's second factor counts for the portal only when the deployment trusts it
    (``OIDC_TRUSTS_MFA``) *and* this ID token says one was used (``amr`` contains ``mfa``): either alone is not
    enough. A SAML sign-in never counts: the portal does not read the assertion's authentication context."""
    config = sso_config()
    if config is None or not config.trusts_mfa or sociallogin is None or through_saml(sociallogin):
        return False
    amr = id_token_claims(sociallogin).get("amr")
    return isinstance(amr, list) and "mfa" in amr


def unstorable_claim(value: object, path: str = "claims") -> str:
    """The first claim that holds a NUL character (PostgreSQL stores it neither in text nor in JSON), as a path
    like ``claims.name``; "" when every value can be stored."""
    if isinstance(value, str):
        return path if "\x00" in value else ""
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = unstorable_claim(str(key), path) or unstorable_claim(item, f"{path}.{key}")
            if found:
                return found.replace("\x00", "\\x00")
    if isinstance(value, list):
        for item in value:
            found = unstorable_claim(item, path)
            if found:
                return found
    return ""


def sso_institution(config: SsoConfig | SamlConfig | None):
    """The admitted institution new SSO accounts join (``SSO_INSTITUTION``); None when it is unset, unknown or
    not admitted, and a new person is then refused."""
    from portal.models import Institution

    if config is None or not config.institution:
        return None
    return Institution.objects.filter(name=config.institution, admitted=True).first()


def sso_refusal(sociallogin) -> tuple[str, frozenset[str]]:
    """Why this SSO sign-in is refused ("" when it is not), and the roles the person's groups grant."""
    config = config_for(sociallogin)
    if config is None:
        return "single sign-on is not configured", frozenset()
    if sociallogin.state.get("process") == "connect":
        return "the portal does not connect sign-in accounts to a signed-in account", frozenset()
    roles = roles_from_claims(identity_claims(sociallogin), config)
    if not roles:
        groups = ", ".join(sorted(config.role_map)) or "(none configured)"
        return (
            f"you are in none of the identity provider's groups that give a role in the portal ({groups}) "
            f"in {config.roles_source}; ask your hospital's administrator to add you to one",
            frozenset(),
        )
    from portal.roles import ranker_role_refusal

    refusal = ranker_role_refusal(roles)
    if refusal:
        return refusal[0].lower() + refusal[1:].rstrip("."), roles
    if not sociallogin.is_existing:
        return _new_person_refusal(sociallogin, config), roles
    return "", roles


def _new_person_refusal(sociallogin, config: SsoConfig | SamlConfig) -> str:
    """Why no account is made for a person the portal does not know yet ("" when one is)."""
    from portal.models import User

    email = (sociallogin.user.email or "").strip()
    if not email:
        return "the identity provider gave no e-mail address"
    if User.objects.filter(email__iexact=email).exists():
        return (
            f"an account with the address {email} exists, and {config.unverified_email}, so the two are not "
            "linked; sign in with your password, or ask an organizer"
        )
    if sso_institution(config) is None:
        return (
            f"new accounts join the institution {config.institution!r} (SSO_INSTITUTION), which does not exist "
            "or is not admitted; ask an organizer"
        )
    return ""
