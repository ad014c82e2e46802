"""`manage.py runserver` (what `make run` starts), its connections sending at once.

WhiteNoise's runserver (static files served as in production) with the server of
core/devserver.py. The `core` app comes before `whitenoise.runserver_nostatic` in
INSTALLED_APPS, so this command is the one Django runs.
"""

from __future__ import annotations

from whitenoise.runserver_nostatic.management.commands.runserver import (
    Command as WhiteNoiseRunserver,
)

from core.devserver import PromptWSGIServer


class Command(WhiteNoiseRunserver):  # type: ignore[misc]
    server_cls = PromptWSGIServer
