"""/healthz: the database (and Redis when configured) as JSON, for load balancers.

The database down is an error (503): nothing works without it. Redis down is "degraded"
(200): pages, MCP calls and reviews keep working, counters move to the database and email
waits in the outbox, so a load balancer must not take the server out of rotation for it.
`search` says how search_pages ranks: hybrid (the embedding model, and where the vectors
are searched: pgvector, sqlite-vec or exact; the model's `languages`, and what a question in
another language finds, `otherLanguages`) or keyword-only when there is no model.
"""

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from wiki.search import status as search_status


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - any failure is reported, not raised
        checks["database"] = f"error: {exc.__class__.__name__}"
    if settings.REDIS_URL:
        try:
            import redis

            redis.Redis.from_url(
                settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2
            ).ping()
            checks["redis"] = "ok"
        except Exception as exc:  # noqa: BLE001
            checks["redis"] = f"error: {exc.__class__.__name__}"
    search = search_status()
    if checks["database"] != "ok":
        status, http_status = "error", 503
    elif any(value != "ok" for value in checks.values()):
        status, http_status = "degraded", 200
    else:
        status, http_status = "ok", 200
    return JsonResponse({"status": status, "checks": checks, "search": search}, status=http_status)
