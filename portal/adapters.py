import hashlib

import jwt
import requests
from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.adapter import get_adapter as get_social_adapter
from allauth.socialaccount.providers.openid_connect.provider import OpenIDConnectProvider
from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode

from portal.audit import audit_access
from portal.clientip import client_ip
from portal.errors import DomainError
from portal.forms import person_email_field
from portal.models import AuditEntry, Institution
from portal.roles import person_may_use_portal
from portal.services import person_roles_from_idp
from portal.sso import config_for, sso_configs, sso_institution, sso_refusal, unstorable_claim


class PortalAccountAdapter(DefaultAccountAdapter):
    """People are admitted by organizers; public sign-up only when PORTAL_OPEN_SIGNUP is on."""

    error_messages = {
        **DefaultAccountAdapter.error_messages,
        "too_many_login_attempts": (
            "Too many failed login attempts. Try again in a few minutes, or unlock your account at once: "
            "“Forgot your password?” e-mails you a link, and setting your password with it unlocks the account."
        ),
    }

    def is_open_for_signup(self, request):
        return settings.PORTAL_OPEN_SIGNUP

    def clean_email(self, email):
        # allauth's address forms (add an address, sign up) save what passes here: the people page's rule.
        return super().clean_email(person_email_field().clean(email))

    def get_client_ip(self, request):
        # allauth's rate limits (login throttling) key on this: the trusted-proxy rule of portal.clientip.
        ip = client_ip(request)
        if not ip:
            raise PermissionDenied("Unable to determine client IP address")
        return ip

    # Login throttling (ACCOUNT_RATE_LIMITS["login_failed"]): allauth counts an account's failed sign-ins under this
    # key ("5/5m/key") and every failure from an address under the address ("10/m/ip"). Keyed by account alone, anyone
    # who knows an e-mail address could keep its owner locked out; keyed by account *and* client address, a stranger
    # locks the account only at the stranger's address, while the per-address limit still stops guessing across
    # accounts. The account's unlock generation, changed by a password reset (the e-mailed link, which only the
    # owner receives), starts the count afresh at every address: the unlock for an owner who shares an address (a
    # hospital's NAT) with whoever locked it.
    def _get_login_attempts_cache_key(self, request, **credentials):
        account = super()._get_login_attempts_cache_key(request, **credentials)
        generation = cache.get(_unlock_generation_key(account), 0)
        return f"{account}:{generation}:{self.get_client_ip(request)}"

    def _delete_login_attempts_cached_email(self, request, **credentials):
        # allauth calls this for each of the person's addresses once a password was set from a reset link.
        super()._delete_login_attempts_cached_email(request, **credentials)
        account = super()._get_login_attempts_cache_key(request, **credentials)
        key = _unlock_generation_key(account)
        cache.set(key, cache.get(key, 0) + 1, timeout=None)  # one small entry per account that was ever reset

    def get_login_stages(self):
        # The TOTP step that knows when the identity provider's own second factor counts (portal.mfa).
        return [_MFA_STAGES.get(stage, stage) for stage in super().get_login_stages()]

    def pre_login(self, request, user, **kwargs):
        # Every sign-in passes here before the TOTP step: the password form, a set-password link
        # (ACCOUNT_LOGIN_ON_PASSWORD_RESET) and single sign-on alike.
        from allauth.account.internal.stagekit import clear_login

        # allauth's own check is is_active only; the backends refuse the person, but allauth then signs in the
        # person it stashed unless refused here. Same rule, same "account inactive" page.
        if user.is_active and not person_may_use_portal(user):
            clear_login(request)
            return self.respond_user_inactive(request, user)
        institution = passwords_off_for(user)
        if institution is not None and not _through_sso(kwargs.get("signal_kwargs")):
            clear_login(request)
            return _password_sign_in_refused(request, user, institution, kwargs.get("redirect_url"))
        return super().pre_login(request, user, **kwargs)

    def clean_password(self, password, user=None):
        # Every form that sets a password (the set-password link, a password change) asks here: none is set for a
        # person who could not sign in with it, so switching passwords on again brings back no forgotten one.
        institution = passwords_off_for(user)
        if institution is not None:
            raise ValidationError(passwords_off_message(institution))
        return super().clean_password(password, user=user)


_MFA_STAGES = {"allauth.mfa.stages.AuthenticateStage": "portal.mfa.AuthenticateUnlessIdpVouchedStage"}


