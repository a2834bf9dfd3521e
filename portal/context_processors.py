from portal.roles import Role, user_roles


def roles(request):
    held = user_roles(getattr(request, "user", None))
    return {"user_roles": held, **{f"is_{role.value}": role.value in held for role in Role}}
