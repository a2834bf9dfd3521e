"""Hospital sign-in through OpenID Connect: allauth's ``openid_connect`` provider under the provider id ``sso``.

Configured from the environment alone (no SocialApp row): ``OIDC_ISSUER`` (discovery at
``/.well-known/openid-configuration``), ``OIDC_CLIENT_ID``, ``OIDC_CLIENT_SECRET``, ``OIDC_NAME`` (the button's
label), ``OIDC_ROLES_CLAIM`` (the claim listing the person's groups), ``OIDC_ROLE_MAP`` (``group=role,…``),
``OIDC_INSTITUTION`` (the institution new accounts join) and ``OIDC_TRUSTS_MFA``. With ``OIDC_ISSUER`` unset there
is no provider at all: no button, and ``/accounts/oidc/sso/login/`` answers 404.

What the identity provider says is read here (the person's roles, whether it vouched for a second factor, whether a
value can be stored); what the portal does with it is in ``portal.adapters`` (who may sign in),
``portal.services.person_roles_from_idp`` (roles) and ``portal.mfa`` (the organizers' MFA rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from portal.env import env_bool, env_str, env_url
from portal.roles import Role

PROVIDER_ID = "sso"
DEFAULT_NAME = "Single sign-on"
DEFAULT_ROLES_CLAIM = "groups"


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
        role_map=parse_role_map(env_str("OIDC_ROLE_MAP")),
        institution=env_str("OIDC_INSTITUTION").strip(),
        trusts_mfa=env_bool("OIDC_TRUSTS_MFA", False),
    )


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


def socialaccount_providers(config: SsoConfig | None) -> dict:
    """``SOCIALACCOUNT_PROVIDERS``: the one OpenID Connect app, built from settings (no database row)."""
    if config is None:
        return {"openid_connect": {"APPS": []}}
    app = {
        "provider_id": PROVIDER_ID,
        "name": config.name,
        "client_id": config.client_id,
        "secret": config.client_secret,
        # The ID token carries ``amr`` and the groups; userinfo is not needed and is one request fewer.
        "settings": {"server_url": config.issuer, "fetch_userinfo": False, "oauth_pkce_enabled": True},
    }
    return {"openid_connect": {"APPS": [app]}}


def sso_config() -> SsoConfig | None:
    return getattr(settings, "PORTAL_SSO", None)


def id_token_claims(sociallogin) -> dict:
    """The verified ID token's claims (allauth keeps them in the account's extra data)."""
    claims = (sociallogin.account.extra_data or {}).get("id_token")
    return claims if isinstance(claims, dict) else {}


def roles_from_claims(claims: Mapping, config: SsoConfig) -> frozenset[str] | None:
    """The roles the person's groups grant (possibly none); None when the groups claim is missing or not a list of
    names, which is refused like no mapped group."""
    groups = claims.get(config.roles_claim)
    if not isinstance(groups, list) or not all(isinstance(group, str) for group in groups):
        return None
    return frozenset(role for group in groups for role in config.role_map.get(group, ()))


def idp_vouched_for_mfa(sociallogin) -> bool:
    """The identity provider's second factor counts for the portal only when the deployment trusts it
    (``OIDC_TRUSTS_MFA``) *and* this ID token says one was used (``amr`` contains ``mfa``): either alone is not
    enough."""
    config = sso_config()
    if config is None or not config.trusts_mfa or sociallogin is None:
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


def sso_institution():
    """The admitted institution new SSO accounts join (``OIDC_INSTITUTION``); None when it is unset, unknown or
    not admitted, and a new person is then refused."""
    from portal.models import Institution

    config = sso_config()
    if config is None or not config.institution:
        return None
    return Institution.objects.filter(name=config.institution, admitted=True).first()


def sso_refusal(sociallogin) -> tuple[str, frozenset[str]]:
    """Why this SSO sign-in is refused ("" when it is not), and the roles the person's groups grant."""
    config = sso_config()
    if config is None:
        return "single sign-on is not configured", frozenset()
    if sociallogin.state.get("process") == "connect":
        return "the portal does not connect sign-in accounts to a signed-in account", frozenset()
    roles = roles_from_claims(id_token_claims(sociallogin), config)
    if not roles:
        groups = ", ".join(sorted(config.role_map)) or "(none configured)"
        return (
            f"you are in none of the identity provider's groups that give a role in the portal ({groups}) "
            f"in the claim {config.roles_claim!r}; ask your hospital's administrator to add you to one",
            frozenset(),
        )
    from portal.roles import ranker_role_refusal

    refusal = ranker_role_refusal(roles)
    if refusal:
        return refusal[0].lower() + refusal[1:].rstrip("."), roles
    if not sociallogin.is_existing:
        return _new_person_refusal(sociallogin, config), roles
    return "", roles


def _new_person_refusal(sociallogin, config: SsoConfig) -> str:
    """Why no account is made for a person the portal does not know yet ("" when one is)."""
    from portal.models import User

    email = (sociallogin.user.email or "").strip()
    if not email:
        return "the identity provider gave no e-mail address"
    if User.objects.filter(email__iexact=email).exists():
        return (
            f"an account with the address {email} exists, and the identity provider did not say that the address "
            "is verified, so the two are not linked; sign in with your password, or ask an organizer"
        )
    if sso_institution() is None:
        return (
            f"new accounts join the institution {config.institution!r} (OIDC_INSTITUTION), which does not exist "
            "or is not admitted; ask an organizer"
        )
    return ""
