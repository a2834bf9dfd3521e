from django.apps import AppConfig


class HomeConfig(AppConfig):
    """The top of the stack: the role-aware home page reads every app (the kernel below it reads none)."""

    name = "home"
    verbose_name = "Home page"
