"""The HTTP request object the bot's own Bot API calls go through.

`JsonRequest` is python-telegram-bot's `HTTPXRequest` (the same httpx client: its connection
pool, timeouts, headers, proxies, mounts and event hooks) with a shorter path per call:

- the parameters go out as one JSON body (`RequestData.json_payload`), not URL-encoded. The Bot
  API takes a JSON body as it takes a form: a string value is read as the form's text, so
  `reply_markup` may stay the JSON text PTB and the outbox make of it;
- the `httpx.Request` is built directly and handed to `AsyncClient.send`, which skips merging
  the client's URL, headers and cookies into every call (`AsyncClient.request`); the client's
  headers are merged once per client instead.

URL-encoding quotes each byte of a keyboard's JSON in pure Python; with the merging it was
about 60% of the bot's cost per call, and the bot makes three or four calls per move (see
`bench/bot.py`). Calls that upload files, and downloads (`retrieve`), take PTB's own path.

`UpdatesRequest`, for long polling (`getUpdates`), is PTB's `HTTPXRequest` reading the
updates without the one part the bot never reads: the keyboard of the message a button was
tapped on. Every tap's update carries that message whole, and PTB makes an object of every
button (a hand of 20 cards: some 400 attribute sets) only for the bot to look at the
message's chat and id.

Timeouts and the mapping of httpx's errors are PTB's; `tests/bot/test_request.py` checks them
against `HTTPXRequest` itself, so that a new PTB release cannot make the two drift apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, HTTPXRequest, RequestData

if TYPE_CHECKING:
    from telegram._utils.types import JSONDict, ODVInput

_MAX_URLS = 256
"""Parsed URLs kept: one per Bot API method called, far fewer in practice."""

_DEFAULT = type(BaseRequest.DEFAULT_NONE)
"""PTB's "not given" marker type (`DefaultValue`): use the request's own setting."""

_UNSUPPORTED = frozenset({"params", "cookies", "base_url"})
"""Client settings `AsyncClient.send` does not apply to a request built outside the client."""


class JsonRequest(HTTPXRequest):
    """`HTTPXRequest` sending JSON bodies through `AsyncClient.send` (see the module)."""

    __slots__ = ("_headers", "_headers_of", "_urls")

    def __init__(self, **kwargs: Any) -> None:
        unsupported = sorted(_UNSUPPORTED & set(kwargs.get("httpx_kwargs") or {}))
        if unsupported:
            raise ValueError(f"JsonRequest does not support httpx_kwargs {unsupported}")
        super().__init__(**kwargs)
        self._urls: dict[str, httpx.URL] = {}
        self._headers = httpx.Headers()
        self._headers_of: httpx.AsyncClient | None = None  # the client they were merged from

    def _headers_for(self, client: httpx.AsyncClient) -> httpx.Headers:
        """The client's headers (PTB's path sends them too) with PTB's user agent and JSON."""
        if self._headers_of is not client:  # a new client after shutdown and initialize
            headers = httpx.Headers(client.headers)
            headers["User-Agent"] = self.USER_AGENT
            headers["Content-Type"] = "application/json"
            self._headers, self._headers_of = headers, client
        return self._headers

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
        target = self._urls.get(url)
        if target is None:
            if len(self._urls) >= _MAX_URLS:
                self._urls.clear()
            target = self._urls[url] = httpx.URL(url)
        request = httpx.Request(
            method,
            target,
            headers=self._headers_for(client),
            content=request_data.json_payload,
            extensions={"timeout": timeout},
        )
        # PTB's mapping of httpx's errors, as in HTTPXRequest.do_request.
        try:
            response = await client.send(request)
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
        return response.status_code, response.content


class UpdatesRequest(HTTPXRequest):
    """`HTTPXRequest` for `getUpdates` that drops the keyboards of tapped messages (see the
    module). Everything else in an update reaches PTB as Telegram sent it."""

    __slots__ = ()

    @staticmethod
    def parse_json_payload(payload: bytes) -> JSONDict:
        data = HTTPXRequest.parse_json_payload(payload)  # PTB's reading, exactly
        result = data.get("result") if isinstance(data, dict) else None
        if isinstance(result, list):
            for update in result:
                query = update.get("callback_query") if isinstance(update, dict) else None
                message = query.get("message") if isinstance(query, dict) else None
                if isinstance(message, dict):
                    message.pop("reply_markup", None)
        return data
