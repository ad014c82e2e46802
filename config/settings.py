"""Quire's settings, all read from the environment (see README "Configuration")."""

import os
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
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
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "mcp_server",
    "core",
    "wiki",
    "agents",
    "reviews",
    "content",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
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
DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=60)}
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

# Uploads: attachments above this size are refused with a message in the form.
QUIRE_ATTACHMENT_MAX_BYTES = env_int(
    "QUIRE_ATTACHMENT_MAX_BYTES", 10 * 1024 * 1024, minimum=1024, maximum=1024**3
)
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Login throttling: failed attempts per username+address within the window.
QUIRE_LOGIN_MAX_FAILURES = env_int("QUIRE_LOGIN_MAX_FAILURES", 5, minimum=1)
QUIRE_LOGIN_WINDOW_SECONDS = env_int("QUIRE_LOGIN_WINDOW_SECONDS", 300, minimum=1)

# Agents: calls per minute before rate_limited.
QUIRE_AGENT_RATE_LIMIT = env_int("QUIRE_AGENT_RATE_LIMIT", 120, minimum=1)
# Browser origins allowed to call /mcp besides QUIRE_BASE_URL's and the server's own
# (comma-separated, e.g. an MCP inspector at http://localhost:6274).
QUIRE_MCP_ALLOWED_ORIGINS = env_list("QUIRE_MCP_ALLOWED_ORIGINS", "")

# Background work: Celery on Redis when REDIS_URL is set; otherwise tasks run in process
# (after commit, since callers queue them with transaction.on_commit).
REDIS_URL = env_url("REDIS_URL", schemes=("redis", "rediss"))
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    # Emails the broker or the SMTP server could not take at the time (the outbox).
    "retry-pending-notifications": {
        "task": "reviews.tasks.retry_pending_notifications",
        "schedule": 300.0,
    },
    "send-review-digests": {
        "task": "reviews.tasks.send_review_digests",
        "schedule": crontab(hour=env_int("QUIRE_DIGEST_HOUR", 7, maximum=23), minute=0),
    },
}

CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

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
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Quire API",
    "DESCRIPTION": "Read pages and history, list and decide reviews.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The schema documents the REST API only; /mcp speaks JSON-RPC, not REST.
    "PREPROCESSING_HOOKS": ["reviews.api.only_rest_api"],
}

# django-mcp-server: one stateless server; Quire lists its own tools per agent.
DJANGO_MCP_GLOBAL_SERVER_CONFIG = {"name": "quire", "stateless": True}
DJANGO_MCP_GET_SERVER_INSTRUCTIONS_TOOL = False

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if not DEBUG and QUIRE_BASE_URL.startswith("https://"):
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO").upper()},
    # The MCP SDK logs several INFO lines per request; keep its warnings only.
    "loggers": {
        "mcp": {"level": "WARNING"},
        "mcp_server": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}
