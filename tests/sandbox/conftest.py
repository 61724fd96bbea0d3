"""The sandbox in-process (`bot.sandbox.server.Sandbox`) on a free loopback port, its bot
running against its local Bot API with its own database, settings fast enough for a test:
no pause between lobby or table edits, computers that do not think."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.sandbox.server import GROUP_ID, Sandbox

FAST = {
    "LOBBY_EDIT_INTERVAL": "0",
    "TABLE_EDIT_INTERVAL": "0",
    "COMPUTER_DELAY": "0",
    "TURN_ALERT_AFTER": "0",
}


@pytest.fixture
async def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Sandbox]:
    monkeypatch.chdir(tmp_path)  # no .env of the repository's
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("BOT_TOKEN", raising=False)
    box = Sandbox(database=tmp_path / "data" / "sandbox.sqlite3")
    await box.start(port=0)
    try:
        assert box.bot is not None
        await box.wait_for(lambda: box.bot is not None and box.bot.status == "running")
        yield box
    finally:
        await box.close()


class Page:
    """What the page does, through the sandbox's HTTP API (api/...)."""

    def __init__(self, box: Sandbox, session: aiohttp.ClientSession) -> None:
        self.box = box
        self.http = session
        self.base = f"http://127.0.0.1:{box.port}/"

    async def post(self, path: str, **body: Any) -> tuple[int, Any]:
        async with self.http.post(self.base + path, json=body) as response:
            text = await response.text()
            ok = response.content_type == "application/json"
            return response.status, (await response.json()) if ok else text

    async def get(self, path: str, **headers: str) -> tuple[int, Any]:
        async with self.http.get(self.base + path, headers=headers) as response:
            return response.status, await response.json()

    async def say(self, person: int, chat: int, text: str) -> None:
        status, _ = await self.post("api/send", person=person, chat=chat, text=text)
        assert status == 200

    async def tap(self, person: int, chat: int, label: str) -> int:
        """Tap the button labelled `label` on the chat's newest bot message that has it;
        returns the tap's number (its answer comes as `answers[].id`)."""
        message = self.box.fake.last_message(chat)
        for m in reversed(self.box.fake.messages(chat)):
            if label in m.button_texts:
                message = m
                break
        data = message.button(label).callback_data
        status, body = await self.post(
            "api/tap", person=person, chat=chat, message=message.message_id, data=data
        )
        assert status == 200, body
        return int(body["tap"])

    async def answer(self, tap: int) -> dict[str, Any]:
        """The answer to tap number `tap` as the page is sent it, once there is one."""

        def found() -> dict[str, Any] | None:
            return next((a for a in self.box.state()["answers"] if a["id"] == tap), None)

        await self.box.wait_for(lambda: found() is not None)
        answer = found()
        assert answer is not None
        return answer


@pytest.fixture
async def page(sandbox: Sandbox) -> AsyncIterator[Page]:
    async with aiohttp.ClientSession() as session:
        yield Page(sandbox, session)


__all__ = ["FAST", "GROUP_ID", "Page"]
