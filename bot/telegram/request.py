"""The HTTP path of the bot's own Bot API calls, and of long polling.

`call(bot, method, parameters)` is how the bot's outbox calls the Bot API: the parameters are
encoded once, as one JSON object (orjson), and go through the bot's rate limiter, if it has
one, to `BaseRequest.post`: python-telegram-bot's handling of the answer (its mapping of error
codes to `BadRequest`, `Forbidden`, `RetryAfter`, `ChatMigrated`...). It leaves out what
`Bot._post` adds for PTB's typed methods: `Defaults` (the bot sets none) and one
`RequestParameter` per parameter, each value encoded on its own. The Bot API takes a JSON body
as it takes a form: a string value is read as the form's text, so `reply_markup` may stay the
JSON text the outbox makes of it.

`JsonRequest` is PTB's `HTTPXRequest` (the same httpx client: its connection pool, timeouts,
headers, proxies and mounts) with a shorter path per call:

- the parameters go out as one JSON body (what `RequestData.json_payload` holds, encoded by
  orjson), not URL-encoded;
- the `httpx.Request` is built directly, with the headers the client would send made once
  per URL (Basic auth from credentials in the URL included), and handed to the transport
  the client would pick for its URL. That skips what `AsyncClient.send` does around every
  call for features the Bot API does not use: auth, redirects, cookies (a `http.cookiejar`
  round per answer), event hooks. `JsonRequest` refuses client settings for them, so none
  is silently dropped;
- the answer is read with orjson (PTB's own reading where orjson refuses it, or might read
  it otherwise).

Each of those was measured (`bench/bot.py`): URL-encoding quoted each byte of a
keyboard's JSON in pure Python; `AsyncClient.send` cost about 130 µs per call on top of the
transport, and `Bot._post` with PTB's encoding and reading (the standard library's JSON)
about 110 µs more; the bot makes three or four calls per move. Calls that
upload files, and downloads (`retrieve`), take PTB's own path.

`UpdatesRequest`, for long polling (`getUpdates`), is PTB's `HTTPXRequest` reading the
updates (with orjson) without what the bot never reads: of the message a button was tapped
on, it keeps the chat, the id and the date, and of its keyboard the button tapped, if the
message carries it (which tells a copy of a lobby from forged data: `Tap.carried`). Every
tap's update carries that message whole, text, formatting and keyboard, and PTB makes an
object of every entity and every button (a hand of 20 cards: some 400 attribute sets)
only for the bot to look at the message's chat and id. Reading a tap's update took about
410 µs whole and 200 µs so. It also tells the `PollingWatch` of `bot.telegram.polling` of
each poll answered or timed out, for the log.

Timeouts and the mapping of httpx's errors are PTB's; `tests/bot/test_request.py` checks them
against `HTTPXRequest` itself, so that a new PTB release cannot make the two drift apart.
"""

from __future__ import annotations

import base64
import time
from collections.abc import AsyncIterator, Callable, Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import httpx
import orjson
from telegram import Bot
from telegram.error import NetworkError, TimedOut
from telegram.ext import ExtBot
from telegram.request import BaseRequest, HTTPXRequest, RequestData
from telegram.request._requestparameter import RequestParameter

from bot.ops import metrics

if TYPE_CHECKING:
    from telegram._utils.types import JSONDict, ODVInput

    from bot.telegram.polling import PollingWatch, Unconfirmed

_MAX_URLS = 256
"""Parsed URLs kept: one per Bot API method called, far fewer in practice."""

Header = tuple[bytes, bytes]

_SHAPES = bytes(48 if 48 <= b <= 57 else b if b in b'"-' else 32 for b in range(256))
"""`bytes.translate` table: digits become "0", quotes and minus signs stay, the rest a space."""
_LONG_RUN = b"0" * 19
_QUOTE = ord('"')
_MINUS = ord("-")


