#!/bin/sh
# Quire's container entrypoint. Roles: migrate (apply migrations once, then exit), web
# (collect static, gunicorn), worker (celery worker), beat (celery beat), manage ARGS
# (manage.py ARGS); anything else is exec'd. docker-compose runs `migrate` as its own step
# before the others start, so several web containers never race to migrate.
set -eu
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-config.settings}"

wait_for_database() {
    python - <<'PY'
import sys
import time

import django
from django.db import connection
from django.db.utils import OperationalError

django.setup()
deadline = time.monotonic() + float(__import__("os").environ.get("DB_WAIT_SECONDS", "60"))
while True:
    try:
        connection.ensure_connection()
        break
    except OperationalError as exc:
        if time.monotonic() > deadline:
            sys.exit(f"The database is still unreachable ({exc}); check DATABASE_URL.")
        print("Waiting for the database...", flush=True)
        time.sleep(2)
PY
}

role="${1:-web}"
case "$role" in
    migrate)
        wait_for_database
        exec python manage.py migrate --noinput
        ;;
    web)
        wait_for_database
        python manage.py collectstatic --noinput --verbosity 0
        exec gunicorn config.wsgi:application \
            --bind 0.0.0.0:8000 \
            --workers "${GUNICORN_WORKERS:-3}" \
            --timeout "${GUNICORN_TIMEOUT:-60}" \
            --access-logfile - \
            --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-*}"
        ;;
    worker)
        wait_for_database
        exec celery -A config worker --loglevel "${CELERY_LOG_LEVEL:-info}" \
            --concurrency "${CELERY_CONCURRENCY:-2}"
        ;;
    beat)
        wait_for_database
        exec celery -A config beat --loglevel "${CELERY_LOG_LEVEL:-info}" \
            --schedule /tmp/celerybeat-schedule
        ;;
    manage)
        shift
        wait_for_database
        exec python manage.py "$@"
        ;;
    *)
        exec "$@"
        ;;
esac
