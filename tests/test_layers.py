"""The layers hold: import-linter's contracts (pyproject.toml) pass, and fail on a wrong-way
import, so CI's `make lint` would stop a change that makes wiki/ import reviews/."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROJECT_ROOT

PACKAGES = ("core", "wiki", "reviews", "agents", "content", "config", "connect", "people", "inbox")
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


@pytest.mark.parametrize(
    ("module", "wrong_import", "contract"),
    [
        (
            "wiki/models.py",
            "from reviews import selectors",
            "wiki imports neither agents nor reviews",
        ),
        (
            "agents/models.py",
            "from agents import views",
            "doors above services and selectors above models",
        ),
        (
            "agents/services.py",
            "from connect import services",
            "Only the URL conf and the MCP auth point use the connect app",
        ),
        # Agents sits above reviews: reviews asks core.actors whether an actor is an agent.
        (
            "reviews/actions/decide.py",
            "from agents.models import Agent",
            "reviews does not import agents",
        ),
    ],
    ids=[
        "wiki-imports-reviews",
        "model-imports-door",
        "agents-imports-oauth",
        "reviews-imports-agents",
    ],
)
def test_it_fails_on_a_wrong_way_import(
    module: str, wrong_import: str, contract: str, tmp_path: Path
) -> None:
    root = _copy_project(tmp_path)
    path = root / module
    path.write_text(path.read_text() + f"\n{wrong_import}  # noqa\n")
    result = _lint(root)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in " ".join(broken.split()), result.stdout
    assert "BROKEN" in result.stdout


def _layers_contract() -> dict[str, Any]:
    config = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return contract


def _named_in(layers: list[str]) -> set[str]:
    return {
        name.strip().strip("()")
        for layer in layers
        for name in re.split(r"[:|]", layer)
        if name.strip()
    }


def _modules_of(app: str) -> set[str]:
    """The app's modules and packages as they are on disk: what the layers must place."""
    found = set()
    for path in (PROJECT_ROOT / app).iterdir():
        if path.is_file() and path.suffix == ".py" and path.name != "__init__.py":
            found.add(path.stem)
        elif path.is_dir() and (path / "__init__.py").exists():
            found.add(path.name)
    return found


def test_the_layers_place_every_module_of_every_app() -> None:
    contract = _layers_contract()
    assert set(contract["containers"]) >= {"core", "wiki", "reviews", "agents", "connect"}
    named = _named_in(contract["layers"])
    unplaced = {
        app: sorted(_modules_of(app) - named)
        for app in contract["containers"]
        if _modules_of(app) - named
    }
    assert not unplaced, f"place these modules in a layer in pyproject.toml: {unplaced}"


def test_it_tells_people_agents_and_the_system_apart_without_the_agents_app() -> None:
    from django.contrib.auth.models import AnonymousUser, User

    from agents.models import Agent
    from core.actors import ActorKind, SystemActor, actor_kind, is_agent, is_person

    kinds = [actor_kind(a) for a in (User(), Agent(), SystemActor("test"), AnonymousUser())]
    assert kinds == [ActorKind.PERSON, ActorKind.AGENT, ActorKind.SYSTEM, None]
    assert is_agent(Agent()) and not is_agent(User()) and not is_agent(AnonymousUser())
    assert is_person(User()) and not is_person(Agent())


# Doors read through selectors and write through services: no manager query in a door module.
# Django's admin (ModelAdmin is built on the model's manager) and migrations (historical
# models) are not checked; the content app (outside the layers) has its commands checked.
DOOR_LAYERS = 2  # the wiring layer and the doors layer, the first two of the contract
NOT_CHECKED = {"admin", "migrations"}
COMMAND_APPS = ("content",)
# Django's own way to make a superuser: no Quire service makes people.
ALLOWED = {"content/management/commands/load_demo.py": "admin = User.objects.create_superuser("}
MANAGER_QUERY = re.compile(
    r"\.objects\b|\b_default_manager\b|\b_base_manager\b|\bget_(?:object|list)_or_404\b"
)


def _door_files() -> dict[str, list[Path]]:
    contract = _layers_contract()
    doors = _named_in(contract["layers"][:DOOR_LAYERS]) - NOT_CHECKED
    found: dict[str, list[Path]] = {}
    for app in contract["containers"]:
        for name in sorted(_modules_of(app) & doors):
            path = PROJECT_ROOT / app / name
            found[f"{app}.{name}"] = (
                sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
            )
    for app in COMMAND_APPS:
        found[f"{app}.management"] = sorted((PROJECT_ROOT / app / "management").rglob("*.py"))
    return found


def _manager_queries(files: list[Path], root: Path = PROJECT_ROOT) -> list[str]:
    return [
        f"{file.relative_to(root)}:{number}: {line.strip()}"
        for file in files
        for number, line in enumerate(file.read_text().splitlines(), start=1)
        if MANAGER_QUERY.search(line.split("#", 1)[0])
        and ALLOWED.get(file.relative_to(root).as_posix()) != line.strip()
    ]


def test_doors_read_through_selectors_not_models() -> None:
    doors = _door_files()
    # The scan reaches the doors it guards (views, REST, MCP, forms, commands, OAuth).
    assert {"wiki.views", "reviews.api", "agents.mcp", "agents.forms", "connect.views"} <= set(
        doors
    )
    assert {"reviews.management", "content.management", "connect.oauth_validator"} <= set(doors)
    found = [query for files in doors.values() for query in _manager_queries(files)]
    assert not found, "move these reads into selectors (writes into services):\n" + "\n".join(found)


def test_the_door_scan_finds_a_manager_query(tmp_path: Path) -> None:
    door = tmp_path / "views.py"
    door.write_text(
        "def page(request, pk):\n"
        "    return Page.objects.filter(pk=pk).first()  # a read in a door\n"
        "    # Page.objects in a comment is no query\n"
        "    return get_object_or_404(Page, pk=pk)\n"
    )
    assert [query.split(": ", 1)[1] for query in _manager_queries([door], tmp_path)] == [
        "return Page.objects.filter(pk=pk).first()  # a read in a door",
        "return get_object_or_404(Page, pk=pk)",
    ]
