"""The ``DATABASE_URL`` setting: which backend to use and where the data lives."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

Synchronous = Literal["NORMAL", "FULL", "EXTRA"]
Executor = Literal["aiosqlite", "inline"]
Scheme = Literal["sqlite", "postgresql"]

_SYNCHRONOUS: dict[str, Synchronous] = {"NORMAL": "NORMAL", "FULL": "FULL", "EXTRA": "EXTRA"}
_EXECUTORS: dict[str, Executor] = {
    "aiosqlite": "aiosqlite",
    "inline": "inline",
    "thread": "aiosqlite",  # the name of the worker-thread executor before aiosqlite
}

DEFAULT_DATABASE_URL = "sqlite:///data/durak.sqlite3"
MEMORY = ":memory:"


@dataclass(frozen=True, slots=True)
class DatabaseURL:
    """A parsed ``DATABASE_URL``.

    ``sqlite:///relative/path.sqlite3`` and ``sqlite:////absolute/path.sqlite3`` (three slashes,
    then the path, as SQLAlchemy spells it); ``sqlite:///:memory:`` for a private in-memory
    database. Query options, all optional:

    - ``synchronous``: normal (default), full or extra. In WAL mode, normal never loses a
      committed transaction when the process dies, only (the last ones) on power loss.
    - ``busy_timeout``: milliseconds to wait for another connection's write lock (default 2000:
      a tap waiting for a lock held longer is answered "could not be saved").
    - ``executor``: ``aiosqlite`` (default) runs the SQLite connection on aiosqlite's own
      thread, so the event loop never waits for the database. ``inline`` runs each SQLite
      call directly on the event loop thread: faster (a call takes microseconds, a thread
      round trip about 100 us), but the loop is blocked for as long as each statement takes;
      waiting for another process's lock is still done with ``asyncio.sleep``. ``thread`` is
      accepted as an old name of ``aiosqlite``.

    ``postgresql://user:password@host:port/database`` (or ``postgres://``) for PostgreSQL
    (`storage.postgres`): the driver's own options (``sslmode``, ``connect_timeout``, ...)
    pass through to it; the bot's own are ``pool_min`` and ``pool_max`` (connections in the
    pool, default 1 and 10) and ``busy_timeout`` (milliseconds a statement may wait for a
    row lock before `DatabaseBusy`, default 5000). ``str()`` of a URL never shows the
    password.
    """

    scheme: Scheme
    path: str  # SQLite: the file; PostgreSQL: the database's name
    synchronous: Synchronous = "NORMAL"
    busy_timeout_ms: int = 2000
    executor: Executor = "aiosqlite"
    # PostgreSQL: what the driver gets (with the password: never printed, never compared),
    # the same with the password as *** (for messages), the pool's size.
    dsn: str = field(default="", repr=False, compare=False)
    shown: str = ""
    pool_min: int = 1
    pool_max: int = 10

    @property
    def in_memory(self) -> bool:
        return self.scheme == "sqlite" and self.path == MEMORY

    def __str__(self) -> str:
        if self.scheme == "postgresql":
            return self.shown
        return f"{self.scheme}:///{self.path}"


def _redacted(url: str) -> str:
    parts = urlsplit(url.strip())
    if not parts.password:
        return url
    host = parts.netloc.rpartition("@")[2]
    return url.strip().replace(parts.netloc, f"{parts.username or ''}:***@{host}", 1)


def _count(url: str, key: str, value: str, unit: str) -> int:
    number = int(value) if value.isdigit() else -1
    if number < 0:
        raise ValueError(f"DATABASE_URL {url!r}: {key} must be {unit}, not {value!r}")
    return number


def _parse_postgres(raw: str, shown: str) -> DatabaseURL:
    parts = urlsplit(raw.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if port == -1 or not (parts.hostname or query.get("host")):
        raise ValueError(
            f"DATABASE_URL {shown!r}: a PostgreSQL URL names its server: "
            f"postgresql://user:password@host:port/database"
        )
    database = unquote(parts.path.lstrip("/"))
    if not database:
        raise ValueError(f"DATABASE_URL {shown!r}: no database name given (after the host)")
    result = DatabaseURL(scheme="postgresql", path=database, busy_timeout_ms=5000)
    passed: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "busy_timeout":
            result = replace(result, busy_timeout_ms=_count(shown, key, value, "milliseconds"))
        elif key == "pool_min":
            result = replace(result, pool_min=_count(shown, key, value, "a number"))
        elif key == "pool_max":
            result = replace(result, pool_max=_count(shown, key, value, "a number"))
        else:
            passed.append((key, value))  # the driver's own (sslmode, ...): it checks them
    if result.pool_max < 1 or result.pool_min > result.pool_max:
        raise ValueError(
            f"DATABASE_URL {shown!r}: pool_max must be 1 or more and pool_min at most pool_max"
        )
    query_text = urlencode(passed)
    dsn = f"postgresql://{parts.netloc}{parts.path}" + (f"?{query_text}" if query_text else "")
    return replace(result, dsn=dsn, shown=_redacted(dsn))


def parse_database_url(url: str) -> DatabaseURL:
    """Parse a ``DATABASE_URL``; raise ValueError naming the problem if it is not usable."""
    raw = url
    url = _redacted(url)  # never echo a password into an error message or a log line
    parts = urlsplit(raw.strip())
    scheme = parts.scheme.lower()
    if scheme in {"postgres", "postgresql"}:
        return _parse_postgres(raw, url)
    if scheme != "sqlite":
        raise ValueError(
            f"DATABASE_URL {url!r}: unknown scheme {parts.scheme!r}, use sqlite:/// or "
            f"postgresql://"
        )
    if parts.netloc:
        raise ValueError(
            f"DATABASE_URL {url!r}: a sqlite URL has no host; write sqlite:///relative/path "
            f"or sqlite:////absolute/path"
        )
    path = unquote(parts.path)
    if path.startswith("/"):
        path = path[1:]
    if not path:
        raise ValueError(f"DATABASE_URL {url!r}: no database file given")

    result = DatabaseURL(scheme="sqlite", path=path)
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "synchronous":
            level = _SYNCHRONOUS.get(value.upper())
            if level is None:
                raise ValueError(
                    f"DATABASE_URL {url!r}: synchronous must be normal, full or extra, "
                    f"not {value!r}"
                )
            result = replace(result, synchronous=level)
        elif key == "busy_timeout":
            result = replace(result, busy_timeout_ms=_count(url, key, value, "milliseconds"))
        elif key == "executor":
            executor = _EXECUTORS.get(value.lower())
            if executor is None:
                raise ValueError(
                    f"DATABASE_URL {url!r}: executor must be aiosqlite or inline, not {value!r}"
                )
            result = replace(result, executor=executor)
        else:
            raise ValueError(f"DATABASE_URL {url!r}: unknown option {key!r}")
    return result