def passwords_off_for(user) -> Institution | None:
    """The person's institution when it has switched passwords off (``Institution.password_login``): they sign in
    through single sign-on only. None when passwords work for them."""
    if user is None or getattr(user, "institution_id", None) is None:
        return None
    return None if user.institution.password_login else user.institution


def passwords_off_message(institution: Institution) -> str:
    """What a member of an institution without passwords is told at the password form and the set-password link."""
    buttons = " or ".join(f"“{config.name}”" for config in sso_configs())
    if not buttons:
        return f"Passwords are off for {institution.name}, and single sign-on is not set up: ask an organizer."
    return f"Passwords are off for {institution.name}: sign in with the {buttons} button instead."


def _through_sso(signal_kwargs) -> bool:
    # allauth passes the social login along with a sign-in through an identity provider, and only then.
    return (signal_kwargs or {}).get("sociallogin") is not None


def _password_sign_in_refused(request, user, institution: Institution, redirect_url: str | None):
    """Back to the sign-in page (its button and the person's ``next`` kept), saying why; the refusal on record."""
    audit_access(
        action="login_refused",
        actor=None,
        obj=("sign-in", user.email[: AuditEntry._meta.get_field("object_id").max_length]),
        detail=f"password: passwords are off for {institution.name}",
        request=request,
        extra={"email": user.email},
    )
    messages.error(request, passwords_off_message(institution))
    query = f"?{urlencode({'next': redirect_url})}" if redirect_url else ""
    return HttpResponseRedirect(reverse("account_login") + query)


class PortalSocialAccountAdapter(DefaultSocialAccountAdapter):
    """Single sign-on (``portal.sso``): who may come in through the identity provider, and with which roles.

    Every refusal is a page that says why, recorded in the audit trail; nothing is created for a refused person.
    """

    def get_provider(self, request, provider, client_id=None):
        found = super().get_provider(request, provider, client_id=client_id)
        if type(found) is OpenIDConnectProvider:
            return PortalOpenIDConnectProvider(request, app=found.app)
        return found

    def get_requests_session(self):
        session = super().get_requests_session()
        session.hooks["response"].append(_verify_id_token_signature)
        return session

    def is_open_for_signup(self, request, sociallogin):
        # A new person is admitted by the identity provider's groups (pre_social_login has refused anyone else),
        # whatever PORTAL_OPEN_SIGNUP says about the sign-up form.
        return True

    def is_auto_signup_allowed(self, request, sociallogin):
        return True

    def pre_social_login(self, request, sociallogin):
        refusal, roles = sso_refusal(sociallogin)
        if refusal:
            raise ImmediateHttpResponse(sso_refused(request, sociallogin_subject(sociallogin), refusal))
        if sociallogin.is_existing and person_may_use_portal(sociallogin.user):
            try:
                person_roles_from_idp(user=sociallogin.user, roles=roles)
            except DomainError as exc:
                raise ImmediateHttpResponse(sso_refused(request, sociallogin_subject(sociallogin), str(exc))) from None

    def save_user(self, request, sociallogin, form=None):
        _, roles = sso_refusal(sociallogin)
        sociallogin.user.email = sociallogin.user.email.lower()
        sociallogin.user.institution = sso_institution(config_for(sociallogin))
        user = super().save_user(request, sociallogin, form=form)
        person_roles_from_idp(user=user, roles=roles, created=True)
        return user

    def on_authentication_error(self, request, provider, error=None, exception=None, extra_context=None):
        # A forged or expired ID token, a wrong issuer or audience, a replayed state, an identity provider that fails:
        # allauth shows its error page; the attempt goes on record.
        reason = f"{error or 'error'}: {exception}" if exception else str(error or "error")
        _audit_refusal(request, "unknown", f"the identity provider's answer was refused ({reason})")


