"""`python -m bot` (`make run`) without a token starts the sandbox: one log line says so,
the page answers on loopback, and a stop signal ends it cleanly."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from bot.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_without_a_token_the_bot_starts_the_local_sandbox(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k.lower() not in Settings.model_fields}
    env.update(PYTHONPATH=str(ROOT), WEB_PORT="0")
    bot = subprocess.Popen(
        [sys.executable, "-m", "bot", "--sandbox-without-token"],  # (make run)
        cwd=tmp_path,  # no .env here
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert bot.stderr is not None
        lines = []
        found = None
        for line in bot.stderr:
            lines.append(line)
            found = found or re.search(r"local sandbox on (http://127\.0\.0\.1:\d+)", line)
            if "@durak_sandbox_bot is up" in line:  # the bot, against the local Bot API
                break
        else:
            raise AssertionError("".join(lines))
        assert found is not None
        assert "BOT_TOKEN is not set: starting the local sandbox" in "".join(lines)
        with urllib.request.urlopen(found[1], timeout=30) as response:  # loopback only
            assert b"sandbox.js" in response.read()
    finally:
        bot.send_signal(signal.SIGTERM)
        _, rest = bot.communicate(timeout=60)
    assert bot.returncode == 0, rest
    assert "Traceback" not in rest
    assert (tmp_path / "data" / "sandbox.sqlite3").exists()  # its own database file


def start_without_token(tmp_path: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k.lower() not in Settings.model_fields}
    env.update(PYTHONPATH=str(ROOT), **settings)
    return subprocess.run(
        [sys.executable, "-m", "bot", "--sandbox-without-token"],  # (make run)
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("settings", "line"),
    [
        ({"TURN_TIMEOUT": "soon"}, "durak-bot: setting TURN_TIMEOUT"),
        ({"WEB_PORT": "eighty"}, "durak-bot: setting WEB_PORT must be a port number"),
    ],
)
def test_a_malformed_setting_stops_the_sandbox_with_one_line(
    tmp_path: Path, settings: dict[str, str], line: str
) -> None:
    result = start_without_token(tmp_path, **settings)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(line), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_taken_port_stops_the_sandbox_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = start_without_token(tmp_path, WEB_PORT=str(port))
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"durak-bot: the sandbox cannot listen on 127.0.0.1:{port}"), last
    assert "WEB_PORT" in last and "Traceback" not in result.stderr
