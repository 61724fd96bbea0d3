"""The sandbox's page API: people write and tap in a local Telegram, and the bot, running
against it, answers as it does in Telegram (docs/sandbox.md)."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

import bot.sandbox.server
from bot.sandbox.server import MAX_PEOPLE, TOKEN, Sandbox
from tests.sandbox.conftest import GROUP_ID, Page

ALICE, BOB = 1001, 1002


def chat(box: Sandbox, person: int) -> list[dict[str, Any]]:
    return next(p["messages"] for p in box.state()["people"] if p["id"] == person)


def bot_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["html"] for m in messages if m["bot"]]


def buttons(box: Sandbox, chat_id: int) -> list[str]:
    """The labels on the chat's newest bot message ([] before the bot has written)."""
    messages = box.fake.messages(chat_id)
    return messages[-1].button_texts if messages else []


async def open_game(page: Page) -> None:
    """Alice opens a lobby; she and Bob join through the deep link a first Join answers
    with, as in Telegram; Alice starts."""
    box = page.box
    await page.say(ALICE, GROUP_ID, "/newgame")
    await box.wait_for(lambda: "Join" in buttons(box, GROUP_ID))
    for person in (ALICE, BOB):
        answer = await page.answer(await page.tap(person, GROUP_ID, "Join"))
        assert answer["url"] == f"https://t.me/{box.fake.bot_username}?start=j1"
        await page.say(person, person, "/start j1")  # what the page does with the link
        await box.wait_for(lambda p=person: any("seat" in t for t in bot_texts(chat(box, p))))
    await page.tap(ALICE, GROUP_ID, "Start")
    await box.wait_for(lambda: attacker(box) is not None)


def attacker(box: Sandbox) -> int | None:
    """Who opens the game: the person whose newest hand says it is their turn."""
    for person in (ALICE, BOB):
        texts = bot_texts(chat(box, person))
        if texts and "Your turn" in texts[-1]:
            return person
    return None


async def test_a_deep_link_seats_a_newcomer_and_the_hand_comes_with_its_card_buttons(
    page: Page,
) -> None:
    await open_game(page)
    box = page.box
    await box.wait_for(lambda: "Trump" in box.fake.messages(GROUP_ID)[-1].html)  # the table
    state = box.state()
    first = attacker(box)
    assert first is not None
    hand = [m for m in chat(box, first) if m["bot"]][-1]
    assert "Your turn" in hand["html"]
    assert hand["notified"]  # a turn alert rings the phone: the page announces it
    cards = [b for row in hand["buttons"] for b in row]
    assert len(cards) == 6 and all(b["data"] for b in cards)
    table = [m for m in state["group"]["messages"] if m["bot"]][-1]
    assert "Alice" in table["html"] and "Bob" in table["html"]
    assert all(p["started"] for p in state["people"])


async def test_a_tap_answer_reaches_the_page_as_a_toast(page: Page) -> None:
    await open_game(page)
    other = BOB if attacker(page.box) == ALICE else ALICE
    await page.box.wait_for(lambda: bool(buttons(page.box, other)))
    card = page.box.fake.last_message(other).buttons[0][0]
    tap = await page.tap(other, other, card.text)
    answer = await page.answer(tap)
    assert answer["person"] == other and answer["text"]  # not their turn: the bot says so
    assert not answer["alert"]


async def test_a_restart_of_the_bot_mid_game_resumes_the_game(page: Page) -> None:
    box = page.box
    await open_game(page)
    assert box.bot is not None
    status, _ = await page.post("api/restart")
    assert status == 200
    await box.wait_for(lambda: box.bot is not None and box.bot.status == "running")
    assert box.state()["bot"]["restarts"] == 1
    first = attacker(box)
    assert first is not None
    card = box.fake.last_message(first).buttons[0][0].text
    await page.tap(first, first, card)  # the first attack, after the restart
    await box.wait_for(lambda: card.replace("\ufe0f", "") in table(box))
    assert "The table is empty" not in table(box)


async def test_settings_are_the_group_owners_and_a_refusal_is_an_alert(page: Page) -> None:
    box = page.box
    await page.say(ALICE, GROUP_ID, "/settings")  # Alice owns the group
    await box.wait_for(lambda: "Deck: 36" in buttons(box, GROUP_ID))
    answer = await page.answer(await page.tap(BOB, GROUP_ID, "Deck: 36"))
    assert answer["alert"] and answer["text"]  # Bob is no admin: told so in an alert
    assert "Deck: 36" in buttons(box, GROUP_ID)  # and nothing changed
    await page.tap(ALICE, GROUP_ID, "Deck: 36")
    await box.wait_for(lambda: "Deck: 36" not in buttons(box, GROUP_ID))