class PortalOpenIDConnectProvider(OpenIDConnectProvider):
    """allauth's provider, with an identity provider that does not answer, and claims the portal cannot store,
    turned into pages instead of 500s."""

    @property
    def server_url(self):
        # allauth fetches the discovery document outside its error handling (when it builds the client, at the
        # login and at the callback), so it is probed here first, where the answer can still be a page.
        url = super().server_url
        try:
            with get_social_adapter().get_requests_session() as session:
                session.get(url).raise_for_status()
        except requests.RequestException:
            _audit_refusal(self.request, "unknown", "the identity provider did not answer")
            raise ImmediateHttpResponse(_idp_unreachable(self.request, self.name)) from None
        return url

    def sociallogin_from_response(self, request, response):
        # allauth saves the claims of a known person before any hook sees them: a NUL character (which PostgreSQL
        # cannot store) or a subject it cannot use is refused before that.
        subject = response.get("id_token", {}).get("sub") if isinstance(response, dict) else None
        problem = unstorable_claim(response)
        if problem or not isinstance(subject, str) or not subject or len(subject) > _UID_MAX_LENGTH:
            what = f"{problem} holds a NUL character" if problem else "the subject (sub) is missing or unusable"
            raise ImmediateHttpResponse(
                sso_refused(request, "unknown", f"the identity provider sent a value the portal cannot store: {what}")
            )
        return super().sociallogin_from_response(request, response)


def _verify_id_token_signature(response, *args, **kwargs) -> None:
    """Check the signature of an ID token in a token endpoint's answer against the identity provider's keys.

    allauth checks the token's issuer, audience and expiry but skips its signature when the token came straight from
    the token endpoint (OpenID Connect allows that over TLS); the portal checks it anyway, so a forged token is
    refused even where TLS is terminated or inspected on the way. Raises allauth's OAuth2Error, which its callback
    turns into the sign-in error page."""
    if response.request.method != "POST" or "id_token" not in response.text:
        return
    try:
        id_token = response.json().get("id_token")
    except (ValueError, AttributeError):
        return
    if not isinstance(id_token, str):
        return
    from allauth.socialaccount.providers.oauth2.client import OAuth2Error

    from portal.sso import sso_config

    config = sso_config()
    if config is None:
        raise OAuth2Error("an ID token arrived while single sign-on is not configured")
    try:
        with get_social_adapter().get_requests_session() as session:
            discovery = session.get(config.issuer + "/.well-known/openid-configuration")
            discovery.raise_for_status()
            keys = session.get(discovery.json()["jwks_uri"])
            keys.raise_for_status()
        if not _signed_by_one_of(id_token, keys.json()["keys"]):
            raise OAuth2Error("the ID token is not signed by any of the identity provider's keys")
    except (jwt.PyJWTError, requests.RequestException, KeyError, ValueError, TypeError) as exc:
        raise OAuth2Error(f"the ID token's signature was not verified: {exc}") from exc


# Public-key signatures only: "none" and the HMAC family (whose secret would be the published key) are refused.
_ID_TOKEN_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]


def _signed_by_one_of(id_token: str, jwks: list[dict]) -> bool:
    """Whether one of the published keys (the one the token names by ``kid``, any when it names none) verifies the
    token's signature. Claims are allauth's to check."""
    kid = jwt.get_unverified_header(id_token).get("kid")
    for jwk in jwks:
        if kid is not None and jwk.get("kid") != kid:
            continue
        try:
            jwt.decode(
                id_token,
                key=jwt.PyJWK(jwk).key,
                algorithms=_ID_TOKEN_ALGORITHMS,
                options={"verify_aud": False, "verify_iss": False, "verify_exp": False},
            )
            return True
        except (jwt.InvalidSignatureError, jwt.InvalidAlgorithmError, jwt.PyJWKError):
            continue
    return False


_UID_MAX_LENGTH = 191  # allauth's SOCIALACCOUNT_UID_MAX_LENGTH default: a longer subject is an error there


def _idp_unreachable(request, provider_name: str):
    return render(request, "socialaccount/idp_unreachable.html", {"provider_name": provider_name}, status=503)


def sociallogin_subject(sociallogin) -> str:
    """Who tried to sign in, for the audit trail: the e-mail address the IdP gave, else its subject id."""
    from portal.parsers import printable

    return printable(sociallogin.user.email or sociallogin.account.uid or "unknown")


def sso_refused(request, subject: str, reason: str):
    """The page for a refused SSO sign-in, saying why; the refusal goes on record."""
    _audit_refusal(request, subject, reason)
    return render(request, "socialaccount/sso_refused.html", {"reason": reason}, status=403)


def _audit_refusal(request, subject: str, reason: str) -> None:
    from portal.audit import audit_access

    audit_access(action="login_refused", actor=None, obj=("sign-in", subject), detail=f"sso: {reason}", request=request)


def _unlock_generation_key(account: str) -> str:
    return "portal:login-unlock:" + hashlib.sha256(account.encode()).hexdigest()
