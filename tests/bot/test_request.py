"""`JsonRequest`, the bot's HTTP path to the Bot API: JSON bodies through httpx's client, with
python-telegram-bot's timeouts and error mapping, and PTB's own path for files."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import importlib.abc
import json
import re
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.ext import BaseRateLimiter, ExtBot
from telegram.request import HTTPXRequest, RequestData
from telegram.request._requestparameter import RequestParameter

from bot.app import build_application
from bot.telegram.handlers import tap_of
from bot.telegram.request import JsonRequest, NotLeading, UpdatesRequest, call
from tests.bot.conftest import make_settings
from tests.fakes.telegram import FakeTelegram, FakeUser


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
    async with Bot(fake.token, request=request, get_updates_request=fake.updates_request()) as bot:
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


def test_the_bot_uses_it_by_default_and_updates_request_for_long_polling(tmp_path: Path) -> None:
    application = build_application(make_settings(tmp_path / "db.sqlite3"))
    assert isinstance(application.bot.request, JsonRequest)
    assert type(application.bot._request[0]) is UpdatesRequest  # the get_updates request


# ------------------------------------------------------------- call: the outbox's path


class RecordingLimiter(BaseRateLimiter[int]):
    """A rate limiter that lets every call through and keeps what it was shown."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    async def process_request(  # type: ignore[override]
        self,
        callback: Callable[..., Coroutine[Any, Any, Any]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> Any:
        self.seen.append((endpoint, data))
        return await callback(*args, **kwargs)


async def test_call_sends_one_json_body_without_none_values_and_returns_the_result(
    fake: FakeTelegram, spy: Spy, bot: Bot
) -> None:
    user = _started(fake)
    markup = '{"inline_keyboard":[[{"text":"7♠","callback_data":"g1:2:a"}]]}'
    result = await call(
        bot,
        "sendMessage",
        {
            "chat_id": user.id,
            "text": "<b>7♠</b>",
            "parse_mode": "HTML",
            "reply_markup": markup,
            "reply_parameters": None,
        },
    )
    sent = json.loads(spy.last.content)
    assert sent == {
        "chat_id": str(user.id),
        "text": "<b>7♠</b>",
        "parse_mode": "HTML",
        "reply_markup": markup,
    }  # the values PTB's own JSON body would hold
    (message,) = fake.messages(user.id)
    assert result["message_id"] == message.message_id
    assert message.text == "7♠" and message.button_texts == ["7♠"]


async def test_call_raises_ptbs_errors(fake: FakeTelegram, spy: Spy, bot: Bot) -> None:
    user = _started(fake)
    fake.fail_next("sendMessage", 429, retry_after=3)
    with pytest.raises(RetryAfter) as caught:
        await call(bot, "sendMessage", {"chat_id": user.id, "text": "hi"})
    assert caught.value.retry_after in (3, timedelta(seconds=3))
    user.block_bot()
    with pytest.raises(Forbidden):
        await call(bot, "sendMessage", {"chat_id": user.id, "text": "hi"})
    other = fake.user(2, "Bo")
    other.start_private()
    with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
        await call(bot, "editMessageText", {"chat_id": other.id, "message_id": 99, "text": "hi"})


async def test_call_goes_through_the_bots_rate_limiter(fake: FakeTelegram) -> None:
    """The bot sets no rate limiter (it keeps Telegram's limits itself: bot/delivery/sender.py
    and budget.py), but where a bot has one, `call` goes through it as `Bot._post` would,
    with the chat the call goes to."""
    user = _started(fake)
    limiter = RecordingLimiter()
    async with ExtBot(
        fake.token,
        request=fake.request(),
        get_updates_request=fake.updates_request(),
        rate_limiter=limiter,
    ) as bot:
        await call(bot, "sendMessage", {"chat_id": user.id, "text": "hi", "reply_markup": None})
    assert limiter.seen[-1] == ("sendMessage", {"chat_id": user.id, "text": "hi"})
    assert fake.messages(user.id)[-1].text == "hi"


ANSWERS = [
    b'{"ok": true, "result": {"message_id": 5, "text": "7\\u2660 \\ud83c\\udccf"}}',
    b'{"ok": true, "result": [{"update_id": 1, "message": {"text": "caf\xff"}}]}',
    b'{"ok": true, "result": {"text": "lone \\ud800"}}',
    b'{"ok": true, "result": NaN}',
    b'{"ok": true, "result": 123456789012345678901234567890}',
    b'{"ok": true, "result": [18446744073709551616, -9223372036854775809]}',  # 2**64, -2**63-1
    b'{"ok": true, "result": [18446744073709551615, 9999999999999999999]}',  # within 64 bits
    b'{"ok": true, "result": {"id": "q", "n": 12345678901234567890123}}',
    b'{"ok": true, "result": 1.5e300}',
    b'{"ok": true, "result": []}',
    b'{"ok": false, "error_code": 400, "description": "Bad Request: x", "a": 1, "a": 2}',
    b'{"ok": false, "error_code": 409, "description": "Conflict"}',
    b"[1, 2]",
]
"""Answers orjson reads differently from the standard library, or refuses, or reads alike."""


@pytest.mark.parametrize("payload", ANSWERS)
@pytest.mark.parametrize("request_class", [JsonRequest, UpdatesRequest])
def test_answers_are_read_as_ptb_reads_them(
    request_class: type[HTTPXRequest], payload: bytes
) -> None:
    """orjson reads answers and updates; bad UTF-8, NaN, huge integers, lone surrogates,
    errors, odd shapes: whatever it reads or refuses, the result is PTB's own."""
    assert request_class.parse_json_payload(payload) == HTTPXRequest.parse_json_payload(payload)


def test_telegrams_long_ids_in_strings_are_read_by_orjson(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Callback query ids and chat instances are 19-digit runs in strings, in every tap: they
    hold no integer orjson could misread, so they take the fast reading, not PTB's."""

    def refuse(payload: bytes) -> Any:
        raise AssertionError("read by PTB's slower method")

    tap = {
        **TAP,
        "callback_query": {
            **TAP["callback_query"],
            "id": "3431826384290166011",
            "chat_instance": "-3431826384290166011",
        },
    }
    payload = json.dumps({"ok": True, "result": [tap]}).encode()
    expected = HTTPXRequest.parse_json_payload(payload)
    monkeypatch.setattr(HTTPXRequest, "parse_json_payload", staticmethod(refuse))
    assert JsonRequest.parse_json_payload(payload) == expected


def test_json_request_refuses_what_is_not_json_as_ptb_does() -> None:
    with pytest.raises(TelegramError, match="Invalid server response"):
        JsonRequest.parse_json_payload(b"<html>502</html>")


# ------------------------------------------------------------- UpdatesRequest

TAP = {
    "update_id": 7,
    "callback_query": {
        "id": "q1",
        "from": {"id": 1, "is_bot": False, "first_name": "Ann"},
        "chat_instance": "c",
        "data": "g:1:2:a:6S",
        "message": {
            "message_id": 42,
            "date": 1,
            "chat": {"id": 1, "type": "private"},
            "text": "Your hand: 6♠ 7♠",
            "reply_markup": {"inline_keyboard": [[{"text": "6♠", "callback_data": "x"}]]},
        },
    },
}


def test_updates_request_reads_of_a_tapped_message_only_its_chat_id_and_date() -> None:
    """A tap's update reaches PTB with the tapped message's chat, id and date, without its
    text, formatting and keyboard (the bot reads only the chat and id); everything else, and
    every other update, as Telegram sent it."""
    chat = {"message_id": 3, "date": 1, "chat": {"id": -5, "type": "group"}, "text": "/newgame"}
    payload = {"ok": True, "result": [TAP, {"update_id": 8, "message": chat}]}
    data = UpdatesRequest.parse_json_payload(json.dumps(payload).encode())
    tap, other = data["result"]
    message = tap["callback_query"].pop("message")
    assert message == {"message_id": 42, "date": 1, "chat": {"id": 1, "type": "private"}}
    assert tap == {
        "update_id": 7,
        "callback_query": {k: v for k, v in TAP["callback_query"].items() if k != "message"},
    }
    assert other == {"update_id": 8, "message": chat}
    # What PTB makes of it: the tapped message with its chat and id, still a Message.
    update = Update.de_json(
        UpdatesRequest.parse_json_payload(json.dumps(payload).encode())["result"][0], None
    )
    assert update.callback_query is not None
    tapped = update.callback_query.message
    assert isinstance(tapped, Message) and tapped.is_accessible
    assert (tapped.chat.id, tapped.message_id, tapped.text) == (1, 42, None)


def test_updates_request_leaves_a_tapped_message_it_cannot_read_to_ptb() -> None:
    """A message without a chat, id or date is handed on as sent: PTB refuses it as ever."""
    odd = {"update_id": 9, "callback_query": {**TAP["callback_query"], "message": {"text": "x"}}}
    payload = json.dumps({"ok": True, "result": [odd]}).encode()
    assert UpdatesRequest.parse_json_payload(payload) == HTTPXRequest.parse_json_payload(payload)


def test_updates_request_refuses_what_is_not_json_as_ptb_does() -> None:
    with pytest.raises(TelegramError, match="Invalid server response"):
        UpdatesRequest.parse_json_payload(b"<html>502</html>")


# ------------------------------------------------------------- the same as PTB's own path

CALLS: list[dict[str, float | None]] = [
    {},  # the request's own timeouts
    {"read_timeout": 7.5, "connect_timeout": 1.5},
    {"read_timeout": None, "write_timeout": None, "pool_timeout": None},  # None: no limit
]


async def _timeouts_sent(request_class: type[HTTPXRequest], fake: FakeTelegram) -> list[object]:
    spy = Spy(fake)
    request = request_class(
        httpx_kwargs={"transport": spy.transport}, read_timeout=3.0, write_timeout=4.0
    )
    async with Bot(fake.token, request=request, get_updates_request=fake.updates_request()) as bot:
        for timeouts in CALLS:
            await bot.get_me(**timeouts)  # type: ignore[arg-type]
    return [r.extensions["timeout"] for r in spy.requests]


async def test_timeouts_reach_httpx_exactly_as_through_ptbs_own_request(
    fake: FakeTelegram,
) -> None:
    ours = await _timeouts_sent(JsonRequest, fake)
    assert ours == await _timeouts_sent(HTTPXRequest, fake)
    assert len(ours) == 1 + len(CALLS)  # initialize's getMe first
    assert ours[2]["read"] == 7.5 and ours[3]["read"] is None


@pytest.mark.parametrize(
    "error", [httpx.ReadTimeout("slow"), httpx.PoolTimeout("full"), httpx.ConnectError("no")]
)
async def test_httpx_errors_become_the_same_telegram_errors_as_through_ptb(
    fake: FakeTelegram, error: httpx.HTTPError
) -> None:
    raised = []
    for request_class in (JsonRequest, HTTPXRequest):
        spy = Spy(fake)
        request = request_class(httpx_kwargs={"transport": spy.transport})
        await request.initialize()
        spy.error = error
        with pytest.raises(NetworkError) as caught:
            await request.post(f"https://api.telegram.org/bot{fake.token}/getMe", RequestData())
        raised.append((type(caught.value), str(caught.value)))
        await request.shutdown()
    assert raised[0] == raised[1]


async def test_the_clients_headers_apply_as_through_ptb(fake: FakeTelegram) -> None:
    spy = Spy(fake)
    request = JsonRequest(
        httpx_kwargs={"transport": spy.transport, "headers": {"X-Proxy-Auth": "secret"}}
    )
    async with Bot(fake.token, request=request, get_updates_request=fake.updates_request()):
        pass  # initialize: getMe
    sent = spy.last.headers
    assert sent["x-proxy-auth"] == "secret" and "gzip" in sent["accept-encoding"]
    assert sent["user-agent"] == JsonRequest.USER_AGENT


@pytest.mark.parametrize(
    "base", ["https://api.telegram.org/bot", "http://localhost:8081/bot"]
)  # Telegram's, and a local Bot API server's
async def test_a_calls_headers_are_the_ones_the_client_would_send(
    fake: FakeTelegram, base: str
) -> None:
    """The request is built past `AsyncClient.build_request` (with `stream=`, no headers of
    httpx's own): its headers must still be the ones the client would send."""
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True, "result": True})

    request = JsonRequest(
        httpx_kwargs={"transport": httpx.MockTransport(answer), "headers": {"X-A": "b"}}
    )
    await request.initialize()
    url = f"{base}{fake.token}/answerCallbackQuery"
    body = RequestData([RequestParameter("callback_query_id", "q1", None)])
    assert await request.post(url, body) is True
    (sent,) = seen
    async with httpx.AsyncClient(headers={"X-A": "b"}) as client:
        expected = client.build_request(
            "POST",
            url,
            content=sent.content,
            headers={"User-Agent": JsonRequest.USER_AGENT, "Content-Type": "application/json"},
        )
    assert sorted(sent.headers.multi_items()) == sorted(expected.headers.multi_items())
    assert sent.headers["content-length"] == str(len(sent.content))
    assert json.loads(sent.content) == {"callback_query_id": "q1"}
    await request.shutdown()