def table(box: Sandbox) -> str:
    return box.fake.last_message(GROUP_ID).text.replace("\ufe0f", "")


async def test_people_are_added_with_a_name_and_a_language_up_to_six(page: Page) -> None:
    status, body = await page.post("api/people", name="  Clara  ", lang="de")
    assert status == 200
    clara = body["id"]
    person = next(p for p in page.box.state()["people"] if p["id"] == clara)
    assert (person["name"], person["lang"]) == ("Clara", "de")
    await page.say(clara, clara, "/start")
    await page.box.wait_for(lambda: bool(bot_texts(chat(page.box, clara))))
    assert "Gruppe" in bot_texts(chat(page.box, clara))[0]  # the bot speaks German to her
    status, _ = await page.post("api/people", name="Dmitri", lang="fr")
    assert status == 400
    while len(page.box.state()["people"]) < MAX_PEOPLE:
        status, _ = await page.post("api/people", name="Someone", lang="ru")
        assert status == 200
    status, _ = await page.post("api/people", name="Seventh", lang="en")
    assert status == 400
    assert len(page.box.state()["people"]) == MAX_PEOPLE


async def test_bad_requests_get_a_clear_answer_and_change_nothing(page: Page) -> None:
    before = page.box.state()["group"]["messages"]
    status, text = await page.post("api/send", person=ALICE, chat=BOB, text="/start")
    assert status == 400 and "own chat" in text
    status, text = await page.post("api/tap", person=ALICE, chat=GROUP_ID, message=99, data="x")
    assert status == 410 and "gone" in text
    status, _ = await page.post("api/send", person=4242, chat=GROUP_ID, text="hi")
    assert status == 404
    status, _ = await page.post("api/send", person=ALICE, chat=GROUP_ID, text="   ")
    assert status == 400
    assert page.box.state()["group"]["messages"] == before


async def test_the_event_stream_starts_with_the_whole_state(page: Page) -> None:
    async with page.http.get(page.base + "api/events") as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        lines = []
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if not line:
                break
            lines.append(line)
    assert lines[0] == "event: state"
    assert lines[2].startswith("data: {") and '"people"' in lines[2]


async def test_the_page_speaks_the_language_asked_for(page: Page) -> None:
    _, ru = await page.get("api/strings?lang=ru")
    assert ru["lang"] == "ru" and ru["strings"]["sandbox-restart"] == "Перезапустить бота"
    _, de = await page.get("api/strings", **{"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"})
    assert de["strings"]["sandbox-restart"] == "Bot neu starten"
    _, en = await page.get("api/strings?lang=xx")
    assert en["lang"] == "en" and "sandbox-banner" in en["strings"]
    async with page.http.get(page.base) as response:
        html = await response.text()
    assert 'src="static/sandbox.js"' in html and "http" not in html.split("<body>")[1]


async def test_the_local_bot_api_keeps_telegrams_flood_limits(page: Page) -> None:
    await page.say(ALICE, ALICE, "/start")
    url = f"{page.base}bot{TOKEN}/sendMessage"
    codes = []
    async with aiohttp.ClientSession() as session:
        for _ in range(40):
            async with session.post(url, json={"chat_id": ALICE, "text": "hi"}) as response:
                codes.append(response.status)
    assert codes[0] == 200 and 429 in codes
    async with aiohttp.ClientSession() as session:
        body = {"chat_id": ALICE, "text": "<b>unclosed"}
        async with session.post(url, json={**body, "parse_mode": "HTML"}) as response:
            assert response.status in (400, 429)


async def test_every_text_the_page_shows_is_in_the_locales(page: Page) -> None:
    _, en = await page.get("api/strings?lang=en")
    static = Path(bot.sandbox.server.__file__).with_name("static")
    html = (static / "index.html").read_text(encoding="utf-8")
    script = (static / "sandbox.js").read_text(encoding="utf-8")
    used = set(re.findall(r'data-t(?:-placeholder)?="(sandbox-[a-z-]+)"', html))
    used |= set(re.findall(r't\("(sandbox-[a-z-]+)"\)', script))
    used |= {f"sandbox-bot-{status}" for status in ("running", "starting", "stopped")}
    assert used and used <= set(en["strings"])


