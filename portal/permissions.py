"""Role checks for HTML views and API views.

Every view declares ``required_roles`` (a tuple of roles, any one of which grants access, or the marker
``AUTHENTICATED`` for pages any signed-in person may open). A view that declares nothing is refused:
a test walks the URL conf so a new page without a declaration fails the suite.
"""

from __future__ import annotations

from django.contrib.auth.mixins import AccessMixin
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

from portal.roles import has_role, person_may_use_portal

AUTHENTICATED = ("*authenticated*",)


def _allowed(user, required) -> bool:
    if not person_may_use_portal(user):
        return False
    if required is None:
        return False
    if tuple(required) == AUTHENTICATED:
        return True
    return has_role(user, *required)


def refusal(required) -> str:
    """The 403 message for people: which roles the page is for (the error page adds who they are)."""
    if not required or tuple(required) == AUTHENTICATED:
        return "Your account does not give access to this page."
    names = [f"{role}s" for role in required]
    return f"This page is for {' or '.join(names)}."


class RoleRequiredMixin(AccessMixin):
    """Class-based HTML view mixin: anonymous → login page, wrong role → 403."""

    required_roles: tuple | None = None

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        if not _allowed(request.user, self.required_roles):
            raise PermissionDenied(refusal(self.required_roles))
        return super().dispatch(request, *args, **kwargs)


class HasRequiredRole(BasePermission):
    """DRF default permission: the view's ``required_roles`` must be met (undeclared → refused)."""

    message = "Your role does not give access to this endpoint."

    def has_permission(self, request, view):
        return _allowed(request.user, getattr(view, "required_roles", None))
