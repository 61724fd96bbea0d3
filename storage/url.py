"""The ``DATABASE_URL`` setting: which backend to use and where the data lives."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import parse_qsl, unquote, urlsplit

Synchronous = Literal["NORMAL", "FULL", "EXTRA"]
Executor = Literal["aiosqlite", "inline"]

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
    - ``busy_timeout``: milliseconds to wait for another connection's write lock (default 5000).
    - ``executor``: ``aiosqlite`` (default) runs the SQLite connection on aiosqlite's own
      thread, so the event loop never waits for the database. ``inline`` runs each SQLite
      call directly on the event loop thread: faster (a call takes microseconds, a thread
      round trip about 100 us), but the loop is blocked for as long as each statement takes;
      waiting for another process's lock is still done with ``asyncio.sleep``. ``thread`` is
      accepted as an old name of ``aiosqlite``.
    """

    scheme: Literal["sqlite"]
    path: str
    synchronous: Synchronous = "NORMAL"
    busy_timeout_ms: int = 5000
    executor: Executor = "aiosqlite"

    @property
    def in_memory(self) -> bool:
        return self.path == MEMORY

    def __str__(self) -> str:
        return f"{self.scheme}:///{self.path}"


def parse_database_url(url: str) -> DatabaseURL:
    """Parse a ``DATABASE_URL``; raise ValueError naming the problem if it is not usable."""
    parts = urlsplit(url.strip())
    if parts.password:  # never echo a password into an error message or a log line
        host = parts.netloc.rpartition("@")[2]
        url = parts._replace(netloc=f"{parts.username or ''}:***@{host}").geturl()
    scheme = parts.scheme.lower()
    if scheme in {"postgres", "postgresql"} or scheme.startswith("postgresql+"):
        raise ValueError(f"DATABASE_URL {url!r}: PostgreSQL is not supported yet, use sqlite:///")
    if scheme != "sqlite":
        raise ValueError(f"DATABASE_URL {url!r}: unknown scheme {parts.scheme!r}, use sqlite:///")
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

    def count(key: str, value: str, unit: str) -> int:
        number = int(value) if value.isdigit() else -1
        if number < 0:
            raise ValueError(f"DATABASE_URL {url!r}: {key} must be {unit}, not {value!r}")
        return number

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
            result = replace(result, busy_timeout_ms=count(key, value, "milliseconds"))
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
