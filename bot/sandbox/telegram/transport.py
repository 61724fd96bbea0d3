"""The HTTP side: `FakeTelegram`, the fake Bot API as an ``httpx.MockTransport``.

python-telegram-bot talks to it exactly as it talks to https://api.telegram.org (same URLs,
same bodies: form-encoded, multipart or the bot's JSON; same error handling). Here: the request
objects and the ``Application`` wired to it, the handler that reads a request's parameters as
the Bot API reads them and answers in Telegram's JSON, error injection (``fail_next``,
``timeout_next``; ``chaos``: seeded transient faults at random) and the ``latency`` hook. No
network is used: any request to a host other than api.telegram.org raises
``httpx.ConnectError``.
"""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import json
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl

import httpx
import orjson
from telegram import Bot, Update
from telegram.ext import Application, ApplicationBuilder
from telegram.request import HTTPXRequest

from bot.sandbox.telegram.limits import COUNTED, FloodControl, Limits
from bot.sandbox.telegram.methods import METHODS, ApiError, BotApiMethods
from bot.sandbox.telegram.state import BOT_USERNAME, JSON, TOKEN, Call
from bot.telegram.request import JsonRequest, UpdatesRequest

AnyApplication = Application[Any, Any, Any, Any, Any, Any]

VIA_HEADER = "x-fake-via"
"""Set by `tests.fakes.loopback.LoopbackBotAPI` for a request to a process's own base URL:
the process's label, kept with the call (`Call.via`)."""

_JSON_PARAMS = frozenset(
    {
        "reply_markup",
        "entities",
        "reply_parameters",
        "link_preview_options",
        "commands",
        "scope",
        "allowed_updates",
    }
)
_INT_PARAMS = frozenset(
    {
        "message_id",
        "user_id",
        "offset",
        "limit",
        "timeout",
        "cache_time",
        "message_thread_id",
        "reply_to_message_id",
        "direct_messages_topic_id",
        "max_connections",
    }
)
_BOOL_PARAMS = frozenset(
    {
        "show_alert",
        "disable_notification",
        "protect_content",
        "drop_pending_updates",
        "allow_sending_without_reply",
        "disable_web_page_preview",
        "allow_paid_broadcast",
    }
)


