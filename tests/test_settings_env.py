"""Configuration from the environment: a bad value stops start-up naming the variable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

# Each test runs Quire in processes of its own, with settings and a database of its own.
pytestmark = pytest.mark.database_independent

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def start(
    env: dict[str, str | None], then: str = "print('started')"
) -> subprocess.CompletedProcess[str]:
    """Set Django up in a fresh process with only `env` set (None: the variable is unset),
    then run the Python code `then`."""
    given: dict[str, str | None] = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "a-test-secret",
        **env,
    }
    clean = {name: value for name, value in given.items() if value is not None}
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {then}"],
        cwd=PROJECT_ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_starts_with_good_values() -> None:
    result = start(
        {
            "DEBUG": "off",
            "EMAIL_HOST": "mail.example.com",
            "EMAIL_PORT": "587",
            "EMAIL_USE_TLS": "yes",
            "DATABASE_URL": "postgres://quire@db.example.com:5432/quire",
            "REDIS_URL": "redis://redis.example.com:6379/0",
            "QUIRE_BASE_URL": "https://wiki.example.com",
            "ALLOWED_HOSTS": "wiki.example.com",
        }
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "started"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DEBUG", "maybe"),
        ("EMAIL_PORT", "abc"),
        ("EMAIL_PORT", "70000"),
        ("EMAIL_USE_TLS", "perhaps"),
        ("DATABASE_URL", "mysql://x"),
        ("REDIS_URL", "http://x"),
        ("QUIRE_BASE_URL", "ftp://wiki.example.com"),
        ("QUIRE_ATTACHMENT_MAX_BYTES", "lots"),
    ],
)
def test_it_refuses_a_bad_value_naming_the_variable(name: str, value: str) -> None:
    result = start({name: value})

    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line
    assert name in last_line
    assert "started" not in result.stdout


def test_it_requires_a_secret_key_when_debug_is_off() -> None:
    result = start({"SECRET_KEY": None, "DEBUG": "0"})

    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr.strip().splitlines()[-1]


def test_it_starts_without_a_secret_key_in_debug() -> None:
    result = start({"SECRET_KEY": None, "DEBUG": "1"})

    assert result.returncode == 0, result.stderr


def manage(env: Mapping[str, str | None], *args: str) -> subprocess.CompletedProcess[str]:
    given: dict[str, str | None] = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **env,
    }
    clean = {name: value for name, value in given.items() if value is not None}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=PROJECT_ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k3-9vQ!x7pZr2@Lm5#Tn8&Wc4^Yb6*Hd1(Fg0)Js-Ua_Ke=Oi+Rq",
    "QUIRE_BASE_URL": "https://wiki.example.org",
    "ALLOWED_HOSTS": "wiki.example.org",
}


def test_it_passes_check_deploy_with_debug_off_behind_https() -> None:
    result = manage(PRODUCTION, "check", "--deploy", "--fail-level", "WARNING")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def show(env: Mapping[str, str | None], expression: str) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_ROOT,
        env={"PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "config.settings"}
        | {name: value for name, value in env.items() if value is not None},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_it_lets_the_proxy_decide_about_https_redirects_and_hsts() -> None:
    behind_proxy = {**PRODUCTION, "QUIRE_SSL_REDIRECT": "0", "QUIRE_HSTS_SECONDS": "0"}

    assert show(PRODUCTION, "settings.SECURE_SSL_REDIRECT, settings.SECURE_HSTS_SECONDS") == (
        "True 31536000"
    )
    assert show(behind_proxy, "settings.SECURE_SSL_REDIRECT, settings.SECURE_HSTS_SECONDS") == (
        "False 0"
    )
    assert show(PRODUCTION, "settings.SECURE_PROXY_SSL_HEADER") == (
        "('HTTP_X_FORWARDED_PROTO', 'https')"
    )
    plain = {**PRODUCTION, "QUIRE_BASE_URL": "http://localhost:8000"}
    assert show(plain, "settings.SESSION_COOKIE_SECURE, settings.SECURE_SSL_REDIRECT") == (
        "False False"
    )


def test_it_keeps_attachments_on_the_local_disk_by_default() -> None:
    storage = "__import__('django.core.files.storage').core.files.storage.default_storage"

    assert show({"DEBUG": "1"}, f"{storage}.__class__.__name__") == "FileSystemStorage"


def test_it_stores_attachments_in_s3_compatible_storage_when_a_bucket_is_set() -> None:
    env = {
        "DEBUG": "1",
        "AWS_STORAGE_BUCKET_NAME": "quire-files",
        "AWS_S3_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_S3_REGION_NAME": "eu-west-1",
    }
    storage = "__import__('django.core.files.storage').core.files.storage.default_storage"

    assert show(env, f"{storage}.__class__.__name__") == "S3Storage"
    assert show(env, f"{storage}.bucket_name, {storage}.endpoint_url, {storage}.location") == (
        "quire-files http://127.0.0.1:9000 attachments"
    )


@pytest.mark.parametrize("debug", ["1", "0"])
def test_it_logs_each_django_line_once(debug: str) -> None:
    """Django's own console handler (DEBUG only) and the root's printed every django.* line
    twice under `make run`: each 404 warning, each request's traceback."""
    result = start(
        {"DEBUG": debug, "ALLOWED_HOSTS": "localhost", "LOG_LEVEL": None},
        then="import logging; logging.getLogger('django.request').warning('probe-line'); "
        "logging.getLogger('django.server').info('\"GET / HTTP/1.1\" 200 5')",
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("probe-line") == 1, result.stderr
    # runserver's request lines keep their handler and their time.
    assert re.search(r'^\[[^]]+\] "GET / HTTP/1.1" 200 5$', result.stderr, re.M), result.stderr
    assert result.stderr.count("GET / HTTP/1.1") == 1, result.stderr
