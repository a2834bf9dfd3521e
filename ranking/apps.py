from django.apps import AppConfig


class RankingConfig(AppConfig):
    name = "ranking"

    def ready(self) -> None:
        # Registers this app's job kinds (portal.job_kinds.job_task) in every process, the web process included: the
        # worker's autodiscovery alone would leave the web process without them.
        from ranking import tasks  # noqa: F401
