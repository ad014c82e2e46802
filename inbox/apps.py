from django.apps import AppConfig


class InboxConfig(AppConfig):
    name = "inbox"
    verbose_name = "Inbox"
    default_auto_field = "django.db.models.BigAutoField"
