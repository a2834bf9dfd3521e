from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "analytics"

    def ready(self) -> None:
        # Registers this app's job kinds (portal.job_kinds.job_task) in every process, the web process included: the
        # worker's autodiscovery alone would leave the web process without them.
        from analytics import tasks  # noqa: F401
        from analytics.receivers import boards_after_close
        from ranking.signals import study_closed

        study_closed.connect(boards_after_close, dispatch_uid="analytics.boards_after_close")
