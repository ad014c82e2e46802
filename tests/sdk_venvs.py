"""Virtualenvs holding another MCP client than the suite's own (mcp 2.x, fastmcp), made once
under the temporary directory and kept for the next run, so a test can run a client script
with them against a live server. pip installs from the machine's package index."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def python_with(package: str, version: str) -> Path:
    """The python of a virtualenv holding `package`==`version` (the suite's own venv keeps
    its pinned clients)."""
    home = Path(tempfile.gettempdir()) / f"quire-{package}-{version}"
    python = home / "bin" / "python"
    check = [
        str(python),
        "-c",
        f"import importlib.metadata as m; assert m.version('{package}') == '{version}'",
    ]
    with (home.parent / f"{home.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be making it
        if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
            return python
        shutil.rmtree(home, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, timeout=120)
        installed = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"{package}=={version}"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert installed.returncode == 0, f"pip install {package}=={version}: {installed.stderr}"
    return python
