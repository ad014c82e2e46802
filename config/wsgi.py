"""WSGI entry point (gunicorn in production, runserver in development)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Each server process reads the wiki's languages as it starts, so that its first search does
# not wait for that reading (wiki/language.py).
from wiki.language import read_in_background  # noqa: E402

read_in_background()
