from django.apps import AppConfig
from django.db.backends.signals import connection_created


class WikiConfig(AppConfig):
    name = "wiki"
    verbose_name = "Wiki"

    def ready(self) -> None:
        from wiki.semantic import load_sqlite_vec

        connection_created.connect(load_sqlite_vec, dispatch_uid="wiki.load_sqlite_vec")
