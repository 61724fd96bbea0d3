from __future__ import annotations

import pytest

from storage import DEFAULT_DATABASE_URL, parse_database_url


def test_relative_and_absolute_paths() -> None:
    assert parse_database_url("sqlite:///data/durak.sqlite3").path == "data/durak.sqlite3"
    assert parse_database_url("sqlite:////var/lib/durak.db").path == "/var/lib/durak.db"
    assert parse_database_url("sqlite:///:memory:").in_memory
    assert parse_database_url(DEFAULT_DATABASE_URL).scheme == "sqlite"


def test_defaults_and_options() -> None:
    url = parse_database_url("sqlite:///x.db")
    assert (url.synchronous, url.busy_timeout_ms, url.executor) == ("NORMAL", 2000, "aiosqlite")
    url = parse_database_url("sqlite:///x.db?synchronous=full&busy_timeout=250&executor=inline")
    assert (url.synchronous, url.busy_timeout_ms, url.executor) == ("FULL", 250, "inline")
    assert parse_database_url("sqlite:///x.db?executor=AIOSQLITE").executor == "aiosqlite"
    assert parse_database_url("sqlite:///x.db?executor=thread").executor == "aiosqlite"  # old name


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql:///x", "unknown scheme"),
        ("postgresql:///db", "names its server"),
        ("postgresql://u@h:port/db", "names its server"),
        ("postgresql://u@h", "no database name"),
        ("postgresql://u@h/db?pool_max=0", "pool_max must be 1 or more"),
        ("postgresql://u@h/db?pool_min=3&pool_max=2", "pool_min at most pool_max"),
        ("postgresql://u@h/db?busy_timeout=-1", "busy_timeout must be"),
        ("sqlite://host/x.db", "no host"),
        ("sqlite:///", "no database file"),
        ("sqlite:///x.db?synchronous=off", "synchronous must be"),
        ("sqlite:///x.db?busy_timeout=soon", "busy_timeout must be"),
        ("sqlite:///x.db?executor=fork", "executor must be"),
        ("sqlite:///x.db?cache=shared", "unknown option"),
    ],
)
def test_bad_urls_name_the_problem(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_database_url(url)


def test_a_password_in_the_url_never_shows_in_the_error() -> None:
    with pytest.raises(ValueError, match=r"u:\*\*\*@h") as refused:
        parse_database_url("postgresql://u:hunter2@h/db?pool_max=0")
    assert "hunter2" not in str(refused.value)


def test_postgresql_urls() -> None:
    url = parse_database_url(
        "postgresql://bot:hunter2@db.example:5433/durak?sslmode=require&pool_max=4&busy_timeout=250"
    )
    assert (url.scheme, url.path, url.pool_min, url.pool_max) == ("postgresql", "durak", 1, 4)
    assert url.busy_timeout_ms == 250
    # The driver gets its own options and the password; nothing printed shows the password.
    assert url.dsn == "postgresql://bot:hunter2@db.example:5433/durak?sslmode=require"
    assert str(url) == "postgresql://bot:***@db.example:5433/durak?sslmode=require"
    assert "hunter2" not in repr(url)
    assert parse_database_url("postgres://h/db").dsn == "postgresql://h/db"
    socket_dir = parse_database_url("postgresql:///durak?host=/run/postgresql")
    assert socket_dir.dsn == "postgresql:///durak?host=%2Frun%2Fpostgresql"