async def test_credentials_in_the_url_are_sent_as_the_client_would(fake: FakeTelegram) -> None:
    """A Bot API server behind Basic auth (`BOT_API_BASE_URL=https://user:pw@host/bot`):
    the same Authorization header as through PTB's own request."""
    sent = []
    for request_class in (JsonRequest, HTTPXRequest):
        spy = Spy(fake)
        request = request_class(httpx_kwargs={"transport": spy.transport})
        await request.initialize()
        url = f"https://bot%20user:s%C3%A9cret@api.telegram.org/bot{fake.token}/getMe"
        await request.post(url, RequestData())
        sent.append(spy.last.headers.get("authorization"))
        await request.shutdown()
    assert sent[0] == sent[1] == "Basic Ym90IHVzZXI6c8OpY3JldA=="  # "bot user:sécret"


async def test_text_orjson_will_not_encode_goes_out_as_ptb_would_send_it(
    fake: FakeTelegram, spy: Spy, bot: Bot
) -> None:
    """A lone surrogate: orjson refuses it; PTB's encoding escapes it, and Telegram answers
    (a clear 400, not a network error the outbox would retry)."""
    user = _started(fake)
    with pytest.raises(BadRequest, match=r"(?i)utf-8"):
        await call(bot, "sendMessage", {"chat_id": user.id, "text": "a\ud800b"})
    assert json.loads(spy.last.content)["text"] == "a\ud800b"