def _may_hold_long_ints(payload: bytes) -> bool:
    """Whether `payload` may hold an integer beyond 64 bits, which orjson reads as a float:
    a run of 19 digits that does not open a string. (Telegram's callback query ids and chat
    instances are such runs, in strings: every tap has them.) A run inside a string after
    other text counts too; that only costs the slower reading. Translating and searching
    take about 6 µs for an answer of 5 kB, where the regular expression ``\\d{19}`` took
    100 µs."""
    shapes = payload.translate(_SHAPES)
    start = shapes.find(_LONG_RUN)
    while start != -1:
        before = start - 1
        if before >= 0 and shapes[before] == _MINUS:
            before -= 1
        if before < 0 or shapes[before] != _QUOTE:
            return True  # a number (a digit before it would have started the run earlier)
        end = start + len(_LONG_RUN)
        while end < len(shapes) and shapes[end] == _LONG_RUN[0]:
            end += 1  # the rest of this run
        start = shapes.find(_LONG_RUN, end)
    return False


_DEFAULT = type(BaseRequest.DEFAULT_NONE)
"""PTB's "not given" marker type (`DefaultValue`): use the request's own setting."""

_UNSUPPORTED = frozenset(
    {"params", "cookies", "base_url", "auth", "event_hooks", "follow_redirects", "max_redirects"}
)
"""Client settings that calls past `AsyncClient.send`, straight to its transport, would not
apply: refused rather than silently dropped."""


async def call(bot: Bot, method: str, parameters: Mapping[str, Any]) -> Any:
    """Call Bot API `method` with `parameters` (text, numbers, booleans, JSON text; None
    values are left out); its result as JSON (see the module). Raises PTB's errors. Each
    call is counted by method and outcome, with its duration (`bot.ops.metrics`)."""
    given = {k: v for k, v in parameters.items() if v is not None}
    # An integer's form value is its digits (`json.dumps` would make the same, slower).
    body = RequestData(
        [RequestParameter(k, str(v) if type(v) is int else v, None) for k, v in given.items()]
    )
    url = f"{bot.base_url}/{method}"
    request = bot.request
    limiter = bot.rate_limiter if isinstance(bot, ExtBot) else None
    started = time.perf_counter()
    try:
        if limiter is None:
            result = await request.post(url, body)
        else:
            result = await limiter.process_request(
                callback=request.post,
                args=(url, body),
                kwargs={},
                endpoint=method,
                data=given,
                rate_limit_args=None,
            )
    except Exception as error:  # counted by outcome (bot.ops.metrics), then as it was
        metrics.api_call(method, error, time.perf_counter() - started)
        raise
    metrics.api_call(method, None, time.perf_counter() - started)
    return result


class NotLeading(NetworkError):
    """This worker does not lead now: nothing was sent. Transient, as a network error is:
    a leader whose lease connection broke leads again once a renewal finds the lease still
    its own (then what waited goes out); one that lost the lead stops sending altogether
    (`bot.leader`)."""

    def __init__(self) -> None:
        super().__init__("this worker does not lead now: nothing was sent")


class _FencedBody(httpx.AsyncByteStream):
    """A call's body, handed to the connection only while `fence` allows (checked as late
    as the bot can: when the connection is ready to take the body, after its headers)."""

    __slots__ = ("_body", "_fence")

    def __init__(self, body: bytes, fence: Callable[[], bool]) -> None:
        self._body = body
        self._fence = fence

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if not self._fence():
            raise NotLeading
        yield self._body


