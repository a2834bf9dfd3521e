from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Items and vetting"

    def ready(self) -> None:
        # Registers this app's job kinds (portal.job_kinds.job_task) in every process, the web process included: the
        # worker's autodiscovery alone would leave the web process without them.
        from annotation import tasks  # noqa: F401
