"""No import circle in the house: tools/import_cycles.py (run by `make lint` and CI) and
import-linter's acyclic contract both pass on the code, and both fail on a circle held apart
only by an import inside a function, the way the notification modules used to be."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import PROJECT_ROOT
from tests.test_layers import _copy_project, _lint

# The search once imported the task that embeds pages, whose model imported the search back
# inside a function (wiki.search <-> wiki.semantic <-> wiki.tasks).
CIRCLE = "\n\ndef _words(text: str) -> str:\n    from wiki import search\n\n    return text\n"


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "tools" / "import_cycles.py"), str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_finds_no_import_circle_in_the_code_as_it_is() -> None:
    result = _check(PROJECT_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no import circle among" in result.stdout


def test_it_fails_on_a_circle_made_by_an_import_inside_a_function(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    semantic = root / "wiki" / "semantic" / "__init__.py"
    semantic.write_text(semantic.read_text() + CIRCLE)
    result = _check(root)
    assert result.returncode == 1
    assert "import circle: wiki.search -> " in result.stdout
    assert "wiki.semantic" in result.stdout


def test_import_linter_fails_on_the_same_circle(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    semantic = root / "wiki" / "semantic" / "__init__.py"
    semantic.write_text(semantic.read_text() + CIRCLE)
    result = _lint(root)
    assert result.returncode != 0
    assert "No import circle inside an app" in " ".join(result.stdout.split())
    assert "BROKEN" in result.stdout
