"""Configuration from the environment: a bad value stops start-up naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def start(env: dict[str, str | None]) -> subprocess.CompletedProcess[str]:
    """Set Django up in a fresh process with only `env` set (None: the variable is unset)."""
    given: dict[str, str | None] = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "a-test-secret",
        **env,
    }
    clean = {name: value for name, value in given.items() if value is not None}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
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
