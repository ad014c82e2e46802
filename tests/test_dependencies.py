"""What Quire installs is what it uses: one frontmatter parser, httpx for the tests only, and
S3 storage (boto3, django-storages) as an optional extra that says when it is missing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# Quire's own packages: the ones import-linter checks.
APPS = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "root_packages"
]


def pinned(requirements: str) -> set[str]:
    """The distribution names a requirements file pins (extras dropped, lower case)."""
    names = set()
    for line in (PROJECT_ROOT / requirements).read_text().splitlines():
        match = re.match(r"([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==", line.strip())
        if match:
            names.add(match.group(1).lower())
    return names


def modules_importing(module: str) -> list[str]:
    pattern = re.compile(rf"^\s*(import {module}\b|from {module}\b)", re.MULTILINE)
    return [
        str(path.relative_to(PROJECT_ROOT))
        for app in APPS
        for path in (PROJECT_ROOT / app).rglob("*.py")
        if pattern.search(path.read_text())
    ]


def test_it_reads_frontmatter_with_one_parser() -> None:
    """content/importer.py's `split_frontmatter` (bodies byte for byte, errors with the line),
    not python-frontmatter beside it."""
    assert modules_importing("frontmatter") == []
    assert "python-frontmatter" not in pinned("requirements.txt") | pinned("requirements-dev.txt")


def test_it_pins_httpx_for_the_tests_and_tools_only() -> None:
    assert modules_importing("httpx") == []
    assert "httpx" not in pinned("requirements.txt")
    assert "httpx" in pinned("requirements-dev.txt")


def test_it_keeps_s3_storage_an_optional_extra() -> None:
    assert not {"boto3", "django-storages"} & pinned("requirements.txt")
    assert {"boto3", "django-storages"} <= pinned("requirements-s3.txt")
    # The README links the operating guide, which says how to install the extra.
    assert "docs/operating.md" in (PROJECT_ROOT / "README.md").read_text()
    assert "requirements-s3.txt" in (PROJECT_ROOT / "docs" / "operating.md").read_text()


def test_it_says_what_to_install_when_a_bucket_is_set_without_the_s3_extra() -> None:
    # The extra is missing: importing boto3 or storages fails, as in a plain install.
    code = (
        "import sys; sys.modules['boto3'] = None; sys.modules['storages'] = None; "
        "import django; django.setup()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_ROOT,
        env={
            "PATH": os.environ.get("PATH", ""),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "a-test-secret",
            "DEBUG": "1",
            "AWS_STORAGE_BUCKET_NAME": "quire-files",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        "django.core.exceptions.ImproperlyConfigured: AWS_STORAGE_BUCKET_NAME is set, so "
        "attachments go to S3, but boto3 and django-storages are not installed: run "
        "`pip install -r requirements-s3.txt`, or unset AWS_STORAGE_BUCKET_NAME to keep "
        "them on the local disk."
    ), result.stderr
