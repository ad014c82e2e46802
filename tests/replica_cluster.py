"""A PostgreSQL primary and its streaming replica of the tests' own (initdb, pg_basebackup -R),
on free ports, as the `postgres` system user: the machine's server allows no replication.

Debian's binaries (QUIRE_PG_BIN, /usr/lib/postgresql/15/bin by default). Both servers run with
fsync off: the tests check where reads go, not durability.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.servers import free_port
from tests.waits import PATIENCE

PG_BIN = Path(os.environ.get("QUIRE_PG_BIN", "/usr/lib/postgresql/15/bin"))
ROOT = Path(__file__).resolve().parent.parent
DATABASE = "quire"


def missing() -> str:
    """Why this machine cannot run the cluster, or ''."""
    for binary in ("initdb", "pg_ctl", "pg_basebackup", "psql"):
        if not (PG_BIN / binary).exists():
            return f"{PG_BIN / binary} is missing (Debian's postgresql package; QUIRE_PG_BIN)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "there is no `postgres` system user to run PostgreSQL as (it refuses root)"
    return ""


class Server:
    def __init__(self, cluster: ReplicaCluster, name: str) -> None:
        self.cluster = cluster
        self.data = cluster.root / name
        self.port = free_port()

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{DATABASE}"

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.data} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off"
        )
        self.cluster.run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.data / "server.log"),
            "-o", options, "-w", "-t", str(int(PATIENCE)), "start",
        )  # fmt: skip

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.cluster.run(
                "pg_ctl", "-D", str(self.data), "-m", "fast", "-t", str(int(PATIENCE)), "stop"
            )

    def sql(self, statement: str, *, database: str = DATABASE) -> str:
        """Run `statement` with psql; its output, unaligned and without headers."""
        return self.cluster.run(
            "psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database,
            "-v", "ON_ERROR_STOP=1", "-Atqc", statement,
        ).strip()  # fmt: skip


class ReplicaCluster:
    """A primary and one streaming replica; `start` builds them, `destroy` removes them."""

    def __init__(self) -> None:
        # Not under pytest's tmp_path: the postgres user must reach the folder.
        self.root = Path(tempfile.mkdtemp(prefix="quire-replicas-", dir="/var/tmp"))
        self.as_user = "postgres" if os.geteuid() == 0 else None
        if self.as_user is not None:
            user = pwd.getpwnam(self.as_user)
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self.primary = Server(self, "primary")
        self.replica = Server(self, "replica")

    def run(self, binary: str, *args: str) -> str:
        command = [str(PG_BIN / binary), *args]
        if self.as_user is not None:
            command = ["runuser", "-u", self.as_user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=PATIENCE)
        if done.returncode != 0:
            raise AssertionError(f"{binary} failed ({done.returncode}): {done.stderr}")
        return done.stdout

    def start(self) -> None:
        self.run(
            "initdb", "-D", str(self.primary.data), "-U", "postgres", "--auth=trust",
            "--encoding=utf8", "--no-sync",
        )  # fmt: skip
        self.primary.start()
        # -R writes standby.signal and primary_conninfo: the copy starts as a streaming replica.
        self.run(
            "pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "postgres",
            "-D", str(self.replica.data), "-R", "-X", "stream", "--no-sync",
        )  # fmt: skip
        self.replica.start()
        self.primary.sql(f"CREATE DATABASE {DATABASE}", database="postgres")
        self.manage("migrate", "--no-input", "-v", "0")

    def manage(self, *args: str, code: str | None = None) -> str:
        """`manage.py` against the primary; with `code`, `manage.py shell -c code`."""
        command = [sys.executable, "manage.py", *args]
        if code is not None:
            command = [sys.executable, "manage.py", "shell", "-c", code]
        environment = {
            **os.environ,
            "DATABASE_URL": self.primary.url,
            "SECRET_KEY": "replica-cluster",
            "QUIRE_EMBEDDING_MODEL": "none",
        }
        environment.pop("DATABASE_REPLICA_URL", None)
        done = subprocess.run(
            command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=PATIENCE
        )
        if done.returncode != 0:
            raise AssertionError(f"manage.py {' '.join(args)} failed: {done.stderr}")
        return done.stdout

    def wait_caught_up(self) -> None:
        """Until the replica has replayed everything the primary has written so far."""
        target = self.primary.sql("SELECT pg_current_wal_lsn()")
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            if self.replica.sql(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn") == "t":
                return
            time.sleep(0.05)
        raise AssertionError("the replica did not catch up with the primary")

    def pause_replay(self) -> None:
        self.replica.sql("SELECT pg_wal_replay_pause()")

    def resume_replay(self) -> None:
        self.replica.sql("SELECT pg_wal_replay_resume()")

    def destroy(self) -> None:
        for server in (self.replica, self.primary):
            try:
                server.stop()
            except AssertionError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)