async def test_over_a_real_socket_a_stalled_answer_times_out_and_frees_its_connection() -> None:
    """Through httpx's real transport (one connection in the pool) to a server on loopback:
    an answer that stalls mid-body is `TimedOut` and gives its connection back, so the next
    call goes through; a gzip answer is read decoded."""
    stall = asyncio.Event()  # set at the end: the stalled handler may finish

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
            await reader.readexactly(length)
            if b"/stall " in head:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")
                await writer.drain()
                await stall.wait()
                break
            body = gzip.compress(b'{"ok": true, "result": "fine"}')
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip"
                b"\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    request = JsonRequest(connection_pool_size=1, read_timeout=0.2, pool_timeout=1.0)
    await request.initialize()
    try:
        base = f"http://127.0.0.1:{port}/bot1:x"
        with pytest.raises(TimedOut):
            await request.post(f"{base}/stall", RequestData())
        assert await request.post(f"{base}/getMe", RequestData()) == "fine"
        assert await request.post(f"{base}/getMe", RequestData()) == "fine"
    finally:
        stall.set()
        await request.shutdown()
        server.close()
        await server.wait_closed()


class _ImportSpy(importlib.abc.MetaPathFinder):
    """First on `sys.meta_path`: sees every import that `sys.modules` does not answer."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, fullname: str, *args: object, **kwargs: object) -> None:
        self.names.append(fullname)


async def test_over_a_real_socket_a_call_imports_nothing() -> None:
    """Each call through httpx's real transport asks sniffio which event loop runs: without
    sniffio installed, each asking was a failed import, a search of sys.path (about 0.4 ms of
    CPU per call here). Once warm, a call must not import anything."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = b'{"ok": true, "result": "fine"}'
        with contextlib.suppress(asyncio.IncompleteReadError):  # the client hung up
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
                await reader.readexactly(length)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    request = JsonRequest()
    await request.initialize()
    spy = _ImportSpy()
    try:
        url = f"http://127.0.0.1:{port}/bot1:x/getMe"
        assert await request.post(url, RequestData()) == "fine"  # imports what it needs once
        sys.meta_path.insert(0, spy)
        for _ in range(3):
            assert await request.post(url, RequestData()) == "fine"
    finally:
        if spy in sys.meta_path:
            sys.meta_path.remove(spy)
        await request.shutdown()
        server.close()
        await server.wait_closed()
    assert spy.names == []


