"""`make run`'s setup twice, as a user runs it: fresh processes on one SQLite file of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.database_independent


def test_make_demo_twice_keeps_an_approved_edit(tmp_path: Path) -> None:
    """What `make run` does, twice, in fresh processes on one SQLite file."""
    env = {
        **os.environ,
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        "QUIRE_BASE_URL": "http://127.0.0.1:8000",
    }
    env.pop("REDIS_URL", None)
    env.pop("LOG_LEVEL", None)
    logged: list[str] = []

    def manage(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        logged.append(done.stderr)
        return done.stdout

    login = str(tmp_path / "login.txt")
    manage("migrate", "--noinput", "-v", "0")
    demo = manage("load_demo", "--login-file", login)
    # The admin who logs in can decide the demo agent's proposals (nobody decides their own
    # agent's): no "Nobody can decide" mail, and the admin approves one.
    assert "Nobody can decide" not in demo
    # What `make run` prints before its banner is not noise: no warning about a broker host it
    # never reaches (tasks run in process), no line for each of those tasks that succeeded.
    assert "No hostname was supplied" not in "".join(logged)
    assert "succeeded in" not in "".join(logged)
    approve = (
        "from django.contrib.auth.models import User\n"
        "from reviews.actions.decide import version_approve\n"
        "from wiki.models import Version\n"
        "admin = User.objects.get(username='admin')\n"
        "v = Version.objects.get(status='in_review', page__title='Writing good pages')\n"
        "print(version_approve(actor=admin, version=v).body)\n"
    )
    assert "Three to five tags" in manage("shell", "-c", approve)
    output = manage("load_demo", "--login-file", login)

    live = (
        "from wiki.models import Page\n"
        "print(Page.objects.get(title='Writing good pages').live_version.body)\n"
    )
    assert "Three to five tags" in manage("shell", "-c", live)
    assert "1 kept as edited" in output
