from django.conf import settings

from portal.roles import Role, user_roles


def roles(request):
    held = user_roles(getattr(request, "user", None))
    return {
        "user_roles": held,
        **{f"is_{role.value}": role.value in held for role in Role},
        # The sign-in page offers sign-up only when it is open (portal.adapters.PortalAccountAdapter).
        "open_signup": settings.PORTAL_OPEN_SIGNUP,
    }