async def test_the_transport_mounted_for_the_url_is_the_one_used(fake: FakeTelegram) -> None:
    """Calls skip `AsyncClient.send` but not its choice of transport (mounts, proxies)."""
    spy, unused = Spy(fake), Spy(fake)
    request = JsonRequest(
        httpx_kwargs={
            "transport": unused.transport,
            "mounts": {"https://api.telegram.org": spy.transport},
        }
    )
    async with Bot(fake.token, request=request, get_updates_request=fake.updates_request()):
        pass  # initialize: getMe
    assert [r.url.path.rsplit("/", 1)[-1] for r in spy.requests] == ["getMe"]
    assert unused.requests == []


@pytest.mark.parametrize(
    "setting",
    [
        {"cookies": {"a": "b"}},
        {"event_hooks": {"request": []}},
        {"auth": ("user", "password")},
        {"follow_redirects": True},
    ],
)
def test_client_settings_it_cannot_apply_are_refused(setting: dict[str, object]) -> None:
    """Settings `AsyncClient.send` would apply and the direct path would not: refused at
    start-up, not dropped without a word."""
    with pytest.raises(ValueError, match=next(iter(setting))):
        JsonRequest(httpx_kwargs=setting)


async def test_a_download_takes_ptbs_own_path() -> None:
    files = httpx.MockTransport(lambda request: httpx.Response(200, content=b"file"))
    request = JsonRequest(httpx_kwargs={"transport": files})
    await request.initialize()
    assert await request.retrieve("https://api.telegram.org/file/bot1:x/doc.txt") == b"file"
    await request.shutdown()


