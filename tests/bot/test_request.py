"""`JsonRequest`, the bot's HTTP path to the Bot API: JSON bodies through httpx's client, with
python-telegram-bot's timeouts and error mapping, and PTB's own path for files."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, NetworkError, TelegramError, TimedOut
from telegram.request import RequestData

from bot.app import build_application
from bot.request import JsonRequest
from tests.bot.conftest import make_settings
from tests.fakes import FakeTelegram, FakeUser


class Spy:
    """A transport that keeps every request and hands it on to the fake (or raises `error`)."""

    def __init__(self, fake: FakeTelegram) -> None:
        self.fake = fake
        self.requests: list[httpx.Request] = []
        self.error: httpx.HTTPError | None = None
        self.transport = httpx.MockTransport(self._handle)

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return await self.fake.transport.handle_async_request(request)

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]


@pytest.fixture
def fake() -> FakeTelegram:
    return FakeTelegram()


@pytest.fixture
def spy(fake: FakeTelegram) -> Spy:
    return Spy(fake)


@pytest.fixture
async def bot(fake: FakeTelegram, spy: Spy) -> AsyncIterator[Bot]:
    request = JsonRequest(httpx_kwargs={"transport": spy.transport}, read_timeout=3.0)
    async with Bot(fake.token, request=request, get_updates_request=fake.request()) as bot:
        yield bot


def _started(fake: FakeTelegram) -> FakeUser:
    user = fake.user(1, "Ann")
    user.start_private()
    return user


def _keyboard() -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton("7♠", callback_data="g1:2:a")]])


async def test_a_call_goes_out_as_json_and_telegram_reads_it_as_the_form_ptb_sends(
    fake: FakeTelegram, spy: Spy, bot: Bot
) -> None:
    user = _started(fake)
    await bot.send_message(user.id, "<b>Your hand</b>", parse_mode="HTML", reply_markup=_keyboard())
    assert spy.last.headers["content-type"] == "application/json"

    # The same call through PTB's own (URL-encoded) path leaves the same message.
    async with Bot(fake.token, request=fake.request(plain=True)) as plain:
        await plain.send_message(
            user.id, "<b>Your hand</b>", parse_mode="HTML", reply_markup=_keyboard()
        )
    json_sent, form_sent = fake.messages(user.id)[-2:]
    assert json_sent.text == form_sent.text == "Your hand"
    assert json_sent.buttons == form_sent.buttons
    assert json_sent.button_texts == ["7♠"]


async def test_a_bad_keyboard_is_refused_on_the_json_path_too(
    fake: FakeTelegram, spy: Spy, bot: Bot
) -> None:
    user = _started(fake)
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="y" * 65)]])
    with pytest.raises(BadRequest, match=r"(?i)button_data_invalid"):
        await bot.send_message(user.id, "hi", reply_markup=markup)
    assert fake.messages(user.id) == []


async def test_timeouts_are_the_requests_own_unless_the_call_sets_one(
    fake: FakeTelegram, spy: Spy, bot: Bot
) -> None:
    user = _started(fake)
    await bot.send_message(user.id, "hi")
    assert spy.last.extensions["timeout"]["read"] == 3.0
    await bot.send_message(user.id, "hi", read_timeout=7.5, connect_timeout=1.5)
    timeout = spy.last.extensions["timeout"]
    assert (timeout["read"], timeout["connect"]) == (7.5, 1.5)


async def test_a_lost_answer_is_timed_out_and_a_failed_connection_a_network_error(
    fake: FakeTelegram, spy: Spy, bot: Bot
) -> None:
    user = _started(fake)
    fake.timeout_next("sendMessage")
    with pytest.raises(TimedOut):
        await bot.send_message(user.id, "hi")
    spy.error = httpx.ConnectError("refused")
    with pytest.raises(NetworkError, match="ConnectError") as caught:
        await bot.send_message(user.id, "hi")
    assert not isinstance(caught.value, TimedOut)
    spy.error = httpx.PoolTimeout("pool full")
    with pytest.raises(TimedOut, match="Pool timeout"):
        await bot.send_message(user.id, "hi")


async def test_a_file_goes_out_as_multipart_through_ptbs_own_path(
    fake: FakeTelegram, spy: Spy, bot: Bot
) -> None:
    user = _started(fake)
    with pytest.raises(TelegramError, match="method not found"):  # the fake knows no sendDocument
        await bot.send_document(user.id, document=b"log", filename="game.txt")
    assert spy.last.headers["content-type"].startswith("multipart/form-data")
    assert fake.calls[-1].params["document"] == "<file game.txt>"


async def test_a_shut_down_request_refuses_calls(fake: FakeTelegram) -> None:
    request = JsonRequest(httpx_kwargs={"transport": fake.transport})
    await request.initialize()
    await request.shutdown()
    with pytest.raises(NetworkError, match="not initialized"):
        await request.post(f"https://api.telegram.org/bot{fake.token}/getMe", RequestData())


def test_the_bot_uses_it_by_default_with_ptbs_connection_pool(tmp_path: object) -> None:
    application = build_application(make_settings(f"sqlite:///{tmp_path}/db.sqlite3"))
    request = application.bot.request
    assert isinstance(request, JsonRequest)
    assert request._client_kwargs["limits"].max_connections == 256
