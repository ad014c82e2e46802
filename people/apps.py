from django.apps import AppConfig


class PeopleConfig(AppConfig):
    name = "people"
    verbose_name = "People and sign-in"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from people import receivers  # noqa: F401  (connects the sign-in signal)
