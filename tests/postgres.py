"""A real PostgreSQL server for the tests, started by the tests themselves.

`PostgresServer.start` runs Debian's ``initdb`` and ``pg_ctl`` (``/usr/lib/postgresql/*/bin``,
or on ``PATH``) into a temporary directory: a cluster of its own, listening on a free
loopback port only, trusting local connections, without fsync (the tests check what the bot
does, not the server's durability). As root, which PostgreSQL refuses to run as, the
programs run as the ``postgres`` user that Debian's package creates (``runuser``), and the
directory belongs to it. `fresh_database` makes an empty database per test from a template
that is migrated once (``CREATE DATABASE ... TEMPLATE`` copies it in milliseconds).

Where the binaries are missing, `missing` says how to get them; the tests that need the
server are then skipped with that reason (and the terminal summary says so).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INSTALL_HINT = (
    "PostgreSQL's server programs (initdb, pg_ctl) are not installed: "
    "apt-get install postgresql (Debian/Ubuntu), then run the tests again"
)
SUPERUSER = "durak"
TEMPLATE = "durak_template"
_names = itertools.count(1)


def _bin_dir() -> Path | None:
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).parent
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    return Path(found[-1]).parent if found else None


def missing() -> str | None:
    """Why no server can be started here (what to install), or None if one can."""
    if _bin_dir() is None:
        return INSTALL_HINT
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a 'postgres' user to run PostgreSQL as: " + (
                INSTALL_HINT
            )
        if shutil.which("runuser") is None:
            return "running as root without runuser (util-linux) to run PostgreSQL as postgres"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresServer:
    """A running server: its folder, port, and how to reach it."""

    folder: Path
    port: int
    bin_dir: Path
    options: str = ""

    @property
    def admin_url(self) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    @staticmethod
    def _as_owner(command: list[str]) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", "postgres", "--", *command]
        return command

    def _run(self, *command: str) -> None:
        done = subprocess.run(
            self._as_owner([str(self.bin_dir / command[0]), *command[1:]]),
            capture_output=True,
            text=True,
            check=False,
            cwd=self.folder,
        )
        if done.returncode != 0:
            log = self.folder / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{command[0]} failed ({done.returncode}): {done.stderr.strip()}\n{tail}"
            )

    @classmethod
    def start(cls, *, durable: bool = False) -> PostgresServer:
        """initdb and pg_ctl into a temporary folder, on a free loopback port. The tests'
        server does not flush to disk (`fsync=off`: a test's data need not outlive a power
        cut); `durable` keeps PostgreSQL's defaults, for benchmarks."""
        bin_dir = _bin_dir()
        assert bin_dir is not None, INSTALL_HINT
        folder = Path(tempfile.mkdtemp(prefix="durak-pg-"))
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(folder, owner.pw_uid, owner.pw_gid)
        folder.chmod(0o700)
        server = cls(folder=folder, port=free_port(), bin_dir=bin_dir)
        data = folder / "data"
        server._run(
            "initdb",
            "-D",
            str(data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
            "--no-instructions",
        )
        options = (
            f"-c listen_addresses=127.0.0.1 -p {server.port} -k {folder} "
            "-c max_connections=200 -c shared_buffers=32MB"
        )
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        server.options = options
        server.resume()
        return server

    def halt(self) -> None:
        """Stop the server (its sessions end), keeping its data: `resume` starts it again."""
        self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the server (again), on the same port, and wait until it takes connections."""
        self._run(
            "pg_ctl",
            "-D",
            str(self.folder / "data"),
            "-l",
            str(self.folder / "server.log"),
            "-o",
            self.options,
            "-w",
            "start",
        )

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):
            self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)


def run_apart(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run ``coroutine`` to its end on an event loop of its own, in a thread (a session
    fixture may first be asked for by a test's fixture, inside that test's loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coroutine).result()


async def make_template(server: PostgresServer) -> None:
    """The template every test database is copied from: created and migrated once."""
    import asyncpg

    from storage import Database

    admin = await asyncpg.connect(server.admin_url)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {TEMPLATE}")
        await admin.execute(f"CREATE DATABASE {TEMPLATE}")
    finally:
        await admin.close()
    db = await Database.open(server.url(TEMPLATE))
    await db.close()


@contextlib.asynccontextmanager
async def fresh_database(server: PostgresServer, *, migrated: bool = True) -> AsyncIterator[str]:
    """A new database for one test (a copy of the migrated template, or empty); its URL.
    Dropped afterwards, whoever is still connected."""
    import asyncpg

    name = f"test_{os.getpid()}_{next(_names)}"
    admin = await asyncpg.connect(server.admin_url)
    try:
        template = TEMPLATE if migrated else "template0"
        await admin.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        try:
            yield server.url(name)
        finally:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()
