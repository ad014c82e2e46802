"""Ask the identity provider now whether each person who signed in through it may still do so
(the worker does it every QUIRE_OIDC_RECHECK_SECONDS); a refusal ends their access."""

from typing import Any

from django.core.management.base import BaseCommand

from people import services


class Command(BaseCommand):
    help = "Ask the OpenID Connect provider again about every person who signed in through it."

    def handle(self, *args: Any, **options: Any) -> None:
        counts = services.sso_recheck_all()
        summary = ", ".join(f"{outcome} {count}" for outcome, count in sorted(counts.items()))
        self.stdout.write(f"checked {sum(counts.values())} people ({summary or 'none'})")