def _is_utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _json_response(status: int, body: JSON) -> httpx.Response:
    """An answer as Telegram sends it: compact UTF-8 JSON (orjson: the fake answers every call
    the bot benchmark makes, and the standard library's encoding was a third of its work)."""
    return httpx.Response(
        status, content=orjson.dumps(body), headers={"Content-Type": "application/json"}
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _has_float(value: Any) -> bool:
    """Whether a float is anywhere in `value`: where orjson may have read an integer beyond
    64 bits (which it makes a float), the standard library reads the text instead."""
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


_SLOW: Final = object()


def _read_fast(data: str | bytes) -> Any:
    """JSON read by orjson, or `_SLOW` where the standard library must read it: what orjson
    refuses (a lone surrogate), or what it may misread (a float: an integer beyond 64 bits
    comes back as one)."""
    try:
        decoded = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _SLOW
    return _SLOW if _has_float(decoded) else decoded


def _read_json_text(text: str) -> Any:
    """A JSON parameter's text (a keyboard, say), read as the standard library reads it (a
    ValueError if it cannot), with orjson where that gives the same, several times faster."""
    decoded = _read_fast(text)
    return decoded if decoded is not _SLOW else json.loads(text)


def _read_json_body(body: bytes) -> tuple[Any, bool]:
    """A JSON body as the Bot API reads it (strict: no NaN or Infinity), and whether orjson
    read it. orjson is several times faster (the fake reads every call of the bot benchmark);
    what it refuses (a lone surrogate) or may misread (an integer beyond 64 bits, which it
    reads as a float) the standard library reads instead."""
    decoded = _read_fast(body)
    if decoded is not _SLOW:
        return decoded, True
    try:
        return json.loads(body, parse_constant=_no_constant), False
    except ValueError as exc:
        raise ApiError(400, "Bad Request: can't parse JSON request") from exc


def _parse_bool(value: str) -> bool:
    return value.strip().lower() in ("true", "1", "yes")


CHAOS_METHODS = (
    "sendMessage",
    "editMessageText",
    "answerCallbackQuery",
    "getUpdates",
    "deleteMessage",
)
CHAOS_KINDS = ("500", "502", "timeout", "timeout-applied")
"""`FakeTelegram.chaos`'s transient faults: an answer 500 or 502 (nothing applied), a
timeout before the call is applied, and one after (the call took effect, its answer lost)."""


@dataclass
class _Chaos:
    rate: float
    rng: random.Random
    methods: frozenset[str]
    kinds: tuple[str, ...]
    limit: int | None


@dataclass
class _Injected:
    method: str
    chat_id: int | str | None
    status: int | None = None
    description: str | None = None
    parameters: JSON | None = None
    timeout: bool = False
    applied: bool = False
    times: int = 1


class FakeTelegram(BotApiMethods):
    """In-memory Bot API (see the package docstring for wiring and usage)."""

    def __init__(
        self,
        *,
        token: str = TOKEN,
        bot_username: str = BOT_USERNAME,
        bot_first_name: str = "Durak",
        strict_html: bool = True,
        clock: Callable[[], int] | None = None,
    ) -> None:
        super().__init__(
            token=token, bot_username=bot_username, bot_first_name=bot_first_name, clock=clock
        )
        self.strict_html = strict_html
        self.transport = httpx.MockTransport(self._handle)
        self._injected: list[_Injected] = []
        self._chaos: _Chaos | None = None
        self.faults: Counter[tuple[str, str]] = Counter()
        """The faults `chaos` injected so far, by (method, kind)."""
        self.flood: FloodControl | None = None  # Telegram's limits, once `enforce`d
        self.flooded: list[Call] = []  # the calls refused with 429 for going over them
        self.latency: Callable[[str, JSON], Awaitable[None]] | None = None
        """Awaited with each authorised call's method and parameters before it is applied
        and answered: the time a call takes over the network (tests: which calls are on
        their way at once; the bot benchmark: Telegram's round trip)."""

    def enforce(
        self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """Refuse calls over Telegram's flood limits with 429 and retry_after, as Telegram
        does (see `limits`); `clock` in seconds."""
        self.flood = FloodControl(limits or Limits(), clock)

    # -- wiring

    def request(self, **kwargs: Any) -> HTTPXRequest:
        """A fresh request object for the bot (its `JsonRequest`, a PTB `HTTPXRequest`) whose
        httpx client uses this fake as transport. ``plain=True``: PTB's own HTTPXRequest."""
        httpx_kwargs = {"transport": self.transport, **kwargs.pop("httpx_kwargs", {})}
        cls = HTTPXRequest if kwargs.pop("plain", False) else JsonRequest
        return cls(httpx_kwargs=httpx_kwargs, **kwargs)

    def updates_request(self) -> HTTPXRequest:
        """The request object for long polling, the bot's `UpdatesRequest` as in production."""
        return UpdatesRequest(httpx_kwargs={"transport": self.transport})

    def bot(self) -> Bot:
        """A plain ``telegram.Bot`` wired to the fake (call ``await bot.initialize()``)."""
        return Bot(self.token, request=self.request(), get_updates_request=self.updates_request())

    def make_application(
        self,
        builder_hook: Callable[[ApplicationBuilder[Any, Any, Any, Any, Any, Any]], Any]
        | None = None,
    ) -> AnyApplication:
        """``Application`` wired to the fake. ``builder_hook(builder)`` may configure the
        builder further (persistence, defaults, rate limiter...) before ``build()``;
        it may return a builder or None."""
        builder = (
            Application.builder()
            .token(self.token)
            .request(self.request())
            .get_updates_request(self.updates_request())
        )
        if builder_hook is not None:
            returned = builder_hook(builder)
            if returned is not None:
                builder = returned
        return builder.build()

    async def deliver(self, app: AnyApplication, *updates: JSON) -> None:
        """Process updates in the application directly, with no polling, but read as its
        getUpdates request reads a poll's answer (the bot's `UpdatesRequest` leaves out what
        it never reads). The application must be initialized (``async with app:``)."""
        read = app.bot._request[0].parse_json_payload  # the get_updates request's
        for update in updates:
            payload = orjson.dumps({"ok": True, "result": [update]})
            await app.process_update(Update.de_json(read(payload)["result"][0], app.bot))

    # -- failure injection

    def fail_next(
        self,
        method: str,
        status: int = 400,
        description: str | None = None,
        retry_after: int | None = None,
        chat_id: int | str | None = None,
        *,
        times: int = 1,
        migrate_to_chat_id: int | None = None,
    ) -> None:
        """The next ``times`` calls of ``method`` (to ``chat_id`` if given) fail without
        side effects. 429 gets parameters.retry_after (default 5)."""
        parameters: JSON | None = None
        if status == 429:
            retry_after = 5 if retry_after is None else retry_after
            description = description or f"Too Many Requests: retry after {retry_after}"
            parameters = {"retry_after": retry_after}
        elif retry_after is not None:
            parameters = {"retry_after": retry_after}
        if migrate_to_chat_id is not None:
            parameters = {**(parameters or {}), "migrate_to_chat_id": migrate_to_chat_id}
        if description is None:
            description = {
                400: "Bad Request: injected failure",
                403: "Forbidden: bot was blocked by the user",
                409: "Conflict: terminated by other getUpdates request",
                500: "Internal Server Error",
                502: "Bad Gateway",
            }.get(status, f"Error {status}")
        self._injected.append(
            _Injected(
                self._method_name(method),
                chat_id,
                status=status,
                description=description,
                parameters=parameters,
                times=times,
            )
        )

    def timeout_next(
        self,
        method: str,
        chat_id: int | str | None = None,
        *,
        applied: bool = False,
        times: int = 1,
    ) -> None:
        """The next call of ``method`` raises httpx.ReadTimeout (PTB: telegram.error.TimedOut).
        ``applied=True``: the call takes effect first and only the response is lost."""
        self._injected.append(
            _Injected(
                self._method_name(method),
                chat_id,
                timeout=True,
                applied=applied,
                times=times,
            )
        )

    def clear_faults(self) -> None:
        """Forget the failures and timeouts still to come (``fail_next``, ``timeout_next``):
        Telegram works again."""
        self._injected.clear()

    def chaos(
        self,
        rate: float,
        *,
        seed: int,
        methods: Iterable[str] = CHAOS_METHODS,
        kinds: Iterable[str] = CHAOS_KINDS,
        limit: int | None = None,
    ) -> None:
        """From now on, each call of `methods` fails at random (seeded) with probability
        `rate`, one of `kinds` (`CHAOS_KINDS`) at random, until `limit` faults were injected
        (`faults` counts them); `rate` 0 ends it. Never a 429: those come only from the
        limits (`enforce`). A `fail_next` or `timeout_next` still comes first."""
        unknown = set(kinds) - set(CHAOS_KINDS)
        if unknown:
            raise ValueError(f"not a kind of fault: {sorted(unknown)}")
        self._chaos = (
            _Chaos(rate, random.Random(seed), frozenset(methods), tuple(kinds), limit)
            if rate > 0
            else None
        )

    def _chaos_fault(self, method: str) -> _Injected | None:
        chaos = self._chaos
        if chaos is None or method not in chaos.methods:
            return None
        if chaos.limit is not None and self.faults.total() >= chaos.limit:
            return None
        if chaos.rng.random() >= chaos.rate:
            return None
        kind = chaos.rng.choice(chaos.kinds)
        self.faults[(method, kind)] += 1
        if kind.startswith("timeout"):
            return _Injected(method, None, timeout=True, applied=kind == "timeout-applied")
        status = int(kind)
        description = "Internal Server Error" if status == 500 else "Bad Gateway"
        return _Injected(method, None, status=status, description=description)

    def _take_injected(self, method: str, params: JSON) -> _Injected | None:
        for injected in self._injected:
            if injected.method != method:
                continue
            if injected.chat_id is not None and params.get("chat_id") != injected.chat_id:
                continue
            injected.times -= 1
            if injected.times <= 0:
                self._injected.remove(injected)
            return injected
        return self._chaos_fault(method)

    # -- HTTP

    async def handle(self, request: httpx.Request) -> httpx.Response:
        """Answer one Bot API request addressed to api.telegram.org (the sandbox's server and
        `tests.fakes.loopback` hand on what reaches them over HTTP)."""
        return await self._handle(request)

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        """Answer one Bot API request (the ``VIA_HEADER``, where given, names the process
        that made it: see `tests.fakes.loopback.LoopbackBotAPI.url_for`)."""
        if request.url.host != "api.telegram.org":
            raise httpx.ConnectError(
                f"FakeTelegram: refusing to contact {request.url.host} (no network in tests)",
                request=request,
            )
        match = re.fullmatch(r"/bot([^/]+)/([A-Za-z0-9_]*)", request.url.path)
        if match is None:
            return self._error_response(404, "Not Found")
        token, raw_method = match.groups()
        method = self._method_name(raw_method)
        try:
            params = self._parse_params(request)
        except ApiError as exc:
            self.calls.append(Call(method, {}, False, None, exc.code, exc.description))
            return self._error_response(exc.code, exc.description)
        call = Call(method, params, via=request.headers.get(VIA_HEADER))
        self.calls.append(call)
        if token != self.token:
            return self._fail(call, ApiError(401, "Unauthorized"))
        if self.latency is not None:
            await self.latency(method, params)

        injected = self._take_injected(method, params)
        if injected is not None:
            call.injected = True
            if injected.timeout and not injected.applied:
                call.timed_out = True
                raise httpx.ReadTimeout("FakeTelegram: injected timeout", request=request)
            if not injected.timeout:
                assert injected.status is not None
                assert injected.description is not None
                return self._fail(
                    call, ApiError(injected.status, injected.description, injected.parameters)
                )

        if self.flood is not None and method in COUNTED and isinstance(params.get("chat_id"), int):
            wait = self.flood.retry_after(params["chat_id"])
            if wait is not None:
                self.flooded.append(call)
                description = f"Too Many Requests: retry after {wait}"
                return self._fail(call, ApiError(429, description, {"retry_after": wait}))

        handler = getattr(self, f"_api_{method}", None) if method in METHODS else None
        if handler is None:
            return self._fail(call, ApiError(404, "Not Found: method not found"))
        try:
            result = handler(params)
            if asyncio.iscoroutine(result):
                result = await result
        except ApiError as exc:
            return self._fail(call, exc)

        call.ok = True
        call.result = result
        if injected is not None and injected.timeout:
            call.timed_out = True
            raise httpx.ReadTimeout("FakeTelegram: injected timeout after apply", request=request)
        return _json_response(200, {"ok": True, "result": result})

    def _fail(self, call: Call, exc: ApiError) -> httpx.Response:
        call.ok = False
        call.error_code = exc.code
        call.description = exc.description
        return self._error_response(exc.code, exc.description, exc.parameters)

    @staticmethod
    def _error_response(
        code: int, description: str, parameters: JSON | None = None
    ) -> httpx.Response:
        body: JSON = {"ok": False, "error_code": code, "description": description}
        if parameters:
            body["parameters"] = parameters
        return _json_response(code, body)

    def _parse_params(self, request: httpx.Request) -> JSON:
        raw: dict[str, str] = dict(parse_qsl(request.url.query.decode(), keep_blank_values=True))
        read: JSON = {}  # JSON parameters of a JSON body, already read
        content_type = request.headers.get("content-type", "")
        body = request.content
        if body:
            if content_type.startswith("application/json"):
                decoded, exact = _read_json_body(body)
                if not isinstance(decoded, dict):
                    raise ApiError(400, "Bad Request: JSON object expected")
                # As the Bot API reads a JSON body: a string is the parameter's text, as in a
                # form; any other value stands for its JSON text (a JSON parameter's object
                # is that text read already).
                for key, value in decoded.items():
                    if isinstance(value, str):
                        raw[key] = value
                    elif exact and key in _JSON_PARAMS and isinstance(value, dict | list):
                        read[key] = value
                    else:
                        raw[key] = json.dumps(value)
                if any(not _is_utf8(value) for value in raw.values()):  # a lone surrogate
                    raise ApiError(400, "Bad Request: strings must be encoded in UTF-8")
            elif content_type.startswith("multipart/form-data"):
                raw.update(self._parse_multipart(content_type, body))
            else:
                raw.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        params = {name: self._convert(name, value) for name, value in raw.items()}
        params.update(read)
        return params

    @staticmethod
    def _parse_multipart(content_type: str, body: bytes) -> dict[str, str]:
        parser = email.parser.BytesParser(policy=email.policy.HTTP)
        message = parser.parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
        fields: dict[str, str] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if not isinstance(name, str):
                continue
            if part.get_filename():
                fields[name] = f"<file {part.get_filename()}>"
            else:
                payload = part.get_payload(decode=True)
                fields[name] = payload.decode("utf-8") if isinstance(payload, bytes) else ""
        return fields

    @staticmethod
    def _convert(name: str, value: str) -> Any:
        try:
            if name in _JSON_PARAMS:
                return _read_json_text(value)
            if name in _INT_PARAMS:
                return int(value)
            if name in _BOOL_PARAMS:
                return _parse_bool(value)
            if name == "chat_id":
                return int(value) if re.fullmatch(r"-?\d+", value) else value
        except ValueError as exc:
            if name == "reply_markup":
                raise ApiError(
                    400, "Bad Request: can't parse reply keyboard markup JSON object"
                ) from exc
            raise ApiError(400, f"Bad Request: invalid {name} specified") from exc
        return value
