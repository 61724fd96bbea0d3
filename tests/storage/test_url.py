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
    assert (url.synchronous, url.busy_timeout_ms, url.executor) == ("NORMAL", 5000, "aiosqlite")
    url = parse_database_url("sqlite:///x.db?synchronous=full&busy_timeout=250&executor=inline")
    assert (url.synchronous, url.busy_timeout_ms, url.executor) == ("FULL", 250, "inline")
    assert parse_database_url("sqlite:///x.db?executor=AIOSQLITE").executor == "aiosqlite"
    assert parse_database_url("sqlite:///x.db?executor=thread").executor == "aiosqlite"  # old name


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://u@h/db", "PostgreSQL is not supported yet"),
        ("mysql:///x", "unknown scheme"),
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
        parse_database_url("postgresql://u:hunter2@h/db")
    assert "hunter2" not in str(refused.value)
