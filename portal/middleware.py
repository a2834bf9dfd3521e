"""Organizers must enrol TOTP before using the portal when PORTAL_REQUIRE_ORGANIZER_MFA is on."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import redirect
from django.urls import reverse

from portal.mfa import mfa_missing, session_passed_mfa
from portal.sso import sso_configs

_EXEMPT_PREFIXES = ("/accounts/", "/static/", "/health/")


class OrganizerMfaMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if (
            request.user.is_authenticated
            and not request.path.startswith(_EXEMPT_PREFIXES)
            and mfa_missing(request.user)
            and not session_passed_mfa(request)  # an identity provider the deployment trusts vouched for it
        ):
            return redirect(reverse("mfa_activate_totp"))
        return self.get_response(request)


class SessionIdleTimeoutMiddleware:
    """Signs out a session idle for ``PORTAL_SESSION_IDLE_MINUTES`` (``portal.sessions``) and tells the person why
    on the next page (the login page, since the page they asked for now wants a signed-in person). A page that was
    polling by itself (htmx) is sent to the login page as a whole rather than having it swapped into a corner.

    After the message middleware (the message needs it), before anything that reads the body."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.contrib import messages

        from portal.sessions import session_idle_message, session_idle_timed_out

        if request.user.is_authenticated and session_idle_timed_out(request):
            messages.info(request, session_idle_message())
            if request.headers.get("HX-Request") == "true":
                from django_htmx.http import HttpResponseClientRedirect

                return HttpResponseClientRedirect(reverse("account_login"))
        return self.get_response(request)


class DatabaseUnavailableMiddleware:
    """A lost database connection answers 503 with a clear message instead of a 500 traceback.

    Django's CONN_HEALTH_CHECKS drops a broken connection at the start of the next request, so once
    PostgreSQL is back the same web process recovers without a restart.

    Placed right after the authentication middleware: the session and the person are loaded here, where a lost
    database can still be answered. Django turns an exception raised by a later middleware (the MFA check reads
    the person) into a 500 before any ``process_exception`` sees it; views' exceptions come to
    ``process_exception`` below.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.db import InterfaceError, OperationalError

        try:
            request.user.is_authenticated  # noqa: B018 - loads the session and the person now
        except (OperationalError, InterfaceError) as exc:
            return self.process_exception(request, exc)
        return self.get_response(request)

    def process_exception(self, request, exception):
        from django.db import InterfaceError, OperationalError, connections
        from django.http import HttpResponse, JsonResponse
        from django.template.loader import render_to_string

        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        for conn in connections.all(initialized_only=True):
            conn.close_if_unusable_or_obsolete()
        message = "The database is unavailable right now; nothing was saved. Please retry in a moment."
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": message, "code": "database_unavailable"}, status=503)
        else:
            # Rendered without the request: the context processors would read the person from the lost database.
            response = HttpResponse(render_to_string("503.html", {"message": message}), status=503)
        response["Retry-After"] = "5"
        return response


class ContentSecurityPolicyMiddleware:
    """Sends ``settings.CONTENT_SECURITY_POLICY`` with every HTML page.

    The policy allows scripts and styles from the portal's own static files only: markup that slipped past
    escaping cannot run (no inline script, no ``on*=`` handler, no injected ``<style>``). Only HTML documents
    get it: the SVG plots carry matplotlib's inline styles and are opened directly by the "SVG" links.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.header = "; ".join(f"{name} {value}" for name, value in settings.CONTENT_SECURITY_POLICY.items())

    def __call__(self, request):
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/html"):
            response.setdefault("Content-Security-Policy", self._policy())
        return response

    def _policy(self) -> str:
        # The sign-in page's hospital button is a form whose answer redirects to the identity provider, and browsers
        # hold that redirect to form-action (Chromium refused it: the button did nothing). The provider's origin is
        # allowed there while single sign-on is set up; its authorization endpoint is on the issuer's origin at
        # Keycloak, Entra ID, Okta and Google alike. A SAML IdP's is the origin of its SSO URL (or, given by metadata,
        # of the metadata URL, where ADFS, Entra ID and Keycloak serve both).
        origins = " ".join(dict.fromkeys(config.idp_origin for config in sso_configs()))
        if not origins:
            return self.header
        return self.header.replace("form-action 'self'", f"form-action 'self' {origins}")


