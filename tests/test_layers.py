"""The layers hold: import-linter's contracts (pyproject.toml) pass, and fail on a wrong-way
import, so CI's `make lint` would stop a change that makes wiki/ import reviews/."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

PACKAGES = ("core", "wiki", "reviews", "agents", "content", "config", "connect")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _copy_project(into: Path) -> Path:
    for name in PACKAGES:
        shutil.copytree(
            PROJECT_ROOT / name, into / name, ignore=shutil.ignore_patterns("__pycache__", "demo")
        )
    shutil.copy(PROJECT_ROOT / "pyproject.toml", into / "pyproject.toml")
    return into


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    if not LINT_IMPORTS.exists():
        pytest.fail(f"lint-imports is not installed next to {sys.executable}: run make install")
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )


def test_it_keeps_every_contract_on_the_code_as_it_is(tmp_path: Path) -> None:
    result = _lint(_copy_project(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_it_fails_when_wiki_imports_the_review_lifecycle(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    models = root / "wiki" / "models.py"
    models.write_text(models.read_text() + "\nfrom reviews import services  # noqa\n")
    result = _lint(root)
    assert result.returncode != 0
    assert "wiki imports neither agents nor reviews" in result.stdout
    assert "BROKEN" in result.stdout


def test_it_fails_when_a_model_imports_a_door(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    models = root / "agents" / "models.py"
    models.write_text(models.read_text() + "\nfrom agents import views  # noqa\n")
    result = _lint(root)
    assert result.returncode != 0
    assert "doors above services and selectors above models BROKEN" in result.stdout


def test_it_fails_when_agents_imports_the_oauth_app_outside_the_mcp_auth_point(
    tmp_path: Path,
) -> None:
    root = _copy_project(tmp_path)
    services = root / "agents" / "services.py"
    services.write_text(services.read_text() + "\nfrom connect import services  # noqa\n")
    result = _lint(root)
    assert result.returncode != 0
    assert "Only the URL conf and the MCP auth point use the connect app" in result.stdout
    assert "BROKEN" in result.stdout
