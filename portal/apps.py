from django.apps import AppConfig


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = "Portal: people, roles and jobs"

    def ready(self) -> None:
        from portal import signals_audit  # noqa: F401 - connects the sign-in receivers of the audit trail