class AnonymousBodyLimitMiddleware:
    """A request whose declared body (Content-Length) is larger than ``PORTAL_ANONYMOUS_BODY_MAX_BYTES`` gets a 413
    unless its sender is signed in (a session, or an API token that authenticates), before anything reads the body.

    Without it any anonymous client could make a worker read and keep up to ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (100 MB)
    per request: the middleware below reads the form of every request, and CSRF's check reads it too. What an
    anonymous client may send (the sign-in, password-reset and set-password forms) is a few hundred bytes; imports
    and API bodies come from signed-in people, whose limits stay those of the upload settings. A proxy in front
    should refuse large bodies even earlier (nginx's ``client_max_body_size``: README, Deployment).

    After the authentication and idle-timeout middleware (it asks who is signed in), before the body's first reader.
    The person is looked up only for a body over the limit."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0  # Django reads such a body as empty
        if length > settings.PORTAL_ANONYMOUS_BODY_MAX_BYTES and not _signed_in(request):
            limit = settings.PORTAL_ANONYMOUS_BODY_MAX_BYTES
            message = (
                f"The request is too large: {length:,} bytes, where {limit:,} is the most accepted before you sign "
                "in. Nothing was read or changed; sign in (or send your API token) to upload files."
            )
            return _refusal(request, message, status=413, code="request_too_large")
        return self.get_response(request)


def _signed_in(request) -> bool:
    if request.user.is_authenticated:
        return True
    if not request.META.get("HTTP_AUTHORIZATION"):
        return False
    from rest_framework.exceptions import AuthenticationFailed

    from portal.authentication import TokenAuthentication

    try:
        return TokenAuthentication().authenticate(request) is not None
    except AuthenticationFailed:
        return False


class RefuseUnstorableTextMiddleware:
    """A request whose URL path, query string or form fields hold text the portal cannot store (NUL, unpaired
    surrogates: ``portal.parsers.refused_character``) gets a 400 naming the field, before any view reads it.

    Forms' CharFields refuse NUL themselves, but views also read raw ``request.GET`` / ``request.POST`` values
    and URL segments straight into queries, where PostgreSQL's refusal would be a 500. Multipart bodies are left
    to the views (their text fields go through forms; files are checked by the importers).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from portal.parsers import printable, refused_character

        fields = [("URL path", request.path)]
        fields += [(key, value) for key, values in request.GET.lists() for value in [key, *values]]
        if request.content_type == "application/x-www-form-urlencoded":
            fields += [(key, value) for key, values in request.POST.lists() for value in [key, *values]]
        for name, value in fields:
            reason = refused_character(value)
            if reason:
                return _bad_request(request, f"{printable(name)}: {reason}.")
        return self.get_response(request)


def _bad_request(request, message: str):
    return _refusal(request, message, status=400, code="invalid_input")


def _refusal(request, message: str, *, status: int, code: str):
    """A refused request: JSON for the API, else the portal's "Request refused" page."""
    from django.http import HttpResponse, JsonResponse
    from django.template.loader import render_to_string

    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message, "code": code}, status=status)
    # Rendered without the request: the page must not depend on the person, who may be anonymous or not loaded.
    return HttpResponse(render_to_string("400.html", {"message": message}), status=status)


class SamlMalformedAnswerMiddleware:
    """An answer posted to the SAML sign-in that is not well-formed XML, or carries a DTD or entities, gets the
    single sign-on refusal page (on record) instead of a 500: allauth's view turns python3-saml's own errors into its
    error page, but not the parser's. Anyone can post such an answer, and XML cannot carry a NUL character at all.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        from lxml.etree import LxmlError  # type: ignore[import-untyped]
        from onelogin.saml2.xmlparser import (  # type: ignore[import-untyped]
            DTDForbidden,
            EntitiesForbidden,
            NotSupportedError,
        )

        unreadable = (LxmlError, DTDForbidden, EntitiesForbidden, NotSupportedError)
        if not isinstance(exception, unreadable) or not request.path.startswith("/accounts/saml/"):
            return None
        from portal.adapters import sso_refused

        return sso_refused(request, "unknown", "the identity provider's answer is not well-formed XML without a DTD")
