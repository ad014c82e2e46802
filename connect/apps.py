from django.apps import AppConfig


class ConnectConfig(AppConfig):
    name = "connect"
    verbose_name = "Connected clients"

    def ready(self) -> None:
        # Ending an agent's or a person's access ends the OAuth connections that rely on it.
        from connect import receivers  # noqa: F401