async def test_the_mini_app_opens_with_init_data_signed_by_the_sandboxs_token(
    page: Page, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("bot.miniapp", "bot.miniapp.auth", "bot.miniapp.routes"):
        monkeypatch.setitem(sys.modules, name, None)  # a build without it: no import
    async with page.http.get(page.base + "api/miniapp?person=1001") as response:
        assert response.status == 404  # a build without the Mini App: no button either
    assert not page.box.state()["miniapp"]

    # stand-ins for bot.miniapp's signer and routes (tests/bot's own test the real ones)
    signed: list[tuple[str, dict[str, str]]] = []

    def sign_init_data(token: str, fields: dict[str, str]) -> str:
        signed.append((token, fields))
        return "signed"

    (tmp_path / "index.html").write_text(
        '<script src="https://telegram.org/js/telegram-web-app.js"></script>', encoding="utf-8"
    )
    made: list[MiniApp] = []

    class MiniApp:
        static = tmp_path

        def __init__(self, application: Any) -> None:
            self.application = application
            made.append(self)

        async def session(self, request: web.Request) -> web.Response:
            return web.json_response({"init_data": (await request.json())["init_data"]})

    auth = types.ModuleType("bot.miniapp.auth")
    auth.sign_init_data = sign_init_data  # type: ignore[attr-defined]
    routes = types.ModuleType("bot.miniapp.routes")
    routes.MiniApp = MiniApp  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bot.miniapp", types.ModuleType("bot.miniapp"))
    monkeypatch.setitem(sys.modules, "bot.miniapp.auth", auth)
    monkeypatch.setitem(sys.modules, "bot.miniapp.routes", routes)
    assert page.box.state()["miniapp"]
    status, body = await page.get("api/miniapp?person=1002&start=g7")
    assert status == 200 and body == {"init_data": "signed"}
    token, fields = signed[0]
    assert token == TOKEN
    assert json.loads(fields["user"])["first_name"] == "Bob"
    assert fields["start_param"] == "g7"

    # /app/ is the Mini App's page, with the sandbox's own Telegram script: no request
    # leaves the computer; its API is the Mini App's, over the bot as it runs now
    async with page.http.get(page.base + "app/") as response:
        html = await response.text()
    assert "telegram.org" not in html and '"/static/telegram-web-app.js"' in html
    async with page.http.get(page.base + "static/telegram-web-app.js") as response:
        assert response.status == 200 and "tgWebAppData" in await response.text()
    status, body = await page.post("app/api/session", init_data="signed")
    assert (status, body) == (200, {"init_data": "signed"})
    assert page.box.bot is not None and made[-1].application is page.box.bot.application
    await page.post("api/restart")
    await page.post("app/api/session", init_data="again")
    assert len(made) == 2 and made[-1].application is page.box.bot.application


async def test_the_page_shows_edits_and_deletions_as_telegram_does(page: Page) -> None:
    box = page.box
    api = f"{page.base}bot{TOKEN}/"

    async def call(method: str, **params: Any) -> tuple[int, Any]:
        async with page.http.post(api + method, json=params) as response:
            return response.status, await response.json()

    def shown(message_id: int) -> dict[str, Any] | None:
        group = box.state()["group"]["messages"]
        return next((m for m in group if m["id"] == message_id), None)

    text = {"chat_id": GROUP_ID, "parse_mode": "HTML"}
    status, sent = await call("sendMessage", text="<b>one</b>", **text)
    assert status == 200
    message_id = sent["result"]["message_id"]
    first = shown(message_id)
    assert first is not None and first["html"] == "<b>one</b>"
    assert not first["edited"] and first["notified"]  # a new message rings the phones

    edit = {**text, "message_id": message_id}
    status, _ = await call("editMessageText", text="<b>two</b>", **edit)
    assert status == 200
    edited = shown(message_id)
    assert edited is not None and edited["html"] == "<b>two</b>" and edited["edited"]
    status, refused = await call("editMessageText", text="<b>two</b>", **edit)
    assert status == 400 and "not modified" in refused["description"]  # as Telegram says

    status, _ = await call("deleteMessage", chat_id=GROUP_ID, message_id=message_id)
    assert status == 200
    assert shown(message_id) is None
