"""config/wsgi.py: what each server process (a gunicorn worker, runserver) does as it starts."""

from __future__ import annotations

import importlib
import sys

import pytest
from django.conf import settings

from wiki import search


@pytest.mark.django_db(transaction=True)
def test_a_server_process_imports_its_views_before_its_first_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Django imports the URLconf (every view, DRF, the MCP tools) on a process's first
    request: about 120 ms that the first request of each gunicorn worker waited for. The WSGI
    module imports it as the process starts."""
    monkeypatch.delitem(sys.modules, settings.ROOT_URLCONF, raising=False)
    import config.wsgi

    importlib.reload(config.wsgi)
    search.wait_for_warm_up()
    assert settings.ROOT_URLCONF in sys.modules
