from django.apps import AppConfig


class DemoConfig(AppConfig):
    """Holds the ``load_demo`` command; no models."""

    name = "demo"
    verbose_name = "Demo data"