class JsonRequest(HTTPXRequest):
    """`HTTPXRequest` sending JSON bodies straight to the client's transport (see the
    module).

    `fence`, where set, is asked right before a call's body goes out (`bot.leader` sets the
    lease's `held`): a worker that hung while a call was on its way, and wakes after another
    took the lead, sends its headers at most, never the call (Telegram drops a request whose
    body never comes), so nothing it had not sent lands over the new leader's messages."""

    __slots__ = ("_targets", "_targets_of", "fence")

    def __init__(self, **kwargs: Any) -> None:
        unsupported = sorted(_UNSUPPORTED & set(kwargs.get("httpx_kwargs") or {}))
        if unsupported:
            raise ValueError(f"JsonRequest does not support httpx_kwargs {unsupported}")
        super().__init__(**kwargs)
        self._targets: dict[str, tuple[httpx.URL, list[Header]]] = {}
        self._targets_of: httpx.AsyncClient | None = None  # the client they were made for
        self.fence: Callable[[], bool] | None = None

    def _target(self, client: httpx.AsyncClient, url: str) -> tuple[httpx.URL, list[Header]]:
        """The URL parsed, and the headers of a call to it but its length: the ones
        `AsyncClient.send` would send (Host first, the client's own), with PTB's user agent
        and JSON as the content type."""
        if self._targets_of is not client:  # a new client after shutdown and initialize
            self._targets, self._targets_of = {}, client
        target = self._targets.get(url)
        if target is None:
            if len(self._targets) >= _MAX_URLS:
                self._targets.clear()
            parsed = httpx.URL(url)
            headers = httpx.Headers(client.headers)
            headers["User-Agent"] = self.USER_AGENT
            headers["Content-Type"] = "application/json"
            if parsed.username or parsed.password:  # as AsyncClient.send: Basic auth
                credentials = f"{parsed.username}:{parsed.password}".encode()
                headers["Authorization"] = f"Basic {base64.b64encode(credentials).decode()}"
            raw = headers.raw if "Host" in headers else [(b"Host", parsed.netloc), *headers.raw]
            target = self._targets[url] = (parsed, raw)
        return target

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if request_data is None or request_data.contains_files:  # downloads, uploads
            return await super().do_request(
                url,
                method,
                request_data,
                read_timeout,
                write_timeout,
                connect_timeout,
                pool_timeout,
            )
        client = self._client
        if client.is_closed:
            raise RuntimeError("This JsonRequest is not initialized!")
        default = client.timeout  # the timeouts this request was built with, as PTB's path
        timeout = {
            "connect": default.connect
            if isinstance(connect_timeout, _DEFAULT)
            else connect_timeout,
            "read": default.read if isinstance(read_timeout, _DEFAULT) else read_timeout,
            "write": default.write if isinstance(write_timeout, _DEFAULT) else write_timeout,
            "pool": default.pool if isinstance(pool_timeout, _DEFAULT) else pool_timeout,
        }
        target, headers = self._target(client, url)
        try:
            body = orjson.dumps(request_data.json_parameters)
        except orjson.JSONEncodeError:  # text orjson will not encode (a lone surrogate)
            body = request_data.json_payload  # PTB's encoding: Telegram then says what is wrong
        # With `stream=`, httpx adds no headers of its own (the ones `content=` would add are
        # in `headers`, and the length here): a quarter of the cost of building it.
        fence = self.fence
        request = httpx.Request(
            method,
            target,
            headers=[*headers, (b"Content-Length", str(len(body)).encode())],
            stream=httpx.ByteStream(body) if fence is None else _FencedBody(body, fence),
            extensions={"timeout": timeout},
        )
        # PTB's mapping of httpx's errors, as in HTTPXRequest.do_request.
        try:
            # The transport AsyncClient.send would use (mounts, proxies from the environment).
            response = await client._transport_for_url(target).handle_async_request(request)
            try:
                content = await response.aread()
            finally:
                await response.aclose()  # the connection goes back to the pool
        except httpx.TimeoutException as err:
            if isinstance(err, httpx.PoolTimeout):
                raise TimedOut(
                    message=(
                        "Pool timeout: All connections in the connection pool are occupied. "
                        "Request was *not* sent to Telegram. Consider adjusting the connection "
                        "pool size or the pool timeout."
                    )
                ) from err
            raise TimedOut from err
        except httpx.HTTPError as err:
            raise NetworkError(f"httpx.{err.__class__.__name__}: {err}") from err
        return response.status_code, content

    @staticmethod
    def parse_json_payload(payload: bytes) -> JSONDict:
        """The answer, read with orjson. What orjson refuses (bad UTF-8, NaN, a lone
        surrogate, not JSON) or might read otherwise (an integer beyond 64 bits, which it
        makes a float: a run of 19 digits) is read by PTB's own method, which decides."""
        if not _may_hold_long_ints(payload):
            try:
                data: JSONDict = orjson.loads(payload)
            except orjson.JSONDecodeError:
                pass
            else:
                return data
        return HTTPXRequest.parse_json_payload(payload)


