"""gunicorn's settings for Quire beyond the command line (gunicorn reads ./gunicorn.conf.py).

With `--preload` (e.g. GUNICORN_CMD_ARGS=--preload), each server process loads the app, and
with it the search's embedding model, once in gunicorn's master; the workers it forks share
that copy instead of loading one each (docs/search.md: about 250 MB less per worker). ONNX
Runtime's state, made before the fork, aborts a worker that destroys it as it exits, so a
preloaded worker leaves without running destructors, once gunicorn is done with it.
"""

import os
from typing import Any


def worker_exit(server: Any, worker: Any) -> None:
    if server.cfg.preload_app:
        os._exit(0)
