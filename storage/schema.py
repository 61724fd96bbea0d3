"""Numbered migrations, applied at start-up and recorded in the ``schema_version`` table.

Migrations are ``storage/migrations/NNNN_name.sql`` for SQLite and
``storage/migrations/postgresql/NNNN_name.sql`` for PostgreSQL (each numbered from 1 without
gaps; PostgreSQL's start at the schema SQLite reached with its 7th, and a change to the schema
is a new migration in both folders). Each one runs
in its own write transaction together with the row recording it, so a crash leaves the database
at the previous version, never halfway. A database at a version newer than the newest migration
this code has raises `SchemaTooNew` before anything is touched.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from importlib import resources

from storage.backend import Backend
from storage.codec import to_us
from storage.errors import DatabaseBusy, SchemaTooNew
from storage.records import utcnow

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_us INTEGER NOT NULL
)
"""

_VERSION_TABLES = {
    "sqlite": _VERSION_TABLE,
    "postgresql": _VERSION_TABLE.replace("applied_us INTEGER", "applied_us BIGINT"),
}

MIGRATION_LOCK = 0x44_75_72_61_6B_00
"""`Backend.lock` key of a migration step (SQLite's write transaction needs none)."""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def load_migrations(folder: str = "migrations") -> list[Migration]:
    """The packaged migrations in order; raises RuntimeError if the numbering has a gap."""
    found: list[Migration] = []
    for entry in resources.files("storage").joinpath(folder).iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda migration: migration.version)
    check_numbering(found)
    return found


def check_numbering(migrations: Sequence[Migration]) -> None:
    for expected, migration in enumerate(migrations, start=1):
        if migration.version != expected:
            raise RuntimeError(
                f"migration numbering is broken: expected {expected:04d}, "
                f"found {migration.version:04d}_{migration.name}"
            )


MIGRATIONS: list[Migration] = load_migrations()
LATEST_VERSION: int = len(MIGRATIONS)
"""SQLite's newest schema version (`migrations_for` PostgreSQL's)."""

_MIGRATIONS = {"sqlite": MIGRATIONS, "postgresql": load_migrations("migrations/postgresql")}


def migrations_for(dialect: str) -> list[Migration]:
    """The migrations of a backend's dialect (``Backend.dialect``)."""
    return _MIGRATIONS[dialect]


async def current_version(backend: Backend) -> int:
    """The schema version of the database; 0 for an empty one."""
    await backend.execute(_VERSION_TABLES[backend.dialect])
    row = await backend.fetchone("SELECT COALESCE(MAX(version), 0) AS version FROM schema_version")
    return int(row["version"]) if row else 0


MIGRATION_WAIT = 30.0
"""Seconds a start-up waits for another process's migration (each of its steps holds the
write lock; together they may take longer than the busy timeout on a slow disk)."""


async def _patiently(work: Callable[[], Awaitable[object]]) -> None:
    """`work` (which writes), tried again while another process holds the write lock past
    the busy timeout, for up to `MIGRATION_WAIT` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MIGRATION_WAIT
    while True:
        try:
            await work()
            return
        except DatabaseBusy:
            if loop.time() >= deadline:
                raise
            await asyncio.sleep(0.05)  # (the holder's step is short: look again soon)


async def migrate(
    backend: Backend,
    *,
    migrations: Sequence[Migration] | None = None,
    target: int | None = None,
) -> int:
    """Bring the database up to ``target`` (default: the newest migration); return its version.

    Safe to run from several processes at once: each step re-reads the version after taking the
    write lock (PostgreSQL: an advisory lock), and a process that finds the lock held past the
    busy timeout (another one migrating) tries again for up to `MIGRATION_WAIT` seconds.
    Raises `SchemaTooNew` if the database is ahead of ``migrations``, and `DatabaseUnusable`
    if it cannot be written.
    """
    steps = list(migrations_for(backend.dialect) if migrations is None else migrations)
    check_numbering(steps)
    known = len(steps)
    goal = known if target is None else target
    if not 0 <= goal <= known:
        raise ValueError(f"target version {goal} is not between 0 and {known}")
    if backend.dialect == "sqlite":
        # PostgreSQL makes it in the locked transaction below: two processes creating it at
        # once would collide there.
        await _patiently(lambda: backend.execute(_VERSION_TABLES[backend.dialect]))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MIGRATION_WAIT
    while True:
        await backend.begin(write=True)
        try:
            await backend.lock(MIGRATION_LOCK)  # PostgreSQL: one migrating process at a time
            version = await current_version(backend)
            if version > known:
                raise SchemaTooNew(found=version, known=known, where=backend.where)
            if version >= goal:
                # A read-only file opens and reads without complaint and would refuse only
                # the first save: a write that changes nothing finds out now.
                await backend.execute("DELETE FROM schema_version WHERE version < 0")
                await backend.commit()
                return version
            step = steps[version]
            await backend.execute_script(step.sql)
            await backend.execute(
                "INSERT INTO schema_version (version, name, applied_us) VALUES (?, ?, ?)",
                (step.version, step.name, to_us(utcnow())),
            )
            await backend.commit()
        except DatabaseBusy:  # another process migrating (its step holds the lock): again
            await backend.rollback()
            if loop.time() >= deadline:
                raise
            await asyncio.sleep(0.05)  # (its steps are short: look again soon)
        except BaseException:
            await backend.rollback()
            raise