class UpdatesRequest(HTTPXRequest):
    """`HTTPXRequest` for `getUpdates` that keeps of a tapped message only what the bot reads
    (see the module). Everything else in an update reaches PTB as Telegram sent it.

    With a ``watch``, it tells it of every poll that timed out and every poll answered (see
    `bot.telegram.polling`)."""

    __slots__ = ("_unconfirmed", "_watch")

    def __init__(
        self,
        *,
        watch: PollingWatch | None = None,
        unconfirmed: Unconfirmed | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._watch = watch
        self._unconfirmed = unconfirmed

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        unconfirmed = self._unconfirmed
        if unconfirmed is not None and request_data is not None:
            offset = request_data.parameters.get("offset")
            if isinstance(offset, int):  # (what it confirms is handled first, or soon)
                await unconfirmed.confirm(offset)
        try:
            answer = await super().do_request(
                url,
                method,
                request_data,
                read_timeout,
                write_timeout,
                connect_timeout,
                pool_timeout,
            )
        except TimedOut as error:
            if self._watch is not None:
                self._watch.timed_out(error)
            raise
        if self._watch is not None and answer[0] == HTTPStatus.OK:
            self._watch.answered()
        if unconfirmed is not None and answer[0] == HTTPStatus.OK:
            unconfirmed.fetched(_update_ids(answer[1]))
        return answer

    @staticmethod
    def parse_json_payload(payload: bytes) -> JSONDict:
        data = JsonRequest.parse_json_payload(payload)  # PTB's reading, with orjson
        result = data.get("result") if isinstance(data, dict) else None
        if isinstance(result, list):
            for update in result:
                query = update.get("callback_query") if isinstance(update, dict) else None
                if not isinstance(query, dict):
                    continue
                message = query.get("message")
                if isinstance(message, dict) and all(key in message for key in _KEPT):
                    kept = {key: message[key] for key in _KEPT}
                    button = _tapped(message, query.get("data"))
                    if button is not None:
                        kept["reply_markup"] = {"inline_keyboard": [[button]]}
                    query["message"] = kept
        return data


def _update_ids(payload: bytes) -> list[int]:
    """The ids of the updates a poll's answer brings (none if it cannot be read)."""
    try:
        result = orjson.loads(payload).get("result")
    except (orjson.JSONDecodeError, AttributeError):
        return []
    if not isinstance(result, list):
        return []
    return [u["update_id"] for u in result if isinstance(u, dict) and "update_id" in u]


def _tapped(message: JSONDict, data: object) -> JSONDict | None:
    """The button of `message`'s keyboard that holds the tap's `data`, if it has one (a
    message that does not is forged data, or a keyboard replaced since)."""
    markup = message.get("reply_markup")
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    for row in rows if isinstance(rows, list) else ():
        for button in row if isinstance(row, list) else ():
            if isinstance(button, dict) and button.get("callback_data") == data:
                return button
    return None


_KEPT = ("message_id", "date", "chat")
"""What the bot reads of a tapped message: its chat and id (and the date, by which PTB tells
a message from one Telegram no longer shows the bot, whose date is 0)."""
