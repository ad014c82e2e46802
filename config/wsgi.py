"""WSGI entry point (gunicorn in production, runserver in development).

Each server process gets ready as it starts rather than on its first requests: it imports the
URLconf (every view, the MCP tools: about 120 ms, which the first request of each gunicorn
worker waited for) and starts loading the search's models and reading the wiki's languages
(wiki/search/warmup.py `warm_up`: 0.4 to 0.6 s that the first search of each worker waited for).
"""

import os
from importlib import import_module

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
import_module(settings.ROOT_URLCONF)

from wiki.search import warm_up  # noqa: E402  (the app registry is ready only now)

warm_up()
