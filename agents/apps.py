from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents"

    def ready(self) -> None:
        # The receivers that forget kept agents and scopes when agents, sets or pages
        # change, in every process (a management command's too), not only where a view
        # imported them.
        from agents import selectors  # noqa: F401