async def test_a_worker_that_no_longer_leads_never_sends_a_calls_body() -> None:
    """The lease is asked right before a call's body goes out (over a real socket): a worker
    that hung with a call on its way and woke after another took the lead sends at most the
    call's headers, and Telegram never gets the call; while it leads, calls go as ever."""
    bodies: list[bytes] = []
    heads = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                heads.set()
                length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
                bodies.append(await reader.readexactly(length))
                writer.write(
                    b'HTTP/1.1 200 OK\r\nContent-Length: 25\r\n\r\n{"ok":true,"result":true}'
                )
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    request = JsonRequest(connection_pool_size=1)
    await request.initialize()
    leads = True
    request.fence = lambda: leads
    try:
        url = f"http://127.0.0.1:{port}/bot1:x/sendMessage"
        data = RequestData(
            [RequestParameter("chat_id", 7, None), RequestParameter("text", "hi", None)]
        )
        assert await request.post(url, data) is True
        leads = False
        with pytest.raises(NotLeading):
            await request.post(url, data)
        assert len(bodies) == 1 and b'"hi"' in bodies[0]
        leads = True
        assert await request.post(url, data) is True  # leading again: a new connection
        assert len(bodies) == 2
    finally:
        await request.shutdown()
        server.close()
        await server.wait_closed()


def test_updates_request_keeps_of_a_tapped_keyboard_the_button_tapped() -> None:
    """Of the keyboard, the button that holds the tap's data is kept (the bot tells a copy
    of its message from forged data by it); none where the message does not hold it."""
    buttons = [[{"text": "6♠", "callback_data": "x"}, {"text": "7♠", "callback_data": "y"}]]
    message = {**TAP["callback_query"]["message"], "reply_markup": {"inline_keyboard": buttons}}
    tap = {**TAP, "callback_query": {**TAP["callback_query"], "message": message, "data": "y"}}
    payload = json.dumps({"ok": True, "result": [tap]}).encode()
    kept = UpdatesRequest.parse_json_payload(payload)["result"][0]["callback_query"]["message"]
    assert kept["reply_markup"] == {"inline_keyboard": [[{"text": "7♠", "callback_data": "y"}]]}
    update = Update.de_json(UpdatesRequest.parse_json_payload(payload)["result"][0], None)
    assert update.callback_query is not None
    assert tap_of(update.callback_query).carried is True
    forged = {**tap, "callback_query": {**tap["callback_query"], "data": "z"}}
    payload = json.dumps({"ok": True, "result": [forged]}).encode()
    update = Update.de_json(UpdatesRequest.parse_json_payload(payload)["result"][0], None)
    assert update.callback_query is not None
    assert tap_of(update.callback_query).carried is False
