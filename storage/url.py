"""The ``DATABASE_URL`` setting: which backend to use and where the data lives."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import parse_qsl, unquote, urlsplit

Synchronous = Literal["NORMAL", "FULL", "EXTRA"]
Executor = Literal["inline", "thread"]

_SYNCHRONOUS: dict[str, Synchronous] = {"NORMAL": "NORMAL", "FULL": "FULL", "EXTRA": "EXTRA"}
_EXECUTORS: dict[str, Executor] = {"inline": "inline", "thread": "thread"}

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
    - ``executor``: ``inline`` (default) runs SQLite calls on the event loop thread: each takes
      microseconds, while a thread hop costs about 100 us each way; waiting for another
      process's lock is done with ``asyncio.sleep``, never by blocking. ``thread`` runs them on
      one worker thread.
    """

    scheme: Literal["sqlite"]
    path: str
    synchronous: Synchronous = "NORMAL"
    busy_timeout_ms: int = 5000
    executor: Executor = "inline"

    @property
    def in_memory(self) -> bool:
        return self.path == MEMORY

    def __str__(self) -> str:
        return f"{self.scheme}:///{self.path}"


def parse_database_url(url: str) -> DatabaseURL:
    """Parse a ``DATABASE_URL``; raise ValueError naming the problem if it is not usable."""
    parts = urlsplit(url.strip())
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
                    f"DATABASE_URL {url!r}: executor must be inline or thread, not {value!r}"
                )
            result = replace(result, executor=executor)
        else:
            raise ValueError(f"DATABASE_URL {url!r}: unknown option {key!r}")
    return result
